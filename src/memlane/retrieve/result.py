"""What recall returns: the results within the budget, the linked extras, and the
trace `--explain` reads."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import msgspec

from memlane.model import Hit, Record
from memlane.retrieve.abstain import Evidence
from memlane.retrieve.cards import EntityCard
from memlane.retrieve.expand import Neighbour
from memlane.retrieve.score import Scored


class Extra(msgspec.Struct, frozen=True):
    """A linked neighbour of a result (or, two hops out, of another neighbour), shown
    after the results."""

    record: Record
    neighbour: Neighbour
    score: float = 0.0  # the score of the result it hangs from, decayed per hop


class Prior(msgspec.Struct, frozen=True):
    """A prior state of a result, shown under it when the query asks about a change:
    a content version the result replaced, or a memory it superseded (see
    retrieve.unfold). Its record reads as it was then, no longer live."""

    record: Record
    of: str  # the result it precedes
    reason: str | None  # why it ended, as recorded by update, supersede or invalidate
    valid_to: datetime | None
    version: int | None = None  # a content version's number; None: a superseded memory


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
    # Prior states of the top results, when the query asks about a change.
    previously: tuple[Prior, ...] = ()
    # Global memories the global limit left out (for --explain).
    global_dropped: tuple[str, ...] = ()
    # The per-call controls this recall ran with, as reported by --json and --explain.
    settings: Mapping[str, Any] = {}

    def priors_of(self, memory_id: str) -> list[Prior]:
        return [p for p in self.previously if p.of == memory_id]

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
