"""The recall pipeline: lanes -> fusion -> session neighbours -> dialogue lines ->
composite score -> global limit -> MMR -> budget -> prior states (a question about a
change) -> link expansion. A lane that is absent (no embedder) contributes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import msgspec

from memlane.errors import Invalid
from memlane.model import Filters, Link, LinkType, Record, replace
from memlane.retrieve import lanes
from memlane.retrieve.abstain import UNKNOWN_NAME_MARGIN, Evidence, judge, raised
from memlane.retrieve.budget import estimate_tokens, pack, pack_results, result_text
from memlane.retrieve.dialogue import (
    OTHER_SPEAKER_SHARE,
    QUESTION_SHARE,
    weigh_lines,
)
from memlane.retrieve.expand import (
    LINK_BUDGET,
    LINK_DECAY,
    LINK_HOPS,
    MAX_LINK_HOPS,
    Neighbour,
    neighbours,
)
from memlane.retrieve.fuse import LANE_WEIGHTS
from memlane.retrieve.mmr import diversify
from memlane.retrieve.result import Extra, Prior, RecallResult
from memlane.retrieve.score import (
    DEFAULT_SHAPE,
    DEFAULT_WEIGHTS,
    Scored,
    Shape,
    Weights,
    score_candidates,
)
from memlane.retrieve.session import NEIGHBOUR_SHARE, with_neighbours
from memlane.retrieve.unfold import (
    UNFOLD_BUDGET,
    UNFOLD_HOPS,
    UNFOLD_TOP,
    as_version,
    asks_about_change,
    ended_at,
)
from memlane.retrieve.when import Window, event_time, in_window, time_cue
from memlane.scope import GLOBAL, Context
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
    link_hops: int = LINK_HOPS  # links followed from a result (0: none; 2: links of links)
    # Global memories in the read: None as the scopes read say (the default read holds
    # global), False none, True also when the scopes named leave global out.
    include_global: bool | None = None
    global_limit: int | None = None  # most global memories among the results (None: any)
    unfold: bool = True  # a question about a change shows the results' prior states
    session_share: float = NEIGHBOUR_SHARE  # lift of session neighbours (0: none)
    session_replies: bool = True  # a seed that asks lifts neighbours sharing no word
    speaker_share: float = OTHER_SPEAKER_SHARE  # others' lines when a speaker is named (1: off)
    question_share: float = QUESTION_SHARE  # memories ending with a question (1: off)
    # The relevance floor: the cosine the query's nearest memory must reach, or recall
    # answers with nothing (None or 0: none; the interfaces default it to the
    # embedding profile's calibrated floor). See retrieve.abstain.
    min_score: float | None = None
    unknown_name_margin: float = UNKNOWN_NAME_MARGIN


# The per-call controls (`controlled`), as the interfaces name them.
CONTROLS = ("include_global", "global_limit", "link_budget", "link_hops", "mmr", "unfold")


def controlled(options: RecallOptions, **asked: Any) -> RecallOptions:
    """`options` with the per-call controls asked (None: keep the setting): `mmr`
    False ranks by score alone; the others replace the option of their name."""
    unknown = set(asked) - set(CONTROLS)
    if unknown:
        raise Invalid(f"unknown recall control(s): {', '.join(sorted(unknown))}")
    given = {k: v for k, v in asked.items() if v is not None}
    for name, low, high in (("link_budget", 0, None), ("global_limit", 0, None),
                            ("link_hops", 0, MAX_LINK_HOPS)):  # fmt: skip
        value = given.get(name)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, int)
            or value < low
            or (high is not None and value > high)
        ):
            top = f" to {high}" if high is not None else " or more"
            flag = "--" + name.replace("_", "-")
            raise Invalid(f"{flag} must be a whole number from {low}{top}, not {value!r}")
    if given.pop("mmr", True) is False:
        given["mmr_lambda"] = None
    return replace(options, **given)


def with_global(filters: Filters, include: bool | None) -> Filters:
    """The read's scopes with global added (True) or taken out (False); None, or a
    read of every scope, leaves them (the global limit keeps global out of those)."""
    if include is None or filters.scopes is None:
        return filters
    scopes = tuple(s for s in filters.scopes if s != GLOBAL)
    return replace(filters, scopes=scopes + ((GLOBAL,) if include else ()))


def global_cap(options: RecallOptions) -> int | None:
    """How many global memories a recall may show (None: any)."""
    return 0 if options.include_global is False else options.global_limit


def capped(found: list[Scored], cap: int | None) -> tuple[list[Scored], list[str]]:
    """The candidates with global ones past the first `cap` left out, and those ids."""
    if cap is None:
        return found, []
    kept: list[Scored] = []
    over: list[str] = []
    room = cap
    for s in found:
        if s.record.scope == GLOBAL:
            if room <= 0:
                over.append(s.record.id)
                continue
            room -= 1
        kept.append(s)
    return kept, over


def reported(options: RecallOptions, filters: Filters, unfolded: bool) -> dict[str, Any]:
    """The controls a recall ran with, as --json and --explain report them."""
    diverse = options.mmr_lambda is not None and options.mmr_lambda < 1.0
    return {
        "scopes": "all" if filters.scopes is None else list(filters.scopes),
        "include_global": options.include_global,
        "global_limit": options.global_limit,
        "link_budget": options.link_budget,
        "link_hops": options.link_hops,
        "mmr": diverse,  # False: ranked by score alone (--no-mmr, or a lambda of 1)
        "mmr_lambda": options.mmr_lambda if diverse else None,
        "as_of": filters.as_of.isoformat() if filters.as_of else None,
        "unfold": unfolded,
    }


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
    filters = with_global(filters, options.include_global)
    cue = time_cue(query, now)
    change = options.unfold and asks_about_change(query)
    found = lanes.gather(
        store, query, filters, options.limit, vector_lane, options.lane_weights, cue.window, change
    )
    # Trigger: a question about a change ("why did we switch from MySQL"). Why: what it
    # names may live on only in the memory that was replaced, knowledge the store has.
    # Outcome: superseded memories count as evidence too (their names, their words).
    evidence = judged(
        store,
        query,
        replace(filters, include_superseded=True) if change else filters,
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
        asked=filters.scopes or (),
    )
    held = [s.record.id for s in scored if admit is not None and not admit(s.record)]
    shown = [s for s in scored if s.record.id not in set(held)] if held else scored
    shown = answering(shown, evidence, cue.window)
    shown, over = capped(shown, global_cap(options))
    if options.mmr_lambda is None or options.mmr_lambda >= 1.0:  # score alone
        ranked = shown[: options.limit]
    else:
        pool = shown[: options.limit * MMR_POOL]
        ranked = diversify(pool, lambda_=options.mmr_lambda, limit=options.limit)
    packed = pack_results(ranked, options.max_tokens)
    priors = _unfolded(store, filters, packed.kept, admit) if change else []
    extras = _neighbours(store, filters, packed.kept, options, admit)
    left = None if options.max_tokens is None else options.max_tokens - packed.tokens_used
    # Trigger: a question about a change. Why: its answer is what the result replaced.
    # Outcome: prior states take the budget left before linked neighbours do.
    told = pack(priors, left, cost=lambda p: estimate_tokens(result_text(p.record)))
    left = None if left is None else left - told.tokens_used
    fitted = pack(extras, left, cost=lambda e: estimate_tokens(result_text(e.record)))
    return RecallResult(
        hits=tuple(packed.kept),
        omitted=len(packed.omitted),
        tokens_used=packed.tokens_used + told.tokens_used + fitted.tokens_used,
        lanes={lane: len(hits) for lane, hits in found.found.items()},
        extras=fitted.kept,
        candidates=tuple(scored),
        held_back=tuple(held),
        budget_dropped=tuple(s.record.id for s in packed.omitted),
        skipped={**(skipped or {}), **found.failed},
        evidence=evidence,
        previously=told.kept,
        global_dropped=tuple(over),
        settings=reported(options, filters, change),
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
    options: RecallOptions,
    admit: Callable[[Record], bool] | None,
) -> list[Extra]:
    """Linked neighbours of the hits (and, with two hops, of those neighbours) that the
    filters, `admit` and the global limit let through, at most `link_budget`."""
    budget = options.link_budget if options.link_hops > 0 else 0
    if budget <= 0 or not hits:
        return []
    cap = global_cap(options)
    room = None if cap is None else cap - sum(s.record.scope == GLOBAL for s in hits)
    scores = {s.record.id: s.score for s in hits}
    shown, frontier = list(scores), list(scores)
    kept: list[Extra] = []
    for hop in range(1, options.link_hops + 1):
        found = _linked(store, frontier, shown, hop)
        records = {
            r.id: r
            for r in store.query(replace(filters, ids=tuple(n.id for n in found), limit=None))
        }
        frontier = []
        for n in found:
            record = records.get(n.id)
            if record is None or (admit is not None and not admit(record)):
                continue
            if room is not None and record.scope == GLOBAL:
                if room <= 0:
                    continue
                room -= 1
            scores[n.id] = scores[n.via] * LINK_DECAY
            kept.append(Extra(record, n, scores[n.id]))
            frontier.append(n.id)
            if len(kept) == budget:
                return kept
        shown += [n.id for n in found]
        if not frontier:
            break
    return kept


def _linked(
    store: Store, frontier: Sequence[str], shown: Sequence[str], hop: int
) -> list[Neighbour]:
    """Neighbours of the `frontier` ids, none of them `shown`, best first."""
    if not frontier:
        return []
    links: dict[str, list[Link]] = {memory_id: [] for memory_id in frontier}
    for link in store.links_touching(frontier):
        for end in dict.fromkeys((link.source, link.target)):
            if end in links:
                links[end].append(link)
    return neighbours(frontier, links, budget=NEIGHBOURS_READ, shown=shown, hop=hop)


def _unfolded(
    store: Store,
    filters: Filters,
    hits: tuple[Scored, ...],
    admit: Callable[[Record], bool] | None,
) -> list[Prior]:
    """The prior states of the top results, newest first under each, at most
    UNFOLD_BUDGET in all (see retrieve.unfold)."""
    shown = {s.record.id for s in hits}
    out: list[Prior] = []
    for hit in hits[:UNFOLD_TOP]:
        for prior in _priors(store, filters, hit.record, shown):
            if admit is None or admit(prior.record):
                out.append(prior)
            if len(out) == UNFOLD_BUDGET:
                return out
    return out


def _priors(store: Store, filters: Filters, head: Record, shown: set[str]) -> list[Prior]:
    """`head`'s earlier content versions, the memories it superseded (following
    `supersedes` links back UNFOLD_HOPS times) and their versions, newest first; in a
    read of the past, only those that had ended by then."""
    chain, frontier, seen = [head], [head.id], {head.id, *shown}
    wide = replace(filters, include_superseded=True, limit=None)
    for _ in range(UNFOLD_HOPS):
        older = [
            link.target
            for link in store.links_touching(frontier)
            if link.type is LinkType.SUPERSEDES
            and link.source in frontier
            and link.target not in seen
        ]
        if not older:
            break
        found = store.query(replace(wide, ids=tuple(dict.fromkeys(older))))
        chain += found
        seen |= {r.id for r in found}
        frontier = [r.id for r in found]
    priors = [
        Prior(state, head.id, state.supersede_reason, ended_at(state), v.number)
        for record in chain
        for v in store.versions(record.id)
        for state in [as_version(record, v)]
    ]
    priors += [Prior(r, head.id, r.supersede_reason, ended_at(r)) for r in chain[1:]]
    if filters.as_of is not None:
        at = filters.as_of
        priors = [p for p in priors if p.valid_to is not None and p.valid_to <= at]
    return sorted(priors, key=lambda p: p.valid_to or p.record.updated_at, reverse=True)
