"""The PostgreSQL backend: a connection pool, one transaction per write, FTS5's own
terms and bm25 for keywords (jsonb + GIN, see store.terms), pgvector (HNSW, cosine)
for vectors."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np
import numpy.typing as npt
import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from memlane.errors import Unavailable
from memlane.model import (
    Filters,
    Hit,
    JournalEntry,
    Link,
    Record,
    Stats,
    Version,
    Vitals,
)
from memlane.store import base, terms
from memlane.store.base import SEARCH_STEPS, ChangeMark, Counts, SchemaStatus, Selection
from memlane.store.dialect import counts
from memlane.store.dialect import filters as shared
from memlane.store.parts import (
    EntityReads,
    RegistryReads,
    ReminderReads,
    SessionReads,
    WakeReads,
)
from memlane.store.postgres import dump as dump_sql
from memlane.store.postgres import entities as entity_sql
from memlane.store.postgres import schema, sql
from memlane.store.postgres import vectors as vector_sql
from memlane.store.postgres.writer import LINK_COLUMNS, PostgresWriter
from memlane.store.postgres.writer import link_from_row as _link
from memlane.store.sqlite.rows import COLUMNS, row_reader, version_columns
from memlane.store.sqlite.store import STALE_FADED_BELOW, STALE_HIGH_IMPORTANCE
from memlane.timeutil import from_text, to_text

if TYPE_CHECKING:
    from memlane.store.base import QueryVector

Conn = psycopg.Connection[tuple[Any, ...]]
# Connections per process: a CLI call uses one (two while recall's vector lane runs on
# its worker thread); a server answering several agents at once a few. The server's
# max_connections (100 by default) bounds all processes.
POOL_MIN, POOL_MAX = 1, 4
POOL_TIMEOUT_S = 60.0
_ANCHORS = (
    "(SELECT COALESCE(json_agg(l.target ORDER BY l.created_at), '[]')::text FROM link l "
    "WHERE l.source = e.id AND l.type = 'anchor') AS anchors"
)
_LIVE = "superseded_at IS NULL AND valid_until IS NULL"
# A vector row `n` that is its memory `m`'s current one (as `vectors` reads them).
_CURRENT_VECTOR = (
    "m.id = n.memory_id AND m.dedup_hash = n.content_hash "
    "AND m.superseded_at IS NULL AND m.valid_until IS NULL"
)
# Nearest-neighbour search: the rows fetched first, per memory wanted (most memories
# own one row, their entry vector: a quarter more leaves room for some chunks), the
# factor the fetch widens by when fewer memories came back, and the HNSW search
# widths. ef_search must cover the rows asked for (an HNSW scan returns at most that
# many) and costs in proportion, so the first fetch asks for few rows a memory and
# widens only when they fall short; pgvector caps it at 1000, 40 is its default.
FIRST_ROWS_PER_MEMORY = 1.25
ROWS_PER_MEMORY = 4
MIN_EF_SEARCH, MAX_EF_SEARCH = 40, 1000
# Vector rows up to which `nearest` scans them all instead of asking the HNSW index,
# as SQLite's index is exact while small. Why: both backends then agree on a small
# store, where HNSW's approximation buys nothing: on LoCoMo's conversations of a few
# hundred turns it leaves one of the exact top 10 out in about one question in twenty,
# and an exact scan of this many rows takes only milliseconds.
EXACT_ROWS = 5_000


def _document_frequency(table: str, i: int, word: sql.Word) -> str:
    """SQL: how many rows of `table` hold word i: kept in term_df for a memory's term,
    counted otherwise (through the index for a memory's prefix word)."""
    if table == "memory" and word.prefix:
        return f"(SELECT count(*) FROM memory a WHERE a.terms ?| {sql.prefixed(i)})"
    if table == "memory" and len(word.terms) == 1:
        return f"(SELECT df FROM term_df WHERE term = %(k{i})s)"
    return f"(SELECT count(*) FROM {table} a WHERE {sql.has_word('a', i, word)})"


class _Statistics(NamedTuple):
    """What a keyword search reads before its statement (see _word_statistics)."""

    found: list[sql.Word]
    params: dict[str, Any]
    plan: str  # the plan_cache_mode before the search
    pending: bool = False  # rows of the transaction to fill first; nothing else read
    counts: tuple[int, ...] = ()  # memories holding each word
    positions: tuple[int, ...] = ()  # each word's place in the query


# A write transaction's rows whose terms are not filled yet (see schema.fill_terms).
_PENDING = " OR ".join(
    f"EXISTS (SELECT 1 FROM {table} WHERE terms IS NULL)" for table in schema.TERM_TABLES
)


def _redacted(url: str) -> str:
    """The URL without its password: what `location` shows in stats and messages."""
    return re.sub(r"^(\w+://[^:/@]*):[^@]*@", r"\1:***@", url)


def _reader(keys: tuple[str, ...]) -> Callable[[Any, tuple[str, ...]], Record]:
    """rows.row_reader over psycopg's tuples (it reads a row by position only)."""
    return cast(Callable[[Any, tuple[str, ...]], Record], row_reader(keys))


def _few_vectors(conn: Conn) -> bool:
    """At most EXACT_ROWS vector rows, by the server's live count of the table (kept as
    rows come and go, not only by ANALYZE; a moment behind at worst, when an exact scan
    of a larger table is only slower)."""
    row = conn.execute("SELECT pg_stat_get_live_tuples('embedding'::regclass)").fetchone()
    return row is None or int(row[0]) <= EXACT_ROWS


def _configure(conn: Conn) -> None:
    register_vector(conn)
    conn.commit()  # the pool wants the connection idle


def schema_status(url: str) -> SchemaStatus:
    """Where the schema of the database at `url` stands; reads it without creating,
    migrating or writing anything."""
    location = _redacted(url)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            version = schema.current_version(conn.cursor())
    except psycopg.Error as exc:
        raise Unavailable(f"cannot open {location}: {exc}") from None
    schema.check_not_newer(version, location)
    pending = base.pending_migrations(version, schema.MIGRATIONS)
    return SchemaStatus(location, version, schema.LATEST, pending)


class PostgresStore:
    """A memlane store in one PostgreSQL database (with the pgvector extension)."""

    def __init__(self, url: str, synchronous: str = "full", *, migrate: bool = True) -> None:
        """`migrate`: bring an older schema up to date (else such a database is refused
        with SchemaOutdated; an empty one is always given the whole schema)."""
        del synchronous  # SQLite's durability knob; the server's settings rule here
        self.location = _redacted(url)
        self.read_only = False  # the server's roles decide; a refused write is its error
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                if not migrate:
                    version = schema.current_version(conn.cursor())
                    if 0 < version < schema.LATEST:
                        raise base.outdated(self.location, version, schema.LATEST)
                self.schema_version = schema.migrate(conn, self.location)
            self.pool: ConnectionPool[Conn] = ConnectionPool(
                url,
                min_size=POOL_MIN,
                max_size=POOL_MAX,
                timeout=POOL_TIMEOUT_S,
                configure=_configure,
                open=True,
                name="memlane",
            )
        except psycopg.Error as exc:
            raise Unavailable(f"cannot open {self.location}: {exc}") from None
        self._local = threading.local()
        self.deferred: set[int] = set()  # dimensions whose index a job builds after it
        # The feature parts read on the write transaction's connection or the pool's.
        self.wake = WakeReads(sql.POSTGRES, self._conn)
        self.entities = EntityReads(sql.POSTGRES, self._conn, entity_sql.named)
        self.reminders = ReminderReads(sql.POSTGRES, self._conn)
        self.registries = RegistryReads(sql.POSTGRES, self._conn)
        self.sessions = SessionReads(sql.POSTGRES, self._conn)

    # ---- connections and transactions ----------------------------------------------

    @contextmanager
    def _conn(self) -> Iterator[Conn]:
        """The connection of this thread's write transaction, or one from the pool."""
        current: Conn | None = getattr(self._local, "conn", None)
        if current is not None:
            self._local.writer.flush_vectors()  # what the transaction wrote is read too
            yield current
            return
        with self.pool.connection() as conn:
            yield conn

    def close(self) -> None:
        self.pool.close()

    @contextmanager
    def side_reader(self) -> Iterator[PostgresStore | None]:
        # Another thread's reads take a pool connection of their own already.
        yield None if getattr(self._local, "conn", None) is not None else self

    def optimize(self, written: int = 0, *, statistics: bool = True) -> None:
        """The server keeps its indexes compact itself (autovacuum)."""
        if not statistics:
            return
        with self._conn() as conn:
            conn.execute("ANALYZE memory")

    def integrity(self) -> list[str]:
        """Nothing to report from here: the server checks its own pages (data checksums,
        amcheck) and refuses a query over a damaged one with an error of its own."""
        return []

    @contextmanager
    def bulk_writes(self) -> Iterator[None]:
        """Nothing waits: the server keeps its indexes itself."""
        yield

    @contextmanager
    def bulk_vectors(self, dim: int, adding: int) -> Iterator[None]:
        """The dimension's HNSW index set aside while the job writes, when building it
        again after costs less (see store/postgres/vectors.py, `suspend`)."""
        if getattr(self._local, "conn", None) is not None:
            raise RuntimeError("bulk_vectors cannot start inside a write transaction")
        if not self._index_step(vector_sql.suspend, dim, adding):
            yield
            return
        self.deferred.add(dim)
        try:
            yield
        finally:
            self.deferred.discard(dim)
            self._index_step(vector_sql.restore, dim)

    def _index_step(self, step: Callable[..., Any], *args: Any) -> Any:
        """One step on a dimension's index, in a transaction of its own."""
        try:
            with self.pool.connection() as conn, conn.transaction():
                return step(conn, *args)
        except psycopg.OperationalError as exc:
            raise Unavailable(f"{self.location}: {exc}") from None

    @contextmanager
    def write(self) -> Iterator[PostgresWriter]:
        if getattr(self._local, "conn", None) is not None:
            raise RuntimeError("nested write transactions are not supported")
        try:
            with self.pool.connection() as conn:
                self._local.conn = conn
                self._local.writer = PostgresWriter(self, conn)
                try:
                    with conn.transaction():
                        yield self._local.writer
                        self._local.writer.flush_vectors()
                        with conn.cursor() as cur:
                            schema.fill_terms(cur)  # the text it wrote, as FTS5 holds it
                finally:
                    self._local.conn = self._local.writer = None
        except psycopg.OperationalError as exc:
            raise Unavailable(f"{self.location}: {exc}") from None

    def serialize_policy(self) -> None:
        """Trigger: writers adding restatements of one fact at the same moment. Why: at
        READ COMMITTED each would read its neighbours before the others commit, find
        none, and insert (N rows where the policy allows one). Outcome: a transaction
        advisory lock, held to commit; a writer waiting on it reads its neighbours
        afterwards, with fresh snapshots that hold the others' rows.

        One key for the whole store, not one per scope: a batch decides lines of many
        scopes in one transaction, and per-scope locks taken in line order could
        deadlock two batches. It is the store-wide modification lock of
        `PostgresWriter.get` too (a refresh reads the memory it changes): the policy's
        writes and every read-for-modification queue on it, as every write does on
        SQLite, and so does every other write of a memory row: its text (the word
        statistics, see schema.m003) and recall counters; plain reads do not. It is
        taken before the exact-dedup locks of the same transaction, so the two kinds
        never wait in a cycle.
        """
        writer: PostgresWriter | None = getattr(self._local, "writer", None)
        if writer is None:
            raise RuntimeError("serialize_policy needs an open write transaction")
        writer.serialize()

    def change_mark(self) -> None:
        """None: an identity is taken when a row is inserted, not when it commits, so a
        change committed after the mark may carry a lower number than one before it.
        The policy reads its neighbours after serialize_policy instead."""

    def changed_since(self, mark: ChangeMark, limit: int) -> None:
        del mark, limit

    # ---- reads -----------------------------------------------------------------------

    def _records(self, query: str, params: Mapping[str, Any] | Sequence[Any]) -> list[Record]:
        with self._conn() as conn:
            cursor = conn.execute(query, params)
            rows = cursor.fetchall()
            if not rows:
                return []
            keys = tuple(d.name for d in cursor.description or ())
            anchors = self._anchors(conn, [row[keys.index("id")] for row in rows])
        read = _reader(keys)
        at = keys.index("id")
        return [read(row, anchors.get(row[at], ())) for row in rows]

    def _anchors(self, conn: Conn, ids: list[str]) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        rows = conn.execute(
            "SELECT source, target FROM link WHERE type = 'anchor' "
            "AND source = ANY(%s::text[]) ORDER BY created_at",
            (ids,),
        )
        for source, target in rows:
            out.setdefault(source, []).append(target)
        return {k: tuple(v) for k, v in out.items()}

    def get(self, memory_id: str, as_of: datetime | None = None) -> Record | None:
        filters = Filters(as_of=as_of, include_superseded=as_of is None, any_visibility=True)
        params: dict[str, Any] = {"id": memory_id}
        query = sql.select_sql(filters, ["e.id = %(id)s"], params)
        rows = self._records(query + " LIMIT 1", params)
        return rows[0] if rows else None

    def resolve(
        self,
        prefix: str,
        viewer: str | None,
        limit: int = 10,
        scopes: Sequence[str] | None = None,
    ) -> list[str]:
        within = None if scopes is None else list(scopes)
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT id FROM memory WHERE starts_with(id, %s) "
                "AND (visibility = 'public' OR owner = %s::text) "
                "AND (%s::text[] IS NULL OR scope = ANY(%s::text[])) ORDER BY id LIMIT %s",
                (prefix, viewer, within, within, limit),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def query(self, filters: Filters) -> list[Record]:
        params: dict[str, Any] = {}
        query = sql.select_sql(filters, [], params) + sql.order_limit(filters, params)
        return self._records(query, params)

    def admitted(self, filters: Filters) -> list[str]:
        params: dict[str, Any] = {}
        query = sql.select_sql(filters, [], params, columns="e.id")
        with self._conn() as conn:
            return [str(row[0]) for row in conn.execute(query, params)]

    def search(self, text: str, filters: Filters, match: str = "all") -> list[Hit]:
        found = self._matches(text, filters, match, full=True)
        if not found:
            return []
        rows, keys = found
        read = _reader(keys)
        return [
            Hit(record=read(row, tuple(json.loads(row[-1]))), score=float(row[0]), rank=i + 1)
            for i, row in enumerate(rows)
        ]

    def search_scores(
        self, text: str, filters: Filters, match: str = "all"
    ) -> list[tuple[str, float]]:
        found = self._matches(text, filters, match, full=False)
        return [(str(row[1]), float(row[0])) for row in found[0]] if found else []

    def _matches(
        self, text: str, filters: Filters, match: str, full: bool
    ) -> tuple[list[tuple[Any, ...]], tuple[str, ...]] | None:
        """Rows (score first) matching `text`, best first, scored by FTS5's bm25 over
        FTS5's terms, so they rank as in SQLite (see sql.scored)."""
        found = sql.words(text)
        if sql.matching("m", found, match) is None:
            return None
        versions = filters.as_of is not None
        with self._conn() as conn:
            writing = conn is getattr(self._local, "conn", None)
            stats = self._word_statistics(conn, found, versions, writing)
            if stats.pending:  # what this transaction wrote is searched too
                with conn.cursor() as cur:
                    schema.fill_terms(cur)
                stats = self._word_statistics(conn, found, versions, False, stats.plan)
            params = stats.params

            def run(hits: str, restore: bool = False) -> tuple[list[Any], tuple[str, ...]]:
                query = self._match_query(hits, stats.found, params, filters, match, full)
                if not restore:
                    cursor = conn.execute(query, params)
                    return cursor.fetchall(), tuple(d.name for d in cursor.description or ())
                # Trigger: a write transaction's last search (see _word_statistics).
                # Why: the write policy searches twice per line of a batch, and setting
                # the plan mode back was a round trip of its own. Outcome: it goes to
                # the server in one pipeline with the search, to run right after it.
                with conn.pipeline():
                    cursor = conn.execute(query, params)
                    conn.execute("SELECT set_config('plan_cache_mode', %s, true)", (stats.plan,))
                return cursor.fetchall(), tuple(d.name for d in cursor.description or ())

            # The newest matches first, as SQLite ranks them; every match if they do not
            # fill the page.
            newest = None if versions else self._newest_matches(conn, stats, match)
            got = run(newest) if newest is not None else None
            if got is None or filters.limit is None or len(got[0]) < filters.limit:
                return run(sql.scored("memory", "m", stats.found, match), restore=writing)
            if writing:  # see _word_statistics
                conn.execute("SELECT set_config('plan_cache_mode', %s, true)", (stats.plan,))
            return got

    def _newest_matches(self, conn: Conn, stats: _Statistics, match: str) -> str | None:
        """The step's matches to rank first when there are more than a cap, as SQLite
        ranks them (see base.RANK_CAP): the newest RANK_CAP, or for "any" each word's
        newest, ANY_RANK_CAP in all (sql.windows); None: rank every match. The words'
        counts tell most steps they are under the cap without another round trip."""
        found, counts, params = stats.found, stats.counts, stats.params
        cap = base.ANY_RANK_CAP if match == "any" else base.RANK_CAP
        # At most this many match: a row with all words but one holds one of the rarest two.
        bound = (
            sum(counts) if match == "any" else sum(counts[:2]) if match == "most" else min(counts)
        )
        if bound <= cap:
            return None
        # Trigger: the transaction plans generically since the words' statistics. Why: a
        # generic plan reads every match of a common word from the heap to find its
        # newest few (an index scan from the newest row stops early), slow at 10^5.
        # Outcome: these statements go with their values in the text, planned for them.
        literal = psycopg.ClientCursor(conn)
        if match != "any" or max(counts) <= cap:
            held = str(sql.matching("m", found, match, True))
            params["cap"] = cap
            floor = literal.execute(f"SELECT {sql.newest(held, '%(cap)s')}", params).fetchone()
            if floor is None or floor[0] is None:
                return None
            if match != "any":
                params["floor"] = floor[0]
                return sql.scored("memory", "m", found, match) + " AND m.seq > %(floor)s"
        # Each word's window, as SQLiteStore._windows shares the cap: fewest matches
        # first (then query order), a word under its share giving the rest to the others.
        known = [min(c, cap + 1) for c in counts]
        shares, left = {}, cap
        ranked = sorted(range(len(found)), key=lambda i: (known[i], stats.positions[i]))
        for rank, i in enumerate(ranked):
            share = max(1, left // (len(found) - rank))
            if known[i] > share:
                shares[i] = params[f"ws{i}"] = share
            left -= min(known[i], share)
        if shares:
            floors = ", ".join(
                sql.newest(sql.has_word("m", i, found[i], True), f"%(ws{i})s") for i in shares
            )
            got = literal.execute(f"SELECT {floors}", params).fetchone() or ()
            for i, floor in zip(shares, got, strict=True):
                params[f"wf{i}"] = floor
        return sql.windows(found, [i in shares for i in range(len(found))])

    def _match_query(
        self,
        hits: str,
        found: Sequence[sql.Word],
        params: dict[str, Any],
        filters: Filters,
        match: str,
        full: bool,
    ) -> str:
        """The search statement over `hits` (seq, src, score) of the memories."""
        if filters.as_of is not None:
            # As in SQLite: each table's scores over its own best, plus the ladder step,
            # so a version's perfect match is not outranked by another table's scale.
            params["step"] = float(len(SEARCH_STEPS) - 1 - SEARCH_STEPS.index(match))
            hits = (
                "SELECT seq, src, %(step)s + COALESCE(score / NULLIF(MAX(score) OVER "
                f"(PARTITION BY src), 0), 0) AS score FROM ({hits} UNION ALL "
                f"{sql.scored('memory_version', 'v', found, match)}) s"
            )
        join = "JOIN hits h ON h.seq = e.seq AND h.src = e.src"
        # Trigger: the write policy searches twice per line of a batch. Why: the anchors
        # were a round trip of their own. Outcome: the statement reads them (column
        # anchors); the words' statistics are one more round trip (_word_statistics).
        columns = f"{', '.join(f'e.{c}' for c in COLUMNS)}, {_ANCHORS}" if full else "e.id"
        query = f"WITH hits AS ({hits}) " + sql.select_sql(
            filters, [], params, join=join, extra="h.score AS score, ", columns=columns
        )
        query += " ORDER BY h.score DESC, e.updated_at DESC, e.seq DESC"
        if filters.limit is not None:
            query += " LIMIT %(limit)s"
            params["limit"] = filters.limit
        return query

    def _word_statistics(
        self, conn: Conn, found: list[sql.Word], versions: bool, writing: bool, plan: str = ""
    ) -> _Statistics:
        """The words rarest first (see sql.matching), and the query's parameters: the
        words, each word's IDF and the mean row length, as FTS5 computes them over a
        table (memory's kept current by triggers, see schema.m004; the versions'
        counted). In the same round trip: whether a write transaction has rows to fill
        first (`writing`), and the switch to generic plans.

        Trigger: the search statement repeats with other words (psycopg prepares it
        by its fifth run). Why: PostgreSQL would plan it afresh for each query's words,
        and planning costs more than running: several times as much for the write
        policy's search on a small store. Outcome: the prepared statement's
        one generic plan (the GIN index, whatever the words), for the rest of the
        transaction: a write transaction sets the mode it had back after the search
        (a nearest-vector search must not get a generic plan: not knowing its LIMIT,
        one could scan every row); a read's transaction ends with the search.
        """
        params: dict[str, Any] = {}
        sql.word_params(found, params)
        heads = [
            "current_setting('plan_cache_mode')",
            "set_config('plan_cache_mode', 'force_generic_plan', true)",
            f"({_PENDING if writing else 'FALSE'})",
        ]
        tables = {"m": ("memory", "SELECT n, tokens FROM term_total")}
        if versions:
            tables["v"] = (
                "memory_version",
                "SELECT count(*), COALESCE(sum(term_count), 0) FROM memory_version",
            )
        # A prefix word's terms among the memories' (see sql.has_word), in the same row.
        expanded = [i for i, word in enumerate(found) if word.prefix]
        expansions: list[list[str]] = []
        holding: list[int] = []
        idfs: dict[str, list[float]] = {}
        for prefix, (table, totals) in tables.items():
            counts = [_document_frequency(table, i, word) for i, word in enumerate(found)]
            if table == "memory":
                counts += [sql.prefixed(i) for i in expanded]
            got = conn.execute(
                f"SELECT {', '.join(heads)}, t.*, {', '.join(counts)} FROM ({totals}) t", params
            ).fetchone()
            got = got or ("auto", "", False, 0, 0, *[0] * len(found), *[[]] * len(expanded))
            current, _, waiting, rows, tokens, *frequencies = got
            plan, heads = plan or str(current), ["1", "1", "FALSE"]
            if waiting:
                return _Statistics(found, params, plan, pending=True)
            if table == "memory":
                frequencies, expansions = frequencies[: len(found)], frequencies[len(found) :]
                holding = [int(df or 0) for df in frequencies]
            params[f"{prefix}avgdl"] = float(tokens) / rows if rows else 1.0
            idfs[prefix] = [terms.idf(float(rows or 0), float(df or 0)) for df in frequencies]
        # Rarest first: the highest IDF over the memories, a word the index can find
        # fully (not a prefix, see sql.has_word) before one it may not.
        order = sorted(range(len(found)), key=lambda i: (found[i].prefix, -idfs["m"][i]))
        found = [found[i] for i in order]
        sql.word_params(found, params)
        starting = dict(zip(expanded, expansions, strict=True))
        for i, j in enumerate(order):
            if found[i].prefix:
                params[f"kx{i}"] = list(starting[j])
            for prefix, scores in idfs.items():
                params[f"{prefix}idf{i}"] = scores[j]
        ordered = tuple(holding[j] for j in order)
        return _Statistics(found, params, plan, counts=ordered, positions=tuple(order))

    def nearest(self, profile: str, vector: QueryVector, k: int) -> list[tuple[str, float]]:
        """The k memories whose best current vector of `profile` (entry or chunk) is
        nearest to `vector` by cosine, best first, through the dimension's HNSW index
        (on a store of at most EXACT_ROWS vector rows, by a scan of them all).

        Trigger: a memory owns several rows (its entry and chunk vectors) and rows of
        ended or rewritten memories stay until re-embedded. Why: a LIMIT over rows can
        return fewer than k memories that qualify. Outcome: rows are over-fetched, each
        memory keeps its best, and the fetch widens (ef_search with it) until k
        memories came back or the index has no more; past the widest HNSW search, an
        exact scan answers instead.
        """
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if k < 1:
            return []
        rows = min(max(int(k * FIRST_ROWS_PER_MEMORY), MIN_EF_SEARCH), MAX_EF_SEARCH)
        with self._conn() as conn, conn.transaction():  # SET LOCAL's scope
            if _few_vectors(conn):
                return self._nearest_exact(conn, profile, query, k)
            while True:
                found, complete = self._nearest_rows(conn, profile, query, k, rows)
                if complete:
                    return found
                if rows >= MAX_EF_SEARCH:
                    return self._nearest_exact(conn, profile, query, k)
                rows = min(rows * ROWS_PER_MEMORY, MAX_EF_SEARCH)

    def _nearest_rows(
        self, conn: Conn, profile: str, query: npt.NDArray[np.float32], k: int, rows: int
    ) -> tuple[list[tuple[str, float]], bool]:
        """The best `rows` rows by the HNSW index, each current memory's best of them;
        complete when they hold k memories or the index had no more rows to give."""
        dim = int(query.shape[0])
        conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(rows),))
        found = conn.execute(
            f"SELECT n.memory_id, 1 - n.distance, m.id IS NOT NULL FROM (SELECT memory_id, "
            f"content_hash, vector::vector({dim}) <=> %(q)s AS distance FROM embedding "
            f"WHERE dim = {dim} AND profile = %(profile)s "
            f"ORDER BY vector::vector({dim}) <=> %(q)s LIMIT %(rows)s) n "
            f"LEFT JOIN memory m ON {_CURRENT_VECTOR} ORDER BY n.distance",
            {"q": query, "profile": profile, "rows": rows},
        ).fetchall()
        best: dict[str, float] = {}
        for memory_id, cosine, current in found:
            if current:
                best.setdefault(str(memory_id), float(cosine))
        return list(best.items())[:k], len(best) >= k or len(found) < rows

    def _nearest_exact(
        self, conn: Conn, profile: str, query: npt.NDArray[np.float32], k: int
    ) -> list[tuple[str, float]]:
        """`nearest` by a full scan: on a small store, or for more rows than one HNSW
        search returns."""
        dim = int(query.shape[0])
        found = conn.execute(
            f"SELECT n.memory_id, max(1 - (n.vector::vector({dim}) <=> %(q)s)) AS cosine "
            f"FROM embedding n JOIN memory m ON {_CURRENT_VECTOR} "
            f"WHERE n.dim = {dim} AND n.profile = %(profile)s "
            "GROUP BY n.memory_id ORDER BY cosine DESC, n.memory_id LIMIT %(k)s",
            {"q": query, "profile": profile, "k": k},
        ).fetchall()
        return [(str(r[0]), float(r[1])) for r in found]

    def iter_all(self) -> Iterator[Record]:
        columns = ", ".join(f"e.{c}" for c in COLUMNS)
        query = f"SELECT {columns}, {_ANCHORS} FROM memory e ORDER BY e.seq"
        with self._conn() as conn, conn.cursor(name="iter_all") as cursor:
            cursor.execute(query)
            keys: tuple[str, ...] | None = None
            for row in cursor:
                keys = keys or tuple(d.name for d in cursor.description or ())
                yield _reader(keys)(row, tuple(json.loads(row[-1])))

    def versions(self, memory_id: str) -> list[Version]:
        from memlane.store.sqlite.rows import version_from_row

        names = version_columns()
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {', '.join(names)} FROM memory_version WHERE memory_id = %s "
                "ORDER BY number",
                (memory_id,),
            ).fetchall()
        return [version_from_row(dict(zip(names, r, strict=True))) for r in rows]  # type: ignore[arg-type]

    def links(self, memory_id: str) -> list[Link]:
        return self.links_touching([memory_id])

    def links_touching(self, memory_ids: Sequence[str]) -> list[Link]:
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {LINK_COLUMNS} FROM link WHERE source = ANY(%(ids)s::text[]) "
                "OR target = ANY(%(ids)s::text[]) ORDER BY created_at, seq",
                {"ids": list(memory_ids)},
            ).fetchall()
        return [_link(r) for r in rows]

    def dump(self, selection: Selection) -> Iterator[tuple[str, dict[str, Any]]]:
        with self._conn() as conn:
            yield from dump_sql.dump(conn, self.location, selection)

    def check_record(self, kind: str, row: Mapping[str, Any]) -> dict[str, Any]:
        with self._conn() as conn:
            return dump_sql.check(conn, self.location, kind, row)

    def scopes(self) -> list[str]:
        with self._conn() as conn:
            rows = conn.execute("SELECT DISTINCT scope FROM memory ORDER BY 1").fetchall()
        return [str(r[0]) for r in rows]

    def snapshot(self, dest: Path) -> Counts:
        raise Unavailable(
            f"{self.location} is a PostgreSQL database: back it up with the server's tools, "
            "e.g. `pg_dump --format=custom --file memlane.dump <url>` (and pg_restore), "
            "or take a portable copy with `memlane export`"
        )

    def link_ends(self, number: int) -> tuple[str, str] | None:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT source, target FROM link WHERE seq = %s", (number,)
            ).fetchone()
        return (str(row[0]), str(row[1])) if row else None

    def journal_entries(
        self, memory_id: str | None = None, limit: int = 100, viewer: str | None = None
    ) -> list[JournalEntry]:
        seen = (
            "(j.memory_id IS NULL OR (m.id IS NOT NULL AND (m.visibility = 'public' "
            "OR (%(viewer)s::text IS NOT NULL AND m.owner = %(viewer)s::text))) "
            "OR (m.id IS NULL AND %(viewer)s::text IS NOT NULL AND j.actor = %(viewer)s::text))"
        )
        where = f"WHERE {seen}" + (" AND j.memory_id = %(id)s" if memory_id else "")
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT j.seq, j.at, j.operation, j.memory_id, j.actor, j.detail FROM journal j "
                f"LEFT JOIN memory m ON m.id = j.memory_id {where} "
                "ORDER BY j.seq DESC LIMIT %(limit)s",
                {"viewer": viewer, "id": memory_id, "limit": limit},
            ).fetchall()
        return [JournalEntry(r[0], from_text(r[1]), r[2], r[3], r[4], r[5]) for r in rows]

    def meta(self, key: str) -> str | None:
        with self._conn() as conn:
            row = conn.execute("SELECT value FROM store_meta WHERE key = %s", (key,)).fetchone()
        return str(row[0]) if row else None

    def vectors(
        self, profile: str, ids: Sequence[str] | None = None
    ) -> Iterator[tuple[str, int, bytes]]:
        query = (
            "SELECT v.memory_id, v.chunk, v.vector FROM embedding v "
            "JOIN memory m ON m.id = v.memory_id "
            "WHERE v.profile = %(profile)s AND v.content_hash = m.dedup_hash "
            f"AND m.{_LIVE.replace(' AND ', ' AND m.')}"
        )
        if ids is not None:
            query += " AND m.id = ANY(%(ids)s::text[])"
        with self._conn() as conn, conn.cursor(name="vectors", binary=True) as cursor:
            cursor.execute(
                query + " ORDER BY m.seq, v.chunk", {"profile": profile, "ids": list(ids or ())}
            )
            for memory_id, chunk, vector in cursor:
                yield str(memory_id), int(chunk), vector.to_numpy().tobytes()

    def scopes_and_kinds(self, ids: Sequence[str] | None = None) -> Iterator[tuple[str, str, str]]:
        query = f"SELECT id, scope, kind FROM memory WHERE {_LIVE}"
        if ids is not None:
            query += " AND id = ANY(%(ids)s::text[])"
        with self._conn() as conn, conn.cursor(name="groups") as cursor:
            cursor.execute(query, {"ids": list(ids or ())})
            for memory_id, scope, kind in cursor:
                yield str(memory_id), str(scope), str(kind)

    def vector_changes(self, after: int, limit: int) -> tuple[int, list[str]] | None:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT seq, memory_id FROM vector_change WHERE seq > %s ORDER BY seq LIMIT %s",
                (after, limit + 1),
            ).fetchall()
        if len(rows) > limit:
            return None
        last = int(rows[-1][0]) if rows else after
        return last, list(dict.fromkeys(str(r[1]) for r in rows))

    def last_vector_change(self) -> int:
        with self._conn() as conn:
            row = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM vector_change").fetchone()
        return int(row[0]) if row else 0

    def adjacent(self, memory_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        params: dict[str, Any] = {}
        query = shared.adjacent_sql(sql.POSTGRES, memory_ids, params)
        with self._conn() as conn:
            rows = conn.execute(query, params).fetchall()
        return {str(r[0]): tuple(str(i) for i in r[1:] if i is not None) for r in rows}

    def vector_epoch(self) -> int:
        return int(self.meta("vector_epoch") or 0)

    def unembedded(self, profile: str, limit: int | None = None) -> list[Record]:
        query = (
            f"SELECT {sql.MEMORY_COLUMNS} FROM memory e WHERE e.{_LIVE.replace(' AND ', ' AND e.')} "
            "AND NOT EXISTS (SELECT 1 FROM embedding v WHERE v.memory_id = e.id "
            "AND v.profile = %(profile)s AND v.chunk = -1 AND v.content_hash = e.dedup_hash) "
            "ORDER BY e.seq LIMIT %(limit)s"
        )
        return self._records(query, {"profile": profile, "limit": limit})

    def vitals(self, viewer: str | None, profile: str | None, now: datetime) -> Vitals:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT COUNT(*), "
                "COUNT(*) FILTER (WHERE EXISTS (SELECT 1 FROM embedding v WHERE v.memory_id = "
                "e.id AND v.chunk = -1 AND v.profile = %(profile)s::text "
                "AND v.content_hash = e.dedup_hash)), "
                "COUNT(*) FILTER (WHERE EXISTS (SELECT 1 FROM link a WHERE a.source = e.id "
                "AND a.type = 'anchor')), "
                "COUNT(*) FILTER (WHERE e.importance >= %(high)s AND effective_resonance("
                "e.importance, e.resonance_type, COALESCE(e.last_activated, e.created_at), "
                "%(now)s::text) < %(faded)s) "
                f"FROM memory e WHERE e.{_LIVE.replace(' AND ', ' AND e.')} "
                "AND (e.visibility = 'public' OR e.owner = %(viewer)s::text)",
                {
                    "viewer": viewer,
                    "profile": profile,
                    "now": to_text(now),
                    "high": STALE_HIGH_IMPORTANCE,
                    "faded": STALE_FADED_BELOW,
                },
            ).fetchone()
        assert row is not None
        return Vitals(row[0], row[1], row[2], row[3])

    def created_since(self, viewer: str | None, since: datetime) -> list[datetime]:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT created_at FROM memory WHERE created_at >= %s "
                "AND (visibility = 'public' OR owner = %s::text)",
                (to_text(since), viewer),
            ).fetchall()
        return [from_text(r[0]) for r in rows]

    def stats(self, viewer: str | None, *, everyone: bool = False) -> Stats:
        with self._conn() as conn:
            return counts.stats(
                sql.POSTGRES, conn, viewer, everyone, self.schema_version, self.location
            )


def _parse_time(text: str) -> datetime:
    try:
        return from_text(text)
    except ValueError:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
