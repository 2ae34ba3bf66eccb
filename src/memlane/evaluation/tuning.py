"""Tuning recall's score weights on gold cases and usage feedback (`memlane tune-weights`).

A case is a query and the memories it should bring (a line of a gold file: see
GoldCase). Usage feedback adds cases of its own: a memory agents applied and never
found wrong should come first when asked for by its title. A case scores the
reciprocal rank of its first expected memory within the first k (0 past k); a set of
cases scores their mean (MRR@k).

The search (evaluation.climb) climbs from the current score and lane weights one
step at a time while the score rises. Each case's recall runs once: its scored
candidates are ranked again under every mix tried, so a step costs no store read;
every figure reported comes from real recalls.

The proposal is honest about what it has not seen: the cases are dealt into folds,
weights are climbed on all folds but one and that fold's cases are recalled under
them. The mean over every case, each recalled under weights chosen without it, is the
held-out score; a proposal is worth applying only when it beats the current weights'.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import msgspec

from memlane.errors import Invalid, NotFound
from memlane.evaluation.climb import MIN_GAIN, Mix, Probe, climb, fold_of, probe, reciprocal_rank
from memlane.memory import Memory
from memlane.model import Record, replace
from memlane.scope import Context, scope_project

# Five folds: each is trained on four fifths of the cases, and a gold set of a few
# dozen cases still leaves several in every held-out fold.
FOLDS = 5
# Fewer cases than this cannot be split into folds that each say something.
MIN_CASES = 5
# Feedback cases: at most this many, the most applied first, so feedback informs the
# tuning without drowning a gold set.
FEEDBACK_CASES = 50
# A recall reads this many results per case, so the candidates cover the first k.
POOL = 10


class GoldCase(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One query and the memories it should bring, the first of them best; read where
    `project` and `branch` say (the scope boosts depend on it), with recall's filters."""

    id: str
    query: str
    expect: tuple[str, ...]
    scope: str | list[str] | None = None
    as_of: str | None = None
    kind: str | None = None
    project: str | None = None
    branch: str | None = None
    source: str = "gold"  # gold | feedback

    def options(self) -> dict[str, Any]:
        chosen = {"scope": self.scope, "as_of": self.as_of, "kind": self.kind}
        return {name: value for name, value in chosen.items() if value is not None}


class Tuning(msgspec.Struct, frozen=True):
    """Current and proposed weights, and the score (MRR@k) of each on the cases."""

    current: Mix
    proposed: Mix
    k: int
    cases: int
    feedback_cases: int
    folds: int
    current_score: float  # the current weights, on every case
    proposed_score: float  # the proposal, on the cases it was climbed on
    held_out_score: float  # each case under weights climbed without it

    @property
    def improves(self) -> bool:
        """Whether tuning beat the current weights on cases it had not seen."""
        return self.held_out_score > self.current_score + MIN_GAIN and (
            self.proposed != self.current
        )


def load_cases(lines: Iterable[str], origin: str) -> list[GoldCase]:
    """Gold cases from JSON lines (blank lines skipped); Invalid naming the first bad line."""
    cases = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            case = msgspec.json.decode(line, type=GoldCase)
        except msgspec.ValidationError as exc:
            raise Invalid(f"{origin} line {number}: {exc}") from None
        except msgspec.DecodeError:
            raise Invalid(f"{origin} line {number}: not a JSON object") from None
        if not case.query.strip() or not case.expect:
            raise Invalid(f"{origin} line {number}: a case needs a query and expected ids")
        cases.append(case)
    return cases


def feedback_cases(records: Iterable[Record]) -> list[GoldCase]:
    """A case for each memory applied and never violated, most applied first: asked
    for by its title where it lives, it should come first."""
    used = [r for r in records if r.applied_count > 0 and r.violated_count == 0]
    used.sort(key=lambda r: (-r.applied_count, r.id))
    cases = []
    for record in used[:FEEDBACK_CASES]:
        project, branch = scope_project(record.scope)
        cases.append(
            GoldCase(
                id=f"feedback:{record.id}",
                query=record.title,
                expect=(record.id,),
                scope=record.scope,
                project=project,
                branch=branch,
                source="feedback",
            )
        )
    return cases


# ---- running it on a store --------------------------------------------------------------


def tune(
    mem: Memory,
    cases: Sequence[GoldCase],
    *,
    k: int = 5,
    folds: int = FOLDS,
    progress: Callable[[int, int], None] | None = None,
) -> Tuning:
    """Propose score weights for `mem`'s recall from `cases` (see the module docstring).
    Reads only: recalls are not counted."""
    if k < 1:
        raise Invalid("--k must be at least 1")
    if folds < 2:
        raise Invalid("--folds must be at least 2")
    if len(cases) < MIN_CASES:
        raise Invalid(
            f"tuning needs at least {MIN_CASES} cases, found {len(cases)}: pass --gold FILE "
            "or record feedback (memlane feedback ID --applied)"
        )
    folds = min(folds, len(cases))
    cases = [_resolved(mem, case) for case in cases]
    settings = mem.recall_settings
    current = Mix.of(settings.weights, settings.lane_weights)
    total = len(cases) * 3
    probes = []
    for done, case in enumerate(cases, start=1):
        probes.append(_probe(mem, case, current))
        if progress is not None:
            progress(done, total)
    proposed = climb(probes, current, k)
    chosen = {}
    for fold in range(folds):
        training = [p for i, p in enumerate(probes) if fold_of(i, folds) != fold]
        chosen[fold] = climb(training, current, k)
    held, now, fitted = [], [], []
    for i, case in enumerate(cases):
        held.append(_recalled(mem, case, chosen[fold_of(i, folds)], k))
        now.append(_recalled(mem, case, current, k))
        fitted.append(_recalled(mem, case, proposed, k))
        if progress is not None:
            progress(len(cases) + 2 * (i + 1), total)
    return Tuning(
        current=current,
        proposed=proposed,
        k=k,
        cases=len(cases),
        feedback_cases=sum(1 for c in cases if c.source == "feedback"),
        folds=folds,
        current_score=_mean(now),
        proposed_score=_mean(fitted),
        held_out_score=_mean(held),
    )


def _resolved(mem: Memory, case: GoldCase) -> GoldCase:
    """The case with its expected memories' full ids; Invalid naming one not in the
    store (a gold set written for another store would otherwise score 0 silently)."""
    try:
        return replace(case, expect=tuple(mem.resolve(e) for e in case.expect))
    except NotFound as exc:
        raise Invalid(f"gold case {case.id}: {exc}") from None


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / max(1, len(values))


@contextmanager
def _standing(mem: Memory, case: GoldCase) -> Iterator[None]:
    """Read as from where the case stands (its project and branch), then back."""
    before = mem.context
    if case.project is not None:
        mem.context = Context(case.project, case.branch)
    try:
        yield
    finally:
        mem.context = before


def _probe(mem: Memory, case: GoldCase, current: Mix) -> Probe:
    with _standing(mem, case):
        result = mem.recall(case.query, limit=POOL, count=False, **case.options())
    return probe(result.candidates, current, case.expect)


def _recalled(mem: Memory, case: GoldCase, mix: Mix, k: int) -> float:
    """The case's reciprocal rank in a real recall under `mix`."""
    settings = mem.recall_settings
    mem.recall_settings = replace(settings, weights=mix.weights, lane_weights=mix.lane_weights())
    try:
        with _standing(mem, case):
            hits = mem.recall(case.query, limit=k, count=False, **case.options()).hits
    finally:
        mem.recall_settings = settings
    return reciprocal_rank([h.record.id for h in hits], case.expect, k)


def live_records(mem: Memory) -> list[Record]:
    """Every live memory this agent may see, in every scope (feedback's cases)."""
    return list(mem.list(scope="all", limit=0, include_private=mem.agent is not None))
