"""Which live memories `consolidate --prune` retires: a function of a record and the
time, tested without a database. Retiring keeps the memory (history, as-of reads,
`show`); it only ends its life in recall and listings.

Two rules, each over memories older than the prune age (`age_days`):

- unused: nobody grounded it (signal `none`), it is believed little (confidence below
  0.5), nobody marked it more important than an ordinary note (importance 5 or less), and
  nothing ever used it: never retrieved, applied or activated, and never surfaced by a
  hook, or last surfaced longer than the prune age ago (a showing that old no longer
  counts as a use). A memory without a signal is its author's deliberate note and is
  never pruned; nor is a foundational or transformative one.
- ephemeral: an ephemeral memory (flagged, or of resonance ephemeral or session) nothing
  has touched (changed, retrieved, surfaced or activated) for the prune age, unless it is
  an open thread or commitment (it stays until closed) or important (8 or more).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

import msgspec

from memlane.model import Record, ResonanceType, Signal, State

# A memory believed less than an even chance that it holds.
LOW_CONFIDENCE = 0.5
# The importance of an unmarked note: an unused memory above it was marked on purpose.
ORDINARY_IMPORTANCE = 5
# Important enough for the wake cascade's core: an ephemeral memory this important stays.
KEPT_IMPORTANCE = 8
DEFAULT_AGE_DAYS = 30.0
UNUSED, EPHEMERAL = "unused", "ephemeral"
_EXEMPT = frozenset({ResonanceType.FOUNDATIONAL, ResonanceType.TRANSFORMATIVE})
_TRANSIENT = frozenset({ResonanceType.EPHEMERAL, ResonanceType.SESSION})


class PruneRules(msgspec.Struct, frozen=True):
    """The prune's one knob (a setting): how old a memory must be."""

    age_days: float = DEFAULT_AGE_DAYS


class Pruned(msgspec.Struct, frozen=True):
    """A memory the prune retires, the rule that took it and the reason it is given."""

    id: str
    title: str
    rule: str  # unused | ephemeral
    reason: str


def pruned(records: Iterable[Record], now: datetime, rules: PruneRules) -> tuple[Pruned, ...]:
    """The records a prune at `now` retires, in the order given."""
    out = []
    for record in records:
        rule = rule_for(record, now, rules)
        if rule is not None:
            out.append(Pruned(record.id, record.title, rule, f"pruned: {_REASONS[rule]}"))
    return tuple(out)


_REASONS = {
    UNUSED: "ungrounded, unsure, never used",
    EPHEMERAL: "ephemeral, untouched past the prune age",
}


def rule_for(record: Record, now: datetime, rules: PruneRules) -> str | None:
    """The rule that retires this record at `now`, or None when it stays."""
    cutoff = now - timedelta(days=rules.age_days)
    if not record.live or record.created_at >= cutoff or record.resonance_type in _EXEMPT:
        return None
    if _unused(record, cutoff):
        return UNUSED
    if _idle_ephemeral(record, cutoff):
        return EPHEMERAL
    return None


def _unused(record: Record, cutoff: datetime) -> bool:
    surfaced_long_ago = record.last_surfaced is not None and record.last_surfaced < cutoff
    return (
        record.signal is Signal.NONE
        and record.confidence < LOW_CONFIDENCE
        and record.importance <= ORDINARY_IMPORTANCE
        and record.retrieval_count == 0
        and record.applied_count == 0
        and record.activation_count == 0
        and (record.surfaced_count == 0 or surfaced_long_ago)
    )


def _idle_ephemeral(record: Record, cutoff: datetime) -> bool:
    ephemeral = record.ephemeral or record.resonance_type in _TRANSIENT
    if not ephemeral or record.state is State.OPEN or record.importance >= KEPT_IMPORTANCE:
        return False
    touched = [
        record.updated_at,
        record.last_retrieved,
        record.last_surfaced,
        record.last_activated,
    ]
    return max(t for t in touched if t is not None) < cutoff
