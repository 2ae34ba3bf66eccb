"""The search behind `tune-weights`, pure: candidates one recall scored, ranked again
under other weights, and a climb through the weights one step at a time.

What moves is a Mix: the five score weights (retrieve.score.Weights) and the three
lanes' fusion weights (retrieve.fuse.LANE_WEIGHTS). Ranking again needs no store: a
candidate's lane shares scale with its lane's weight, its relevance is its fused
score over the best candidate's, and the other terms do not depend on either. What
this leaves out (MMR, the budget, the lanes' pools, which a lane's weight does not
change while it is above 0) is why every figure reported comes from real recalls.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import msgspec
import numpy as np
import numpy.typing as npt

from memlane.retrieve.fuse import LANES
from memlane.retrieve.score import Scored, Weights

# A score weight step moves this much weight from one term to another: fine enough to
# find a better mix, coarse enough that a few dozen cases can tell two steps apart.
STEP = 0.05
# A lane weight step raises or lowers one lane's weight by this much (they need not
# sum to 1: fusion scales them together, and relevance is relative to the best).
LANE_STEP = 0.1
# At most this many steps: the climb usually stops far sooner (no step helps).
MAX_STEPS = 40
# A step must raise the objective by more than this (float noise).
MIN_GAIN = 1e-9
# The score terms after relevance, in Weights' order, and the parts that hold them.
OTHER_TERMS = ("importance", "confidence", "recency", "popularity")
OTHER_PARTS = ("importance", "trust", "recency", "popularity")

Vector = npt.NDArray[np.float64]


class Mix(msgspec.Struct, frozen=True):
    """Score weights and lane fusion weights (in LANES' order)."""

    weights: Weights
    lanes: tuple[float, ...]

    @classmethod
    def of(cls, weights: Weights, lanes: Mapping[str, float]) -> Mix:
        return cls(weights, tuple(float(lanes.get(lane, 0.0)) for lane in LANES))

    def lane_weights(self) -> dict[str, float]:
        return dict(zip(LANES, self.lanes, strict=True))


class Probe(msgspec.Struct, frozen=True):
    """One case's candidates as one recall under `base` scored them, a row each in
    the order ties are broken: their lane shares (and, last, what no lane brought: a
    session neighbour's lift), their other terms and scope x time factor; and which
    rows are expected."""

    lanes: Vector  # m x (len(LANES) + 1)
    others: Vector  # m x 4, times the factor
    factor: Vector  # m
    base: tuple[float, ...]  # the lane weights the recall ran with
    expected: tuple[int, ...]


def probe(candidates: Sequence[Scored], base: Mix, expect: Sequence[str]) -> Probe:
    """The probe of a recall's scored candidates, `expect` naming the wanted ids."""
    ordered = sorted(candidates, key=lambda s: (-s.relevance, s.record.dedup_hash, s.record.id))
    lanes, others, factor = [], [], []
    for s in ordered:
        shares = [s.parts.get(lane, 0.0) for lane in LANES]
        lanes.append([*shares, s.relevance - math.fsum(shares)])
        f = s.parts["scope"] * s.parts["time"]
        others.append([s.parts[name] * f for name in OTHER_PARTS])
        factor.append(f)
    index = {s.record.id: i for i, s in enumerate(ordered)}
    width = len(LANES) + 1
    return Probe(
        lanes=np.array(lanes, dtype=np.float64).reshape(len(ordered), width),
        others=np.array(others, dtype=np.float64).reshape(len(ordered), len(OTHER_PARTS)),
        factor=np.array(factor, dtype=np.float64),
        base=base.lanes,
        expected=tuple(index[e] for e in expect if e in index),
    )


def scores(p: Probe, mix: Mix) -> Vector:
    """Each candidate's score under `mix`, as recall would compute it."""
    ratios = [new / old if old > 0 else 0.0 for new, old in zip(mix.lanes, p.base, strict=True)]
    fused = p.lanes @ np.array([*ratios, 1.0])
    top = fused.max(initial=0.0)
    relevance = fused / top if top > 0 else np.zeros_like(fused)
    w = mix.weights
    rest = np.array([getattr(w, name) for name in OTHER_TERMS])
    result: Vector = p.factor * relevance * w.relevance + p.others @ rest
    return result


def reciprocal_rank(ranked: Sequence[str], expect: Sequence[str], k: int) -> float:
    """1 / the rank of the first expected memory within the first k; 0 without one."""
    for rank, memory_id in enumerate(ranked[:k], start=1):
        if memory_id in expect:
            return 1.0 / rank
    return 0.0


def rank_score(p: Probe, scored: Vector, k: int) -> float:
    """The reciprocal rank within k of a probe's first expected row under `scored`."""
    if not p.expected or not len(scored):
        return 0.0
    for rank, row in enumerate(np.argsort(-scored, kind="stable")[:k], start=1):
        if int(row) in p.expected:
            return 1.0 / rank
    return 0.0


def shortfall(p: Probe, scored: Vector) -> float:
    """How far the best expected row scores below the best other one (0 when it is
    first): what tells two mixes apart when both leave every rank as it is. A case
    already first counts 0, so the climb never trades weight for wider leads."""
    if not p.expected or len(scored) < 2:
        return 0.0
    wanted = np.zeros(len(scored), dtype=bool)
    wanted[list(p.expected)] = True
    if wanted.all():
        return 0.0
    return min(0.0, float(scored[wanted].max() - scored[~wanted].max()))


def objective(probes: Sequence[Probe], mix: Mix, k: int) -> tuple[float, float]:
    """The mean reciprocal rank within k, then the mean shortfall (to break ties)."""
    count = max(1, len(probes))
    ranks, shortfalls = [], []
    for p in probes:
        scored = scores(p, mix)
        ranks.append(rank_score(p, scored, k))
        shortfalls.append(shortfall(p, scored))
    return math.fsum(ranks) / count, math.fsum(shortfalls) / count


def steps(mix: Mix) -> list[Mix]:
    """Every mix one step away: STEP of score weight moved from one term to another,
    or one running lane's weight LANE_STEP up or down (a lane at 0 did not run, so
    nothing says what raising it would do; a lane is never taken below 0, nor every
    lane to 0)."""
    values = [getattr(mix.weights, t) for t in Weights.__struct_fields__]
    found = []
    for give, take in itertools.permutations(range(len(values)), 2):
        if values[give] < STEP - MIN_GAIN:
            continue
        moved = list(values)
        moved[give] = max(0.0, round(moved[give] - STEP, 6))
        moved[take] = round(moved[take] + STEP, 6)
        found.append(Mix(Weights(*moved), mix.lanes))
    for i, weight in enumerate(mix.lanes):
        if weight <= 0:
            continue
        for change in (LANE_STEP, -LANE_STEP):
            lanes = list(mix.lanes)
            lanes[i] = max(0.0, round(weight + change, 6))
            if any(lanes):
                found.append(Mix(mix.weights, tuple(lanes)))
    return found


def climb(probes: Sequence[Probe], start: Mix, k: int) -> Mix:
    """The mix reached from `start` taking, while one helps, the step that raises the
    mean reciprocal rank most, or (where no step changes a rank) the mean shortfall
    of the expected memories; the first such step on a tie."""
    best, best_score = start, objective(probes, start, k)
    for _ in range(MAX_STEPS):
        tried = [(objective(probes, m, k), m) for m in steps(best)]
        top_score, top = max(tried, key=lambda pair: pair[0], default=(best_score, best))
        if not _better(top_score, best_score):
            break
        best, best_score = top, top_score
    return best


def _better(new: tuple[float, float], old: tuple[float, float]) -> bool:
    if new[0] > old[0] + MIN_GAIN:
        return True
    return abs(new[0] - old[0]) <= MIN_GAIN and new[1] > old[1] + MIN_GAIN


def fold_of(index: int, folds: int) -> int:
    """The fold a case falls in: dealt in turn, so every fold mixes the whole set."""
    return index % folds
