"""Backups: verified snapshots of the store, kept to a retention count.

A snapshot counts only once it is verified: `integrity_check` passes and it holds the
memories (all and live) the store held at the instant it was taken. A snapshot that
fails is deleted and the run fails. One backup runs at a time per directory (an OS
file lock, so a crashed run holds nothing).
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import msgspec

from memlane.errors import Conflict, Invalid, Unavailable
from memlane.files import private_dirs
from memlane.locking import MaintenanceLock
from memlane.runtime import Runtime
from memlane.store import Counts, open_store
from memlane.store.sqlite.backup import (
    STAMP,
    Verification,
    publish,
    replace_file,
    snapshot_time,
    snapshots,
    verify,
)
from memlane.timeutil import utcnow

DEFAULT_RETENTION = 7
_SERVER_SCHEMES = ("postgresql://", "postgres://")
LOCK_FILE = ".memlane-backup.lock"
DRAFT_SUFFIX = ".partial"


class RestoreReport(msgspec.Struct, frozen=True):
    """A restore: the store replaced, the snapshot it came from, what it now holds,
    and the copy kept of the store it replaced (None: there was none)."""

    path: Path
    snapshot: Path
    counts: Counts | None
    kept: Path | None


class BackupReport(msgspec.Struct, frozen=True):
    """One backup run: the verified snapshot, or why none was taken."""

    path: Path | None
    counts: Counts | None = None
    deleted: tuple[Path, ...] = ()  # snapshots retention removed
    skipped: str | None = None  # "lock" | "not due"
    notice: str | None = None


def refuse_server_store(location: str, what: str = "backup") -> None:
    """Invalid for a database server's store: its own tools back it up and restore it.

    Trigger: `backup` or `restore --from` on a postgresql:// store. Why: a snapshot is
    a SQLite file copy; a server has pg_dump/pg_restore (consistent, online) and
    memlane's export is the portable copy. Outcome: one line naming those, nothing done.
    """
    if str(location).startswith(_SERVER_SCHEMES):
        shown = re.sub(r"^(\w+://[^:/@]*):[^@]*@", r"\1:***@", str(location))
        raise Invalid(
            f"{what} works on SQLite store files; {shown} is a PostgreSQL database: "
            "back it up with `pg_dump --format=custom --file memlane.dump URL` and restore "
            "with `pg_restore --clean --dbname URL memlane.dump`, or take a portable copy "
            "with `memlane export --include-superseded --include-private -o FILE`"
        )


@contextmanager
def single_flight(directory: Path) -> Iterator[bool]:
    """True while this process holds the directory's backup lock; False when another
    holds it. The kernel drops the lock with the process, so a crash leaves none."""
    private_dirs(directory)
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


class Backups:
    """Verified snapshots of the store, kept to a retention count."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def _store_file(self) -> Path:
        location = getattr(self.rt.store, "location", None)
        refuse_server_store(str(location))
        if not location or location == ":memory:":
            raise Invalid("backup works on a SQLite store file")
        return Path(location)

    def backup(
        self,
        out_dir: Path | None = None,
        retention: int = DEFAULT_RETENTION,
        due_after: timedelta | None = None,
    ) -> BackupReport:
        """Snapshot the store into `out_dir` (default: `backups/` beside the store),
        verify it, then delete the oldest snapshots beyond `retention`. With
        `due_after`, skip when the newest snapshot is younger than that."""
        refuse_server_store(str(getattr(self.rt.store, "location", "")))
        if retention < 1:
            raise Invalid("--retention must be at least 1")
        directory = out_dir or self._store_file().parent / "backups"
        if directory.exists() and not directory.is_dir():
            raise Invalid(f"{directory} is not a directory: give --out-dir a folder")
        with single_flight(directory) as mine:
            if not mine:
                return BackupReport(
                    None, skipped="lock", notice=f"another backup into {directory} is running"
                )
            newest = snapshots(directory)[-1:]
            now = utcnow()
            if due_after is not None and newest and now - snapshot_time(newest[0]) < due_after:
                when = snapshot_time(newest[0]).isoformat(timespec="seconds")
                return BackupReport(
                    None, skipped="not due", notice=f"not due: last snapshot {when}"
                )
            path = directory / f"memlane-{now.strftime(STAMP)}.db"
            counts = self._verified_snapshot(path)
            return BackupReport(path, counts, _retain(directory, retention))

    def _verified_snapshot(self, path: Path) -> Counts:
        """Take a snapshot under a draft name, verify it, then rename it into `path`.

        Trigger: a backup killed mid-copy. Why: a partial file under a snapshot's name
        would be taken for the newest snapshot (by doctor, by --if-due, by a restore).
        Outcome: only a verified, synced snapshot ever bears the name; a killed run's
        draft (hidden, never matched as a snapshot) is removed by the next run.
        """
        for left in path.parent.glob(f".memlane-*{DRAFT_SUFFIX}"):  # the lock is ours
            left.unlink(missing_ok=True)
        draft = path.with_name(f".{path.name}{DRAFT_SUFFIX}")
        counts = self.rt.store.snapshot(draft)
        checked = verify(draft, counts)
        if not checked.ok:
            draft.unlink(missing_ok=True)
            raise Unavailable(
                f"the snapshot failed verification and was deleted: {checked.problem}"
            )
        publish(draft, path)
        return counts


def _retain(directory: Path, retention: int) -> tuple[Path, ...]:
    """Delete the oldest snapshot files beyond `retention`; nothing else."""
    old = snapshots(directory)[:-retention]
    for path in old:
        path.unlink(missing_ok=True)
    return tuple(old)


def restore_snapshot(path: Path, snapshot: Path, *, force: bool = False) -> RestoreReport:
    """Replace the store at `path` with a verified snapshot. An existing store is
    replaced only with `force`, never while a maintenance run holds its lock, and only
    after a copy of it is kept beside it (outside the snapshot naming, so retention
    never deletes it). The restored store is verified again."""
    db, source = path.expanduser(), snapshot.expanduser()
    checked = check_snapshot(source)
    kept = None
    if db.exists() and db.stat().st_size > 0:
        if not force:
            raise Conflict(f"{db} exists; pass --force to replace it (a copy is kept)")
        current = open_store(db)
        try:
            with MaintenanceLock(current).held("restore"):
                kept = db.with_name(f"{db.name}.pre-restore-{utcnow():%Y%m%dT%H%M%S%fZ}")
                current.snapshot(kept)
        finally:
            current.close()
    return RestoreReport(db, source, put_in_place(db, source, checked), kept)


def put_in_place(db: Path, source: Path, checked: Verification) -> Counts | None:
    """Copy a checked snapshot over the store file `db` and verify the result."""
    private_dirs(db.parent)
    replace_file(db, source)
    again = verify(db, checked.counts)
    if not again.ok:
        raise Unavailable(f"the restored store failed verification: {again.problem}")
    return again.counts


def check_snapshot(path: Path) -> Verification:
    """A snapshot's verification; Invalid when it is not sound (nothing is touched)."""
    checked = verify(path)
    if not checked.ok:
        raise Invalid(f"not a sound snapshot: {checked.problem}")
    return checked
