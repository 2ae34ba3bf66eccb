"""SQLite failures that are about the file, not the query, as memlane's errors.

A damaged page, a full disk, a read-only file or a failing disk can surface at any
statement and at any row fetched. The store's connection and cursors (`Guarded...`)
turn those into one-line errors that name the file, the problem and the fix; every
other error (a lock, a constraint) passes through unchanged for the store's own
handling. `integrity` is what `doctor` runs over a file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from memlane.errors import MemlaneError, StoreDamaged, Unavailable

# Primary result codes (the low byte of an extended one).
_READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 8, 10, 11, 13, 14, 26
_FAULTS = (sqlite3.DatabaseError, UnicodeDecodeError)
_DAMAGED_FIX = "run `memlane doctor`, then `memlane restore --from SNAPSHOT --force` from a backup"
# How the driver reports a stored TEXT value that is not UTF-8 (it has no error code).
_UNDECODABLE = "Could not decode to UTF-8"
# What quick_check prints that is not a problem: its all-clear and its headings.
_NOT_PROBLEMS = frozenset({"ok", "*** in database main ***", ""})
# The FTS5 tables whose index `integrity` checks against their content.
FTS_TABLES = ("memory_fts", "version_fts")


def fault(exc: BaseException, location: str) -> MemlaneError | None:
    """The memlane error a driver failure on `location` is, or None when it is not a
    fault of the file (the caller then re-raises the original)."""
    if isinstance(exc, UnicodeDecodeError) or str(exc).startswith(_UNDECODABLE):
        return StoreDamaged(
            f"{location} holds a text that is not UTF-8: the file is damaged; {_DAMAGED_FIX}"
        )
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return None
    primary, detail = code & 0xFF, str(exc)
    if primary == _NOTADB:
        return StoreDamaged(
            f"{location} is not a database, or its header is damaged; {_DAMAGED_FIX}"
        )
    if primary == _CORRUPT:
        return StoreDamaged(f"{location} is damaged ({detail}); {_DAMAGED_FIX}")
    if primary == _FULL or "file too large" in detail.lower():
        return Unavailable(
            f"cannot write {location}: the disk is full or the file size limit "
            "was reached; nothing was written. Free space and retry"
        )
    if primary == _READONLY:
        return read_only(location)
    if primary == _CANTOPEN:
        return Unavailable(
            f"cannot open {location} ({detail}): check that the file and its "
            "directory exist and may be read (and written, to write)"
        )
    if primary == _IOERR:
        return Unavailable(
            f"disk I/O error on {location} ({detail}): check the disk and its "
            "free space, then run `memlane doctor`"
        )
    return None


def read_only(location: str) -> Unavailable:
    return Unavailable(
        f"{location} is read-only: nothing was written. Writing needs write "
        "permission on the file and its directory"
    )


def _raise_fault(exc: BaseException, location: str) -> None:
    translated = fault(exc, location)
    if translated is not None:
        raise translated from None


class GuardedCursor(sqlite3.Cursor):
    """A cursor whose statements and fetches raise file faults as memlane errors."""

    def _where(self) -> str:
        return str(getattr(self.connection, "location", "the store"))

    def execute(self, sql: str, parameters: Any = (), /) -> GuardedCursor:
        try:
            super().execute(sql, parameters)
        except _FAULTS as exc:
            _raise_fault(exc, self._where())
            raise
        return self

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> GuardedCursor:
        try:
            super().executemany(sql, seq_of_parameters)
        except _FAULTS as exc:
            _raise_fault(exc, self._where())
            raise
        return self

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except _FAULTS as exc:
            _raise_fault(exc, self._where())
            raise

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size if size is not None else self.arraysize)
        except _FAULTS as exc:
            _raise_fault(exc, self._where())
            raise

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except _FAULTS as exc:
            _raise_fault(exc, self._where())
            raise

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except _FAULTS as exc:
            _raise_fault(exc, self._where())
            raise


class GuardedConnection(sqlite3.Connection):
    """The store's connection: `location` names the file in errors; its statements
    (through `GuardedCursor`), scripts and commits raise file faults as memlane errors."""

    location = "the store"

    def cursor(self, factory: Any = GuardedCursor) -> Any:
        return super().cursor(factory)

    # The C `execute` runs the statement on the cursor without calling its Python
    # `execute`, so these go through the guarded one themselves.
    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> Any:
        return self.cursor().executemany(sql, seq_of_parameters)

    def executescript(self, sql_script: str, /) -> sqlite3.Cursor:
        try:
            return super().executescript(sql_script)
        except _FAULTS as exc:
            _raise_fault(exc, self.location)
            raise

    def commit(self) -> None:
        try:
            super().commit()
        except _FAULTS as exc:
            _raise_fault(exc, self.location)
            raise


def integrity(conn: sqlite3.Connection, writable: bool) -> list[str]:
    """What is wrong in the file `conn` reads: SQLite's quick_check (every page and
    index entry), then, when the file may be written, each FTS index against its
    content (an INSERT command SQLite runs in a transaction, rolled back here)."""
    try:
        found = "\n".join(str(r[0]) for r in conn.execute("PRAGMA quick_check"))
        problems = [ln for ln in found.splitlines() if ln not in _NOT_PROBLEMS]
        problems += _undecodable(conn)
    except (*_FAULTS, MemlaneError) as exc:
        return [str(exc)]
    for table in FTS_TABLES if writable else ():
        try:
            conn.execute("SAVEPOINT fts_check")
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
        except (*_FAULTS, MemlaneError) as exc:
            problems.append(f"{table}: {exc}")
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK TO fts_check")
                conn.execute("RELEASE fts_check")
    return problems


def _undecodable(conn: sqlite3.Connection) -> list[str]:
    """Memories whose stored title, body or tags are not UTF-8 (quick_check reads
    them as bytes and finds nothing; every read of them fails)."""
    out = []
    for table, key in (("memory", "id"), ("memory_version", "memory_id")):
        rows = conn.execute(
            f"SELECT CAST({key} AS BLOB), CAST(title AS BLOB), CAST(body AS BLOB), "
            f"CAST(tags AS BLOB) FROM {table}"
        )
        for key_bytes, *texts in rows:
            try:
                for text in texts:
                    bytes(text or b"").decode("utf-8")
            except UnicodeDecodeError:
                out.append(
                    f"{table} {bytes(key_bytes).decode('utf-8', 'replace')}: a text is not UTF-8"
                )
    return out


def check_file(path: str) -> list[str]:
    """`integrity` over a file the store could not open, read-only, without a store."""
    try:
        conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return [f"cannot open: {exc}"]
    try:
        return integrity(conn, writable=False)
    finally:
        conn.close()
