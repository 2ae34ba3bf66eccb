"""Entity cards: what a read shows of an entity its query names, when it has relations.

A card is one short line: the name, its type, other aliases, and the three newest
current relations ("billing-api (service; also billingapi): depends_on PostgreSQL;
owns <- Ops Team; +2 more"). Cards ride along with recall results and must stay
small: at most MAX_CARDS, and only as many as the token budget left by the results
can hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from memlane.graph.relations import words_of
from memlane.model import Entity, Predicate, Relation
from memlane.retrieve.budget import estimate_tokens

# Cards one read shows at most, and relations on a card: a card is a reminder of what
# the graph holds (`memlane relationships NAME` has the rest), not the graph itself.
MAX_CARDS = 3
CARD_RELATIONS = 3


class EntityCard(msgspec.Struct, frozen=True):
    """An entity a query names, with its newest current relations (`more`: how many
    others it has)."""

    entity: Entity
    relations: tuple[Relation, ...]
    more: int = 0

    @property
    def text(self) -> str:
        e = self.entity
        others = [a for a in e.aliases if a != words_of(e.name).replace(" ", "")]
        also = f"; also {', '.join(others)}" if others else ""
        said = "; ".join(_relation_text(e, r) for r in self.relations)
        more = f"; +{self.more} more" if self.more else ""
        return f"{e.name} ({e.type.value}{also}): {said}{more}"

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


def _relation_text(entity: Entity, r: Relation) -> str:
    """A relation as the entity sees it: "uses X" outward, "owns <- Y" inward."""
    said = r.predicate.value
    if r.predicate is Predicate.RELATED_TO and words_of(r.label) != "related to":
        said = f"related_to ({r.label})"
    if r.subject_id == entity.id:
        return f"{said} {r.object}"
    return f"{said} <- {r.subject}"


def cards(
    entities: Iterable[Entity], relations: Sequence[Relation], tokens_left: int | None
) -> tuple[EntityCard, ...]:
    """A card for each entity (in the order given) that has current relations, the
    newest first on it; at most MAX_CARDS, while their tokens fit `tokens_left` (None:
    no budget)."""
    out: list[EntityCard] = []
    left = tokens_left
    for entity in entities:
        own = [r for r in relations if entity.id in (r.subject_id, r.object_id) and r.current]
        if not own:
            continue
        newest = sorted(own, key=lambda r: (r.valid_from, r.id), reverse=True)
        card = EntityCard(entity, tuple(newest[:CARD_RELATIONS]), max(0, len(own) - CARD_RELATIONS))
        if left is not None:
            if card.tokens > left:
                break
            left -= card.tokens
        out.append(card)
        if len(out) == MAX_CARDS:
            break
    return tuple(out)
