"""The floor recall is measured against: a plain reciprocal-rank fusion of an HNSW index
(chroma-hnswlib) and BM25 (bm25s) over the same memories' text and the same vectors.

It does far less than recall (no filters, scopes, time, entities, scoring, diversity,
links or budget, and it reads no record), so its latency is what any hybrid search over
these memories pays at least: the query embedded by the same embedder, one HNSW search,
one BM25 search, and the fusion. The bench times it with the same queries, in the same
process and run as recall, and reports recall's latency as a multiple of it.

Its packages are the `bench` extra, never a dependency of memlane itself; without them
the bench says so and skips the floor (`missing`).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from memlane.benchmark.timing import Latency
from memlane.model import Filters, as_dict
from memlane.write.normalize import document_text

if TYPE_CHECKING:
    from memlane.embed import Embedder
    from memlane.memory import Memory
    from memlane.retrieve.vectors import Rows
    from memlane.store import Store

# Reciprocal-rank fusion's constant (Cormack et al. 2009), as memlane's own fusion uses.
RRF_K = 60
# HNSW as chroma configures it by default: links per node, and the candidate lists of
# construction and search (search widens its list to k when k is larger).
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 100
HNSW_EF_SEARCH = 100
PACKAGES = {"hnswlib": "chroma-hnswlib", "bm25s": "bm25s"}
INSTALL = "pip install 'memlane[bench]'"
LIMIT = 10  # results asked of both, as `memlane recall` asks by default
READ_CHUNK = 2_000  # records read per query while collecting the texts


def missing(packages: Mapping[str, str] | None = None) -> str | None:
    """Why the floor cannot run here (None: it can): which of the `packages` (module ->
    the package that installs it; PACKAGES by default) cannot be imported."""
    wanted = PACKAGES if packages is None else packages
    absent = [pkg for module, pkg in wanted.items() if importlib.util.find_spec(module) is None]
    if not absent:
        return None
    return f"the floor needs {' and '.join(absent)} (the bench extra: {INSTALL})"


def fuse(lanes: Sequence[Sequence[int]], limit: int, k: int = RRF_K) -> list[int]:
    """Reciprocal-rank fusion: each item scores the sum over the lanes of 1 / (k + rank),
    rank from 1; the best `limit`, ties in order of first appearance."""
    scores: dict[int, float] = {}
    for ranked in lanes:
        for rank, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda item: -scores[item])[:limit]


def memories_of(rows: Rows) -> tuple[list[str], Any]:
    """The memory ids of the index rows, and each memory's row positions' owner array
    (a memory with chunks has several rows; all of them go into the HNSW index)."""
    ids = [rows.memory_id(i) for i in range(len(rows.ids))]
    return ids, np.asarray(rows.owner)


def texts_of(store: Store, ids: Sequence[str]) -> Iterator[str]:
    """What each memory says (the text its vectors were made from), in the order of `ids`."""
    for start in range(0, len(ids), READ_CHUNK):
        chunk = tuple(ids[start : start + READ_CHUNK])
        wanted = Filters(ids=chunk, limit=None, any_visibility=True, include_superseded=True)
        found = {r.id: document_text(r) for r in store.query(wanted)}
        yield from (found.get(memory_id, "") for memory_id in chunk)


class Floor:
    """HNSW over every vector row and BM25 over every memory's text, fused by RRF."""

    def __init__(self, rows: Rows, texts: Sequence[str], embedder: Embedder) -> None:
        import bm25s
        import hnswlib

        self.embedder = embedder
        self.ids, self.owner = memories_of(rows)
        start = time.perf_counter()
        matrix = np.asarray(rows.matrix, dtype=np.float32)
        self.hnsw = hnswlib.Index(space="ip", dim=matrix.shape[1])
        self.hnsw.init_index(
            max_elements=max(1, len(matrix)), ef_construction=HNSW_EF_CONSTRUCTION, M=HNSW_M
        )
        if len(matrix):
            self.hnsw.add_items(matrix, np.arange(len(matrix)))
        self.hnsw.set_ef(HNSW_EF_SEARCH)
        self.hnsw_seconds = time.perf_counter() - start
        start = time.perf_counter()
        self.bm25 = bm25s.BM25()
        self.bm25.index(_tokens(list(texts)), show_progress=False)
        self.bm25_seconds = time.perf_counter() - start

    def search(self, query: str, limit: int, pool: int) -> list[str]:
        """The best `limit` memories for `query`: each lane's best `pool` fused by RRF."""
        vector = np.asarray(self.embedder.embed(query), dtype=np.float32)
        lanes = [self._nearest(vector, pool), self._keyword(query, pool)]
        return [self.ids[i] for i in fuse(lanes, limit)]

    def _nearest(self, vector: Any, pool: int) -> list[int]:
        """Memories of the nearest rows, nearest first (a memory at its best row)."""
        rows = min(pool, self.hnsw.get_current_count())
        if rows == 0:
            return []
        labels, _ = self.hnsw.knn_query(vector, k=rows, num_threads=1)
        return list(dict.fromkeys(self.owner[labels[0]].tolist()))

    def _keyword(self, query: str, pool: int) -> list[int]:
        """Memories by BM25, best first; those that share no word with `query` left out."""
        k = min(pool, len(self.ids))
        if k == 0:
            return []
        docs, scores = self.bm25.retrieve(_tokens([query]), k=k, show_progress=False)
        return [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


def _tokens(texts: list[str]) -> list[list[str]]:
    import bm25s

    tokens: list[list[str]] = bm25s.tokenize(
        texts, stopwords="en", return_ids=False, show_progress=False
    )
    return tokens


def build(store: Store, embedder: Embedder) -> Floor:
    """The floor over the store's current vectors of `embedder` and its memories' text."""
    from memlane.retrieve.vectors import VectorIndex

    rows = VectorIndex(store, embedder.profile.signature, embedder.dimension).current()
    ids, _ = memories_of(rows)
    return Floor(rows, list(texts_of(store, ids)), embedder)


def compare(mem: Memory, embedder: Embedder, queries: Sequence[str], warmup: int) -> dict[str, Any]:
    """Recall and the floor over the same store, timed query by query in turn (so a
    machine whose speed changes slows both alike), and recall's latency as a multiple of
    the floor's; `{"skipped": why}` when the floor's packages are missing."""
    from memlane.retrieve.lanes import pool_size

    reason = missing()
    if reason is not None:
        return {"skipped": reason}
    floor = build(mem.store, embedder)
    pool = pool_size(LIMIT)  # what each of recall's lanes fetches for LIMIT results
    for q in queries[:warmup]:
        floor.search(q, LIMIT, pool)
        mem.recall(q, limit=LIMIT, count=False)
    ours: list[float] = []
    theirs: list[float] = []
    # CPU time of the process (every thread): the work each did, which a busy machine
    # stretches less than the wall time.
    ours_cpu: list[float] = []
    theirs_cpu: list[float] = []
    for q in queries:
        start, start_cpu = time.perf_counter(), time.process_time()
        mem.recall(q, limit=LIMIT, count=False)
        middle, middle_cpu = time.perf_counter(), time.process_time()
        floor.search(q, LIMIT, pool)
        theirs.append(time.perf_counter() - middle)
        theirs_cpu.append(time.process_time() - middle_cpu)
        ours.append(middle - start)
        ours_cpu.append(middle_cpu - start_cpu)
    recall, base = Latency.of(ours), Latency.of(theirs)
    recall_cpu, base_cpu = Latency.of(ours_cpu), Latency.of(theirs_cpu)
    return {
        "method": (
            f"RRF (k={RRF_K}) of chroma-hnswlib (M={HNSW_M}, ef={HNSW_EF_SEARCH}) over every "
            f"vector row and bm25s over each memory's text, top {pool} of each, "
            f"the query embedded by {embedder.profile.signature}"
        ),
        "hnsw_build_seconds": floor.hnsw_seconds,
        "bm25_index_seconds": floor.bm25_seconds,
        "recall_hybrid": as_dict(recall),
        "floor": as_dict(base),
        "ratio_p50": recall.p50_ms / base.p50_ms,
        "ratio_p95": recall.p95_ms / base.p95_ms,
        "recall_hybrid_cpu": as_dict(recall_cpu),
        "floor_cpu": as_dict(base_cpu),
        "ratio_cpu_p50": _ratio(recall_cpu.p50_ms, base_cpu.p50_ms),
    }


def _ratio(ours: float, theirs: float) -> float:
    """ours / theirs; NaN when theirs is 0 (a CPU clock too coarse to see it)."""
    return ours / theirs if theirs > 0 else float("nan")
