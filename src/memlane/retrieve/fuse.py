"""Fusion of the recall lanes: a convex combination of their normalised scores (the
default), or Reciprocal Rank Fusion. Pure functions of ranked (id, score) lists."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import msgspec

from memlane.errors import Invalid

# Lane names, also the keys of a result's explain parts.
BM25 = "bm25"
VECTOR = "vector"
ENTITY = "entity"
LANES = (BM25, VECTOR, ENTITY)

# The constant of Cormack et al. (2009), the usual choice: large
# enough that rank 1 does not drown ranks 2-10, small enough that the top counts.
RRF_K = 60


# Lane weights of the convex fusion, tuned on the LoCoMo dev split (`memlane eval
# locomo`): the convex fusion beats Reciprocal Rank Fusion at any k, and keyword 0.6
# with vector 0.4 has the best MRR among the weights with the best R@10. Rank fusion
# throws away how far ahead a lane's best match is; BM25 and cosine both say it, and
# min-max over each lane's pool puts them on one scale (Bruch et al. 2023, "An
# Analysis of Fusion Functions for Hybrid Retrieval", find the same). Conversation
# turns name people, whom the keyword lane finds as well, so LoCoMo barely moves with
# the entity lane's weight up to 0.2 and loses from 0.4; the lane is for the code
# names, paths and handles of a coding agent's memories, so it gets the largest weight
# that costs nothing there.
LANE_WEIGHTS: Mapping[str, float] = {BM25: 0.6, VECTOR: 0.4, ENTITY: 0.2}


class Fused(msgspec.Struct, frozen=True):
    """One candidate after fusion: its score, and its rank and share in each lane it is in."""

    id: str
    score: float
    ranks: Mapping[str, int]  # lane -> 1-based rank
    contributions: Mapping[str, float]  # lane -> its share of the score

    @property
    def best_rank(self) -> int:
        return min(self.ranks.values())


def ordered(fused: Iterable[Fused], content: Mapping[str, str] | None = None) -> list[Fused]:
    """Best first: score, then best rank in any lane, then the memory's content key
    (`content`: id -> e.g. its dedup hash), then id.

    Why content before id: ids are random, so two stores holding the same memories
    would otherwise break exact ties (a session's turns lifted alike, equal BM25) each
    its own way, and recall over one conversation would differ from store to store.
    """
    keys = content or {}
    return sorted(fused, key=lambda f: (-f.score, f.best_rank, keys.get(f.id, ""), f.id))


def rrf(
    lanes: Mapping[str, Sequence[str]], k: int = RRF_K, content: Mapping[str, str] | None = None
) -> list[Fused]:
    """Fuse ranked id lists: score(id) = sum over lanes of 1 / (k + rank in that lane).

    An id repeated within a lane counts once, at its best rank. Order: `ordered`, so
    equal inputs always give equal outputs.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise Invalid(f"RRF k must be a whole number >= 1, not {k!r}")
    ranks: dict[str, dict[str, int]] = {}
    for lane, ids in lanes.items():
        for rank, memory_id in enumerate(ids, start=1):
            ranks.setdefault(memory_id, {}).setdefault(lane, rank)
    return ordered((_fused(i, lane_ranks, k) for i, lane_ranks in ranks.items()), content)


def convex(
    lanes: Mapping[str, Sequence[tuple[str, float]]],
    weights: Mapping[str, float] = LANE_WEIGHTS,
    content: Mapping[str, str] | None = None,
) -> list[Fused]:
    """Fuse ranked (id, score) lists: score(id) = sum over lanes of weight x its min-max
    normalised score in that lane (the lane's best 1, its worst 0, absent 0).

    A lane whose candidates all score the same gives each of them 1. An id repeated
    within a lane counts once, at its best rank. Order: `ordered`.
    """
    ranks: dict[str, dict[str, int]] = {}
    shares: dict[str, dict[str, float]] = {}
    for lane, hits in lanes.items():
        if not hits:
            continue
        if lane not in weights:
            raise Invalid(f"no fusion weight for the {lane} lane")
        scores = [score for _, score in hits]
        low, high = min(scores), max(scores)
        for rank, (memory_id, score) in enumerate(hits, start=1):
            if lane in ranks.setdefault(memory_id, {}):
                continue
            ranks[memory_id][lane] = rank
            unit = (score - low) / (high - low) if high > low else 1.0
            shares.setdefault(memory_id, {})[lane] = weights[lane] * unit
    fused = (
        Fused(memory_id, math.fsum(shares[memory_id].values()), lane_ranks, shares[memory_id])
        for memory_id, lane_ranks in ranks.items()
    )
    return ordered(fused, content)


def _fused(memory_id: str, lane_ranks: dict[str, int], k: int) -> Fused:
    contributions = {lane: 1.0 / (k + rank) for lane, rank in lane_ranks.items()}
    # fsum is exactly rounded: the same ranks in any lane order give the same float,
    # so ties are real ties and the tie-break decides.
    score = math.fsum(contributions.values())
    return Fused(memory_id, score, lane_ranks, contributions)


def normalized(fused: Sequence[Fused]) -> dict[str, float]:
    """Each candidate's fused score over the best in the set: the best is 1.0.

    Trigger: relevance must sit in [0, 1] beside the other score parts.
    Why: a raw fused score depends on the fusion and on how many lanes ran; over the best
    candidate it says how close to the top match a memory is.
    Outcome: an empty set gives {}; the top candidate gets 1.0.
    """
    top = max((f.score for f in fused), default=0.0)
    if top <= 0.0:
        return {}
    return {f.id: f.score / top for f in fused}
