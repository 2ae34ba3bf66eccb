"""Search lanes over a store: keyword (BM25), vector, entity, and their RRF fusion.

Every lane over-fetches and then passes its candidates through the store's filters,
which alone decide what may be returned (live or as-of, scope, visibility, kind...).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memlane.graph.entities import query_aliases
from memlane.model import EntityKind, Filters, Hit, Record
from memlane.retrieve.fuse import BM25, ENTITY, VECTOR, Fused, rrf
from memlane.store import Store

if TYPE_CHECKING:  # keyword search must not pay for numpy
    from memlane.embed import Embedder
    from memlane.retrieve.vectors import VectorIndex

# Keyword search relaxes step by step: a strict match is precise and cheap; "any word"
# ranks every memory that shares a word, so it comes last.
SEARCH_LADDER = ("all", "most", "any")
# Candidates a lane fetches per result wanted, so filters and fusion have room.
OVERFETCH = 4
MIN_POOL = 50
MODES = ("keyword", "vector", "hybrid")


def pool_size(limit: int | None) -> int:
    return max(MIN_POOL, (limit or MIN_POOL) * OVERFETCH)


def keyword(store: Store, query: str, filters: Filters) -> list[Hit]:
    """BM25 over title, body and tags: all words, else all but one, else any word."""
    for match in SEARCH_LADDER:
        hits = store.search(query, filters, match)
        if hits:
            return hits
    return []


def vector(
    store: Store, index: VectorIndex, embedder: Embedder, query: str, filters: Filters
) -> list[Hit]:
    """Nearest memories by cosine (best of entry vector and chunks), then the filters."""
    if not query.strip():
        return []
    wanted = filters.limit
    near = index.search(embedder.embed(query), pool_size(wanted))
    if not near:
        return []
    scores = {h.memory_id: h.score for h in near}
    found = store.query(replace(filters, ids=tuple(scores), limit=None))
    found.sort(key=lambda r: -scores[r.id])
    return [Hit(r, scores[r.id], i + 1) for i, r in enumerate(found[:wanted] if wanted else found)]


def entity(store: Store, query: str, filters: Filters) -> list[Hit]:
    """Memories naming the entities the query names, rarest names weighing most.

    A memory scores the sum over the query's entities it mentions of
    1 / log2(1 + memories naming that entity); ties go to the most recent.

    An entity named by more memories than the lane returns tells none of them apart
    (LoCoMo: capping at 1000 instead of the lane's 50 cost 15 points of MRR); the keyword lane ranks its
    name already, so this lane leaves it out, and reads at most that many mention
    rows per name whatever the store's size.
    """
    asked = query_aliases(query)
    names = set(asked.names)
    cap = filters.limit or MIN_POOL
    weight: dict[str, float] = defaultdict(float)
    for match in store.mentioned(asked.all, cap):
        if match.common or not match.memory_ids:
            continue
        if match.alias not in names and match.kind is EntityKind.PERSON_OR_NAME:
            continue
        share = 1.0 / math.log2(1 + len(match.memory_ids))
        for memory_id in match.memory_ids:
            weight[memory_id] += share
    if not weight:
        return []
    wanted = pool_size(filters.limit)
    best = sorted(weight, key=lambda i: -weight[i])[: wanted * OVERFETCH]
    found = store.query(replace(filters, ids=tuple(best), limit=None))
    found.sort(key=lambda r: (-weight[r.id], -(r.occurred_at or r.created_at).timestamp()))
    chosen = found[: filters.limit] if filters.limit else found
    return [Hit(r, weight[r.id], i + 1) for i, r in enumerate(chosen)]


@dataclass(frozen=True, slots=True)
class Gathered:
    """What the lanes found for one query, and their reciprocal-rank fusion."""

    found: dict[str, list[Record]]  # lane -> its candidates, best first
    records: dict[str, Record]
    fused: list[Fused]


def gather(
    store: Store,
    query: str,
    filters: Filters,
    limit: int | None,
    vector_lane: tuple[VectorIndex, Embedder] | None,
) -> Gathered:
    """Run the keyword and entity lanes (and the vector lane when given) over-fetching
    for `limit`, and fuse them by reciprocal rank (k = 60)."""
    pool = replace(filters, limit=pool_size(limit))
    found = {BM25: [h.record for h in keyword(store, query, pool)]}
    found[ENTITY] = [h.record for h in entity(store, query, pool)]
    if vector_lane is not None:
        index, embedder = vector_lane
        found[VECTOR] = [h.record for h in vector(store, index, embedder, query, pool)]
    records = {r.id: r for hits in found.values() for r in hits}
    fused = rrf({lane: [r.id for r in hits] for lane, hits in found.items()})
    return Gathered(found, records, fused)


def hybrid(
    store: Store, index: VectorIndex, embedder: Embedder, query: str, filters: Filters
) -> list[Hit]:
    """Keyword and vector lanes fused by reciprocal rank (k = 60)."""
    lanes = gather(store, query, filters, filters.limit, (index, embedder))
    chosen = lanes.fused[: filters.limit] if filters.limit else lanes.fused
    return [Hit(lanes.records[f.id], f.score, i + 1) for i, f in enumerate(chosen)]
