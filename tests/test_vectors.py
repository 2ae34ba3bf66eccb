"""The vector lane's derived index over a real store: exact, max over chunks, never stale."""

from __future__ import annotations

import numpy as np

from memlane.embed.blob import to_blob
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
