"""The vector lane's derived index over a real store: exact, max over chunks, never stale."""

from __future__ import annotations

import numpy as np
import pytest

from memlane.embed import get_embedder
from memlane.embed.blob import to_blob
from memlane.errors import EmbeddingFailed
from memlane.retrieve.vectors import VectorIndex

DIM = 4


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def put(mem, memory_id: str, *vectors: np.ndarray) -> None:
    """Store an entry vector (the first) and chunk vectors (the rest) for a memory."""
    record = mem.get(memory_id)
    rows = [(-1, to_blob(vectors[0]))] + [(i, to_blob(v)) for i, v in enumerate(vectors[1:])]
    with mem.store.write() as w:
        w.put_vectors(record.id, "test", rows, DIM, record.dedup_hash)


def test_nearest_memory_comes_first(mem):
    north = mem.add("north").id
    east = mem.add("east").id
    put(mem, north, unit(0, 1, 0, 0))
    put(mem, east, unit(1, 0, 0, 0))
    index = VectorIndex(mem.store, "test", DIM)
    hits = index.search(unit(0.1, 1, 0, 0), k=2)
    assert [h.memory_id for h in hits] == [north, east]
    assert hits[0].score > 0.99


def test_a_chunk_can_carry_a_memory(mem):
    long_one = mem.add("a long memory").id
    other = mem.add("other").id
    put(mem, long_one, unit(1, 1, 0, 0), unit(1, 0, 0, 0), unit(0, 0, 1, 0))
    put(mem, other, unit(0, 1, 1, 0))
    hits = VectorIndex(mem.store, "test", DIM).search(unit(0, 0, 1, 0), k=1)
    assert hits[0].memory_id == long_one
    assert abs(hits[0].score - 1.0) < 1e-6


def test_a_deleted_memory_never_comes_back(mem):
    gone = mem.add("to be deleted").id
    kept = mem.add("kept").id
    put(mem, gone, unit(1, 0, 0, 0))
    put(mem, kept, unit(0, 1, 0, 0))
    index = VectorIndex(mem.store, "test", DIM)
    assert index.search(unit(1, 0, 0, 0), k=1)[0].memory_id == gone
    mem.delete(gone)
    assert [h.memory_id for h in index.search(unit(1, 0, 0, 0), k=5)] == [kept]


def test_vectors_of_changed_content_are_stale_and_skipped(mem):
    memory_id = mem.add("Cache for one minute.").id
    put(mem, memory_id, unit(1, 0, 0, 0))
    index = VectorIndex(mem.store, "test", DIM)
    assert len(index) == 1
    mem.update(memory_id, content="Never cache.")
    index = VectorIndex(mem.store, "test", DIM)
    assert len(index) == 0
    assert [r.id for r in mem.store.unembedded("test")] == [memory_id]


def test_new_vectors_rebuild_the_index(mem):
    first = mem.add("first").id
    put(mem, first, unit(1, 0, 0, 0))
    index = VectorIndex(mem.store, "test", DIM)
    assert len(index) == 1
    second = mem.add("second").id
    put(mem, second, unit(0, 1, 0, 0))
    assert index.search(unit(0, 1, 0, 0), k=1)[0].memory_id == second


def test_one_index_drops_a_memory_whose_content_changed_or_ended(mem):
    edited = mem.add("Cache for one minute.").id
    ended = mem.add("Staging runs on Fridays.").id
    put(mem, edited, unit(1, 0, 0, 0))
    put(mem, ended, unit(0, 1, 0, 0))
    index = VectorIndex(mem.store, "test", DIM)
    assert len(index) == 2
    mem.update(edited, content="Never cache.")
    mem.invalidate(ended, reason="staging was retired")
    assert len(index) == 0


# ---- sign codes with exact re-scoring, forced on small stores -------------------

WIDE = 16


def _directions(count: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(count, WIDE)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _fill(mem, vectors: np.ndarray) -> list[str]:
    """One memory per vector, written in one batch; returns their ids in order."""
    batch = mem.add_batch([{"content": f"memory number {i}"} for i in range(len(vectors))])
    ids = list(batch.ids)
    with mem.store.write() as w:
        for memory_id, vector in zip(ids, vectors, strict=True):
            record = mem.get(memory_id)
            w.put_vectors(memory_id, "test", [(-1, to_blob(vector))], WIDE, record.dedup_hash)
    return ids


def _ann(mem, **options) -> VectorIndex:
    return VectorIndex(mem.store, "test", WIDE, ann_threshold=10, **options)


def test_the_sign_codes_find_what_exact_search_finds(mem):
    vectors = _directions(200)
    ids = _fill(mem, vectors)
    index = _ann(mem)
    assert index.describe()["kind"].startswith("sign codes")
    near = vectors[17] + 0.05 * vectors[3]
    near /= np.linalg.norm(near)
    hits = index.search(near, k=5)
    assert hits[0].memory_id == ids[17]
    assert [h.memory_id for h in hits] == [h.memory_id for h in index.search(near, 5, exact=True)]
    assert abs(hits[0].score - float(vectors[17] @ near)) < 1e-5


@pytest.mark.parametrize("ann", [False, True])
@pytest.mark.parametrize("span", [7, 1 << 16])
def test_a_batch_search_finds_what_an_exact_search_of_each_query_finds(mem, ann, span, monkeypatch):
    # Exact whether or not the rows have sign codes (which would narrow a single search
    # to two candidates a memory here), and whether the rows are scored in one block or
    # in blocks of 7, which split the rows of some memories between two blocks.
    monkeypatch.setattr("memlane.retrieve.vectors.RESCORE_MIN", 10)
    monkeypatch.setattr("memlane.retrieve.vectors.RESCORE_PER_RESULT", 2)
    monkeypatch.setattr("memlane.retrieve.vectors.SEARCH_ROWS", span)
    vectors = _directions(200)
    ids = _fill(mem, vectors)
    rng = np.random.default_rng(3)
    with mem.store.write() as w:  # every fifth memory gets two chunk rows beside its entry
        for i in range(0, 200, 5):
            chunks = _directions(2, seed=100 + i) if i != 40 else np.stack([-vectors[5]] * 2)
            rows = [(-1, to_blob(vectors[i]))] + [(j, to_blob(c)) for j, c in enumerate(chunks)]
            w.put_vectors(ids[i], "test", rows, WIDE, mem.get(ids[i]).dedup_hash)
    index = _ann(mem) if ann else VectorIndex(mem.store, "test", WIDE)
    queries = np.stack([vectors[17] + 0.05 * vectors[3], vectors[40], -vectors[5]])
    queries = np.concatenate([queries, rng.normal(size=(20, WIDE)).astype(np.float32)])
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    rows = index.current()
    assert (rows.signs is not None) == ann
    assert len(rows.owner) == 280
    found = rows.search_many(queries, 5)
    for query, hits in zip(queries, found, strict=True):
        exact = index.search(query, 5, exact=True)
        assert [h.memory_id for h in hits] == [h.memory_id for h in exact]
        assert np.allclose([h.score for h in hits], [h.score for h in exact], atol=1e-5)
    assert found[2][0].memory_id == ids[40]  # by a chunk row: -vectors[5] is its chunk
    assert rows.search_many(queries[:0], 5) == []


def test_the_sign_codes_never_return_a_deleted_memory(mem):
    vectors = _directions(120)
    ids = _fill(mem, vectors)
    index = _ann(mem)
    assert index.search(vectors[5], k=1)[0].memory_id == ids[5]
    mem.delete(ids[5])
    returned = {h.memory_id for h in index.search(vectors[5], k=119)}
    assert ids[5] not in returned and len(returned) == 119


@pytest.mark.sqlite_only  # the .vindex file lives next to a SQLite file
def test_the_index_file_is_used_only_while_current(mem, db_path):
    vectors = _directions(100)
    ids = _fill(mem, vectors)
    first = _ann(mem, persist_min_rows=0)
    assert first.search(vectors[9], k=1)[0].memory_id == ids[9]
    assert first.path is not None and first.path.exists()
    stamp = first.path.stat().st_mtime_ns

    cold = _ann(mem, persist_min_rows=0)  # a new process: maps the file, no rebuild
    assert cold.search(vectors[9], k=1)[0].memory_id == ids[9]
    assert first.path.stat().st_mtime_ns == stamp

    # A memory's vector changes and another is deleted: the file is stale; a new
    # process catches up from the store's change log instead of reading every vector,
    # and rewrites the file for the processes after it.
    record = mem.get(ids[40])
    with mem.store.write() as w:
        w.put_vectors(ids[40], "test", [(-1, to_blob(vectors[9]))], WIDE, record.dedup_hash)
    mem.delete(ids[9])
    again = _ann(mem, persist_min_rows=0)
    assert again.search(vectors[9], k=1)[0].memory_id == ids[40]
    assert ids[9] not in {h.memory_id for h in again.search(vectors[9], k=100)}
    assert len(again) == 99
    caught_up = first.path.stat().st_mtime_ns
    assert caught_up != stamp
    after = _ann(mem, persist_min_rows=0)
    assert after.search(vectors[9], k=1)[0].memory_id == ids[40]
    assert first.path.stat().st_mtime_ns == caught_up  # mapped as it is
    # The index already in memory catches up the same way.
    assert first.search(vectors[9], k=1)[0].memory_id == ids[40]


@pytest.mark.sqlite_only  # the .vindex file lives next to a SQLite file
def test_too_many_changes_rebuild_the_index_and_rewrite_its_file(mem, monkeypatch):
    from memlane.retrieve import vectors as index_module

    vectors = _directions(100)
    ids = _fill(mem, vectors)
    index = _ann(mem, persist_min_rows=0)
    index.search(vectors[0], k=1)
    assert index.path is not None
    stamp = index.path.stat().st_mtime_ns
    monkeypatch.setattr(index_module, "DELTA_MIN", 3)
    for memory_id in ids[:10]:
        mem.delete(memory_id)
    hits = index.search(vectors[0], k=100)
    assert not set(ids[:10]) & {h.memory_id for h in hits}
    assert index.path.stat().st_mtime_ns != stamp  # read again whole, file rewritten


@pytest.mark.sqlite_only  # the .vindex file lives next to a SQLite file
def test_a_foreign_or_broken_index_file_is_rebuilt(tmp_path, db_path):
    from memlane import Memory

    mine = _directions(60, seed=2)
    with Memory.open(tmp_path / "other.db") as other:
        other_ids = _fill(other, _directions(60, seed=1))
        _ann(other, persist_min_rows=0).search(mine[0], k=1)
        other_epoch = other.store.vector_epoch()
    with Memory.open(db_path) as mem:
        ids = _fill(mem, mine)
        assert mem.store.vector_epoch() == other_epoch
        # Another store's file, stamped with this epoch and profile: not trusted.
        path = db_path.with_name(db_path.name + ".vindex")
        (tmp_path / "other.db.vindex").replace(path)
        hits = _ann(mem, persist_min_rows=0).search(mine[3], k=3)
        assert hits[0].memory_id == ids[3] and not {h.memory_id for h in hits} & set(other_ids)
        # A truncated file: rebuilt from the store.
        path.write_bytes(path.read_bytes()[:200])
        assert _ann(mem, persist_min_rows=0).search(mine[3], k=1)[0].memory_id == ids[3]


class FixedEmbedder:
    """Every query embeds to one vector (the lane's only use of an embedder here)."""

    def __init__(self, vector: np.ndarray) -> None:
        self.vector = vector

    def embed(self, text: str) -> np.ndarray:
        return self.vector


def _nearest_elsewhere(mem) -> list[str]:
    """Twelve memories of another project, the nearest to (1, 0, 0, 0), nearest first."""
    elsewhere = [
        mem.add(f"note {i} of another project", scope="project:other").id for i in range(12)
    ]
    for i, memory_id in enumerate(elsewhere):
        put(mem, memory_id, unit(1, 0.01 * i, 0, 0))
    return elsewhere


def test_the_vector_lane_looks_further_when_the_filters_drop_the_nearest(mem):
    from memlane.retrieve import lanes

    elsewhere = _nearest_elsewhere(mem)
    near = mem.add("the nearer note of this project").id
    far = mem.add("the farther note of this project").id
    put(mem, near, unit(0.3, 1, 0, 0))
    put(mem, far, unit(0, 1, 0.3, 0))
    index = VectorIndex(mem.store, "test", DIM)
    lane = FixedEmbedder(unit(1, 0, 0, 0))
    filters = mem.filters(limit=2)  # this project: the twelve nearest are all filtered out
    hits = lanes.vector(mem.store, index, lane, "anything", filters)
    assert [h.record.id for h in hits] == [near, far]
    everywhere = lanes.vector(mem.store, index, lane, "anything", mem.filters(scope="all", limit=2))
    assert [h.record.id for h in everywhere] == elsewhere[:2]


def test_the_vector_lane_run_ahead_on_a_thread_finds_what_it_finds_in_line(mem):
    from memlane.retrieve import lanes

    elsewhere = _nearest_elsewhere(mem)
    near = mem.add("the nearer note of this project").id
    put(mem, near, unit(0.3, 1, 0, 0))
    index = VectorIndex(mem.store, "test", DIM)
    lane = FixedEmbedder(unit(1, 0, 0, 0))
    # the second filters drop every memory the first look finds, so the lane must look
    # further on this thread, as it does without the look ahead
    cases = [(mem.filters(scope="all", limit=3), elsewhere[:3]), (mem.filters(limit=2), [near])]
    for filters, expected in cases:
        k = lanes.vector_k(filters.limit)
        ahead = lanes.Lookahead(index.current().search, lane, "anything", k)
        in_line = lanes.vector(mem.store, index, lane, "anything", filters)
        run_ahead = lanes.vector(mem.store, index, lane, "anything", filters, ahead)
        # and the whole lane on the worker, reading through the store's side reader
        with mem.store.side_reader() as side:
            assert side is not None
            whole = lanes.Lookahead(index.current().search, lane, "anything", k, (side, filters))
            finished = lanes.vector(mem.store, index, lane, "anything", filters, whole)
        assert whole.hits is not None
        for hits in (run_ahead, finished):
            assert [h.record.id for h in hits] == [h.record.id for h in in_line] == expected
            assert [h.score for h in hits] == [h.score for h in in_line]


class BrokenEmbedder:
    def embed(self, text: str) -> np.ndarray:
        raise ConnectionError("the embedding server went away")


def test_a_failure_on_the_look_ahead_thread_is_raised_to_the_caller(mem):
    from memlane.retrieve import lanes

    put(mem, mem.add("a note").id, unit(1, 0, 0, 0))
    index = VectorIndex(mem.store, "test", DIM)
    ahead = lanes.Lookahead(index.current().search, BrokenEmbedder(), "anything", 10)
    with pytest.raises(EmbeddingFailed, match=r"ConnectionError: .*went away"):
        lanes.vector(mem.store, index, BrokenEmbedder(), "anything", mem.filters(limit=5), ahead)

    def lost(*_: object) -> list[object]:
        raise ConnectionError("the index went away")

    ahead = lanes.Lookahead(lost, get_embedder("hash"), "anything", 10)
    with pytest.raises(ConnectionError, match="the index went away"):  # not the embedder's
        lanes.vector(
            mem.store, index, get_embedder("hash"), "anything", mem.filters(limit=5), ahead
        )


def test_look_aheads_share_kept_workers_and_a_forked_child_gets_its_own(mem):
    import os
    import signal

    from memlane.retrieve import lanes
    from memlane.store.workers import workers

    near = mem.add("the nearer note of this project").id
    put(mem, near, unit(1, 0, 0, 0))
    index = VectorIndex(mem.store, "test", DIM)
    lane = FixedEmbedder(unit(1, 0, 0, 0))
    filters = mem.filters(limit=2)

    def look() -> list[str]:
        ahead = lanes.Lookahead(index.current().search, lane, "anything", 4)
        return [h.record.id for h in lanes.vector(mem.store, index, lane, "x", filters, ahead)]

    assert look() == [near]
    pool = workers()
    assert look() == [near] and workers() is pool
    child = os.fork()
    if child == 0:  # the parent's worker threads did not come along: a new pool answers
        signal.alarm(30)  # a look ahead queued for a thread the child lacks never ends
        ok = look() == [near] and workers() is not pool
        os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
