"""A write transaction's vectors on PostgreSQL: one pgvector HNSW (cosine) index per
dimension, and the rows written together, in one COPY, when the transaction's next
statement or its commit comes (see PostgresWriter.put_vectors).

Trigger: every vector row goes into its dimension's HNSW index as it is written.
Why: inserting one row into a built graph searches it and re-links the row's
neighbours page by page, several times the cost per row of building the graph in
memory from the rows (CREATE INDEX). Outcome: a batch large next to the rows already
indexed (a store's first embedding, a re-embedding) is written without the index,
which is built again after it in the same transaction; a smaller batch goes through
the index row by row, as before. A job of many small transactions that is large as a
whole sets the index aside for its length (`suspend`, `restore`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

import numpy as np
import psycopg

Conn = psycopg.Connection[tuple[Any, ...]]
# Advisory lock namespace (the first key of pg_advisory_xact_lock(int, int)): the
# vectors of one dimension, their index made or rebuilt.
INDEX_LOCK = 0x6D6C6932  # "mli2"
# A batch rebuilds the index when it brings at least 1/REBUILD_SHARE of the rows the
# table will hold. Why: a row inserted into the built graph costs seven to ten rows of
# a build (384 dimensions, pgvector 0.6, 10^3..10^4 rows), so a rebuild pays from
# about a tenth; a quarter keeps clear of that break-even, as a rebuild also holds
# off readers of the table until the transaction commits.
REBUILD_SHARE = 4
# Fewer rows never rebuild: one memory's vectors go through the index at a few
# milliseconds, cheaper than dropping, rebuilding and re-planning every reader.
MIN_REBUILD_ROWS = 256
# How long the rebuild waits for readers of the table to finish before it gives up
# and writes row by row: well short of the server's deadlock check (1 s by default),
# so a wait on a writer that waits on this transaction ends here first.
DROP_WAIT_MS = 200
# A build keeps the graph in maintenance_work_mem (and slows many times over past
# it): the vectors and their neighbour lists, up to a cap on the server's memory.
GRAPH_BYTES_PER_ROW = 512
BUILD_MEMORY_CAP_KB = 512 * 1024


class Put(NamedTuple):
    """One memory's vectors of one profile, waiting for the COPY."""

    memory_id: str
    profile: str
    rows: tuple[tuple[int, bytes], ...]  # (chunk, float32 blob); chunk -1 the entry
    dim: int
    content_hash: str
    at: str


def index_sql(dim: int) -> str:
    """The partial HNSW index of vectors of `dim` dimensions (the column has none)."""
    d = int(dim)
    return (
        f"CREATE INDEX IF NOT EXISTS embedding_hnsw_{d} ON embedding "
        f"USING hnsw ((vector::vector({d})) vector_cosine_ops) WHERE dim = {d}"
    )


def write(conn: Conn, puts: Sequence[Put], deferred: Collection[int] = ()) -> None:
    """Replace each put's memory vectors of its profile by its rows; the index of a
    dimension in `deferred` is built after a job's last rows (see `suspend`)."""
    if not puts:
        return
    conn.execute(
        "DELETE FROM embedding e USING unnest(%s::text[], %s::text[]) AS d(memory_id, profile) "
        "WHERE e.memory_id = d.memory_id AND e.profile = d.profile",
        ([p.memory_id for p in puts], [p.profile for p in puts]),
    )
    for dim in sorted({p.dim for p in puts if p.rows}):
        rows = [p for p in puts if p.dim == dim and p.rows]
        _write_dimension(conn, dim, rows, dim in deferred)


def _write_dimension(conn: Conn, dim: int, puts: Sequence[Put], deferred: bool) -> None:
    """The rows of one dimension, the index rebuilt after them when that costs less
    (see the module's docstring), made when the dimension has none yet (unless a job
    that set it aside builds it after its last rows)."""
    indexed, present = _locked(conn, dim)
    adding = sum(len(p.rows) for p in puts)
    rebuild = indexed and _rebuild_pays(adding, present) and _drop_index(conn, dim)
    _copy(conn, puts)
    if rebuild or not (indexed or deferred):
        _build_index(conn, dim, present + adding)


def suspend(conn: Conn, dim: int, adding: int) -> bool:
    """Before a job that writes `adding` rows of `dim` dimensions over many
    transactions: whether its writes leave the index to `restore`. True when there is
    none yet, or when building it again after the job costs less (it is dropped);
    False when the job is small next to the table or readers held the table.

    Trigger: `embed --all`, `--pending`, an import's embedding: transactions of a few
    dozen memories each. Why: each is small next to the table, so its rows would go
    through the index one at a time, though all of them together are not. Outcome:
    the index is dropped in a transaction of its own (readers meanwhile search every
    row exactly), the job's rows are copied in without it, and `restore` builds it
    once at the end; if the job is cut short, the dimension's next write builds it.
    """
    indexed, present = _locked(conn, dim)
    if not indexed:
        return adding >= MIN_REBUILD_ROWS
    return _rebuild_pays(adding, present) and _drop_index(conn, dim)


def restore(conn: Conn, dim: int) -> None:
    """After a job that suspended the index: build it (one another writer made
    meanwhile is kept)."""
    indexed, present = _locked(conn, dim)
    if not indexed:
        _build_index(conn, dim, present)


def _locked(conn: Conn, dim: int) -> tuple[bool, int]:
    """Take the dimension's lock (to the transaction's end); whether its index exists,
    and about how many rows the table holds."""
    # The lock and what it guards in one round trip: read before the lock was granted,
    # the index may be missing though another writer made it meanwhile, and CREATE
    # INDEX IF NOT EXISTS then leaves that one be.
    found = conn.execute(
        "SELECT pg_advisory_xact_lock(%s, %s)::text, to_regclass(%s) IS NOT NULL, "
        "GREATEST(pg_stat_get_live_tuples(c.oid), c.reltuples)::bigint FROM pg_class c "
        "WHERE c.oid = 'embedding'::regclass",
        (INDEX_LOCK, dim, f"embedding_hnsw_{int(dim)}"),
    ).fetchone()
    return (bool(found[1]), int(found[2])) if found else (False, 0)


def _rebuild_pays(adding: int, present: int) -> bool:
    return adding >= MIN_REBUILD_ROWS and adding * REBUILD_SHARE >= present + adding


def _drop_index(conn: Conn, dim: int) -> bool:
    """Drop the dimension's index for the rest of the transaction; False when readers
    held the table longer than DROP_WAIT_MS (the rows then go through the index).

    Readers that come meanwhile wait for the commit: the drop holds the table's
    exclusive lock to the end of the transaction."""
    try:
        with conn.transaction():  # a savepoint: a refused drop leaves the write going
            row = conn.execute(
                "SELECT current_setting('lock_timeout'), set_config('lock_timeout', %s, true)",
                (f"{DROP_WAIT_MS}ms",),
            ).fetchone()
            conn.execute(f"DROP INDEX IF EXISTS embedding_hnsw_{int(dim)}")
            conn.execute("SELECT set_config('lock_timeout', %s, true)", (row[0] if row else "0",))
    except (psycopg.errors.LockNotAvailable, psycopg.errors.DeadlockDetected):
        return False
    return True


def _copy(conn: Conn, puts: Sequence[Put]) -> None:
    with (
        conn.cursor() as cur,
        cur.copy(
            "COPY embedding(memory_id, profile, chunk, dim, vector, content_hash, created_at) "
            "FROM STDIN WITH (FORMAT BINARY)"
        ) as copy,
    ):
        copy.set_types(["text", "text", "int8", "int8", "vector", "text", "text"])
        for p in puts:
            for chunk, blob in p.rows:
                vector = np.frombuffer(blob, dtype=np.float32)
                copy.write_row((p.memory_id, p.profile, chunk, p.dim, vector, p.content_hash, p.at))


def _build_index(conn: Conn, dim: int, rows: int) -> None:
    """Build the index over the table's rows of `dim`, with room for its graph."""
    wanted_kb = min(BUILD_MEMORY_CAP_KB, rows * (4 * int(dim) + GRAPH_BYTES_PER_ROW) // 1024)
    conn.execute(
        "SELECT set_config('maintenance_work_mem', GREATEST(%s::bigint, "
        "pg_size_bytes(current_setting('maintenance_work_mem')) / 1024)::text || 'kB', true)",
        (wanted_kb,),
    )
    conn.execute(index_sql(dim))
