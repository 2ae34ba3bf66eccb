"""Review resurfacing: which memories are due for a look. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import msgspec

from memlane.errors import Invalid
from memlane.model import MemoryClass, Record
from memlane.retrieve.score import HALF_LIFE_DAYS, decay, half_life_days
from memlane.timeutil import days_between

# Review resurfacing: a memory is due once its recall probability since
# it was last reviewed fell below REVIEW_THRESHOLD (0.5: one half-life of its class),
# if it matters (importance REVIEW_MIN_IMPORTANCE or more). Both are settings.
REVIEW_THRESHOLD = 0.5
REVIEW_MIN_IMPORTANCE = 5


HalfLives = Mapping[MemoryClass | None, float]


class ReviewPolicy(msgspec.Struct, frozen=True):
    """When a memory is due for review: its recall probability below `threshold`, its
    importance at least `min_importance` (interfaces set both from the settings)."""

    threshold: float = REVIEW_THRESHOLD
    min_importance: int = REVIEW_MIN_IMPORTANCE

    def __post_init__(self) -> None:
        # A recall probability lies in (0, 1]: a threshold outside it makes nothing,
        # or everything, due.
        if not 0.0 < self.threshold <= 1.0:
            raise Invalid("the review threshold must be above 0 and at most 1")


def recall_probability(
    record: Record, now: datetime, half_lives: HalfLives = HALF_LIFE_DAYS
) -> float:
    """exp(-ln 2 · days since the last review (else creation) / the class half-life),
    the half-lives recall decays by (MEMLANE_RECALL_HALF_LIVES)."""
    anchor = record.reviewed_at or record.created_at
    days = days_between(anchor, now)
    return decay(days, half_life_days(record.memory_class, half_lives))


def due_for_review(
    records: list[Record],
    now: datetime,
    threshold: float = REVIEW_THRESHOLD,
    min_importance: int = REVIEW_MIN_IMPORTANCE,
    half_lives: HalfLives = HALF_LIFE_DAYS,
) -> list[tuple[Record, float]]:
    """The records due for review with their recall probability, most decayed first."""
    due = [
        (r, p)
        for r in records
        if r.importance >= min_importance
        and (p := recall_probability(r, now, half_lives)) < threshold
    ]
    return sorted(due, key=lambda pair: (pair[1], pair[0].id))
