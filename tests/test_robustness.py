"""Reliability promises under real processes, crashes and arbitrary input.

(a) concurrent writers from several processes lose nothing and never see "database is locked";
(b) a SIGKILL mid-batch leaves a consistent store holding only whole memories;
(c) any text thrown at search or add is answered or cleanly refused, never a crash.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import string
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlane import Memory
from memlane.cli.main import cli
from memlane.errors import Invalid
from memlane.scope import Context
from memlane.write.draft import shows_nothing
from memlane.write.normalize import clean_text, dedup_hash
from store_checks import assert_consistent as _assert_consistent
from store_checks import count_by_tag
from store_checks import env as _env

WORKERS = 4
PER_WORKER = 250

WORKER = """
import sys
from memlane import Memory
from memlane.scope import Context

path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Memory.open(path, agent=name, context=Context("proj")) as mem:
    for i in range(count):
        mem.add(f"{name} wrote memory number {i}; concurrent writers lose nothing.", tags=[name])
"""


# ---- (a) concurrent writers ------------------------------------------------------------------


def test_four_processes_adding_one_at_a_time_lose_nothing(tmp_path):
    db = tmp_path / "shared.db"  # not created beforehand: the processes race to create it
    script = tmp_path / "worker.py"
    script.write_text(WORKER, encoding="utf-8")
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(db), f"w{n}", str(PER_WORKER)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(tmp_path, db),
            cwd=tmp_path,
        )
        for n in range(WORKERS)
    ]
    outcomes = [(p.wait(timeout=300), p.communicate()[1]) for p in procs]
    for code, stderr in outcomes:
        assert "locked" not in stderr.lower(), stderr
        assert code == 0, stderr
    assert count_by_tag(db) == {f"w{n}": PER_WORKER for n in range(WORKERS)}
    assert _assert_consistent(db) == WORKERS * PER_WORKER
    with Memory.open(db, context=Context("proj")) as mem:
        assert len(mem.list(limit=0)) == WORKERS * PER_WORKER
        assert len(mem.search("concurrent writers", limit=0)) == WORKERS * PER_WORKER


def test_four_cli_batches_at_once_lose_nothing(tmp_path):
    db = tmp_path / "cli.db"
    procs = []
    for n in range(WORKERS):
        lines = [
            json.dumps({"content": f"cli worker {n} line {i}", "tags": [f"c{n}"]})
            for i in range(PER_WORKER)
        ]
        proc = subprocess.Popen(
            [sys.executable, "-m", "memlane", "--db", str(db), "add-batch", "--json"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(tmp_path, db),
            cwd=tmp_path,
        )
        procs.append((proc, "\n".join(lines) + "\n"))
    for proc, text in procs:
        out, err = proc.communicate(text, timeout=300)
        assert "locked" not in err.lower(), err
        assert proc.returncode == 0, err
        payload = json.loads(out)
        assert (payload["added"], payload["failed"]) == (PER_WORKER, 0)
    assert count_by_tag(db) == {f"c{n}": PER_WORKER for n in range(WORKERS)}
    assert _assert_consistent(db) == WORKERS * PER_WORKER


# ---- (b) a crash in the middle of a batch ----------------------------------------------------

KILL_LINES = 200_000


def _kill_line(i: int) -> str:
    return json.dumps(
        {"title": f"Crash test {i}", "content": f"Line {i} of a long batch. " + "filler " * 12}
    )


def _feed(stream: Any, data: bytes) -> None:
    try:
        stream.write(data)
        stream.close()
    except (BrokenPipeError, OSError):
        pass  # the reader was killed: expected


def _stored_count(db: Path) -> int:
    if not db.exists():  # a plain connect would create it, empty, under memlane's feet
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM memory").fetchone()[0])
    except sqlite3.Error:
        return 0  # not created yet


def test_sigkill_during_add_batch_leaves_only_whole_memories(tmp_path):
    db = tmp_path / "crash.db"
    data = "".join(_kill_line(i) + "\n" for i in range(KILL_LINES)).encode()
    with open(tmp_path / "stderr.txt", "wb") as errors:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memlane", "add-batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            env=_env(tmp_path, db),
            cwd=tmp_path,
        )
        feeder = threading.Thread(target=_feed, args=(proc.stdin, data), daemon=True)
        feeder.start()
        give_up = time.monotonic() + 120
        while _stored_count(db) == 0 and proc.poll() is None and time.monotonic() < give_up:
            time.sleep(0.05)
        time.sleep(0.3)  # land somewhere inside a later transaction
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        feeder.join(timeout=30)
    assert proc.returncode == -signal.SIGKILL, (tmp_path / "stderr.txt").read_text()

    landed = _assert_consistent(db)
    assert 0 < landed < KILL_LINES
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT title, body FROM memory ORDER BY seq").fetchall()
    # Whole lines, in input order, with no gap: a rerun can resume after the last one.
    expected = [json.loads(_kill_line(i)) for i in range(landed)]
    assert rows == [(e["title"], e["content"].strip()) for e in expected]

    with Memory.open(db, agent="tester", context=Context("proj")) as mem:
        new = mem.add("After the crash the store still takes writes.").id
        assert mem.get(new).body == "After the crash the store still takes writes."
        assert [h.record.id for h in mem.search("after the crash")] == [new]
    assert _assert_consistent(db) == landed + 1


# ---- (c) arbitrary text ----------------------------------------------------------------------

FTS_WORDS = st.sampled_from(
    ["AND", "OR", "NOT", "NEAR", "NEAR(", "*", "-", ":", "^", '"', "'", "(", ")", "{", "}",
     "title:", "body:", "\x00", " ", "\t", "\n", "é", "ß", "数据", "🙂", "e\u0301", "deploy"]
)  # fmt: skip
QUERIES = st.one_of(
    st.text(),
    st.lists(st.one_of(FTS_WORDS, st.text(max_size=5)), max_size=12).map("".join),
    st.lists(FTS_WORDS, max_size=12).map(" ".join),
)
# Letters, digits, spaces, ASCII punctuation and common accents: text on which Python's and
# SQLite's notion of a word agree. Symbols and marks newer than SQLite's Unicode tables do
# not (see test_search_finds_a_word_glued_to_a_modern_emoji).
WORDY = st.one_of(
    st.characters(categories=["L", "N", "Zs"]),
    st.sampled_from(string.punctuation + "\n\t\r\u0301\u0308\u0327"),
)
PROPERTY = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
SEED_TEXTS = (
    "Deploy with make deploy; never on Fridays.",
    "The (billing) service uses PostgreSQL: AND NOT MongoDB.",
    'Quotes "inside" text and a star* and a caret^ and a minus -flag.',
    "Unicode: café, straße, 数据库, 🙂 emoji.",
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    path = tmp_path_factory.mktemp("prop") / "prop.db"
    with Memory.open(path, agent="tester", context=Context("proj")) as mem:
        for text in SEED_TEXTS:
            mem.add(text)
        yield mem


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Run `memlane ...` in-process against one module-wide store."""
    folder = tmp_path_factory.mktemp("propcli")
    env = {
        "MEMLANE_DB": str(folder / "cli.db"),
        "MEMLANE_AGENT": "tester",
        "MEMLANE_PROJECT_ALIASES": str(folder / "aliases.json"),
    }
    runner = CliRunner()

    def invoke(*args: str) -> Any:
        return runner.invoke(cli, list(args), env=env, catch_exceptions=False)

    for text in SEED_TEXTS:
        assert invoke("add", "--content", text).exit_code == 0
    yield invoke


@PROPERTY
@given(query=QUERIES)
def test_memory_search_never_crashes(store, query):
    try:
        hits = store.search(query)
    except Invalid:
        return  # a clean refusal is acceptable
    assert isinstance(hits, list)
    assert all(hit.record.id.startswith("m-") for hit in hits)


@PROPERTY
@given(query=QUERIES)
def test_cli_search_never_crashes(cli_store, query):
    result = cli_store("search", "--json", "--", query)
    if result.exit_code == 2:
        assert result.stdout == ""
        assert len(result.stderr.strip().splitlines()) == 1
        return
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["count"] == len(payload["results"])


@pytest.mark.parametrize("emoji", ["🙂", "🤖", "🫠"])  # Unicode 7, 8 and 14
def test_search_finds_a_word_glued_to_a_modern_emoji(tmp_path, emoji):
    """A user searching `release` expects "Shipped the release🙂" back."""
    with Memory.open(tmp_path / "emoji.db", context=Context("proj")) as mem:
        memory_id = mem.add(f"Shipped the release{emoji}").id
        assert [h.record.id for h in mem.search("release")] == [memory_id]
        assert [h.record.id for h in mem.search(f"release{emoji}")] == [memory_id]


def test_search_finds_seeded_text_despite_syntax(store):
    hits = store.search('(billing) AND NOT "MongoDB"')
    assert [h.record.body for h in hits] == [SEED_TEXTS[1]]
    assert [h.record.body for h in store.search("star* caret^ -flag")] == [SEED_TEXTS[2]]


@PROPERTY
@given(text=st.text())
def test_memory_add_stores_text_faithfully_or_refuses(store, text):
    try:
        # Storage fidelity, not the write policy: short random texts restate each other.
        result = store.add(text, allow_duplicate=True)
    except Invalid:
        # the only refusals for plain text: empty, or nothing a reader would see
        assert clean_text(text) == "" or shows_nothing(clean_text(text)), repr(text)
        return
    assert result.status.value == "added"
    record = store.get(result.id)
    assert record.body == clean_text(text)
    assert record.title
    assert record.dedup_hash == dedup_hash(record.title, record.body)


@PROPERTY
@given(text=st.text(min_size=1), title=st.text(max_size=40))
def test_memory_add_title_round_trips(store, text, title):
    try:
        result = store.add(text + " body", title=title, allow_duplicate=True)
    except Invalid:
        pytest.fail(f"refused a valid add: {text!r} / {title!r}")
    record = store.get(result.id)
    assert record.body == clean_text(text + " body")
    assert record.title == (clean_text(title) or record.title)
    assert record.title


@PROPERTY
@given(text=st.text(alphabet=WORDY, min_size=1))
def test_stored_text_is_found_by_searching_for_itself(store, text):
    """A user who searches for a memory's exact words gets that memory back."""
    session = f"find-{abs(hash(text))}-{time.monotonic_ns()}"
    try:
        memory_id = store.add(text, session_id=session, allow_duplicate=True).id
    except Invalid:
        return
    body = store.get(memory_id).body
    if not any(ch.isalnum() for ch in body):
        return  # nothing to search for
    found = [h.record.id for h in store.search(body, session_id=session)]
    assert found == [memory_id], repr(body)


@pytest.mark.parametrize("bad", ["lone \udcff surrogate", "\ud800"])
def test_memory_add_with_lone_surrogates_is_refused_or_repaired(store, bad):
    """Undecodable argv bytes reach Python as lone surrogates, which UTF-8 cannot store."""
    try:
        memory_id = store.add(bad).id
    except Invalid:
        return  # a clean refusal
    store.get(memory_id).body.encode("utf-8")  # or stored in a readable, repaired form


def test_cli_add_with_undecodable_argv_is_one_line_exit_2(tmp_path):
    db = tmp_path / "argv.db"
    result = subprocess.run(
        [sys.executable.encode(), b"-m", b"memlane", b"add", b"caf\xe9 in latin-1"],
        capture_output=True,
        env=_env(tmp_path, db),
        cwd=tmp_path,
        timeout=60,
    )
    stderr = result.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr
    assert result.returncode in (0, 2), stderr
    if result.returncode == 2:
        assert result.stdout == b""
        assert len(stderr.strip().splitlines()) == 1, stderr


def test_stored_terminal_escapes_are_printed_as_text(run):
    # ESC, OSC (retitles a terminal), BEL, a C1 CSI and a carriage return that would
    # hide the line before it: every read path prints them written out.
    text = "Deploy note \x1b]0;pwned\x07 then \x1b[31mred\x1b[0m, \x9b2J and\rhidden"
    memory_id = run("add", text, "--title", "escape \x1b[5mtitle").stdout.split()[-1]
    outputs = [
        run("show", memory_id).stdout,
        run("list").stdout,
        run("search", "deploy").stdout,
        run("recall", "deploy note").stdout,
    ]
    for out in outputs:
        assert not any(c in out for c in "\x1b\x07\x9b\r"), repr(out)
    assert "\\x1b]0;pwned\\x07" in outputs[0]


def test_a_new_store_is_owner_only(tmp_path):
    # Memories are private: a store (and its WAL files) and the directories made for it
    # are created readable by their owner alone, whatever the umask.
    old = os.umask(0o022)
    try:
        path = tmp_path / "new" / "deeper" / "memory.db"
        with Memory.open(path, context=Context()) as mem:
            mem.add("The staging host is db-7.")
            snapshot = mem.admin.backup(tmp_path / "snaps").path
            modes = {p.name: p.stat().st_mode & 0o777 for p in path.parent.iterdir()}
        assert snapshot.stat().st_mode & 0o777 == 0o600
        assert snapshot.parent.stat().st_mode & 0o777 == 0o700
        assert modes["memory.db"] == 0o600
        assert all(mode == 0o600 for name, mode in modes.items() if name.startswith("memory.db"))
        assert (tmp_path / "new").stat().st_mode & 0o777 == 0o700
        assert path.parent.stat().st_mode & 0o777 == 0o700
    finally:
        os.umask(old)


def test_read_commands_on_a_missing_store_create_nothing(run, tmp_path):
    # An explicit --db that names no file: reads find nothing, doctor says so, and
    # neither the store nor its directory appears.
    missing = tmp_path / "no" / "such" / "dir" / "memory.db"
    for args in (("list",), ("search", "deploy"), ("recall", "deploy"), ("stats", "--json")):
        result = run("--db", str(missing), *args)
        assert result.exit_code == 0, (args, result.stderr)
    assert str(missing) in run("--db", str(missing), "stats", "--json").json()["path"]
    doctor = run("--db", str(missing), "doctor")
    assert doctor.exit_code == 0 and "no store at" in doctor.stdout
    assert not (tmp_path / "no").exists()
    refused = run("--db", str(missing), "add", "The staging host is db-7.")
    assert refused.exit_code == 2 and "mkdir -p" in refused.stderr  # a typo'd --db
    assert not (tmp_path / "no").exists()
    missing.parent.mkdir(parents=True)
    assert run("--db", str(missing), "add", "The staging host is db-7.").exit_code == 0
    assert missing.exists()  # a write makes it


@pytest.mark.parametrize(
    ("args", "exit_code", "said"),
    [
        (("reflect", "--list"), 0, "no proposals are waiting"),
        (("reflect",), 0, "no new memories"),
        (("promote", "m-x"), 1, "no memory with id 'm-x' (no store at "),
        (("update", "m-x", "--scope", "global"), 1, "no memory with id 'm-x' (no store at "),
        (("restore", "m-x"), 1, "no memory with id 'm-x' (no store at "),
        (("entities", "merge", "a", "b"), 1, "no entity 'a' (no store at "),
        (("entities", "type", "a", "person"), 1, "no entity 'a' (no store at "),
        (("unrelate", "a", "uses", "b"), 1, "no entity 'a' (no store at "),
    ],
)
def test_commands_on_what_is_stored_create_no_missing_store(run, tmp_path, args, exit_code, said):
    missing = tmp_path / "store" / "m.db"
    missing.parent.mkdir()
    result = run("--db", str(missing), *args)
    assert result.exit_code == exit_code and said in result.stderr
    assert result.stderr.count("\n") == 1
    assert list(missing.parent.iterdir()) == []  # no store, no -wal, no writer lock
