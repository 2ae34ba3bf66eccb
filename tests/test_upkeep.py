"""Upkeep: `consolidate --prune` retires what nobody uses, `sweep` removes the hooks'
stale files, the capture log records what the hooks captured (and `import captures`
replays it), and the session-start hook runs what is due in the background."""

from __future__ import annotations

import fcntl
import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memlane.hooks import captures, events, host, queue, state, upkeep
from memlane.lifecycle.prune import EPHEMERAL, UNUSED, PruneRules, rule_for
from memlane.model import Kind, Record, ResonanceType, Signal, State, replace

PAYLOADS = Path(__file__).resolve().parent / "hook_payloads" / "claude-code"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
OLD = NOW - timedelta(days=40)


def rec(**fields: Any) -> Record:
    """A live record written 40 days before NOW, never used."""
    base: dict[str, Any] = {
        "id": "m-1", "scope": "global", "title": "t", "body": "b", "kind": Kind.FACT,
        "category": "fact", "created_at": OLD, "updated_at": OLD, "valid_from": OLD,
        "version_from": OLD, "dedup_hash": "h",
    }  # fmt: skip
    return Record(**{**base, **fields})


UNGROUNDED = {"signal": Signal.NONE, "confidence": 0.2, "importance": 3}
RULES = PruneRules(30)


# ---- consolidate --prune: the rules ------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "rule"),
    [
        (UNGROUNDED, UNUSED),
        ({**UNGROUNDED, "created_at": NOW - timedelta(days=10)}, None),  # too young
        ({**UNGROUNDED, "signal": None}, None),  # its author's deliberate note
        ({**UNGROUNDED, "signal": Signal.USER}, None),  # grounded
        ({**UNGROUNDED, "confidence": 0.6}, None),
        ({**UNGROUNDED, "importance": 6}, None),  # marked as mattering
        ({**UNGROUNDED, "retrieval_count": 1}, None),
        ({**UNGROUNDED, "applied_count": 1}, None),
        ({**UNGROUNDED, "surfaced_count": 2, "last_surfaced": NOW - timedelta(days=3)}, None),
        ({**UNGROUNDED, "surfaced_count": 2, "last_surfaced": NOW - timedelta(days=35)}, UNUSED),
        ({**UNGROUNDED, "resonance_type": ResonanceType.FOUNDATIONAL}, None),
        ({**UNGROUNDED, "superseded_at": OLD}, None),  # not live: nothing to retire
        ({"ephemeral": True}, EPHEMERAL),
        ({"resonance_type": ResonanceType.SESSION}, EPHEMERAL),
        ({"ephemeral": True, "last_retrieved": NOW - timedelta(days=2)}, None),
        ({"ephemeral": True, "updated_at": NOW - timedelta(days=2)}, None),
        ({"ephemeral": True, "kind": Kind.THREAD, "state": State.OPEN}, None),
        ({"ephemeral": True, "importance": 8}, None),
        ({}, None),  # an ordinary old note
    ],
)
def test_prune_rules(fields, rule):
    assert rule_for(rec(**fields), NOW, RULES) == rule


def aged(mem, memory_id: str, days: float, **fields: Any) -> None:
    """Move a memory's creation and last change `days` into the past."""
    record = mem.store.get(memory_id)
    back = timedelta(days=days)
    with mem.store.write() as w:
        w.replace(replace(record, created_at=record.created_at - back,
                          updated_at=record.updated_at - back, **fields), None)  # fmt: skip


def test_prune_retires_by_the_rules_and_a_dry_run_writes_nothing(mem, run):
    unused = mem.add("Maybe the flaky test is a timezone issue.", signal="none", importance=3)
    used = mem.add("Maybe the cache key misses the locale.", signal="none", importance=3)
    noted = mem.add("The staging database is called orchid.", importance=3)
    young = mem.add("Perhaps the build cache is cold.", signal="none", importance=3)
    idle = mem.add("Chose Typst over mdBook for the docs.", type="decision")
    for record in (unused, noted, idle):
        aged(mem, record.id, 45)
    aged(mem, used.id, 45, retrieval_count=1)  # recalled once: used
    before = run("export", "--include-superseded").stdout
    dry = run("consolidate", "--prune", "--dry-run", "--json")
    assert dry.exit_code == 0, dry.stderr
    planned = dry.json()
    assert planned["status"] == "planned"
    assert {p["id"]: p["rule"] for p in planned["pruned"]} == {
        unused.id: "unused",
        idle.id: "ephemeral",
    }
    assert run("export", "--include-superseded").stdout == before  # nothing written
    done = run("consolidate", "--prune", "--json").json()
    assert {p["id"] for p in done["pruned"]} == {unused.id, idle.id}
    retired = mem.get(unused.id)
    assert not retired.live and retired.superseded_by is None
    assert retired.supersede_reason.startswith("pruned")
    assert all(mem.get(i.id).live for i in (used, noted, young))
    text = run("consolidate", "--prune", "--force")
    assert text.exit_code == 0 and "pruned" not in text.stdout  # nothing left to prune


# ---- sweep ---------------------------------------------------------------------------------


def put(path: Path, text: str, days_old: float = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    when = time.time() - days_old * 86400
    os.utime(path, (when, when))
    return path


@pytest.fixture
def hook_dir(tmp_path: Path, cli_env: dict[str, str]) -> Path:
    where = tmp_path / "hooks"
    cli_env["MEMLANE_HOOK_DIR"] = str(where)
    return where


@pytest.fixture
def hook_files(hook_dir: Path) -> dict[str, Path]:
    """A hook dir as weeks of sessions leave it."""
    item = '[{"id": "q-1", "message": "No, use pnpm.", "type": "correction", "patterns": [], '
    item += '"confidence": 0.9, "source": "t", "turn": 1, "queued_at": "2026-11-01T00:00:00Z"}]'
    return {
        "old_shown": put(state.shown_file(hook_dir, "s-old"), "{}", 20),
        "new_shown": put(state.shown_file(hook_dir, "s-new"), "{}", 1),
        "old_cursor": put(state.cursor_file(hook_dir, "s-old"), "{}", 20),
        "new_cursor": put(state.cursor_file(hook_dir, "s-new"), "{}"),
        "draft": put(hook_dir / state.CURSOR_DIR / ".write-x1", "{", 20),
        "waiting_queue": put(queue.path_for(hook_dir, "project:a"), item, 20),
        "emptied_queue": put(queue.path_for(hook_dir, "project:b"), "[]", 20),
        "old_captures": put(hook_dir / captures.CAPTURE_DIR / "2026-10-01.jsonl", "{}\n", 60),
        "log": put(hook_dir / state.LOG_NAME, "{}\n", 30),
    }


SWEPT = {"old_shown", "old_cursor", "draft", "emptied_queue"}


def test_sweep_removes_stale_session_files_only_and_a_dry_run_nothing(run, hook_files):
    size = sum(hook_files[k].stat().st_size for k in SWEPT)
    dry = run("sweep", "--dry-run", "--json")
    assert dry.exit_code == 0, dry.stderr
    listed = {Path(r["path"]) for r in dry.json()["removed"]}
    assert listed == {hook_files[k] for k in SWEPT}
    assert all(p.exists() for p in hook_files.values())  # a dry run removes nothing
    done = run("sweep", "--json").json()
    assert (done["count"], done["bytes"]) == (len(SWEPT), size)
    assert {k for k, p in hook_files.items() if not p.exists()} == SWEPT
    kinds = {r["kind"] for r in done["removed"]}
    assert kinds == {"shown", "cursors", "draft", "queue"}
    captured = run("sweep", "--captures-older-than", "30")
    assert captured.exit_code == 0 and "Removed 1 file(s), 3 bytes" in captured.stdout
    assert not hook_files["old_captures"].exists() and hook_files["log"].exists()


def test_sweep_leaves_what_a_hook_is_writing(run, hook_dir, hook_files):
    lock = hook_dir / state.SHOWN_DIR / state.SHOWN_LOCK
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a hook rewriting what its session was shown
        result = run("sweep", "--json")
    finally:
        os.close(fd)
    report = result.json()
    assert report["busy"] == [str(hook_dir / state.SHOWN_DIR)]
    assert hook_files["old_shown"].exists() and not hook_files["old_cursor"].exists()
    assert "in use by a hook" in result.stderr
    assert run("sweep").exit_code == 0 and not hook_files["old_shown"].exists()


def test_sweep_refuses_a_bad_age_and_creates_nothing(run, hook_dir, tmp_path):
    bad = run("sweep", "--older-than", "0")
    assert bad.exit_code == 2 and "--older-than" in bad.stderr
    assert run("sweep", "--json").json()["count"] == 0
    assert not hook_dir.exists() and not (tmp_path / "memlane.db").exists()


# ---- the capture log -----------------------------------------------------------------------


def stop_hook(run: Any, project: Path) -> Any:
    """The recorded Claude Code Stop, over its transcript (a person pastes a token)."""
    project.mkdir(exist_ok=True)
    (project / "transcript.jsonl").write_bytes((PAYLOADS / "transcript.jsonl").read_bytes())
    data = json.loads((PAYLOADS / "stop.json").read_text(encoding="utf-8"))
    data.update(cwd=str(project), transcript_path=str(project / "transcript.jsonl"))
    result = run("hook", "stop", "--json", input=json.dumps(data))
    assert result.exit_code == 0
    return result.json()


def test_a_hook_logs_what_it_captured_redacted_and_import_replays_it(
    run, hook_dir, tmp_path, cli_env
):
    report = stop_hook(run, tmp_path / "proj")
    assert report["reason"] == "captured"
    [day] = (hook_dir / captures.CAPTURE_DIR).glob("*.jsonl")
    assert day.name == f"{datetime.now(UTC).date().isoformat()}.jsonl"
    lines = [json.loads(line) for line in day.read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in lines] == report["captured"]
    assert {line["event"] for line in lines} == {"stop"}
    first = lines[0]
    assert first["session"] == "8f1c2a4e-5b7d-4c1a-9e3f-2d6b8a0c4e71" and first["scope"]
    assert {"kind", "content", "tags", "taint", "source", "at"} <= set(first)
    [secret] = [line for line in lines if "staging API token" in line["content"]]
    assert "ghp_" not in day.read_text(encoding="utf-8")
    assert "[REDACTED:" in secret["content"]

    again = run("import", "captures", str(day.parent), "--json")
    assert again.exit_code == 0, again.stderr
    assert again.json()["added"] == []  # the store has every one of them

    cli_env["MEMLANE_DB"] = str(tmp_path / "other.db")
    fresh = run("import", "captures", str(day), "--json").json()
    assert len(fresh["added"]) == len(lines)
    shown = run("show", fresh["added"][lines.index(secret)], "--json").json()
    assert shown["body"] == secret["content"] and "captured" in shown["tags"]


def test_the_capture_log_can_be_turned_off(run, hook_dir, tmp_path, cli_env):
    cli_env["MEMLANE_CAPTURE_LOG"] = "0"
    assert stop_hook(run, tmp_path / "proj")["captured"]
    assert not (hook_dir / captures.CAPTURE_DIR).exists()


def test_a_line_that_is_not_the_logs_is_reported_and_the_rest_land(run, tmp_path):
    good = {"kind": "decision", "content": "We decided to ship on Tuesdays.", "scope": "global",
            "session": "s-1", "tags": ["captured"]}  # fmt: skip
    path = put(tmp_path / "2026-12-01.jsonl", "\n".join(
        [json.dumps(good), '{"kind": "fact"}', "not json", ""]))  # fmt: skip
    result = run("import", "captures", str(path), "--json")
    assert result.exit_code == 2
    report = result.json()
    assert len(report["added"]) == 1
    assert [e["line"] for e in report["errors"]] == [2, 3]


# ---- upkeep at session start ---------------------------------------------------------------


@pytest.mark.sqlite_only  # a backup is a SQLite snapshot
def test_session_start_runs_a_due_backup_in_the_background(
    run_process, cli_env, hook_dir, tmp_path
):
    cli_env["MEMLANE_HOOK_UPKEEP"] = "1"
    cli_env["MEMLANE_HOOK_DIR"] = str(hook_dir)
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    data = json.loads((PAYLOADS / "session-start.json").read_text(encoding="utf-8"))
    data.update(cwd=str(project), transcript_path=str(project / "t.jsonl"))
    started = time.monotonic()
    result = run_process("hook", "session-start", "--json", input=json.dumps(data))
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["details"]["upkeep"] == "started"
    assert took < HOOK_BUDGET_S
    backups = tmp_path / "backups"
    entry = wait_for(lambda: upkeep_lines(hook_dir))
    assert entry[0]["backup"].startswith("snapshot") and entry[0]["busy"] is False
    assert len(list(backups.glob("memlane-*.db"))) == 1
    # Within the hour the hook starts none, whatever is due.
    second = run_process("hook", "session-start", "--json", input=json.dumps(data))
    assert json.loads(second.stdout)["details"]["upkeep"] == "not due"


def test_one_upkeep_at_a_time_and_a_failed_step_stops_no_other(run, hook_dir, monkeypatch):
    assert run("add", "The staging host is db-7.").exit_code == 0
    hook_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(hook_dir / upkeep.LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # an upkeep running
        busy = run("upkeep", "--json").json()
        assert busy == {"busy": True, "steps": {}}
        assert upkeep.start(["false"], hook_dir, datetime.now(UTC)) == "running"
    finally:
        os.close(fd)
    put(hook_dir / "backups", "a file where the snapshots' folder should be")
    monkeypatch.setenv("MEMLANE_BACKUP_DIR", str(hook_dir / "backups"))
    done = run("upkeep", "--json").json()
    assert done["steps"]["backup"].startswith("failed") and "removed" in done["steps"]["sweep"]
    assert run("upkeep", "--json").json()["steps"]["sweep"] == "not due"  # once a day


def test_upkeep_on_a_missing_store_does_nothing_and_says_so(run, hook_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLANE_BACKUP_DIR", str(tmp_path / "backups"))
    missing = tmp_path / "store" / "m.db"
    missing.parent.mkdir()
    done = run("--db", str(missing), "upkeep")
    assert (
        done.exit_code == 0
        and done.stderr == f"note: upkeep: no store at {missing}: nothing to do\n"
    )
    assert run("--db", str(missing), "upkeep", "--json").json() == {"busy": False, "steps": {}}
    assert list(missing.parent.iterdir()) == []
    assert not hook_dir.exists() and not (tmp_path / "backups").exists()


def test_a_failing_upkeep_start_never_changes_the_answer(mem, hook_dir, tmp_path):
    mem.add("Never deploy on Fridays.", kind="constraint", importance=9, scope="global")
    start = host.Event(host.SESSION_START, host.CLAUDE_CODE, session_id="s-1")
    plain = events.Options(hook_dir=hook_dir)
    broken = events.Options(hook_dir=hook_dir, upkeep=(str(tmp_path / "no-such-program"),))
    answer = events.session_start(start, lambda: mem, plain)
    failed = events.session_start(start, lambda: mem, broken)
    assert failed.details["upkeep"].startswith("failed")
    assert (failed.reason, failed.context) == (answer.reason, answer.context)
    assert answer.reason == "injected" and "Fridays" in (answer.context or "")


HOOK_BUDGET_S = 10.0  # far below the 30 s `install` gives a hook; a backup is not waited for


def upkeep_lines(hook_dir: Path) -> list[dict[str, Any]]:
    log = hook_dir / state.LOG_NAME
    if not log.exists():
        return []
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line.get("event") == "upkeep"]


def wait_for(probe: Any, seconds: float = 60.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("the background upkeep did not finish")
