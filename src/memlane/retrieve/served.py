"""The vector lane on a store with its own nearest-neighbour index (PostgreSQL's HNSW
over pgvector columns): the store answers, nothing is read into this process.

Trigger: a store whose `nearest` answers (a database server). Why: the derived index
(retrieve/vectors.py) reads every vector into each process that recalls or writes, and
a server's clients are many: at 10^5 memories that is 150 MB per process start, and each
catches up after every other client's write. Outcome: the vector lane and the write
policy ask the server, whose index is current for every client at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import msgspec

from memlane.retrieve.vectors import Matrix, VectorHit, VectorIndex
from memlane.store import Store


class Searches(Protocol):
    """Vectors that answer a batch of searches, each among memories of some scopes
    (None: any) and kinds (empty: any)."""

    def search_within(
        self, queries: Matrix, k: int, scopes: Sequence[str] | None, kinds: Sequence[str]
    ) -> list[list[VectorHit]]: ...


class Snapshot(Searches, Protocol):
    """Vectors as of a moment: a search, and the store's last vector change they hold
    (the write policy compares the memories changed since one by one)."""

    @property
    def change(self) -> int: ...

    def search(self, query: Matrix, k: int, *, exact: bool = False) -> list[VectorHit]: ...


class ServerIndex:
    """VectorIndex's reads, answered by the store's own index."""

    def __init__(self, store: Store, profile: str, dim: int) -> None:
        self._store = store
        self.profile = profile
        self.dim = dim

    def search(self, query: Matrix, k: int, *, exact: bool = False) -> list[VectorHit]:
        """The k memories whose best vector is nearest to `query`. `exact` changes
        nothing: the store widens to an exact scan itself when its index cannot fill k."""
        found = self._store.nearest(self.profile, query, k) or []
        return [VectorHit(memory_id, score) for memory_id, score in found]

    def search_many(self, queries: Matrix, k: int) -> list[list[VectorHit]]:
        """Each query's search: the server's index answers one query at a time."""
        return [self.search(q, k) for q in queries]

    def search_within(
        self, queries: Matrix, k: int, scopes: Sequence[str] | None, kinds: Sequence[str]
    ) -> list[list[VectorHit]]:
        """`search_many` over every row: the server's HNSW index takes no filter (its
        pgvector scans no further for one), so the caller filters what it finds."""
        return self.search_many(queries, k)

    def current(self) -> ServerIndex:
        """What a worker thread may search: the store takes a connection of its own."""
        return self

    def snapshot(self) -> Served:
        return Served(self, self._store.last_vector_change())


class Served(msgspec.Struct, frozen=True):
    """A ServerIndex with the change it was taken at; its searches are always current."""

    index: ServerIndex
    change: int

    def search(self, query: Matrix, k: int, *, exact: bool = False) -> list[VectorHit]:
        return self.index.search(query, k, exact=exact)

    def search_many(self, queries: Matrix, k: int) -> list[list[VectorHit]]:
        return self.index.search_many(queries, k)

    def search_within(
        self, queries: Matrix, k: int, scopes: Sequence[str] | None, kinds: Sequence[str]
    ) -> list[list[VectorHit]]:
        return self.index.search_within(queries, k, scopes, kinds)


Index = VectorIndex | ServerIndex


def index_for(store: Store, profile: str, dim: int) -> Index:
    """The store's own index when it has one (asked with k = 0, which searches
    nothing), else the index derived from its vectors."""
    if store.nearest(profile, (), 0) is not None:
        return ServerIndex(store, profile, dim)
    return VectorIndex(store, profile, dim)
