"""Why a memory did or did not surface in a recall: one verdict from a closed set. Pure.

`Recall.explain` (services.recall) re-runs the real pipeline (no writes) and hands
its trace and the target's record here. Verdicts, in the order they are tested:

    not_in_store        no memory the reader may see has that id (or matches the text)
    found               presented at `rank`
    linked              shown after the results as a linked neighbour of one of them
    previously          shown under a result as a state it replaced (a question about
                        a change; see retrieve.unfold)
    omitted_by_budget   ranked within the limit, left out by --max-tokens
    held_back           a passive read holds it back (untrusted web, injection risk,
                        confidence below the floor)
    over_global_limit   a global candidate past --global-limit (or --no-global)
    abstained           a candidate, but nothing was near enough to the query: recall
                        answered with nothing (see retrieve.abstain)
    below_limit         a candidate, ranked below the last presented result
    not_valid_at_as_of  --as-of names an instant outside its validity
    superseded          not live (superseded, retired or invalidated) in a live read
    out_of_scope        its scope is not among the scopes read
    filtered_out        another filter excludes it (kind, category, tags, dates, ...)
    not_in_pool         it passes every filter, but no lane found it within its pool
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from memlane.model import Filters, Record
from memlane.retrieve.result import RecallResult

VERDICTS = (
    "not_in_store",
    "found",
    "linked",
    "previously",
    "omitted_by_budget",
    "held_back",
    "over_global_limit",
    "abstained",
    "below_limit",
    "not_valid_at_as_of",
    "superseded",
    "out_of_scope",
    "filtered_out",
    "not_in_pool",
)


# A text target matching more memories than this is a question to narrow, not to list.
EXPLAIN_TARGETS = 10


class Verdict(msgspec.Struct, frozen=True):
    id: str | None
    reason: str  # one of VERDICTS
    rank: int | None = None
    score: float | None = None
    detail: str = ""


class Explanation(msgspec.Struct, frozen=True):
    """A recall re-run for --explain: its result and a verdict per target."""

    query: str
    target: str | None
    result: RecallResult
    verdicts: tuple[Verdict, ...]
    absent_lanes: str | None  # why a lane did not run, if one did not


def judge(
    record: Record | None,
    result: RecallResult,
    filters: Filters,
    *,
    passes_filters: bool,
    valid_at_as_of: bool,
    absent_lanes: str | None = None,
) -> Verdict:
    """The verdict for one target memory (None: not in the store for this reader).

    `passes_filters`: the store's filters admit the record (alone, by id);
    `valid_at_as_of`: it has a version valid at filters.as_of (True without --as-of);
    `absent_lanes`: why a lane did not run (no embedder), told with not_in_pool.
    """
    if record is None:
        return Verdict(None, "not_in_store", detail="no memory you may see matches")
    found = _in_trace(record.id, result)
    if found is not None:
        return found
    if filters.as_of is not None and not valid_at_as_of:
        when = filters.as_of.isoformat()
        return Verdict(record.id, "not_valid_at_as_of", detail=f"not valid at {when}")
    if filters.as_of is None and not filters.include_superseded and not record.live:
        return Verdict(record.id, "superseded", detail=record.tombstone_text)
    if filters.scopes is not None and record.scope not in filters.scopes:
        read = ", ".join(filters.scopes) or "none"
        return Verdict(record.id, "out_of_scope", detail=f"scope {record.scope}; read: {read}")
    if not passes_filters:
        return Verdict(record.id, "filtered_out", detail="excluded by the read's filters")
    lanes = ", ".join(f"{lane} {n}" for lane, n in sorted(result.lanes.items()))
    detail = f"no lane found it (candidates: {lanes or 'none'})"
    if absent_lanes:
        detail += f"; {absent_lanes}"
    return Verdict(record.id, "not_in_pool", detail=detail)


def _in_trace(memory_id: str, result: RecallResult) -> Verdict | None:
    """found / linked / previously / omitted_by_budget / held_back / over_global_limit
    / abstained / below_limit, from the trace."""
    for rank, hit in enumerate(result.hits, start=1):
        if hit.record.id == memory_id:
            return Verdict(memory_id, "found", rank, hit.score, _lanes(hit.ranks))
    for extra in result.extras:
        if extra.record.id == memory_id:
            n = extra.neighbour
            detail = f"{n.link.value} link from {n.via}" + (" [CONTESTED]" if n.contested else "")
            return Verdict(memory_id, "linked", detail=detail)
    for prior in result.previously:
        if prior.record.id == memory_id:
            why = f"; {prior.reason}" if prior.reason else ""
            return Verdict(memory_id, "previously", detail=f"before {prior.of}{why}")
    for rank, cand in enumerate(result.candidates, start=1):
        if cand.record.id != memory_id:
            continue
        if memory_id in result.budget_dropped:
            return Verdict(memory_id, "omitted_by_budget", rank, cand.score, "--max-tokens")
        if memory_id in result.held_back:
            return Verdict(memory_id, "held_back", rank, cand.score, "passive read")
        if memory_id in result.global_dropped:
            limit = result.settings.get("global_limit")
            detail = "global memories left out" if limit is None else f"--global-limit {limit}"
            return Verdict(memory_id, "over_global_limit", rank, cand.score, detail)
        if result.abstained and result.evidence is not None:
            return Verdict(memory_id, "abstained", rank, cand.score, result.evidence.reason())
        last = result.hits[-1].score if result.hits else None
        cut = f"; last result scored {last:.4f}" if last is not None else ""
        detail = f"candidate #{rank} ({_lanes(cand.ranks)}){cut}"
        return Verdict(memory_id, "below_limit", rank, cand.score, detail)
    return None


def _lanes(ranks: Mapping[str, int]) -> str:
    return "found by " + ", ".join(f"{lane} #{rank}" for lane, rank in sorted(ranks.items()))
