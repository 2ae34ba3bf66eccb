"""Snapshots of a SQLite store: SQLite's online backup API, and their verification.

A snapshot is taken inside one read transaction of the source connection, so the
pages copied and the counts it is checked against are the same instant, whatever
other processes write meanwhile (WAL readers do not block writers).
"""

from __future__ import annotations

import os
import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from memlane.errors import Invalid, Unavailable
from memlane.store.base import Counts
from memlane.store.sqlite import schema

# Snapshot files: memlane-<UTC time>.db. Retention deletes only files of this shape, so
# a pre-restore copy or anything else in the directory is never touched.
SNAPSHOT = re.compile(r"^memlane-(\d{8}T\d{6}\d{6}Z)\.db$")
STAMP = "%Y%m%dT%H%M%S%fZ"

_COUNTS = (
    "SELECT COUNT(*), COALESCE(SUM(superseded_at IS NULL AND valid_until IS NULL), 0) FROM memory"
)


class Verification(msgspec.Struct, frozen=True):
    """What checking a snapshot found; `problem` is None when it is sound."""

    path: Path
    integrity: str
    counts: Counts | None
    schema_version: int | None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


def _counts(conn: sqlite3.Connection) -> Counts:
    total, live = conn.execute(_COUNTS).fetchone()
    return Counts(int(total), int(live))


def snapshot(conn: sqlite3.Connection, dest: Path) -> Counts:
    """Copy the store into `dest` (a new file) and return its counts at that instant."""
    try:  # owner-only, as the store it copies
        os.close(os.open(dest, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        raise Invalid(f"{dest} already exists; a snapshot never overwrites a file") from None
    target = sqlite3.connect(dest)
    try:
        conn.execute("BEGIN")  # one read snapshot for the counts and the pages
        try:
            counts = _counts(conn)
            conn.backup(target)
        finally:
            conn.execute("COMMIT")
        target.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
    except sqlite3.Error as exc:
        target.close()
        dest.unlink(missing_ok=True)
        raise Unavailable(f"the snapshot into {dest} failed: {exc}") from None
    target.close()
    return counts


def verify(path: Path, expected: Counts | None = None) -> Verification:
    """integrity_check, a schema memlane can read, and (given) the counts it must hold.
    Opens the file read-only: checking a snapshot never changes it."""
    if not path.is_file():
        return Verification(path, "missing", None, None, f"{path} does not exist")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return Verification(path, "unreadable", None, None, f"cannot open {path}: {exc}")
    try:
        return _checked(conn, path, expected)
    except sqlite3.DatabaseError as exc:
        return Verification(path, "unreadable", None, None, f"{path} is not a memlane store: {exc}")
    finally:
        conn.close()


def _checked(conn: sqlite3.Connection, path: Path, expected: Counts | None) -> Verification:
    rows = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    integrity = "ok" if rows == ["ok"] else "; ".join(rows[:5])
    version = schema.current_version(conn)
    if integrity != "ok":
        return Verification(path, integrity, None, version, f"integrity_check: {integrity}")
    if version == 0 or version > schema.LATEST:
        problem = f"schema version {version} is not one this memlane reads (1..{schema.LATEST})"
        return Verification(path, integrity, None, version, problem)
    counts = _counts(conn)
    if expected is not None and counts != expected:
        problem = f"holds {counts.total} memories ({counts.live} live), expected {expected.total} ({expected.live})"
        return Verification(path, integrity, counts, version, problem)
    return Verification(path, integrity, counts, version)


def publish(draft: Path, path: Path) -> None:
    """Give a verified draft its final name: its bytes synced first, the rename synced
    after, so a crash leaves either no snapshot or a whole one."""
    fd = os.open(draft, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(draft, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def replace_file(db: Path, source: Path) -> None:
    """Put a copy of `source` where the store `db` is, in one step, first removing the
    store's stale WAL and shared-memory files (they belong to the old file)."""
    import tempfile  # restores only

    fd, tmp = tempfile.mkstemp(dir=db.parent, prefix=f".{db.name}.restore-")
    try:
        with os.fdopen(fd, "wb") as out, source.open("rb") as src:
            while block := src.read(1 << 20):
                out.write(block)
            out.flush()
            os.fsync(out.fileno())
        for suffix in ("-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        os.replace(tmp, db)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def snapshots(directory: Path) -> list[Path]:
    """The snapshot files in a directory, oldest first."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if SNAPSHOT.match(p.name))


def snapshot_time(path: Path) -> datetime:
    found = SNAPSHOT.match(path.name)
    if found is None:
        raise Invalid(f"{path.name} is not a memlane snapshot name")
    return datetime.strptime(found.group(1), STAMP).replace(tzinfo=UTC)
