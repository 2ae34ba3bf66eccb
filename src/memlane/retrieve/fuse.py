"""Reciprocal Rank Fusion of the recall lanes. Pure functions of ranked id lists."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memlane.errors import Invalid

# Lane names, also the keys of a result's explain parts.
BM25 = "bm25"
VECTOR = "vector"
ENTITY = "entity"
LANES = (BM25, VECTOR, ENTITY)

# The constant of Cormack et al. (2009), used by both reference systems: large
# enough that rank 1 does not drown ranks 2-10, small enough that the top counts.
RRF_K = 60


@dataclass(frozen=True, slots=True)
class Fused:
    """One candidate after fusion: its score, and its rank and share in each lane it is in."""

    id: str
    score: float
    ranks: Mapping[str, int]  # lane -> 1-based rank
    contributions: Mapping[str, float]  # lane -> 1 / (k + rank)

    @property
    def best_rank(self) -> int:
        return min(self.ranks.values())


def rrf(lanes: Mapping[str, Sequence[str]], k: int = RRF_K) -> list[Fused]:
    """Fuse ranked id lists: score(id) = sum over lanes of 1 / (k + rank in that lane).

    An id repeated within a lane counts once, at its best rank. Order: score, then
    best rank in any lane, then id, so equal inputs always give equal outputs.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise Invalid(f"RRF k must be a whole number >= 1, not {k!r}")
    ranks: dict[str, dict[str, int]] = {}
    for lane, ids in lanes.items():
        for rank, memory_id in enumerate(ids, start=1):
            ranks.setdefault(memory_id, {}).setdefault(lane, rank)
    fused = [_fused(memory_id, lane_ranks, k) for memory_id, lane_ranks in ranks.items()]
    fused.sort(key=lambda f: (-f.score, f.best_rank, f.id))
    return fused


def _fused(memory_id: str, lane_ranks: dict[str, int], k: int) -> Fused:
    contributions = {lane: 1.0 / (k + rank) for lane, rank in lane_ranks.items()}
    # fsum is exactly rounded: the same ranks in any lane order give the same float,
    # so ties are real ties and the tie-break decides.
    score = math.fsum(contributions.values())
    return Fused(memory_id, score, lane_ranks, contributions)


def normalized(fused: Sequence[Fused]) -> dict[str, float]:
    """Each candidate's fused score over the best in the set: the best is 1.0.

    Trigger: relevance must sit in [0, 1] beside the other score parts.
    Why: a raw RRF score depends on k and on how many lanes ran; over the best
    candidate it says how close to the top match a memory is.
    Outcome: an empty set gives {}; the top candidate gets 1.0.
    """
    top = max((f.score for f in fused), default=0.0)
    if top <= 0.0:
        return {}
    return {f.id: f.score / top for f in fused}
