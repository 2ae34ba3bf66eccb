"""The embedded SQLite backend: WAL, busy timeout, one BEGIN IMMEDIATE per write."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import msgspec

from memlane.errors import Invalid, MemlaneError, NotFound, StoreDamaged, Unavailable
from memlane.files import private_dirs
from memlane.model import (
    Filters,
    Hit,
    JournalEntry,
    Link,
    LinkType,
    Mention,
    Record,
    Stats,
    Version,
    Vitals,
    effective_resonance,
)
from memlane.store import base
from memlane.store.base import SEARCH_STEPS, ChangeMark, Counts, SchemaStatus, Selection
from memlane.store.dialect import counts
from memlane.store.dialect import filters as shared
from memlane.store.dialect import relations as relation_sql
from memlane.store.dialect.relations import KEPT_BY_RELATION
from memlane.store.dialect.writes import SharedWrites
from memlane.store.parts import (
    EntityReads,
    RegistryReads,
    ReminderReads,
    SessionReads,
    WakeReads,
)
from memlane.store.sqlite import backup, coverage, faults, schema, sql
from memlane.store.sqlite import dump as dump_sql
from memlane.store.sqlite import entities as entity_sql
from memlane.store.sqlite.faults import GuardedConnection
from memlane.store.sqlite.rows import (
    COLUMNS,
    record_from_row,
    record_params,
    record_values,
    row_reader,
    version_columns,
    version_from_row,
    version_params,
)
from memlane.store.sqlite.turns import Turns, lock_path
from memlane.store.workers import workers
from memlane.timeutil import from_text, to_text, utcnow

if TYPE_CHECKING:
    from memlane.store.base import QueryVector
    from memlane.store.sqlite.postings import Postings, Ranked, Terms

# Read counters: explicit reads, passive injections, deliberate activations.
_COUNTERS = {
    "retrieval": ("retrieval_count", "last_retrieved"),
    "surfaced": ("surfaced_count", "last_surfaced"),
    "activation": ("activation_count", "last_activated"),
}
# Bytes of the file read through a memory map. Trigger: a new process (a cold `memlane
# recall`, a hook) starts with an empty page cache. Why: each page it reads was a
# read() into SQLite's cache; mapped, it is read in place from the OS cache. Outcome:
# a cold `memlane recall` starts faster (`memlane bench` times it).
MMAP_BYTES = 1 << 30
# A writer waits this long for its turn (see turns.py), and then for a writer outside
# memlane's turns, before giving up; writers holding the lock for milliseconds each,
# served in turn, never come close.
BUSY_TIMEOUT_S = 60.0
_BEGIN_ATTEMPTS = 5
_SYNCHRONOUS = {"full", "normal"}
# Rows per INSERT statement: well under SQLite's 32,766 bound variables.
_ROWS_PER_INSERT = 100
_ROW_MARKS = "(" + ", ".join("?" for _ in COLUMNS) + ")"


@functools.cache
def _insert_sql(rows: int) -> str:
    """A multi-row INSERT that skips (and so reports) rows whose id is already taken."""
    marks = ", ".join([_ROW_MARKS] * rows)
    return f"INSERT INTO memory ({', '.join(COLUMNS)}) VALUES {marks} ON CONFLICT(id) DO NOTHING"


_UPDATE_SQL = (
    f"UPDATE memory SET {', '.join(f'{c} = :{c}' for c in COLUMNS if c != 'id')} WHERE id = :id"
)
_VERSION_SQL = (
    f"INSERT INTO memory_version ({', '.join(version_columns())}) "
    f"VALUES ({', '.join(':' + c for c in version_columns())})"
)


def _effective_resonance(
    importance: int, resonance_type: str | None, clock_start: str, now: str | None
) -> float:
    at = from_text(now) if now else utcnow()
    return effective_resonance(importance, resonance_type, from_text(clock_start), at)


class SQLiteWriter(SharedWrites):
    """Operations inside one BEGIN IMMEDIATE transaction."""

    dialect = sql.SQLITE
    _conn: sqlite3.Connection

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store
        self._conn = store.conn
        self.purged = False

    def get(self, memory_id: str) -> Record | None:
        return self._store.get(memory_id)

    def find_duplicate(
        self, dedup_hash: str, session_id: str, owner: str | None, author: str | None, category: str
    ) -> str | None:
        row = self._conn.execute(
            "SELECT id FROM memory WHERE dedup_hash = ? AND session_id = ? AND category = ? "
            "AND owner IS ? AND source_agent IS ? "
            "AND superseded_at IS NULL AND valid_until IS NULL ORDER BY seq LIMIT 1",
            (dedup_hash, session_id, category, owner, author),
        ).fetchone()
        return str(row[0]) if row else None

    def insert(self, records: Sequence[Record]) -> list[str]:
        """Multi-row INSERTs: one statement per slice keeps the FTS trigger's work in
        memory until the statement ends, instead of flushing it row by row."""
        taken: list[str] = []
        for start in range(0, len(records), _ROWS_PER_INSERT):
            part = records[start : start + _ROWS_PER_INSERT]
            values = [v for record in part for v in record_values(record)]
            cursor = self._conn.execute(_insert_sql(len(part)), values)
            if cursor.rowcount != len(part):
                taken.extend(self._taken_ids(part))
        return taken

    def _taken_ids(self, part: Sequence[Record]) -> list[str]:
        """Ids of `part` whose row is not ours: the id belonged to another memory."""
        out = []
        for record in part:
            row = self._conn.execute(
                "SELECT created_at, dedup_hash FROM memory WHERE id = ?", (record.id,)
            ).fetchone()
            if row is None or (row[0], row[1]) != (to_text(record.created_at), record.dedup_hash):
                out.append(record.id)
        return out

    def replace(self, record: Record, prior: Version | None) -> None:
        if prior is not None:
            self._conn.execute(_VERSION_SQL, version_params(prior))
        cursor = self._conn.execute(_UPDATE_SQL, record_params(record))
        if cursor.rowcount != 1:
            raise Unavailable(f"memory {record.id} vanished during the write")

    def rewrite_version(self, version: Version) -> None:
        # Delete and insert: the version index follows inserts and deletes only.
        self._conn.execute(
            "DELETE FROM memory_version WHERE memory_id = ? AND number = ?",
            (version.memory_id, version.number),
        )
        self._conn.execute(_VERSION_SQL, version_params(version))

    def delete(self, memory_id: str) -> None:
        named = [
            r[0]
            for r in self._conn.execute(
                "SELECT entity_id FROM mention WHERE memory_id = ?", (memory_id,)
            )
        ]
        self._conn.execute("DELETE FROM memory_version WHERE memory_id = ?", (memory_id,))
        self._conn.execute(
            "DELETE FROM link WHERE source = ? OR target = ?", (memory_id, memory_id)
        )
        self._conn.execute("DELETE FROM mention WHERE memory_id = ?", (memory_id,))
        self._conn.execute("DELETE FROM embedding WHERE memory_id = ?", (memory_id,))
        self._conn.execute("DELETE FROM memory WHERE id = ?", (memory_id,))
        self._forget_wake(memory_id)
        # An entity only this memory named would keep its name in the file.
        self._conn.executemany(
            "DELETE FROM entity WHERE id = ? "
            "AND NOT EXISTS (SELECT 1 FROM mention WHERE entity_id = entity.id) "
            f"AND NOT EXISTS ({KEPT_BY_RELATION})",
            [(entity_id,) for entity_id in named],
        )
        self.purged = True

    def purge_index(self) -> None:
        """Trigger: memories were deleted. Why: FTS5 keeps deleted tokens in old
        segments until they merge, so their words would stay in the file. Outcome:
        merge every segment, once per transaction (secure_delete zeroes freed pages)."""
        for table in ("memory_fts", "version_fts"):
            self._conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        if coverage.covered(self._conn):  # the deleted memories' terms leave them too
            from memlane.store.sqlite import postings

            postings.merge(self._conn, stale_only=True)

    def set_mentions(self, mentions: Mapping[str, Sequence[Mention]]) -> None:
        entity_sql.set_mentions(self._conn, mentions)

    def merge_entities(self, source: str, target: str) -> None:
        relation_sql.repoint_relations(self.dialect, self._conn, source, target, utcnow())
        entity_sql.merge(self._conn, source, target)

    def add_link(self, link: Link) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO link(source, target, type, score, reason, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                link.source,
                link.target,
                link.type.value,
                link.score,
                link.reason,
                to_text(link.created_at or utcnow()),
            ),
        )

    def put_vectors(
        self,
        memory_id: str,
        profile: str,
        vectors: Sequence[tuple[int, bytes]],
        dim: int,
        content_hash: str,
    ) -> None:
        self._conn.execute(
            "DELETE FROM embedding WHERE memory_id = ? AND profile = ?", (memory_id, profile)
        )
        at = to_text(utcnow())
        self._conn.executemany(
            "INSERT INTO embedding(memory_id, profile, chunk, dim, vector, content_hash, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(memory_id, profile, chunk, dim, blob, content_hash, at) for chunk, blob in vectors],
        )

    def touch(self, memory_ids: Sequence[str], counter: str, at: datetime) -> None:
        count, last = _COUNTERS[counter]
        self._conn.executemany(
            f"UPDATE memory SET {count} = {count} + 1, {last} = ? WHERE id = ?",
            [(to_text(at), memory_id) for memory_id in memory_ids],
        )

    def drop_vectors(self) -> None:
        self._conn.execute("DELETE FROM embedding")

    def set_meta(self, key: str, value: str) -> None:
        self._conn.execute(
            "INSERT INTO store_meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def load(self, kind: str, row: Mapping[str, Any], allow_tombstones: bool) -> str:
        return dump_sql.load(self._conn, kind, row, allow_tombstones)

    def delete_link(self, link_id: str) -> Link | None:
        number = link_id.strip().removeprefix("l-")
        if not number.isdigit():
            return None
        row = self._conn.execute(
            f"SELECT {_LINK_COLUMNS} FROM link WHERE rowid = ?", (int(number),)
        ).fetchone()
        if row is None:
            return None
        self._conn.execute("DELETE FROM link WHERE rowid = ?", (int(number),))
        return _link(row)

    def journal(
        self,
        operation: str,
        memory_ids: Sequence[str | None],
        actor: str | None,
        detail: str | None = None,
    ) -> None:
        at = to_text(utcnow())
        self._conn.executemany(
            "INSERT INTO journal(at, operation, memory_id, actor, detail) VALUES (?, ?, ?, ?, ?)",
            [(at, operation, memory_id, actor, detail) for memory_id in memory_ids],
        )


_LINK_COLUMNS = "source, target, type, score, reason, created_at, rowid"


# `health`'s stale high-resonance memories: written as important (raw importance 7 or
# more, just under the wake cascade's core tier) and faded since below the review floor.
STALE_HIGH_IMPORTANCE = 7
STALE_FADED_BELOW = 5.0


def _link(row: Any) -> Link:
    return Link(row[0], row[1], LinkType(row[2]), row[3], row[4], from_text(row[5]), f"l-{row[6]}")


class _Matches(msgspec.Struct):
    """The rows a keyword match selected, best first; column 0 is FTS5's rank."""

    rows: list[sqlite3.Row]
    step: float = 0.0  # as-of reads: the ladder step, added to every score

    def scored(self) -> list[tuple[sqlite3.Row, float]]:
        return [(row, self.step - float(row[0])) for row in self.rows]


def _merged(first: list[sqlite3.Row], second: list[sqlite3.Row], limit: int) -> list[sqlite3.Row]:
    """Two pages of keyword matches (score, id, updated_at, seq) as the best `limit`,
    in `_search`'s order: score, then the newest update, then the newest row."""
    rows = sorted(first + second, key=lambda r: (r["updated_at"], r["seq"]), reverse=True)
    rows.sort(key=lambda r: float(r["score"]))  # stable: ties keep the newest first
    return rows[:limit]


# The keyword matches of :match, with FTS5's rank (BM25, negated: lower is better).
_FTS_HITS = (
    "SELECT rowid AS seq, 'm' AS src, rank AS score FROM memory_fts WHERE memory_fts MATCH :match"
)


# An all-words or most-words search of at least FEW_TERMS words, which seldom matches
# many memories, ranks its matches in the walk that finds them when there are at most
# FEW_MATCHES (see SQLiteStore._few_matches).
FEW_MATCHES = 64
FEW_TERMS = 4
# The matches `_few_matches` found, as `_FTS_HITS` gives them.
_FEW_HITS = "SELECT value ->> 0 AS seq, 'm' AS src, value ->> 1 AS score FROM json_each(:few)"
# A search through the stored postings first tries this many times the page it fills
# (see SQLiteStore._ranked).
RANKED_FIRST = 4
# Whether some memory holds a keyword term (see SQLiteStore._held).
_HOLDS = "SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT 1"
# Terms a store remembers some memory holds, at most (a few megabytes).
HELD_TERMS = 65_536


def _create(path: Path, synchronous: str) -> None:
    """Make a new store at `path` whole: built owner-only (0600, in directories made
    0700) under a temporary name, then linked into place.

    Trigger: the first open of a store path. Why: a store file must never exist half
    made, so that an empty file at a store's path is never one memlane is making (it
    is a truncated store, refused by `_check_not_empty`). Outcome: the file appears
    with its schema; a process that loses the race to create it uses the winner's.
    """
    private_dirs(path.parent)
    draft = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.new")
    os.close(os.open(draft, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600))
    try:
        SQLiteStore(draft, synchronous, _draft=True).close()
        try:
            os.link(draft, path)
        except FileExistsError:  # another process made it first
            pass
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(draft, path)
    finally:
        for leftover in (draft, Path(f"{draft}-wal"), Path(f"{draft}-shm")):
            leftover.unlink(missing_ok=True)


def _check_not_empty(path: Path) -> None:
    """A store file of 0 bytes (and no WAL to recover from) was truncated or made by
    something else: opening it would silently start an empty store in its place."""
    if not path.is_file():  # a device, a FIFO, a folder
        raise Invalid(f"{path} is not a regular file, so it holds no store: check --db")
    wal = Path(f"{path}-wal")
    if path.stat().st_size == 0 and not (wal.exists() and wal.stat().st_size > 0):
        raise StoreDamaged(
            f"{path} is empty (0 bytes), so it holds no store: restore it with `memlane "
            "restore --from SNAPSHOT --force`, or delete it to start a new store"
        )


def _connect(location: str, read_only: bool, lent: bool) -> GuardedConnection:
    """The store's connection: read-only (SQLite's mode=ro) when asked or when the
    file cannot be written, so reads work and a write is one clear error."""
    target, uri = location, False
    if read_only:
        file = Path(location).expanduser()
        target, uri = f"file:{quote(str(file))}?mode=ro", True
        # Trigger: a store on a read-only file system (or in a directory this process
        # may not write) with no -shm file beside it. Why: a WAL reader must create
        # one, and cannot. Outcome: opened immutable: nobody can write it meanwhile.
        if not os.access(file.parent, os.W_OK) and not Path(f"{file}-shm").exists():
            target += "&immutable=1"
    try:
        conn = sqlite3.connect(
            target,
            timeout=BUSY_TIMEOUT_S,
            isolation_level=None,
            check_same_thread=not lent,
            uri=uri,
            factory=GuardedConnection,
        )
    except sqlite3.Error as exc:
        raise Unavailable(f"cannot open {location}: {exc}") from None
    conn.location = location
    return conn


def schema_status(path: Path) -> SchemaStatus:
    """Where the schema of the store file at `path` stands; reads it without creating,
    migrating or writing anything."""
    if not path.exists():
        raise NotFound(f"no store at {path}")
    _check_not_empty(path)
    conn = _connect(str(path), read_only=True, lent=False)
    try:
        version = schema.current_version(conn)
    except sqlite3.DatabaseError as exc:
        raise Unavailable(f"{path} is not a memlane database: {exc}") from None
    finally:
        conn.close()
    schema.check_not_newer(version, str(path))
    pending = base.pending_migrations(version, schema.MIGRATIONS)
    return SchemaStatus(str(path), version, schema.LATEST, pending)


class SQLiteStore:
    """A memlane store in one SQLite file."""

    def __init__(
        self,
        path: str | Path,
        synchronous: str = "full",
        *,
        lent: bool = False,
        read_only: bool = False,
        migrate: bool = True,
        _draft: bool = False,
    ) -> None:
        """`lent`: a side reader's connection, which threads use in turn (see
        side_reader). `read_only`: open the file for reading only; a file this process
        may not write is opened so anyway. `migrate`: bring an older schema up to date
        (else such a store is refused with SchemaOutdated; a new one is always made
        whole). `_draft`: the temporary file `_create` builds."""
        self.location = str(path)
        self._auto_migrate = migrate
        if synchronous not in _SYNCHRONOUS:
            raise Invalid(f"invalid sqlite synchronous mode {synchronous!r}: use full or normal")
        on_disk = self.location != ":memory:"
        file = Path(self.location).expanduser()
        if on_disk and not _draft:
            if not file.exists():
                if read_only:
                    raise NotFound(f"no store at {file}")
                _create(file, synchronous)
            _check_not_empty(file)
        self.read_only = on_disk and (read_only or not os.access(file, os.W_OK))
        self.conn = _connect(self.location, self.read_only, lent)
        self._refuse_outdated()
        self.conn.row_factory = sqlite3.Row
        self.conn.create_function(
            "effective_resonance", 4, _effective_resonance, deterministic=True
        )
        self._configure(synchronous)
        turns = None if lent or _draft else lock_path(self.location)
        self._turns = Turns(turns) if turns is not None else None
        self.schema_version = self._migrate()
        # The feature parts read on this store's one connection.
        borrow = functools.partial(contextlib.nullcontext, self.conn)
        self.wake = WakeReads(sql.SQLITE, borrow)
        self.entities = EntityReads(sql.SQLITE, borrow, entity_sql.named)
        self.reminders = ReminderReads(sql.SQLITE, borrow)
        self.registries = RegistryReads(sql.SQLITE, borrow)
        self.sessions = SessionReads(sql.SQLITE, borrow)
        self._writing = False
        self._wrote = False
        self._side: SQLiteStore | None = None
        self._side_lent = threading.Lock()
        self._helper: SQLiteStore | None = None  # see _newest
        self._helper_lent = threading.Lock()
        self._reader_only = lent
        self._held_terms: set[str] = set()  # see _held
        self._postings: Postings | None = None  # see _matches
        self._bulk = 0  # bulk_writes open on this store
        self._searched = False  # a keyword search since the postings were last merged

    def _configure(self, synchronous: str) -> None:
        try:
            self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if not self.read_only:  # the mode is kept in the file; a reader leaves it
                self._retry(lambda: self.conn.execute("PRAGMA journal_mode = WAL"))
            self.conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
            self.conn.execute("PRAGMA foreign_keys = ON")
            self.conn.execute("PRAGMA secure_delete = ON")
            self.conn.execute("PRAGMA cache_size = -65536")
            self.conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        except sqlite3.DatabaseError as exc:
            raise Unavailable(f"{self.location} is not a memlane database: {exc}") from None

    def _refuse_outdated(self) -> None:
        """A store an older memlane made, opened with auto_migrate off, is refused
        (naming `memlane migrate`) before anything is set on its connection: the
        journal mode is kept in the file, and a refused open must leave it as it was."""
        if self._auto_migrate:
            return
        try:
            version = schema.current_version(self.conn)
        except sqlite3.DatabaseError:
            return  # not a memlane database: _migrate names it
        if 0 < version < schema.LATEST:
            self.conn.close()
            raise base.outdated(self.location, version, schema.LATEST)

    def _migrate(self) -> int:
        try:
            version = schema.current_version(self.conn)
        except sqlite3.DatabaseError as exc:
            raise Unavailable(f"{self.location} is not a memlane database: {exc}") from None
        schema.check_not_newer(version, self.location)
        if version == schema.LATEST:
            return version
        # Trigger: a store made by an older memlane, opened with auto_migrate off. Why:
        # the user migrates when they choose (after a backup, on a shared file).
        # Outcome: refused, naming `memlane migrate`; a new store (version 0) is made.
        if version and not self._auto_migrate:
            self.conn.close()
            raise base.outdated(self.location, version, schema.LATEST)
        with self._turn():
            return self._migrate_from(version)

    def _migrate_from(self, version: int) -> int:
        self._begin()
        try:
            latest = schema.migrate(self.conn, self.location)
        except sqlite3.DatabaseError as exc:
            # Trigger: a file whose tables disagree with the migrations it records (a
            # store a development build wrote, a hand-edited one). Outcome: one line,
            # and the file as it was: every step ran in this transaction.
            self.conn.execute("ROLLBACK")
            raise Unavailable(
                f"cannot bring {self.location} from schema version {version} to "
                f"{schema.LATEST}: {exc}; the file is unchanged"
            ) from None
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return latest

    def _retry(self, action: Any) -> Any:
        """Retry an action that failed on a lock; the busy timeout already waited each time."""
        for attempt in range(_BEGIN_ATTEMPTS):
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == _BEGIN_ATTEMPTS - 1:
                    raise Unavailable(f"{self.location}: {exc}") from None
                time.sleep(0.05 * (attempt + 1))
        return None

    def _begin(self) -> None:
        self._retry(lambda: self.conn.execute("BEGIN IMMEDIATE"))

    @contextmanager
    def _turn(self) -> Iterator[None]:
        """This writer's turn among the store's writers, held until its transaction ends."""
        if self._turns is None:
            yield
            return
        self._turns.take(BUSY_TIMEOUT_S)
        try:
            yield
        finally:
            self._turns.give()

    @contextmanager
    def side_reader(self) -> Iterator[SQLiteStore | None]:
        """A second connection to this file, opened on first use and kept; one thread at
        a time reads through it. WAL lets it read while this connection reads too."""
        with self._lend("_side", self._side_lent) as side:
            yield side

    @contextmanager
    def _lend(self, slot: str, lock: threading.Lock) -> Iterator[SQLiteStore | None]:
        """The kept reader in `slot` (opened on first use), while `lock` is free; None
        in memory, inside a write (another connection would not see it) or for a reader
        that is itself lent."""
        if (
            self.location == ":memory:"
            or self._reader_only
            or self.conn.in_transaction
            or not lock.acquire(blocking=False)
        ):
            yield None
            return
        try:
            reader: SQLiteStore | None = getattr(self, slot)
            if reader is None:
                reader = SQLiteStore(self.location, lent=True)
                setattr(self, slot, reader)
            yield reader
        finally:
            lock.release()

    def close(self) -> None:
        for slot, lock in (("_side", self._side_lent), ("_helper", self._helper_lent)):
            with lock:  # a thread reading through it finishes first
                reader = getattr(self, slot)
                if reader is not None:
                    reader.close()
                    setattr(self, slot, None)
        # PRAGMA optimize analyzes only what this connection's queries showed to be stale;
        # it is a courtesy, so it never waits for another process's write lock, and only a
        # connection that wrote runs it: a read never writes the file (nor a damaged one
        # further). A side reader leaves it to its store's own connection: ANALYZE
        # writes, and a table with no rows (a store without links) never gets
        # statistics, so it would be analyzed again on every close, a commit in each
        # cold `memlane recall`.
        if self._wrote and not self._reader_only:
            with contextlib.suppress(sqlite3.Error, MemlaneError):
                self.conn.execute("PRAGMA busy_timeout = 50")
                self.conn.execute("PRAGMA optimize")
        self.conn.close()
        if self._turns is not None:
            self._turns.close()

    def integrity(self) -> list[str]:
        return faults.integrity(self.conn, writable=not self.read_only)

    def optimize(self, written: int = 0, *, statistics: bool = True) -> None:
        """Full statistics for the memory table (with `statistics`), so the planner knows
        how large a scope is: without them it walks a scope index and sorts every row
        instead of reading the newest rows first. Then the keyword index merged,
        `written` pages of it.

        Trigger: a batch wrote `written` rows. Why: FTS5 writes each transaction's
        words as a new segment and merges them only level by level, so after a large
        batch every word is looked up in a dozen segments: keyword searches, and the
        write policy's neighbour searches, take two to four times as long as over one.
        Outcome: up to `written` pages of segments merge across levels (FTS5's merge
        with a negative budget): after one large batch the index is one segment, and
        a small batch into a large store pays for a bounded share of the merging.
        """
        if statistics:
            self.conn.execute("ANALYZE memory")
        if written > 0 and not self.read_only:
            with self.write():
                self.conn.execute(
                    "INSERT INTO memory_fts(memory_fts, rank) VALUES ('merge', ?)", (-written,)
                )

    @contextmanager
    def bulk_vectors(self, dim: int, adding: int) -> Iterator[None]:
        """Nothing to set aside: the vector index is derived in the client
        (retrieve.vectors), which catches up with the job's vectors at its next search."""
        yield

    @contextmanager
    def write(self) -> Iterator[SQLiteWriter]:
        if self._writing:
            raise RuntimeError("nested write transactions are not supported")
        if self.read_only:  # refused before a turn file is made beside a file it cannot write
            raise faults.read_only(self.location)
        with self._turn():
            self._begin()
            self._writing = self._wrote = True
            writer = SQLiteWriter(self)
            try:
                yield writer
                if writer.purged:
                    writer.purge_index()
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                self.conn.execute("COMMIT")
            finally:
                self._writing = False
            # Trigger: a commit left the postings missing their share of the store.
            # Why: only searches read them; a batch that searches nothing between its
            # transactions would merge a growing store again and again. Outcome:
            # merged now, unless inside bulk_writes with no search since the last
            # merge (then once the batch ends).
            if (not self._bulk or self._searched) and coverage.due(self.conn):
                self._merge_postings()
        if writer.purged:  # old page images of deleted content must leave the WAL too
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @contextmanager
    def bulk_writes(self) -> Iterator[None]:
        self._bulk += 1
        try:
            yield
        finally:
            self._bulk -= 1
        if not self._bulk and not self.read_only and coverage.due(self.conn):
            with self._turn():
                self._merge_postings()

    def _merge_postings(self) -> None:
        """Trigger: a write left the stored keyword postings missing a share of the store
        (coverage.due). Why: a search asks FTS5 for what they miss, which costs as much
        as they save once it is many. Outcome: merged, in a transaction of its own."""
        from memlane.store.sqlite import postings

        self._begin()
        try:
            postings.merge(self.conn)
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        self._searched = False

    def serialize_policy(self) -> None:
        """Nothing to take: BEGIN IMMEDIATE gave this transaction the database's one
        write lock, so no other writer (of any process) decides or commits until this
        one ends, and the policy's reads from here on run on this connection, inside
        the transaction (what it read before is checked against `changed_since`)."""
        if not self._writing:
            raise RuntimeError("serialize_policy needs an open write transaction")

    # ---- reads -------------------------------------------------------------

    def change_mark(self) -> ChangeMark:
        """Both logs' last numbers: writes are serialized, so a number is taken in
        commit order (the journal is append-only, so its numbers only grow)."""
        row = self.conn.execute(
            "SELECT (SELECT COALESCE(MAX(seq), 0) FROM journal), "
            "(SELECT COALESCE(MAX(seq), 0) FROM vector_change)"
        ).fetchone()
        return ChangeMark(int(row[0]), int(row[1]))

    def changed_since(self, mark: ChangeMark, limit: int) -> list[str] | None:
        rows = self.conn.execute(
            "SELECT memory_id FROM journal WHERE seq > ? AND memory_id IS NOT NULL "
            "UNION ALL SELECT memory_id FROM vector_change WHERE seq > ? LIMIT ?",
            (mark.journal, mark.vectors, limit + 1),
        ).fetchall()
        if len(rows) > limit:
            return None
        return list(dict.fromkeys(str(r[0]) for r in rows))

    def _records(self, query: str, params: dict[str, Any] | tuple[Any, ...]) -> list[Record]:
        rows = self.conn.execute(query, params).fetchall()
        anchors = self._anchors([row["id"] for row in rows])
        if not rows:
            return []
        read = row_reader(tuple(rows[0].keys()))
        return [read(row, anchors.get(row["id"], ())) for row in rows]

    def _anchors(self, ids: list[str]) -> dict[str, tuple[str, ...]]:
        """Anchor targets of the given memories, read once for a whole page of results."""
        out: dict[str, list[str]] = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ", ".join("?" for _ in part)
            rows = self.conn.execute(
                f"SELECT source, target FROM link WHERE type = 'anchor' AND source IN ({marks}) "
                "ORDER BY created_at",
                part,
            )
            for source, target in rows:
                out.setdefault(source, []).append(target)
        return {k: tuple(v) for k, v in out.items()}

    def get(self, memory_id: str, as_of: datetime | None = None) -> Record | None:
        filters = Filters(as_of=as_of, include_superseded=as_of is None, any_visibility=True)
        params: dict[str, Any] = {"id": memory_id}
        query = sql.select_sql(filters, ["e.id = :id"], params)
        rows = self._records(query + " LIMIT 1", params)
        return rows[0] if rows else None

    def resolve(
        self,
        prefix: str,
        viewer: str | None,
        limit: int = 10,
        scopes: Sequence[str] | None = None,
    ) -> list[str]:
        within = "" if scopes is None else f"AND scope IN ({', '.join('?' * len(scopes))}) "
        rows = self.conn.execute(
            "SELECT id FROM memory WHERE id >= ? AND id < ? "
            f"AND (visibility = 'public' OR owner = ?) {within}ORDER BY id LIMIT ?",
            (prefix, prefix + "\U0010ffff", viewer, *(scopes or ()), limit),
        )
        return [str(r[0]) for r in rows]

    def query(self, filters: Filters) -> list[Record]:
        params: dict[str, Any] = {}
        query = sql.select_sql(filters, [], params) + sql.order_limit(filters, params)
        return self._records(query, params)

    def admitted(self, filters: Filters) -> list[str]:
        params: dict[str, Any] = {}
        query = sql.select_sql(filters, [], params, columns="e.id")
        return [str(row[0]) for row in self.conn.execute(query, params)]

    def search(self, text: str, filters: Filters, match: str = "all") -> list[Hit]:
        matches = self._matches(text, filters, match, "e.*")
        if not matches.rows:
            return []
        read = row_reader(tuple(matches.rows[0].keys()))
        anchors = self._anchors([row["id"] for row in matches.rows])
        return [
            Hit(record=read(row, anchors.get(row["id"], ())), score=score, rank=i + 1)
            for i, (row, score) in enumerate(matches.scored())
        ]

    def search_scores(
        self, text: str, filters: Filters, match: str = "all"
    ) -> list[tuple[str, float]]:
        return [(str(row[1]), score) for row, score in self._matches(text, filters, match).scored()]

    def _matches(self, text: str, filters: Filters, match: str, columns: str = "e.id") -> _Matches:
        self._searched = True
        words = sql.fts_terms(text)
        query_text = sql.fts_query(text, match)
        if match == "most" and filters.as_of is None and query_text is not None:
            query_text = self._most_held(text, query_text)
        if query_text is None:
            return _Matches([])
        cap = base.ANY_RANK_CAP if match == "any" else base.RANK_CAP
        # Trigger: a search in a store with postings. Why: FTS5 walks and ranks each
        # match, and a common word matches a large share of the store; the postings
        # hold every word's matches as arrays, kept while the store is unchanged.
        # Outcome: ranked from the postings, as FTS5 would.
        if filters.as_of is None and coverage.covered(self.conn):
            if self._postings is None:
                from memlane.store.sqlite.postings import Postings  # numpy: a large store

                self._postings = Postings(self.conn)
            terms = self._postings.terms(words)
            if terms is not None:
                return self._through_postings(terms, match, filters, columns)
        if filters.as_of is None and match != "any" and len(words) >= FEW_TERMS:
            few = self._few_matches(query_text)
            if few is not None:
                return self._search(_FEW_HITS, {"few": few}, filters, columns)
        floor = self._rank_floor(query_text, cap) if filters.as_of is None else None
        if floor is not None:
            params: dict[str, Any] = {}
            if match == "any":
                hits = self._windows(words, cap, params)
                matches = self._search(hits, params, filters, columns)
            else:
                matches = self._newest(query_text, floor, filters, columns)
            if filters.limit is not None and len(matches.rows) >= filters.limit:
                return matches
        matches = self._search(_FTS_HITS, {"match": query_text}, filters, columns)
        if filters.as_of is not None:
            # An as-of score is a rank within its table (see _search), which says nothing
            # of how much of the query matched: the ladder step does, so it comes first,
            # and a memory with every word outranks one with a single word in any later
            # fusion.
            matches.step = float(len(SEARCH_STEPS) - 1 - SEARCH_STEPS.index(match))
        return matches

    def _through_postings(
        self, terms: Terms, match: str, filters: Filters, columns: str
    ) -> _Matches:
        """The matches of `terms` joined as `match`, as FTS5 ranks them below, from
        the stored postings: past RANK_CAP matches (ANY_RANK_CAP for any word) the
        newest first (`_newest`, `_windows`), every match when they fill no page."""
        from memlane.store.sqlite import postings

        ranked = postings.combined(terms, match)
        cap = base.ANY_RANK_CAP if match == "any" else base.RANK_CAP
        if filters.limit is not None and len(ranked.seqs) > cap:
            first = postings.windows(terms, cap) if match == "any" else postings.newest(ranked, cap)
            matches = self._ranked(first, filters, columns)
            if len(matches.rows) >= filters.limit:
                return matches
        return self._ranked(ranked, filters, columns)

    def _ranked(self, ranked: Ranked, filters: Filters, columns: str) -> _Matches:
        """The memories of `ranked` that pass `filters`, best first, as `_search` orders
        them (score, then the newest update, then the newest row).

        The best `filters.limit` matches are looked for among the best few times that
        many (every match of the last score taken included), then among eight times as
        many, until enough pass the filters or every match was tried.
        """
        from memlane.store.sqlite import postings

        total, limit = len(ranked.seqs), filters.limit
        taken = total if limit is None else min(total, RANKED_FIRST * limit)
        while True:
            page = postings.best(ranked, taken)
            few = json.dumps(list(zip(page.seqs.tolist(), page.scores.tolist(), strict=True)))
            matches = self._search(_FEW_HITS, {"few": few}, filters, columns)
            if limit is None or len(matches.rows) >= limit or len(page.seqs) >= total:
                return matches
            taken = min(total, len(page.seqs) * 8)

    def _most_held(self, text: str, most: str) -> str | None:
        """The most-words query `most` of `text`, as the words the index holds leave it:
        itself when it holds every word, every other word when one is nowhere, None
        (no match) when two or more are nowhere.

        Trigger: a most-words search, as the write policy runs for every line it adds.
        Why: the query holds a group of all words but one for each word, and the index
        walks the matches of the groups' words, though a group with a word held
        nowhere matches nothing; a new memory's names and identifiers are often held
        nowhere. Outcome: each word is looked up (a word held, once for the store), and
        those held nowhere take their groups away: a memory with all words but one,
        one of them held nowhere, has every other word. FTS5 ranks such a memory by the
        one group it matches, so the all-words query gives the same matches and ranks.
        """
        terms = sql.fts_terms(text)
        held = self._held(terms)
        if len(held) == len(terms):
            return most
        return " AND ".join(held) if len(held) == len(terms) - 1 else None

    def _held(self, terms: list[str]) -> list[str]:
        """The terms some memory holds. One found held is remembered (at most
        HELD_TERMS): a memory deleted since only makes a search walk what it need not."""
        held = [
            t for t in terms if t in self._held_terms or self.conn.execute(_HOLDS, (t,)).fetchone()
        ]
        if len(self._held_terms) + len(held) > HELD_TERMS:
            self._held_terms.clear()
        self._held_terms.update(held)
        return held

    def _few_matches(self, match: str) -> str | None:
        """Every match with its rank, as a JSON list of [rowid, rank], when there are
        at most FEW_MATCHES (None: more).

        Trigger: an all-words or most-words search of several words, as the write
        policy's searches for a new memory's neighbours are, in a store the postings
        do not answer (a small one, or one whose changes are not merged yet). Why:
        asking first how many matches there are (`_rank_floor`) walks them once, and
        ranking them walks them again, each walk looking every word up in the index.
        Outcome: one walk when they are few; the ranked matches are joined with the
        filters from the list. When they are many, this walk was spent; a search of
        fewer words, which matches more, never tries it.
        """
        rows = self.conn.execute(
            "SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH ? "
            "ORDER BY rowid DESC LIMIT ?",
            (match, FEW_MATCHES + 1),
        ).fetchall()
        return json.dumps([list(r) for r in rows]) if len(rows) <= FEW_MATCHES else None

    def _rank_floor(self, match: str, cap: int) -> int | None:
        """The lowest rowid among the newest `cap` matches, when there are more.

        Trigger: a word that matches a large share of the store. Why: BM25 costs a few
        microseconds per match, so tens of thousands take tens of milliseconds to rank.
        Outcome: rank the newest `cap` matches first; the caller widens to all when they
        fill no page.
        """
        row = self.conn.execute(
            "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
            "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (match, cap),
        ).fetchone()
        return int(row[0]) if row else None

    def _count(self, match: str, most: int) -> int:
        """How many memories `match` matches, counting up to `most`."""
        row = self.conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT ?)",
            (match, most),
        ).fetchone()
        return int(row[0])

    def _newest(self, match: str, floor: int, filters: Filters, columns: str) -> _Matches:
        """The matches of `match` above `floor` (the newest RANK_CAP), best first.

        Trigger: ranking ids for a page (a fusion pool) over a window that a second
        connection may share. Why: BM25 costs about a microsecond a match, thousands of
        them on one core, while SQLite lets other threads run as it ranks. Outcome: the
        older half of the window is ranked on a worker through a kept second reader
        while this connection ranks the newer half; each half's best page, merged in the
        statement's own order, is the page one statement gives.
        """
        from concurrent.futures import wait

        hits = _FTS_HITS + " AND rowid > :floor"
        params: dict[str, Any] = {"match": match, "floor": floor}
        if columns != "e.id" or filters.limit is None:
            return self._search(hits, params, filters, columns)
        with self._lend("_helper", self._helper_lent) as helper:
            if helper is None:
                return self._search(hits, params, filters, columns)
            newest = self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM memory").fetchone()
            middle = {**params, "middle": (floor + int(newest[0])) // 2}
            keyed = f"{columns}, e.updated_at, e.seq"
            older = workers().submit(
                helper._search, hits + " AND rowid <= :middle", dict(middle), filters, keyed
            )
            try:
                newer = self._search(_FTS_HITS + " AND rowid > :middle", middle, filters, keyed)
            finally:
                wait([older])  # the helper goes back only once its read is done
        return _Matches(_merged(newer.rows, older.result().rows, filters.limit))

    def _windows(self, terms: list[str], cap: int, params: dict[str, Any]) -> str:
        """Matches of any of `terms` to rank, at most `cap`: each word's newest matches,
        the budget shared evenly and a rare word's unused share passed to the others;
        a memory scores the sum of its words' BM25 (what FTS5 gives the OR query).

        Trigger: an "any word" step with more than `cap` matches. Why: the newest `cap`
        matches of the OR are nearly all a common word's: most memories with a rare word
        ("global OR rebaseRollback") would lie outside them and never be ranked, though
        each scores above every memory with only the common word. Outcome: every match
        of a word with fewer than its share is ranked. A memory outside a common word's
        window misses that word's (small) part of its score.
        """
        # How many matches each word has (up to cap + 1), counted inside SQLite: handing
        # every match's rowid to Python costs several times the walk itself.
        found = {t: self._count(t, cap + 1) for t in terms}
        parts, left = [], cap
        for i, term in enumerate(sorted(terms, key=lambda t: found[t])):
            share = max(1, left // (len(terms) - i))
            params[f"t{i}"] = term
            part = (
                f"SELECT rowid AS seq, rank AS score FROM memory_fts WHERE memory_fts MATCH :t{i}"
            )
            if found[term] > share:
                params[f"f{i}"] = self._rank_floor(term, share)  # the newest `share` lie above
                part += f" AND rowid > :f{i}"
            parts.append(part)
            left -= min(found[term], share)
        windows = " UNION ALL ".join(parts)
        return f"SELECT seq, 'm' AS src, SUM(score) AS score FROM ({windows}) GROUP BY seq"

    def _search(
        self, hits: str, params: dict[str, Any], filters: Filters, columns: str
    ) -> _Matches:
        """The memories that `hits` (seq, src, score: lower is better) selects, after
        `filters`, best first."""
        if filters.as_of is not None:  # hits is _FTS_HITS
            # Trigger: an as-of search, which also matches old versions. Why: version_fts
            # has its own BM25 statistics, and in a small table a word most versions
            # share gets FTS5's floor IDF (1e-6): an old version's perfect match scores
            # a millionth of a current row's. Outcome: each table's ranks over its own
            # best, so the best match of each scores -1 (ranks are negative, best least);
            # `search` adds the ladder step.
            hits = (
                "SELECT seq, src, -score / MIN(score) OVER (PARTITION BY src) AS score FROM ("
                f"{hits} UNION ALL SELECT rowid, 'v', rank FROM version_fts "
                "WHERE version_fts MATCH :match)"
            )
        join = "JOIN hits h ON h.seq = e.seq AND h.src = e.src"
        query = f"WITH hits AS ({hits}) " + sql.select_sql(
            filters, [], params, join=join, extra="h.score AS score, ", columns=columns
        )
        query += " ORDER BY h.score, e.updated_at DESC, e.seq DESC"
        if filters.limit is not None:
            query += " LIMIT :limit"
            params["limit"] = filters.limit
        return _Matches(self.conn.execute(query, params).fetchall())

    def iter_all(self) -> Iterator[Record]:
        query = f"SELECT e.*, {sql.ANCHORS} FROM memory e ORDER BY e.seq"
        for row in self.conn.execute(query):
            yield record_from_row(row, tuple(json.loads(row["anchors"])))

    def versions(self, memory_id: str) -> list[Version]:
        rows = self.conn.execute(
            f"SELECT {', '.join(version_columns())} FROM memory_version "
            "WHERE memory_id = ? ORDER BY number",
            (memory_id,),
        )
        return [version_from_row(r) for r in rows]

    def links(self, memory_id: str) -> list[Link]:
        return self.links_touching([memory_id])

    def links_touching(self, memory_ids: Sequence[str]) -> list[Link]:
        params: dict[str, Any] = {}
        ends = [sql.SQLITE.one_of(end, end, memory_ids, params) for end in ("source", "target")]
        rows = self.conn.execute(
            f"SELECT {_LINK_COLUMNS} FROM link WHERE {' OR '.join(ends)} "
            "ORDER BY created_at, rowid",
            params,
        )
        return [_link(r) for r in rows]

    def dump(self, selection: Selection) -> Iterator[tuple[str, dict[str, Any]]]:
        return dump_sql.dump(self.conn, selection)

    def check_record(self, kind: str, row: Mapping[str, Any]) -> dict[str, Any]:
        return dump_sql.check(self.conn, kind, row)

    def scopes(self) -> list[str]:
        return [
            str(r[0]) for r in self.conn.execute("SELECT DISTINCT scope FROM memory ORDER BY 1")
        ]

    def snapshot(self, dest: Path) -> Counts:
        return backup.snapshot(self.conn, dest)

    def link_ends(self, number: int) -> tuple[str, str] | None:
        row = self.conn.execute(
            "SELECT source, target FROM link WHERE rowid = ?", (number,)
        ).fetchone()
        return (str(row[0]), str(row[1])) if row else None

    def journal_entries(
        self, memory_id: str | None = None, limit: int = 100, viewer: str | None = None
    ) -> list[JournalEntry]:
        # A line about a memory shows only to who may see that memory; once it is
        # deleted, its owner is unknown, so only to who wrote the line.
        seen = (
            "(j.memory_id IS NULL OR (m.id IS NOT NULL AND (m.visibility = 'public' "
            "OR (:viewer IS NOT NULL AND m.owner = :viewer))) "
            "OR (m.id IS NULL AND :viewer IS NOT NULL AND j.actor = :viewer))"
        )
        where = f"WHERE {seen}" + (" AND j.memory_id = :id" if memory_id else "")
        rows = self.conn.execute(
            "SELECT j.seq, j.at, j.operation, j.memory_id, j.actor, j.detail FROM journal j "
            f"LEFT JOIN memory m ON m.id = j.memory_id {where} ORDER BY j.seq DESC LIMIT :limit",
            {"viewer": viewer, "id": memory_id, "limit": limit},
        )
        return [JournalEntry(r[0], from_text(r[1]), r[2], r[3], r[4], r[5]) for r in rows]

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM store_meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def nearest(self, profile: str, vector: QueryVector, k: int) -> None:
        """None: no vector index in the file; the client's derived one answers."""
        del profile, vector, k

    def vectors(
        self, profile: str, ids: Sequence[str] | None = None
    ) -> Iterator[tuple[str, int, bytes]]:
        current = (
            "SELECT v.memory_id, v.chunk, v.vector FROM embedding v "
            "JOIN memory m ON m.id = v.memory_id "
            "WHERE v.profile = ? AND v.content_hash = m.dedup_hash "
            "AND m.superseded_at IS NULL AND m.valid_until IS NULL"
        )
        rows = self._of_ids(current, "m.id", ids, (profile,), " ORDER BY m.seq, v.chunk")
        for memory_id, chunk, blob in rows:
            yield str(memory_id), int(chunk), bytes(blob)

    def scopes_and_kinds(self, ids: Sequence[str] | None = None) -> Iterator[tuple[str, str, str]]:
        live = (
            "SELECT id, scope, kind FROM memory WHERE superseded_at IS NULL AND valid_until IS NULL"
        )
        for memory_id, scope, kind in self._of_ids(live, "id", ids):
            yield str(memory_id), str(scope), str(kind)

    def _of_ids(
        self,
        query: str,
        column: str,
        ids: Sequence[str] | None,
        params: tuple[Any, ...] = (),
        tail: str = "",
    ) -> Iterator[Any]:
        """The rows of `query` (a statement whose WHERE clause this extends), or with
        `ids`, those whose `column` is one of them (500 ids a statement)."""
        if ids is None:
            yield from self.conn.execute(query + tail, params)
            return
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ", ".join("?" for _ in part)
            yield from self.conn.execute(
                f"{query} AND {column} IN ({marks}){tail}", (*params, *part)
            )

    def vector_changes(self, after: int, limit: int) -> tuple[int, list[str]] | None:
        rows = self.conn.execute(
            "SELECT seq, memory_id FROM vector_change WHERE seq > ? ORDER BY seq LIMIT ?",
            (after, limit + 1),
        ).fetchall()
        if len(rows) > limit:
            return None
        last = int(rows[-1][0]) if rows else after
        return last, list(dict.fromkeys(str(r[1]) for r in rows))

    def last_vector_change(self) -> int:
        row = self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM vector_change").fetchone()
        return int(row[0])

    def adjacent(self, memory_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        params: dict[str, Any] = {}
        rows = self.conn.execute(shared.adjacent_sql(sql.SQLITE, memory_ids, params), params)
        return {str(r[0]): tuple(str(i) for i in r[1:] if i is not None) for r in rows}

    def vector_epoch(self) -> int:
        return int(self.meta("vector_epoch") or 0)

    def unembedded(self, profile: str, limit: int | None = None) -> list[Record]:
        query = (
            "SELECT e.* FROM memory e WHERE e.superseded_at IS NULL AND e.valid_until IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM embedding v WHERE v.memory_id = e.id "
            "AND v.profile = ? AND v.chunk = -1 AND v.content_hash = e.dedup_hash) ORDER BY e.seq"
        )
        params: tuple[Any, ...] = (profile,)
        if limit is not None:
            query += " LIMIT ?"
            params = (profile, limit)
        return self._records(query, params)

    def vitals(self, viewer: str | None, profile: str | None, now: datetime) -> Vitals:
        seen = "(e.visibility = 'public' OR e.owner = :viewer)"
        row = self.conn.execute(
            "SELECT COUNT(*), "
            "SUM(EXISTS (SELECT 1 FROM embedding v WHERE v.memory_id = e.id AND v.chunk = -1 "
            "    AND v.profile = :profile AND v.content_hash = e.dedup_hash)), "
            "SUM(EXISTS (SELECT 1 FROM link a WHERE a.source = e.id AND a.type = 'anchor')), "
            "SUM(e.importance >= :high AND effective_resonance(e.importance, e.resonance_type, "
            "    COALESCE(e.last_activated, e.created_at), :now) < :faded) "
            f"FROM memory e WHERE e.superseded_at IS NULL AND e.valid_until IS NULL AND {seen}",
            {
                "viewer": viewer,
                "profile": profile,
                "now": to_text(now),
                "high": STALE_HIGH_IMPORTANCE,
                "faded": STALE_FADED_BELOW,
            },
        ).fetchone()
        return Vitals(row[0], row[1] or 0, row[2] or 0, row[3] or 0)

    def created_since(self, viewer: str | None, since: datetime) -> list[datetime]:
        rows = self.conn.execute(
            "SELECT created_at FROM memory WHERE created_at >= ? "
            "AND (visibility = 'public' OR owner = ?)",
            (to_text(since), viewer),
        )
        return [from_text(r[0]) for r in rows]

    def stats(self, viewer: str | None, *, everyone: bool = False) -> Stats:
        return counts.stats(
            sql.SQLITE, self.conn, viewer, everyone, self.schema_version, self.location
        )


def _parse_time(text: str) -> datetime:
    try:
        return from_text(text)
    except ValueError:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
