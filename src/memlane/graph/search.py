"""Finding entities by a name spelled roughly: fuzzy matching over names and aliases."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from memlane.graph.entities import normalize_alias
from memlane.model import Entity

# How alike (rapidfuzz WRatio, 0-100) a name or alias must be to the query to count:
# "postgress" finds PostgreSQL (84), "ada" finds "Ada Lovelace" (90), while
# unrelated short names stay below ("api" against "pip": 67).
MIN_SCORE = 70.0


class EntityHit(msgspec.Struct, frozen=True):
    """An entity a search found, how alike (0-100) and by which of its names."""

    entity: Entity
    score: float
    matched: str


def fuzzy_matches(query: str, entities: Sequence[Entity], limit: int) -> list[EntityHit]:
    """The entities whose name or an alias is most like `query`, best first; ties go
    to the more mentioned. Each entity once, at its best-matching name."""
    from rapidfuzz import fuzz, process

    wanted = normalize_alias(query)
    best: dict[str, EntityHit] = {}
    for entity in entities:
        names = {entity.name: normalize_alias(entity.name), **{a: a for a in entity.aliases}}
        found = process.extractOne(
            wanted, names, scorer=fuzz.WRatio, score_cutoff=MIN_SCORE, processor=None
        )
        if found is not None:
            _, score, shown = found
            best[entity.id] = EntityHit(entity, round(float(score), 1), str(shown))
    ranked = sorted(best.values(), key=lambda h: (-h.score, -h.entity.mentions, h.entity.name))
    return ranked[:limit]
