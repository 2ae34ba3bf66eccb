"""Backup and restore: verified online snapshots, retention, single
flight, and a restore that checks before and after and keeps what it replaced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from memlane import Conflict, Context, Invalid, Memory, Unavailable
from memlane.services import backup as backup_module
from memlane.services.backup import single_flight, snapshots
from memlane.store import Counts
from memlane.store.sqlite.backup import SNAPSHOT, verify


@pytest.fixture
def filled(mem: Memory) -> Memory:
    ids = [mem.add(f"Fact {i}: the deploy runs on host {i}.").id for i in range(20)]
    mem.invalidate(ids[-1], "moved")
    return mem


def test_a_snapshot_is_verified_and_holds_the_store(filled, tmp_path):
    report = filled.admin.backup(tmp_path / "snaps")
    assert report.path is not None and report.path.parent == tmp_path / "snaps"
    assert report.counts == Counts(total=20, live=19)
    checked = verify(report.path, report.counts)
    assert checked.ok and checked.integrity == "ok"
    with Memory.open(report.path, context=Context()) as copy:
        assert copy.stats().total == 20
        assert {r.body for r in copy.list(scope="all", limit=0)} == {
            r.body for r in filled.list(scope="all", limit=0)
        }


def test_retention_deletes_only_the_oldest_snapshot_files(filled, tmp_path):
    out = tmp_path / "snaps"
    out.mkdir()
    keep = [out / "notes.txt", out / "memlane.db.pre-restore-20260101T000000000000Z"]
    for path in keep:
        path.write_text("mine")
    made = [filled.admin.backup(out, retention=3).path for _ in range(5)]
    assert snapshots(out) == made[-3:]
    assert all(p.read_text() == "mine" for p in keep)
    with pytest.raises(Invalid):
        filled.admin.backup(out, retention=0)


def test_if_due_skips_a_fresh_snapshot(filled, tmp_path):
    first = filled.admin.backup(tmp_path, due_after=timedelta(hours=24))
    assert first.path is not None
    again = filled.admin.backup(tmp_path, due_after=timedelta(hours=24))
    assert again.path is None and again.skipped == "not due"
    assert filled.admin.backup(tmp_path, due_after=timedelta(microseconds=1)).path is not None


def test_one_backup_at_a_time(filled, tmp_path):
    with single_flight(tmp_path) as mine:
        assert mine
        report = filled.admin.backup(tmp_path)
    assert report.path is None and report.skipped == "lock" and snapshots(tmp_path) == []
    assert filled.admin.backup(tmp_path).path is not None  # released with the holder


def test_a_snapshot_that_fails_verification_is_deleted(filled, tmp_path, monkeypatch):
    def off_by_one(path: Path, expected: Counts | None = None):
        assert expected is not None
        return verify(path, Counts(expected.total + 1, expected.live))

    monkeypatch.setattr(backup_module, "verify", off_by_one)
    with pytest.raises(Unavailable, match="failed verification"):
        filled.admin.backup(tmp_path)
    assert snapshots(tmp_path) == []


class _Killed(BaseException):
    """A kill the code under test does not catch."""


def test_a_run_killed_mid_copy_leaves_no_file_under_a_snapshots_name(filled, tmp_path, monkeypatch):
    taken = filled.store.snapshot

    def killed(path: Path) -> Counts:
        taken(path)
        with open(path, "r+b") as half:  # the copy stops halfway
            half.truncate(path.stat().st_size // 2)
        raise _Killed  # the process dies here

    monkeypatch.setattr(filled.store, "snapshot", killed)
    with pytest.raises(_Killed):
        filled.admin.backup(tmp_path)
    assert snapshots(tmp_path) == []
    [draft] = [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    assert not SNAPSHOT.match(draft.name)
    monkeypatch.undo()
    due = filled.admin.backup(tmp_path, due_after=timedelta(hours=24))  # not taken for a snapshot
    assert due.path is not None and verify(due.path, due.counts).ok
    assert not draft.exists()  # the next run removed the dead run's draft
    check = next(
        c for c in filled.admin.doctor(tmp_path, timedelta(hours=24)) if c.name == "backup"
    )
    assert due.path.name in check.detail


def test_verify_finds_a_damaged_file(filled, tmp_path):
    path = filled.admin.backup(tmp_path).path
    damaged = tmp_path / "damaged.db"
    data = bytearray(path.read_bytes())
    page = 4096
    data[page * 2 : page * 2 + 512] = os.urandom(512)
    damaged.write_bytes(bytes(data))
    checked = verify(damaged)
    assert not checked.ok
    (tmp_path / "empty.db").write_bytes(b"")
    assert not verify(tmp_path / "empty.db").ok  # no memlane schema


def test_backups_during_concurrent_writes_are_consistent(db_path, tmp_path):
    with Memory.open(db_path, context=Context()) as mem:
        mem.add("seed")
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(db_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        with Memory.open(db_path, context=Context()) as mem:
            give_up = time.monotonic() + 120
            while mem.stats().total < 5 and time.monotonic() < give_up:
                time.sleep(0.1)  # the writer is under way (a loaded machine starts it late)
            reports = []
            for _ in range(4):
                reports.append(mem.admin.backup(tmp_path / "snaps", retention=10))
                time.sleep(0.2)
    finally:
        writer.terminate()
        writer.wait(timeout=30)
    totals = [r.counts.total for r in reports if r.counts]
    assert len(totals) == 4 and totals == sorted(totals) and totals[0] >= 5
    for report in reports:
        assert verify(report.path, report.counts).ok


_WRITER = """
import sys
from memlane import Context, Memory
with Memory.open(sys.argv[1], context=Context()) as mem:
    i = 0
    while True:
        mem.add(f"concurrent write {i}")
        i += 1
"""


def test_restore_refuses_checks_and_keeps_what_it_replaces(filled, db_path, tmp_path):
    snap = filled.admin.backup(tmp_path).path
    later = filled.add("Written after the snapshot.").id
    with pytest.raises(Conflict, match="--force"):
        Memory.restore_snapshot(db_path, snap)
    assert filled.get(later)
    filled.close()
    Path(f"{db_path}-shm").write_bytes(b"stale")
    report = Memory.restore_snapshot(db_path, snap, force=True)
    assert report.counts == Counts(20, 19) and report.kept is not None
    assert not Path(f"{db_path}-shm").exists() or Path(f"{db_path}-shm").read_bytes() != b"stale"
    with Memory.open(db_path, context=Context()) as restored:
        assert restored.stats().total == 20
        with pytest.raises(Exception, match="no memory"):
            restored.get(later)
    with Memory.open(report.kept, context=Context()) as kept:
        assert kept.get(later).body == "Written after the snapshot."
    assert not SNAPSHOT.match(report.kept.name)  # outside retention


def test_restore_refuses_a_damaged_snapshot_and_a_held_maintenance_lock(filled, db_path, tmp_path):
    bad = tmp_path / "memlane-20260101T000000000000Z.db"
    bad.write_bytes(b"not a database at all" * 100)
    before = db_path.read_bytes()
    with pytest.raises(Invalid, match="not a sound snapshot"):
        Memory.restore_snapshot(db_path, bad, force=True)
    assert db_path.read_bytes() == before
    snap = filled.admin.backup(tmp_path / "snaps").path
    with filled.maintenance.lock("consolidate"), pytest.raises(Conflict, match="lock"):
        Memory.restore_snapshot(db_path, snap, force=True)


def test_restore_into_a_new_place_needs_no_force(filled, tmp_path):
    snap = filled.admin.backup(tmp_path).path
    target = tmp_path / "fresh" / "memlane.db"
    report = Memory.restore_snapshot(target, snap)
    assert report.kept is None and report.counts == Counts(20, 19)


def test_cli_backup_and_restore(run, tmp_path, db_path):
    run("add", "A fact worth keeping.")
    out = tmp_path / "snaps"
    made = run("backup", "--out-dir", str(out), "--json")
    assert made.exit_code == 0, made.stderr
    path = json.loads(made.stdout)["path"]
    assert json.loads(made.stdout)["total"] == 1
    assert run("backup", "--out-dir", str(out), "--if-due").stdout == ""
    refused = run("restore", "--from", path)
    assert refused.exit_code == 2 and "--force" in refused.stderr
    assert run("restore", "abc", "--from", path).exit_code == 2
    done = run("restore", "--from", path, "--force", "--json")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["kept"]


def test_the_admin_methods_old_names_still_work_with_a_warning(filled, tmp_path):
    with pytest.warns(DeprecationWarning, match=r"Memory\.backup is now Memory\.admin\.backup"):
        report = filled.backup(tmp_path)
    assert report.path is not None and report.counts == Counts(20, 19)
    with pytest.warns(DeprecationWarning, match=r"Memory\.doctor is now Memory\.admin\.doctor"):
        checks = filled.doctor(tmp_path)
    assert [c.name for c in checks] == [c.name for c in filled.admin.doctor(tmp_path)]
