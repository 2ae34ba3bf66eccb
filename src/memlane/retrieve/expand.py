"""1-hop link expansion: a few linked neighbours of the results ride along. Pure.

After ranking, each presented result's links are read; neighbours not already
presented join as extras, at most `budget` of them, taken by the rank of the
result they hang from and then by how much the link matters to a reader: a
contradiction first (marked [CONTESTED]: the agent must see both sides), then
updates and support, then structure, then plain relatedness. Extras never take a
result's place: they come after the limit, and the token budget drops them first.
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


class Neighbour(msgspec.Struct, frozen=True):
    """A memory reached by one link from a presented result."""

    id: str
    via: str  # the presented result it hangs from
    link: LinkType
    contested: bool  # reached by a `contradicts` link


def neighbours(
    presented: Sequence[str], links: Mapping[str, Sequence[Link]], budget: int = LINK_BUDGET
) -> list[Neighbour]:
    """Up to `budget` neighbours of the presented ids (best first), none of them presented."""
    if budget <= 0:
        return []
    shown = set(presented)
    chosen: dict[str, Neighbour] = {}
    for memory_id in presented:
        candidates = []
        for link in links.get(memory_id, ()):
            other = link.target if link.source == memory_id else link.source
            if other in shown or other in chosen:
                continue
            candidates.append((LINK_PRIORITY.get(link.type, len(LINK_PRIORITY)), other, link))
        for _, other, link in sorted(candidates, key=lambda c: (c[0], c[1])):
            if other in chosen:
                continue
            contested = link.type is LinkType.CONTRADICTS
            chosen[other] = Neighbour(other, memory_id, link.type, contested)
            if len(chosen) == budget:
                return list(chosen.values())
    return list(chosen.values())
