"""Auto-anchors: which neighbours a memory is anchored to, as a pure plan.

Neighbours whose similarity lies in [low, high] (cosine,
or token Jaccard without vectors) become anchor links, at most `max_anchors`, the most
similar first; an automatic anchor that fell out of the band is pruned. Above `high`
two memories are near-duplicates (the write policy's business), not neighbours.
Anchors a person set (`--anchors`) are never pruned.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from memlane.words import jaccard, tokens

ANCHOR_LOW = 0.75
ANCHOR_HIGH = 0.95
MAX_ANCHORS = 5
AUTO_REASON = "auto-anchor"  # marks the anchors this module may prune


class AnchorPlan(msgspec.Struct, frozen=True):
    add: tuple[tuple[str, float], ...] = ()  # (id, similarity), most similar first
    prune: tuple[str, ...] = ()
    keep: tuple[tuple[str, float], ...] = ()

    @property
    def changes(self) -> bool:
        return bool(self.add or self.prune)


def plan_anchors(
    similar: Mapping[str, float],
    current: Mapping[str, float | None],
    low: float = ANCHOR_LOW,
    high: float = ANCHOR_HIGH,
    max_anchors: int = MAX_ANCHORS,
) -> AnchorPlan:
    """The anchors a memory should have. `similar`: neighbour id -> similarity (the
    current automatic anchors included when their similarity is known); `current`:
    its automatic anchors now. An anchor whose similarity is unknown is pruned."""
    band = sorted(
        ((i, s) for i, s in similar.items() if low <= s <= high), key=lambda p: (-p[1], p[0])
    )
    chosen = dict(band[: max(0, max_anchors)])
    return AnchorPlan(
        add=tuple((i, round(s, 4)) for i, s in chosen.items() if i not in current),
        prune=tuple(sorted(i for i in current if i not in chosen)),
        keep=tuple((i, round(s, 4)) for i, s in chosen.items() if i in current),
    )


def text_jaccard(a: str, b: str) -> float:
    """Token Jaccard of two texts: the similarity without vectors."""
    return jaccard(tokens(a), tokens(b))
