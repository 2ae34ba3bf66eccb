"""The composite score of a recall candidate, and its parts for --explain. Pure.

    score = (relevance·w_rel + importance·w_imp + confidence·trust·w_conf
             + recency·w_rec + popularity·w_pop) × scope boost × time fit

Every term lies in [0, 1] and the weights sum to 1, so a score does too.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

import msgspec

from memlane.errors import Invalid
from memlane.model import (
    DECAY_EXEMPT,
    MemoryClass,
    Record,
    ResonanceType,
    effective_resonance,
)
from memlane.retrieve.fuse import LANES, Fused, normalized
from memlane.retrieve.when import NO_CUE, TimeCue, event_time, time_fit
from memlane.scope import GLOBAL, Context, scope_project
from memlane.timeutil import days_between

# How fast each class of memory stops being news:
# yesterday's deploy matters less next week; a decision stays relevant for months;
# a procedure goes stale when it is superseded, not with time. A memory whose class
# is not known fades after a week.
HALF_LIFE_DAYS: Mapping[MemoryClass | None, float] = {
    MemoryClass.EPISODIC: 3.0,
    MemoryClass.SEMANTIC: 90.0,
    MemoryClass.PROCEDURAL: 180.0,
    None: 7.0,
}
HALF_LIFE_ORDER = (MemoryClass.EPISODIC, MemoryClass.SEMANTIC, MemoryClass.PROCEDURAL, None)
# Importance (resonance) is written 1-10; 1 maps to 0 and 10 or more to 1.
IMPORTANCE_FLOOR = 1.0
IMPORTANCE_CEILING = 10.0
_IMPORTANCE_SPAN = IMPORTANCE_CEILING - IMPORTANCE_FLOOR
# Popularity saturates at this many reads: log-scaled so the first reads count
# most, capped so a memory shown on every prompt cannot outrank a relevant one.
POPULARITY_SATURATION = 100
# Scope boosts: the closer a memory's scope to where the caller stands,
# the more it counts. Anything outside the caller's chain (another project, or
# another branch) is reached only with --scope all.
BOOST_BRANCH = 1.0
BOOST_PROJECT = 0.85
BOOST_GLOBAL = 0.7
BOOST_OTHER = 0.3
SCOPE_BOOSTS = (BOOST_BRANCH, BOOST_PROJECT, BOOST_GLOBAL, BOOST_OTHER)
# Weights are compared to 1 with this slack, so 0.1 + 0.2 + ... in floats passes.
WEIGHT_SUM_TOLERANCE = 1e-6


class Weights(msgspec.Struct, frozen=True):
    """The weights of the composite score; they must sum to 1.

    LoCoMo (`memlane eval locomo`) cannot tell them apart: relevance anywhere from 0.4
    to 0.7 (the other four scaled to fill the rest) scores alike there, as its turns
    share one importance, confidence and trust, are never read, and are all years old.
    So the defaults are reasoned (and the gold cases hold with them):
    - relevance 0.50: the only term that depends on the query, so it gets half.
    - importance 0.15 and confidence·trust 0.15: what the writer asserted and how
      grounded it is; memlane has both, so they share.
    - recency 0.10: low, because the per-class half-lives already make episodic
      memories fade within days, and a query that names a time gets its own window
      (when.py).
    - popularity 0.10: log-scaled and capped, since it feeds back on itself (what is
      shown gets read, what is read gets shown).
    """

    relevance: float = 0.50
    importance: float = 0.15
    confidence: float = 0.15
    recency: float = 0.10
    popularity: float = 0.10

    def __post_init__(self) -> None:
        values = {name: getattr(self, name) for name in self.__struct_fields__}
        for name, value in values.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise Invalid(f"score weight {name} must be a number, not {value!r}")
            if not math.isfinite(value) or not 0.0 <= value <= 1.0:
                raise Invalid(f"score weight {name} must lie in [0, 1], not {value!r}")
        total = math.fsum(values.values())
        if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
            raise Invalid(f"score weights must sum to 1, not {total:g}")


DEFAULT_WEIGHTS = Weights()


class Scored(msgspec.Struct, frozen=True):
    """A ranked candidate: its record, score, the parts behind it, and its lane ranks."""

    record: Record
    score: float
    relevance: float
    parts: Mapping[str, float]
    ranks: Mapping[str, int]


def half_life_days(
    memory_class: MemoryClass | None,
    half_lives: Mapping[MemoryClass | None, float] = HALF_LIFE_DAYS,
) -> float:
    return half_lives.get(memory_class, half_lives[None])


def decay(age_days: float, half_life: float) -> float:
    """exp(-ln 2 · age / half-life): 1 now, 0.5 after one half-life. A future age counts as 0."""
    return math.exp(-math.log(2) * max(0.0, age_days) / half_life)


def recency(
    record: Record, now: datetime, half_lives: Mapping[MemoryClass | None, float] = HALF_LIFE_DAYS
) -> float:
    """How fresh a memory is, by its event time (else its creation) and its class."""
    if record.resonance_type is not None and record.resonance_type in DECAY_EXEMPT:
        return 1.0
    age_days = days_between(event_time(record), now)
    return decay(age_days, half_life_days(record.memory_class, half_lives))


def importance(record: Record, now: datetime) -> float:
    """Effective resonance (after its weekly decay) mapped from 1-10 onto 0-1, capped."""
    clock_start = record.last_activated or record.created_at
    resonance = effective_resonance(record.importance, record.resonance_type, clock_start, now)
    return _unit((resonance - IMPORTANCE_FLOOR) / _IMPORTANCE_SPAN)


def trust(record: Record) -> float:
    """How far a memory can be believed: its grounded confidence times its trust score."""
    return _unit(record.confidence * record.trust_score)


def popularity(record: Record) -> float:
    """Reads and passive showings, log-scaled: 0 never, 1 at POPULARITY_SATURATION or more."""
    uses = max(0, record.retrieval_count) + max(0, record.surfaced_count)
    return _unit(math.log1p(uses) / math.log1p(POPULARITY_SATURATION))


def scope_boost(
    scope: str,
    context: Context,
    boosts: tuple[float, ...] = SCOPE_BOOSTS,
    asked: Collection[str] = (),
) -> float:
    """`boosts`: (branch, project, global, other), as SCOPE_BOOSTS. `asked`: the scopes
    the read named, each boosted as the caller's own project (or branch)."""
    on_branch, in_project, is_global, other = boosts
    if scope == GLOBAL:
        return is_global
    project, branch = scope_project(scope)
    # Trigger: --scope names another project's scope. Why: the user asked for it, so it
    # is no stranger turned up by --scope all. Outcome: it counts as where they stand.
    if scope in asked:
        return in_project if branch is None else on_branch
    if project is None or project != context.project:
        return other
    if branch is None:
        return in_project
    return on_branch if branch == context.branch else other


class Shape(msgspec.Struct, frozen=True):
    """How recency fades and scope counts: half-lives by class, and scope boosts."""

    half_lives: Mapping[MemoryClass | None, float] = msgspec.field(
        default_factory=lambda: HALF_LIFE_DAYS
    )
    boosts: tuple[float, ...] = SCOPE_BOOSTS

    def __post_init__(self) -> None:
        if len(self.boosts) != len(SCOPE_BOOSTS) or not all(0 <= b <= 1 for b in self.boosts):
            raise Invalid("scope boosts are four numbers in [0, 1]: branch, project, global, other")
        if None not in self.half_lives or not all(d > 0 for d in self.half_lives.values()):
            raise Invalid("half-lives are days > 0, with one for memories of no class")


DEFAULT_SHAPE = Shape()


def score_candidates(
    fused: Sequence[Fused],
    records: Mapping[str, Record],
    *,
    now: datetime,
    context: Context,
    weights: Weights = DEFAULT_WEIGHTS,
    cue: TimeCue = NO_CUE,
    shape: Shape = DEFAULT_SHAPE,
    asked: Collection[str] = (),
) -> list[Scored]:
    """Score the fused candidates that have a record, best first (ties: relevance, then
    content and id, as fuse.ordered). `asked`: the scopes the read named (scope_boost).

    Relevance is normalized over these candidates, so a fused id without a record
    (filtered out after the lanes ran) neither scores nor shifts the others.
    """
    present = [f for f in fused if f.id in records]
    relevance = normalized(present)
    top = max((f.score for f in present), default=0.0)
    setting = _Setting(now, context, weights, cue, top, shape, frozenset(asked))
    scorer = _Scorer(setting)
    scored = [scorer.scored(f, records[f.id], relevance[f.id]) for f in present]
    scored.sort(key=_rank_key)
    return scored


def _rank_key(s: Scored) -> tuple[float, float, str, str]:
    return (-s.score, -s.relevance, s.record.dedup_hash, s.record.id)


class _Setting(msgspec.Struct, frozen=True):
    """What every candidate of one recall is scored against."""

    now: datetime
    context: Context
    weights: Weights
    cue: TimeCue
    top: float  # the best fused score among the candidates
    shape: Shape
    asked: frozenset[str]  # the scopes the read named


def combined(relevance: float, parts: Mapping[str, float], w: Weights) -> float:
    """The composite score of a candidate's relevance and parts under weights `w`."""
    base = math.fsum(
        (
            relevance * w.relevance,
            parts["importance"] * w.importance,
            parts["trust"] * w.confidence,
            parts["recency"] * w.recency,
            parts["popularity"] * w.popularity,
        )
    )
    return base * parts["scope"] * parts["time"]


class _Scorer:
    """The parts and score of each candidate of one recall.

    Trigger: a recall scores about a hundred candidates. Why: most of their parts depend
    only on fields many of them share (kind, resonance type, confidence, trust, use
    counts, scope), and working those out again per candidate cost more than the
    arithmetic. Outcome: they are worked out once per recall for each such profile, by
    the same functions, so every part and score is the very float `recency`,
    `importance`, `trust`, `popularity` and `scope_boost` give.
    """

    def __init__(self, setting: _Setting) -> None:
        self.setting = setting
        self.now = setting.now
        self.weights = setting.weights
        self.top = setting.top
        self.profiles: dict[tuple[Any, ...], _Profile] = {}
        self.timed = setting.cue.window is not None or setting.cue.asks_when

    def scored(self, fused: Fused, record: Record, relevance: float) -> Scored:
        parts = self.parts(fused, record)
        score = combined(relevance, parts, self.weights)
        return Scored(record, score, relevance, parts, dict(fused.ranks))

    def parts(self, fused: Fused, record: Record) -> dict[str, float]:
        """Every part in [0, 1] before weighting; the lane parts sum to the relevance."""
        top = self.top  # above 0: a candidate has a relevance only then
        parts = dict.fromkeys(LANES, 0.0)  # a lane that did not find it: 0 / top
        for lane, share in fused.contributions.items():
            parts[lane] = share / top
        profile = self.profile(record)
        if profile.exempt:
            parts["recency"] = 1.0
            resonance = float(record.importance)
        else:
            age = days_between(event_time(record), self.now)
            parts["recency"] = decay(age, profile.half_life)
            clock_start = record.last_activated or record.created_at
            resonance = effective_resonance(record.importance, None, clock_start, self.now)
        parts["importance"] = _unit((resonance - IMPORTANCE_FLOOR) / _IMPORTANCE_SPAN)
        parts["trust"] = profile.trust
        parts["popularity"] = profile.popularity
        parts["scope"] = profile.boost
        parts["time"] = time_fit(record, self.setting.cue) if self.timed else 1.0
        return parts

    def profile(self, record: Record) -> _Profile:
        key = (
            record.kind,
            record.resonance_type,
            record.confidence,
            record.trust_score,
            record.retrieval_count,
            record.surfaced_count,
            record.scope,
        )
        found = self.profiles.get(key)
        if found is None:
            found = self.profiles[key] = self._profiled(record)
        return found

    def _profiled(self, record: Record) -> _Profile:
        s = self.setting
        resonance_type = record.resonance_type
        return _Profile(
            exempt=resonance_type is not None and ResonanceType(resonance_type) in DECAY_EXEMPT,
            half_life=half_life_days(record.memory_class, s.shape.half_lives),
            trust=trust(record),
            popularity=popularity(record),
            boost=scope_boost(record.scope, s.context, s.shape.boosts, s.asked),
        )


class _Profile(NamedTuple):
    """The parts of a candidate that depend on neither the time nor its own clock."""

    exempt: bool  # its resonance type never decays
    half_life: float
    trust: float
    popularity: float
    boost: float


def _unit(value: float) -> float:
    return min(1.0, max(0.0, value))
