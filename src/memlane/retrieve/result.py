"""What recall returns: the results within the budget, the linked extras, and the
trace `--explain` reads."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from memlane.model import Hit, Record
from memlane.retrieve.abstain import Evidence
from memlane.retrieve.cards import EntityCard
from memlane.retrieve.expand import Neighbour
from memlane.retrieve.score import Scored


class Extra(msgspec.Struct, frozen=True):
    """A linked neighbour of a result, shown after the results (1-hop expansion)."""

    record: Record
    neighbour: Neighbour


class RecallResult(msgspec.Struct, frozen=True):
    """The memories that matter for a query, best first, within the budget."""

    hits: tuple[Scored, ...]
    omitted: int  # ranked within the limit but left out by the token budget
    tokens_used: int
    lanes: Mapping[str, int]  # candidates each lane brought
    extras: tuple[Extra, ...] = ()  # linked neighbours of the hits, within the budget
    # For --explain: every scored candidate (best first), the ids the caller's
    # `admit` held back, and those the token budget left out.
    candidates: tuple[Scored, ...] = ()
    held_back: tuple[str, ...] = ()
    budget_dropped: tuple[str, ...] = ()
    # Lanes that could not run this time, with why (an embedder that is unusable or
    # failed on the query): the results came from the others.
    skipped: Mapping[str, str] = {}
    # How near the store came to an answer, and the floor it had to reach (None: no
    # floor was asked); when below it, no hits and no extras.
    evidence: Evidence | None = None
    # The entities the query names that have relations, as short cards, within the
    # token budget the results left (see memlane.retrieve.cards).
    entities: tuple[EntityCard, ...] = ()

    @property
    def abstained(self) -> bool:
        """True when recall said that nothing relevant was found."""
        return self.evidence is not None and self.evidence.silent


class Searched(msgspec.Struct, frozen=True):
    """What a search found, and (by meaning, with a floor) how near the store came."""

    hits: list[Hit]
    evidence: Evidence | None = None

    @property
    def abstained(self) -> bool:
        """True when a search by meaning found nothing near enough."""
        return self.evidence is not None and self.evidence.silent
