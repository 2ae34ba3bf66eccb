"""Progress bars on long commands and warnings summarised (memlane.cli.progress).

A bar is drawn on stderr only when stderr is a terminal: piped, a command prints
nothing it would not print anyway. A terminal is simulated by handing the helper a rich
console forced to be one (in-process runs) or by a pseudo-terminal (a real process).
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memlane import Memory
from memlane.cli import progress
from terminal import on_terminal

# Each line states another figure for the same thing: the write policy notes that it
# may contradict the lines before it.
PORTS = [f"The staging server for service alpha listens on port 80{i}" for i in range(1, 10)]
# Lines about unrelated things: no notes.
FACTS = [
    "Billing invoices are generated nightly by the ledger cron",
    "Kiwi plants need a male vine nearby to fruit",
    "Our VPN gateway rotates certificates every quarter",
    "Grandma's lasagna recipe uses nutmeg in the bechamel",
    "The marathon route passes the old harbour lighthouse",
    "Rust's borrow checker rejects two mutable references",
]


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """What a terminal on stderr would show: every bar drawn while the test runs."""
    from rich.console import Console

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    monkeypatch.setattr(progress, "_terminal", lambda: console)
    return screen


def batch(tmp_path: Path, texts: list[str]) -> str:
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps({"content": t, "session_id": "s"}) + "\n" for t in texts))
    return str(path)


def test_add_batch_draws_a_bar_on_a_terminal_and_keeps_stdout_as_piped(run, tmp_path, terminal):
    file = batch(tmp_path, FACTS)
    drawn = run("add-batch", "-f", file)
    assert drawn.exit_code == 0, drawn.stderr
    assert "adding" in terminal.getvalue() and "6/6" in terminal.getvalue()
    assert drawn.stdout.count("Added entry") == 6
    assert "adding" not in drawn.stderr


def test_add_batch_piped_prints_nothing_extra(run, tmp_path):
    file = batch(tmp_path, FACTS)
    piped = run("add-batch", "-f", file)
    assert piped.exit_code == 0 and piped.stderr == ""
    assert piped.stdout.count("Added entry") == 6


def test_add_batch_prints_the_first_notes_then_counts_them_and_json_keeps_all(run, tmp_path):
    shown = run("add-batch", "-f", batch(tmp_path, PORTS))
    assert shown.exit_code == 0, shown.stderr
    notes = [ln for ln in shown.stderr.splitlines() if "may contradict" in ln]
    assert len(notes) == progress.SHOWN_NOTES
    assert f"note: {len(PORTS) - 1} notes in all, the first 5 shown (--json lists all)" in (
        shown.stderr
    )
    every = run("add-batch", "-f", batch(tmp_path, [t + "0" for t in PORTS]), "--json")
    assert every.stderr == ""
    warned = [ln for ln in every.json()["lines"] if ln["warnings"]]
    assert len(warned) == len(PORTS)  # each also close to the first batch's lines


def test_a_few_notes_are_all_printed_and_not_counted(run, tmp_path):
    shown = run("add-batch", "-f", batch(tmp_path, PORTS[:3]))
    assert sum("may contradict" in ln for ln in shown.stderr.splitlines()) == 2
    assert "in all" not in shown.stderr


def test_import_summarises_bad_lines_and_draws_its_phases(run, tmp_path, terminal):
    run("add", "A memory to carry over", "--session-id", "s")
    export = tmp_path / "out.jsonl"
    assert run("export", "-o", str(export)).exit_code == 0
    assert "export" in terminal.getvalue()
    lines = export.read_text().splitlines()
    export.write_text("\n".join([*lines, *["{broken"] * 8]) + "\n")
    loaded = run("import", str(export))
    assert loaded.exit_code == 2
    assert sum("{broken" in ln or "line" in ln for ln in loaded.stderr.splitlines()) >= 5
    assert "note: 8 bad lines in all, the first 5 shown (--json lists all)" in loaded.stderr
    assert "import: loading" in terminal.getvalue()
    listed = run("import", str(export), "--json")
    assert len(listed.json()["errors"]) == 8


def test_a_quiet_bar_draws_nothing_even_on_a_terminal(terminal):
    with progress.progress_bar("quiet job", quiet=True) as tell:
        tell(1, 2, "half")
    with progress.progress_steps("quiet steps", quiet=True) as step:
        step("first")
    assert terminal.getvalue() == ""


def test_steps_show_each_step_done_once_and_the_count_of_a_counted_one(terminal):
    with progress.progress_steps("bench") as step:
        step("building")
        for done in range(0, 3001, 500):
            step("building", done, 3000)
        step("asking", 1500, 3000)
    shown = terminal.getvalue()
    assert shown.count("done: building") == 1 and "done: building 3,000/3,000" in shown
    assert "done: asking 1,500/3,000" in shown  # the last step, left as the spinner goes


def test_a_bench_build_tells_its_steps_and_counts_what_it_adds(tmp_path):
    from memlane.benchmark import scale
    from memlane.embed import get_embedder

    plan = scale.Plan(sizes=(300,), directory=tmp_path, seed=7)
    told: list[tuple[str, int | None, int | None]] = []

    def progress(words: str, done: int | None = None, total: int | None = None) -> None:
        told.append((words, done, total))

    scale.build_store(tmp_path / "built.db", plan, 300, get_embedder("hash"), progress)
    adding = [(d, t) for w, d, t in told if "add-batch of 300" in w and d is not None]
    assert adding[0] == (0, 300) and adding[-1] == (300, 300)
    embedded = [(d, t) for w, d, t in told if "embedding" in w and d is not None]
    assert embedded[-1] == (300, 300)


def test_count_lines_rewinds_and_counts_a_last_line_without_newline():
    stream = io.BytesIO(b"a\nb\n\nc")
    stream.seek(2)
    assert progress.count_lines(stream) == 3
    assert stream.tell() == 2
    assert progress.count_lines(io.BytesIO(b"")) == 0


def test_a_real_terminal_gets_the_bar_and_a_pipe_does_not(cli_env, tmp_path):
    file = batch(tmp_path, FACTS[:4])
    env = {**os.environ, **cli_env}
    command = [sys.executable, "-m", "memlane", "add-batch", "-f", file]
    done, drawn = on_terminal(command, env, tmp_path)
    assert done.returncode == 0 and done.stdout.count(b"Added entry") == 4
    assert "adding" in drawn and "4/4" in drawn
    piped = subprocess.run(command, capture_output=True, env=env, cwd=tmp_path, timeout=120)
    assert piped.returncode == 0 and piped.stderr == b""


# ---- the library side: callbacks, never printing ---------------------------------------


class Told:
    """A progress callback that keeps what it was told."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int | None, str]] = []

    def __call__(self, done: int, total: int | None, what: str) -> None:
        self.calls.append((done, total, what))

    def last(self, what: str) -> tuple[int, int | None]:
        done, total, _ = [c for c in self.calls if c[2] == what][-1]
        return done, total


def test_an_import_tells_its_phases_and_ends_each_at_its_total(vmem, tmp_path, capsys):
    from memlane import Memory
    from memlane.embed import get_embedder

    for text in FACTS:
        vmem.add(text, session_id="s")
    lines = list(vmem.transfer.export_jsonl())
    told = Told()
    target = tmp_path / "copy.db"
    with Memory.open(target, agent="tester", embedder=get_embedder("hash")) as copy:
        report = copy.transfer.import_jsonl(lines, progress=told)
    assert report.counts["memory"] == {"added": len(FACTS)}
    assert told.last("loading") == (len(lines) - 1, len(lines) - 1)
    assert told.last("embedding") == (len(FACTS), len(FACTS))
    assert capsys.readouterr() == ("", "")


def test_a_table_import_tells_each_row_as_its_chunk_lands(mem):
    told = Told()
    rows = ["body,title", *(f"{text},{text[:12]}" for text in FACTS)]
    report = mem.transfer.import_csv(rows, progress=told)
    assert report.added == len(FACTS)
    assert [c[0] for c in told.calls] == list(range(1, len(FACTS) + 1))
    assert {c[1:] for c in told.calls} == {(len(FACTS), "adding")}


def test_consolidate_tells_planning_merging_and_embedding(vmem):
    for text in PORTS[:3]:
        vmem.add(text, allow_duplicate=True)
    told = Told()
    report = vmem.maintenance.consolidate(threshold=0.5, force=True, progress=told)
    assert report.plan is not None and report.plan.merges
    phases = list(dict.fromkeys(what for _, _, what in told.calls))
    assert phases == ["planning", "merging", "embedding"]
    merges = len(report.plan.merges)
    assert told.last("merging") == (merges, merges)


def test_a_dry_run_plans_and_tells_nothing_of_writing(vmem):
    for text in PORTS[:3]:
        vmem.add(text, allow_duplicate=True)
    told = Told()
    vmem.maintenance.organize(dry_run=True, force=True, progress=told)
    assert {what for _, _, what in told.calls} == {"planning"}


def test_locomo_tells_every_question_it_asks(tmp_path):
    from memlane.evaluation import locomo

    data = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
    if not data.exists():
        pytest.skip(f"needs the LoCoMo development split at {data}")
    sample = json.loads(data.read_text(encoding="utf-8"))[:2]
    small = tmp_path / "two.json"
    small.write_text(json.dumps(sample), encoding="utf-8")
    told = Told()

    def search(mem, query, limit):
        return [h.record.id for h in mem.search(query, mode="keyword", limit=limit, scope="all")]

    rows = list(locomo.run(small, search, k=10, progress=told))
    done, total, _ = told.calls[-1]
    assert done == total == len(rows)
    assert [c[2].endswith("writing") for c in told.calls].count(True) == 2


def test_upkeep_tells_each_step_as_it_starts(mem, tmp_path):
    from datetime import UTC, datetime, timedelta

    from memlane.hooks import upkeep
    from memlane.model import Cadence

    options = upkeep.UpkeepOptions(
        hook_dir=tmp_path / "hooks",
        backup_dir=tmp_path / "backups",
        backup_retention=2,
        backup_every=timedelta(hours=24),
        sweep_retention_days=7,
        cadence=Cadence(7, 0.2),
        working_set=64,
    )
    steps: list[str] = []
    report = upkeep.run(lambda: mem, options, datetime.now(UTC), steps.append)
    assert steps == list(report.steps) == ["backup", "sweep", "organize"]


def test_eval_secrets_draws_a_bar_on_a_terminal_only(run, terminal):
    drawn = run("eval", "secrets")
    assert drawn.exit_code == 0 and "secrets" in terminal.getvalue()
    assert "━" in terminal.getvalue()
    assert run("eval", "secrets", "--json").exit_code == 0
    quiet_from = len(terminal.getvalue())
    run("eval", "secrets", "--json")
    assert terminal.getvalue()[quiet_from:] == ""


def test_auto_anchor_tells_every_memory_it_goes_through(vmem):
    for text in FACTS:
        vmem.add(text)
    told: list[tuple[int, int]] = []
    plans = vmem.auto_anchor(dry_run=True, progress=lambda done, total: told.append((done, total)))
    assert told == [(n, len(FACTS)) for n in range(1, len(FACTS) + 1)]
    assert len(plans) == len(FACTS)


def test_steps_a_command_reports_itself_leave_no_lines(terminal):
    with progress.progress_steps("upkeep", leave=False) as step:
        step("backup")
        step("sweep")
    assert "sweep" in terminal.getvalue() and "done:" not in terminal.getvalue()


@pytest.mark.sqlite_only  # takes the store back a schema version with sqlite3
def test_opening_a_store_an_older_memlane_made_names_its_migration(run, db_path, terminal):
    assert run("add", "The proxy listens on port 8080.").exit_code == 0
    conn = sqlite3.connect(db_path)
    conn.executescript(
        "DROP TRIGGER keyword_stale_insert; DROP TRIGGER keyword_stale_update; "
        "DROP TRIGGER keyword_stale_delete; DROP TABLE keyword_term; DROP TABLE keyword_row; "
        "DROP TABLE keyword_stale; DELETE FROM schema_migrations WHERE version = 14;"
    )
    conn.close()
    assert [n for n, _ in Memory.schema_status(db_path).pending] == [14]
    listed = run("list")
    assert listed.exit_code == 0 and "proxy" in listed.stdout
    assert "migrating the schema" in terminal.getvalue()
    assert not Memory.schema_status(db_path).pending
    assert "migrating" not in listed.stderr
    terminal.truncate(0)
    assert run("list").exit_code == 0
    assert "migrating" not in terminal.getvalue()  # nothing pending: nothing drawn
