"""A write transaction's vectors on PostgreSQL: written together at its next statement
or commit, the HNSW index built again after a batch large next to the table, and
left in place when readers hold the table (store/postgres/vectors.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing, contextmanager
from typing import Any, NamedTuple

import numpy as np
import pytest

from conftest import create_database, drop_database
from memlane import Context, Memory
from memlane.embed.blob import to_blob

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")
from memlane.store.postgres import PostgresStore  # noqa: E402
from memlane.store.postgres import vectors as vector_sql  # noqa: E402

DIM = 16
PROFILE = "test/16"
INDEX = f"embedding_hnsw_{DIM}"


def _memories(url: str, count: int) -> list[tuple[str, str]]:
    """`count` memories without vectors: their ids and content hashes."""
    with Memory.open(url, agent="ada", context=Context("proj"), embedder=None) as mem:
        items = [{"content": f"note {i} on {i % 7}", "allow_duplicate": True} for i in range(count)]
        ids = [i for i in mem.add_batch(items).ids if i is not None]
        return [(i, mem.store.get(i).dedup_hash) for i in ids]  # type: ignore[union-attr]


def _vector(rng: np.random.Generator) -> bytes:
    v = rng.standard_normal(DIM).astype(np.float32)
    return to_blob(v / np.linalg.norm(v))


Put = tuple[int, list[tuple[int, bytes]]]  # a memory's place and its rows


def _put(store: PostgresStore, memories: list[tuple[str, str]], puts: list[Put]) -> None:
    with store.write() as w:
        for n, rows in puts:
            w.put_vectors(memories[n][0], PROFILE, rows, DIM, memories[n][1])


def _rows(url: str, memories: list[tuple[str, str]]) -> list[tuple[Any, ...]]:
    """The embedding table, each memory named by its place in `memories`."""
    place = {memory_id: n for n, (memory_id, _) in enumerate(memories)}
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT memory_id, profile, chunk, dim, vector::text, content_hash FROM embedding"
        ).fetchall()
    return sorted((place[r[0]], *r[1:]) for r in rows)


def _index_oid(url: str) -> int | None:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT to_regclass(%s)::oid", (INDEX,)).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def _batch(rng: np.random.Generator, places: range) -> list[Put]:
    return [(n, [(-1, _vector(rng))] + [(c, _vector(rng)) for c in range(n % 3)]) for n in places]


class Opened(NamedTuple):
    url: str
    store: PostgresStore
    memories: list[tuple[str, str]]


@pytest.fixture
def two_stores(pg_server: str, pg_template: str) -> Iterator[tuple[str, str]]:
    urls = [create_database(pg_server, template=pg_template) for _ in range(2)]
    yield urls[0], urls[1]
    for url in urls:
        drop_database(pg_server, url)


@contextmanager
def _both(urls: tuple[str, str], memories: int) -> Iterator[tuple[Opened, Opened]]:
    """The two stores, each holding `memories` memories, open."""
    held = [_memories(url, memories) for url in urls]
    with closing(PostgresStore(urls[0])) as first, closing(PostgresStore(urls[1])) as second:
        yield Opened(urls[0], first, held[0]), Opened(urls[1], second, held[1])


def test_one_transactions_vectors_are_the_rows_of_one_put_per_transaction(
    two_stores: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memlane.store.postgres.store.EXACT_ROWS", -1)  # through HNSW
    rng = np.random.default_rng(7)
    again = (5, [(-1, _vector(rng))])  # a later put of one memory replaces its rows
    puts = [*_batch(rng, range(300)), again]
    with _both(two_stores, 300) as (bulk, single):
        _put(bulk.store, bulk.memories, puts)
        for put in puts:
            _put(single.store, single.memories, [put])
        rows = _rows(bulk.url, bulk.memories)
        assert rows == _rows(single.url, single.memories)
        assert len(rows) == 300 + sum(n % 3 for n in range(300)) - 5 % 3  # 5's chunks gone
        assert _index_oid(bulk.url) is not None
        query = np.frombuffer(again[1][0][1], dtype=np.float32)
        found = bulk.store.nearest(PROFILE, query, 3)
        assert found[0] == (bulk.memories[5][0], pytest.approx(1.0, abs=1e-5))


def test_vectors_put_in_a_transaction_are_read_and_deleted_in_it(pg_store: str) -> None:
    rng = np.random.default_rng(8)
    memories = _memories(pg_store, 2)
    (kept, kept_hash), (gone, gone_hash) = memories
    with closing(PostgresStore(pg_store)) as store:
        with store.write() as w:
            w.put_vectors(kept, PROFILE, [(-1, _vector(rng))], DIM, kept_hash)
            w.put_vectors(gone, PROFILE, [(-1, _vector(rng))], DIM, gone_hash)
            assert {m for m, _, _ in store.vectors(PROFILE)} == {kept, gone}
            w.put_vectors(gone, PROFILE, [(-1, _vector(rng))], DIM, gone_hash)
            w.delete(gone)  # its waiting rows first, then the memory and its rows
        assert [m for m, _, _ in store.vectors(PROFILE)] == [kept]


def test_a_large_batch_rebuilds_the_index_unless_readers_hold_the_table(pg_store: str) -> None:
    rng = np.random.default_rng(9)
    memories = _memories(pg_store, 900)
    with closing(PostgresStore(pg_store)) as store:
        _put(store, memories, _batch(rng, range(300)))
        first = _index_oid(pg_store)
        _put(store, memories, _batch(rng, range(300, 600)))  # as many rows as the table
        rebuilt = _index_oid(pg_store)
        assert first is not None and rebuilt is not None and rebuilt != first
        with psycopg.connect(pg_store) as reader:
            reader.execute("SELECT count(*) FROM embedding").fetchone()  # held to its end
            _put(store, memories, _batch(rng, range(600, 900)))
        assert _index_oid(pg_store) == rebuilt  # the rows went through the index
        assert len(_rows(pg_store, memories)) == 900 + sum(n % 3 for n in range(900))


def _builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each build of an index from here on, by the rows of its dimension it indexed."""
    from memlane.store.postgres import vectors

    built: list[int] = []
    build = vectors._build_index

    def counted(conn: Any, dim: int, rows: int) -> None:
        found = conn.execute("SELECT count(*) FROM embedding WHERE dim = %s", (dim,)).fetchone()
        built.append(int(found[0]))
        build(conn, dim, rows)

    monkeypatch.setattr(vectors, "_build_index", counted)
    return built


def test_a_job_of_small_transactions_sets_the_index_aside_and_builds_it_once_after(
    two_stores: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # 100 rows indexed, then a job of 500 memories in transactions of 50: as a whole
    # large next to the table, so the index is dropped for the job, searches read
    # every row meanwhile, and it is built once after; the rows are those the same
    # transactions write without the job.
    monkeypatch.setattr("memlane.store.postgres.store.EXACT_ROWS", -1)  # through HNSW
    rng = np.random.default_rng(10)
    first = [(n, [(-1, _vector(rng))]) for n in range(100)]
    parts = [_batch(rng, range(s, s + 50)) for s in range(100, 600, 50)]
    with _both(two_stores, 600) as (job, plain):
        for opened in (job, plain):
            _put(opened.store, opened.memories, first)
        assert _index_oid(job.url) is not None
        built = _builds(monkeypatch)
        with job.store.bulk_vectors(DIM, 500):
            assert _index_oid(job.url) is None
            for n, part in enumerate(parts):
                _put(job.store, job.memories, part)
                if n == 4:  # a search meanwhile reads every row
                    query = np.frombuffer(part[0][1][0][1], dtype=np.float32)
                    found = job.store.nearest(PROFILE, query, 1)
                    assert found[0] == (job.memories[part[0][0]][0], pytest.approx(1.0, abs=1e-5))
            assert _index_oid(job.url) is None and built == []
        assert _index_oid(job.url) is not None
        assert built == [len(_rows(job.url, job.memories))]
        for part in parts:
            _put(plain.store, plain.memories, part)
        assert _rows(job.url, job.memories) == _rows(plain.url, plain.memories)


def test_a_job_small_next_to_the_table_keeps_the_index_and_one_cut_short_builds_it(
    pg_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(11)
    memories = _memories(pg_store, 700)
    with closing(PostgresStore(pg_store)) as store:
        _put(store, memories, [(n, [(-1, _vector(rng))]) for n in range(600)])
        kept = _index_oid(pg_store)
        with store.bulk_vectors(DIM, 100):  # 100 rows beside 600: through the index
            _put(store, memories, _batch(rng, range(600, 650)))
        assert _index_oid(pg_store) == kept
        built = _builds(monkeypatch)
        with pytest.raises(RuntimeError), store.bulk_vectors(DIM, 2_000):
            assert _index_oid(pg_store) is None
            _put(store, memories, _batch(rng, range(650, 700)))
            raise RuntimeError("the job fails")
        assert _index_oid(pg_store) is not None and len(built) == 1
        with psycopg.connect(pg_store) as conn:  # a job whose process ended mid-way
            assert vector_sql.suspend(conn, DIM, 2_000)
        assert _index_oid(pg_store) is None
        _put(store, memories, [(0, [(-1, _vector(rng))])])  # the next write builds it
        assert _index_oid(pg_store) is not None and len(built) == 2


@pytest.mark.parametrize("embedded", [True, False])
def test_embed_on_postgres_builds_the_index_once_after_the_job(
    pg_store: str, monkeypatch: pytest.MonkeyPatch, embedded: bool
) -> None:
    # `embed --all` over vectors written on add, or `embed --pending` of a store that
    # has none yet: in transactions of 64 memories, the index built once, at the end.
    from memlane.embed import get_embedder

    hashed = get_embedder("hash")
    items = [{"content": f"note {i} about topic {i % 11}"} for i in range(400)]
    with Memory.open(
        pg_store, agent="ada", context=Context("proj"), embedder=hashed if embedded else None
    ) as mem:
        mem.add_batch(items)
    with Memory.open(pg_store, agent="ada", context=Context("proj"), embedder=hashed) as mem:
        built = _builds(monkeypatch)
        outcome = mem.embed(all=True) if embedded else mem.embed(pending=True)
        assert len(outcome.embedded) == 400 and not outcome.failed
        assert built == [400]  # once, after the job's last rows
        assert mem.recall("note 7 about topic 7")
