"""Link expansion: a few linked neighbours of the results ride along. Pure.

After ranking, each presented result's links are read; neighbours not already
presented join as extras, at most `budget` of them, taken by the rank of the
result they hang from and then by how much the link matters to a reader: a
contradiction first (marked [CONTESTED]: the agent must see both sides), then
updates and support, then structure, then plain relatedness. Extras never take a
result's place: they come after the limit, and the token budget drops them first.

With two hops, the neighbours of those neighbours follow, after every first-hop one;
a neighbour's score is the score of the result it hangs from, halved per hop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from memlane.model import Link, LinkType

# How much a neighbour reached by each link type matters (lower comes first).
LINK_PRIORITY = {
    LinkType.CONTRADICTS: 0,
    LinkType.UPDATES: 1,
    LinkType.SUPPORTS: 2,
    LinkType.EXTENDS: 3,
    LinkType.IMPLEMENTS: 3,
    LinkType.DERIVES: 3,
    LinkType.ANCHOR: 4,
    LinkType.SUPERSEDES: 5,
    LinkType.RELATED: 6,
}
LINK_BUDGET = 2
LINK_HOPS = 1
# Links of links at most: a third hop reaches memories with little left in common
# with the query, and each hop is one more read of the links table.
MAX_LINK_HOPS = 2
# What a neighbour keeps of the score of the result it hangs from, per hop.
LINK_DECAY = 0.5


class Neighbour(msgspec.Struct, frozen=True):
    """A memory reached by one link from a presented result."""

    id: str
    via: str  # the presented result it hangs from
    link: LinkType
    contested: bool  # reached by a `contradicts` link
    hop: int = 1  # 1: linked to a result; 2: linked to a first-hop neighbour


def decayed(score: float, hop: int) -> float:
    """A neighbour's score, `hop` links from a result of `score`."""
    return score * LINK_DECAY**hop


def neighbours(
    presented: Sequence[str],
    links: Mapping[str, Sequence[Link]],
    budget: int = LINK_BUDGET,
    *,
    shown: Sequence[str] = (),
    hop: int = 1,
) -> list[Neighbour]:
    """Up to `budget` neighbours of the presented ids (best first), none of them
    presented or already `shown`."""
    if budget <= 0:
        return []
    skip = {*presented, *shown}
    chosen: dict[str, Neighbour] = {}
    for memory_id in presented:
        candidates = []
        for link in links.get(memory_id, ()):
            other = link.target if link.source == memory_id else link.source
            if other in skip or other in chosen:
                continue
            candidates.append((LINK_PRIORITY.get(link.type, len(LINK_PRIORITY)), other, link))
        for _, other, link in sorted(candidates, key=lambda c: (c[0], c[1])):
            if other in chosen:
                continue
            contested = link.type is LinkType.CONTRADICTS
            chosen[other] = Neighbour(other, memory_id, link.type, contested, hop)
            if len(chosen) == budget:
                return list(chosen.values())
    return list(chosen.values())
