"""The vector lane's derived index: exact cosine search over a cached matrix.

The vectors in the store are the source of truth; this matrix is rebuilt whenever
the store's vector epoch moves (a vector written or removed), so it never serves a
deleted memory. Callers still pass every candidate through the store's filters,
which decide liveness, scope and visibility.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memlane.embed.blob import from_blobs
from memlane.store import Store

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class VectorHit:
    memory_id: str
    score: float  # best cosine over the memory's entry vector and its chunks


class VectorIndex:
    """Exact search over one profile's vectors; memory-resident, rebuilt when stale."""

    def __init__(self, store: Store, profile: str, dim: int) -> None:
        self._store = store
        self.profile = profile
        self.dim = dim
        self._epoch: int | None = None
        self._matrix: Matrix = np.zeros((0, dim), dtype=np.float32)
        self._owner = np.zeros(0, dtype=np.int64)  # row -> memory index
        self._ids: list[str] = []

    def __len__(self) -> int:
        self._refresh()
        return len(self._ids)

    def _refresh(self) -> None:
        epoch = self._store.vector_epoch()
        if epoch == self._epoch:
            return
        ids: list[str] = []
        index: dict[str, int] = {}
        rows: list[bytes] = []
        owner: list[int] = []
        for memory_id, _chunk, blob in self._store.vectors(self.profile):
            if len(blob) != self.dim * 4:
                continue  # a vector of another dimension cannot be compared
            if memory_id not in index:
                index[memory_id] = len(ids)
                ids.append(memory_id)
            rows.append(blob)
            owner.append(index[memory_id])
        self._matrix = from_blobs(rows, self.dim) if rows else self._matrix[:0]
        self._owner = np.asarray(owner, dtype=np.int64)
        self._ids = ids
        self._epoch = epoch

    def search(self, query: Matrix, k: int) -> list[VectorHit]:
        """The k memories whose best vector is closest to `query` (unit length)."""
        self._refresh()
        if not self._ids or k <= 0:
            return []
        scores = self._matrix @ query.astype(np.float32, copy=False)
        best = np.full(len(self._ids), -np.inf, dtype=np.float32)
        np.maximum.at(best, self._owner, scores)
        k = min(k, len(self._ids))
        top = np.argpartition(-best, k - 1)[:k]
        order = top[np.argsort(-best[top], kind="stable")]
        return [VectorHit(self._ids[i], float(best[i])) for i in order]
