"""The recall pipeline: lanes -> fusion -> session neighbours -> dialogue lines ->
composite score -> MMR -> 1-hop link expansion -> budget. A lane that is absent (no
embedder) contributes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TypeVar

import msgspec

from memlane.model import Filters, Link, Record, replace
from memlane.retrieve import lanes
from memlane.retrieve.abstain import UNKNOWN_NAME_MARGIN, Evidence, judge, raised
from memlane.retrieve.budget import estimate_tokens, pack, pack_results, result_text
from memlane.retrieve.dialogue import (
    OTHER_SPEAKER_SHARE,
    QUESTION_SHARE,
    weigh_lines,
)
from memlane.retrieve.expand import LINK_BUDGET, neighbours
from memlane.retrieve.fuse import LANE_WEIGHTS
from memlane.retrieve.mmr import diversify
from memlane.retrieve.result import Extra, RecallResult
from memlane.retrieve.score import (
    DEFAULT_SHAPE,
    DEFAULT_WEIGHTS,
    Scored,
    Shape,
    Weights,
    score_candidates,
)
from memlane.retrieve.session import NEIGHBOUR_SHARE, with_neighbours
from memlane.retrieve.when import Window, event_time, in_window, time_cue
from memlane.scope import Context
from memlane.store import Store

if TYPE_CHECKING:
    from memlane.embed import Embedder
    from memlane.retrieve.served import Index


# Passive reads (hooks inject without being asked) hold back memories less sure than
# this, besides untrusted-web and injection-risk ones: an ungrounded note
# (model.SIGNAL_CONFIDENCE) never surfaces unasked.
PASSIVE_CONFIDENCE_FLOOR = 0.25


# MMR for recall, tuned on the LoCoMo dev split (`memlane eval locomo`): conversations
# put several relevant turns side by side, so diversity costs recall there. At 0.9 it
# costs next to nothing against no MMR (0.7 costs a few points of R@10) and still
# keeps near-duplicates from filling an agent's context.
RECALL_MMR_LAMBDA = 0.9
# MMR re-ranks the best MMR_POOL x limit candidates, as it was meant to (a retrieved
# top N, Carbonell & Goldstein 1998): at lambda 0.9 one further down would need a
# score within 0.11 of those above it and every one of them near a pick, so comparing
# every candidate of a recall would cost time and change nothing.
MMR_POOL = 3


# Linked neighbours read before the filters choose the `link_budget` shown.
NEIGHBOURS_READ = 50


class RecallOptions(msgspec.Struct, frozen=True):
    limit: int = 10
    max_tokens: int | None = None
    weights: Weights = DEFAULT_WEIGHTS
    shape: Shape = DEFAULT_SHAPE  # half-lives by class, scope boosts
    passive_floor: float = PASSIVE_CONFIDENCE_FLOOR  # passive reads hold back less sure ones
    lane_weights: Mapping[str, float] = msgspec.field(default_factory=lambda: dict(LANE_WEIGHTS))
    mmr_lambda: float | None = RECALL_MMR_LAMBDA  # None or 1: no diversity re-ranking
    link_budget: int = LINK_BUDGET  # linked neighbours shown after the results (0: none)
    session_share: float = NEIGHBOUR_SHARE  # lift of session neighbours (0: none)
    session_replies: bool = True  # a seed that asks lifts neighbours sharing no word
    speaker_share: float = OTHER_SPEAKER_SHARE  # others' lines when a speaker is named (1: off)
    question_share: float = QUESTION_SHARE  # memories ending with a question (1: off)
    # The relevance floor: the cosine the query's nearest memory must reach, or recall
    # answers with nothing (None or 0: none; the interfaces default it to the
    # embedding profile's calibrated floor). See retrieve.abstain.
    min_score: float | None = None
    unknown_name_margin: float = UNKNOWN_NAME_MARGIN


def why(scored: Scored) -> str:
    """One line saying why a memory was chosen: its lanes and the strongest other parts."""
    found = ", ".join(f"{lane} #{rank}" for lane, rank in sorted(scored.ranks.items()))
    parts = scored.parts
    notes = [f"found by {found}"]
    if parts.get("time", 1.0) != 1.0:
        notes.append("outside the asked time" if parts["time"] < 1.0 else "in the asked time")
    if parts.get("scope", 1.0) < 1.0:
        notes.append(f"{scored.record.scope} scope x{parts['scope']:.2f}")
    if scored.record.kind.value in ("decision", "constraint"):
        notes.append(scored.record.kind.value)
    return "; ".join(notes)


def recall(
    store: Store,
    query: str,
    filters: Filters,
    *,
    now: datetime,
    context: Context,
    options: RecallOptions = RecallOptions(),
    vector_lane: tuple[Index, Embedder] | None = None,
    admit: Callable[[Record], bool] | None = None,
    skipped: Mapping[str, str] | None = None,
) -> RecallResult:
    """Run every available lane over the filtered store and rank what they found.

    `admit` (passive reads) holds back candidates before the limit, so the results
    it leaves still fill it; linked neighbours must pass it and the filters too.
    `skipped`: lanes the caller could not offer, with why (told in the result with
    any lane that fails here).
    """
    cue = time_cue(query, now)
    found = lanes.gather(
        store, query, filters, options.limit, vector_lane, options.lane_weights, cue.window
    )
    evidence = judged(
        store,
        query,
        filters,
        found.similarity,
        options.min_score,
        options.unknown_name_margin,
        cue.window,
    )
    fused, records = with_neighbours(
        store, filters, found.fused, found.records, options.session_share, options.session_replies
    )
    # After the session lift: a neighbour lifted beside the named speaker's line and
    # said by someone else falls behind too (before it, the other side's replies come
    # back lifted, and LoCoMo's R@10 ends below no preference at all), and a question
    # lifts its reply by its full score before it falls behind.
    fused = weigh_lines(fused, records, query, options.speaker_share, options.question_share)
    scored = score_candidates(
        fused,
        records,
        now=now,
        context=context,
        weights=options.weights,
        cue=cue,
        shape=options.shape,
    )
    held = [s.record.id for s in scored if admit is not None and not admit(s.record)]
    shown = [s for s in scored if s.record.id not in set(held)] if held else scored
    shown = answering(shown, evidence, cue.window)
    if options.mmr_lambda is None or options.mmr_lambda >= 1.0:  # score alone
        ranked = shown[: options.limit]
    else:
        pool = shown[: options.limit * MMR_POOL]
        ranked = diversify(pool, lambda_=options.mmr_lambda, limit=options.limit)
    packed = pack_results(ranked, options.max_tokens)
    extras = _neighbours(store, filters, packed.kept, options.link_budget, admit)
    left = None if options.max_tokens is None else options.max_tokens - packed.tokens_used
    fitted = pack(extras, left, cost=lambda e: estimate_tokens(result_text(e.record)))
    return RecallResult(
        hits=tuple(packed.kept),
        omitted=len(packed.omitted),
        tokens_used=packed.tokens_used + fitted.tokens_used,
        lanes={lane: len(hits) for lane, hits in found.found.items()},
        extras=fitted.kept,
        candidates=tuple(scored),
        held_back=tuple(held),
        budget_dropped=tuple(s.record.id for s in packed.omitted),
        skipped={**(skipped or {}), **found.failed},
        evidence=evidence,
    )


class _Found(Protocol):
    @property
    def record(self) -> Record: ...


Found = TypeVar("Found", bound=_Found)


def answering(found: list[Found], evidence: Evidence | None, window: Window | None) -> list[Found]:
    """What a read shows of what it found, given its evidence: nothing when nothing is
    near enough; when only the time the query names answered (below the floor), what
    lies in that time; else all of it."""
    if evidence is not None and evidence.silent:
        return []
    if evidence is not None and evidence.dated and window is not None:
        return [f for f in found if in_window(event_time(f.record), window)]
    return found


def judged(
    store: Store,
    query: str,
    filters: Filters,
    similarity: float | None,
    min_score: float | None,
    margin: float = UNKNOWN_NAME_MARGIN,
    window: Window | None = None,
) -> Evidence | None:
    """The query's evidence when a floor is asked (see retrieve.abstain; None: none).
    The names it gives are looked up only when they decide (the nearest memory between
    the floor and the raised floor); below the floor, whether a memory holds every word
    of the query (one keyword search reading one match), then, for a query naming a
    time `window` and no unknown name, whether the window holds a memory (one read of
    one row)."""
    if not min_score:
        return None
    unknown: tuple[str, ...] = ()
    if similarity is not None and min_score <= similarity < raised(min_score, margin):
        unknown = lanes.unknown_names(store, query, filters)
    evidence = judge(similarity, min_score, unknown, margin)
    if not evidence.below:
        return evidence
    one = replace(filters, limit=1)
    if store.search_scores(query, one, "all"):
        return replace(evidence, worded=True)
    if window is None:
        return evidence
    if similarity is not None and similarity < min_score:  # its names not read yet
        evidence = judge(similarity, min_score, lanes.unknown_names(store, query, filters), margin)
    since, until = window
    if not evidence.unknown and store.query(replace(one, since=since, until=until)):
        return replace(evidence, dated=True)
    return evidence


def _neighbours(
    store: Store,
    filters: Filters,
    hits: tuple[Scored, ...],
    budget: int,
    admit: Callable[[Record], bool] | None,
) -> list[Extra]:
    """Linked neighbours of the hits that the filters (and `admit`) let through."""
    if budget <= 0 or not hits:
        return []
    presented = [s.record.id for s in hits]
    links: dict[str, list[Link]] = {memory_id: [] for memory_id in presented}
    for link in store.links_touching(presented):
        for end in dict.fromkeys((link.source, link.target)):
            if end in links:
                links[end].append(link)
    found = neighbours(presented, links, budget=NEIGHBOURS_READ)
    if not found:
        return []
    records = {
        r.id: r for r in store.query(replace(filters, ids=tuple(n.id for n in found), limit=None))
    }
    kept = [
        Extra(records[n.id], n)
        for n in found
        if n.id in records and (admit is None or admit(records[n.id]))
    ]
    return kept[:budget]
