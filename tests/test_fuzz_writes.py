"""Every write path under arbitrary input: the CLI's add, add-batch, import and update,
and the Python API with values of the wrong type. Whatever comes in: no traceback, the
documented exit code (0 written, 2 refused; 1 only for an id that does not exist), and
nothing stored before changed."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlane import MemlaneError, Memory
from memlane.cli.main import cli
from memlane.embed import get_embedder
from memlane.scope import Context

pytestmark = pytest.mark.sqlite_only
FUZZ = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
SEED = ("The deploy runs nightly from the main branch.", "Staging uses the db-7 host.")

# Values of every kind a field may be handed: plausible ones, wrong types, extremes.
ODD = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
    st.text(max_size=30), st.sampled_from(["high", "globl", "project:../../x", "m-" + "a" * 80,
                                            "\x00", "\u200b", "\x1b[31m", "-1", "1e400"]),
    st.lists(st.one_of(st.text(max_size=10), st.integers()), max_size=4),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)  # fmt: skip
FIELDS = ["content", "title", "tags", "kind", "category", "importance", "scope", "private",
          "confidence", "session_id", "source_ref", "occurred_at", "wake_order", "owner",
          "taint", "signal", "id", "body", "valid_from", "trust_score"]  # fmt: skip
RECORDS = st.dictionaries(st.sampled_from(FIELDS), ODD, max_size=6)
OPTION_VALUES = st.one_of(st.text(max_size=40), st.sampled_from(
    ["10", "-3", "99999999999999999999", "high", "all", "globl", "project:../x", "", "\x00"]))  # fmt: skip
ADD_OPTIONS = st.lists(st.tuples(st.sampled_from(
    ["--title", "--tags", "--kind", "--category", "--importance", "--scope", "--confidence",
     "--session-id", "--source-ref", "--occurred-at", "--wake-order"]), OPTION_VALUES),
    max_size=4)  # fmt: skip


@pytest.fixture
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], Path]]:
    """A fresh store holding SEED, one per call (hypothesis runs many examples)."""

    def make() -> Path:
        db = tmp_path_factory.mktemp("fuzz") / "m.db"
        with Memory.open(db, agent="fuzz", context=Context(), embedder=get_embedder("hash")) as m:
            for text in SEED:
                m.add(text)
        return db

    yield make


def _rows(db: Path) -> dict[str, tuple[Any, ...]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return {r[0]: tuple(r[1:]) for r in conn.execute(
            "SELECT id, title, body, tags, importance, scope, visibility, owner, superseded_by, "
            "valid_until FROM memory")}  # fmt: skip


def _run(db: Path, *args: str, stdin: str | None = None) -> tuple[int, str]:
    env = {"MEMLANE_DB": str(db), "MEMLANE_AGENT": "fuzz", "MEMLANE_EMBED_PROFILE": "hash",
           "MEMLANE_PROJECT_ALIASES": str(db.parent / "aliases.json")}  # fmt: skip
    result = CliRunner().invoke(cli, list(args), input=stdin, env=env, catch_exceptions=False)
    return result.exit_code, result.stderr


def _held(
    db: Path, before: dict[str, tuple[Any, ...]], code: int, stderr: str, batch: bool = False
) -> None:
    assert "Traceback" not in stderr
    if code != 0:
        assert stderr.strip() and all(
            ln.startswith(("memlane: error:", "[", str(db.parent), "note:")) or ":" in ln
            for ln in stderr.splitlines()
        ), stderr
    after = _rows(db)
    for memory_id, row in before.items():  # nothing stored before is changed or lost
        assert after.get(memory_id) == row, memory_id
    if code == 2 and not batch:
        assert after == before  # a refused single write writes nothing


@FUZZ
@given(text=st.text(max_size=200), options=ADD_OPTIONS)
def test_cli_add_never_crashes_and_never_changes_what_was_stored(seeded, text, options):
    db = seeded()
    before = _rows(db)
    flat = [part for option in options for part in option]
    code, stderr = _run(db, "add", "--content", text, *flat)
    assert code in (0, 2), stderr
    _held(db, before, code, stderr)


@FUZZ
@given(records=st.lists(RECORDS, min_size=1, max_size=5))
def test_cli_add_batch_lands_the_good_lines_and_reports_the_bad(seeded, records):
    db = seeded()
    before = _rows(db)
    lines = "\n".join(json.dumps(r, default=str) for r in records) + "\n"
    code, stderr = _run(db, "add-batch", stdin=lines)
    assert code in (0, 2), stderr
    _held(db, before, code, stderr, batch=True)


@FUZZ
@given(changes=st.lists(RECORDS, min_size=1, max_size=4))
def test_cli_import_of_altered_records_keeps_the_store_readable(seeded, changes, tmp_path_factory):
    source = seeded()
    with Memory.open(source, agent="fuzz", context=Context()) as mem:
        template = json.loads(
            next(ln for ln in mem.transfer.export_jsonl() if '"kind":"memory"' in ln)
        )
    lines = [json.dumps({**template, "id": f"m-fz{i:06d}", "dedup_hash": f"fz{i}", **change},
                        default=str) for i, change in enumerate(changes)]  # fmt: skip
    file = tmp_path_factory.mktemp("in") / "dump.jsonl"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = seeded()
    before = _rows(db)
    code, stderr = _run(db, "import", str(file))
    assert code in (0, 2), stderr
    _held(db, before, code, stderr, batch=True)
    for args in (("recall", "deploy"), ("list",), ("search", "host"), ("stats",)):
        read, errors = _run(db, *args)
        assert read == 0, (args, errors)


@FUZZ
@given(options=ADD_OPTIONS, content=st.one_of(st.none(), st.text(max_size=60)))
def test_cli_update_never_crashes(seeded, options, content):
    db = seeded()
    before = _rows(db)
    target = sorted(before)[0]
    flat = [part for option in options for part in option]
    flat = [p for p in flat if p not in ("--session-id", "--occurred-at", "--wake-order")]
    extra = ["--content", content] if content is not None else []
    code, stderr = _run(db, "update", target, *extra, *flat)
    assert code in (0, 1, 2), stderr
    assert "Traceback" not in stderr
    after = _rows(db)
    assert set(before) <= set(after)  # an update never loses a memory
    if code != 0:
        assert after == before


# ---- the Python API: a value of the wrong type is Invalid, never a TypeError ----------------

WRONG = [None, 5, 3.5, True, b"bytes", ["a"], {"a": 1}, object(), float("nan"), 10**30, -1]
CALLS: dict[str, Callable[[Memory, str, Any], Any]] = {
    "add": lambda m, _, v: m.add(v),
    "add tags": lambda m, _, v: m.add("A tagged note.", tags=v),
    "add importance": lambda m, _, v: m.add("An important note.", importance=v),
    "add scope": lambda m, _, v: m.add("A scoped note.", scope=v),
    "add title": lambda m, _, v: m.add("A titled note.", title=v),
    "add confidence": lambda m, _, v: m.add("A sure note.", confidence=v),
    "recall": lambda m, _, v: m.recall(v),
    "recall limit": lambda m, _, v: m.recall("deploy", limit=v),
    "search": lambda m, _, v: m.search(v),
    "list limit": lambda m, _, v: m.list(limit=v),
    "list scope": lambda m, _, v: m.list(scope=v),
    "get": lambda m, _, v: m.get(v),
    "history": lambda m, _, v: m.history(v),
    "forget": lambda m, _, v: m.forget(v),
    "update id": lambda m, _, v: m.update(v, title="New title"),
    "update title": lambda m, i, v: m.update(i, title=v),
    "supersede": lambda m, i, v: m.supersede(i, v),
    "link": lambda m, i, v: m.graph.link(i, v, "related"),
    "link type": lambda m, i, v: m.graph.link(i, i, v),
    "batch": lambda m, _, v: [ln.error for ln in m.iter_batch([v])],
    "import": lambda m, _, v: m.transfer.import_jsonl([v]),
}


@pytest.mark.parametrize("call", CALLS, ids=str)
def test_the_python_api_refuses_wrong_types_with_memlane_errors(tmp_path, call):
    with Memory.open(tmp_path / "m.db", agent="fuzz", context=Context(),
                     embedder=get_embedder("hash")) as mem:  # fmt: skip
        target = mem.add(SEED[0]).id
        for value in WRONG:
            before = _rows(tmp_path / "m.db")
            try:
                CALLS[call](mem, target, value)
            except MemlaneError:
                assert _rows(tmp_path / "m.db") == before, value
            except Exception as exc:
                pytest.fail(f"{call}({value!r}) raised {type(exc).__name__}: {exc}")
