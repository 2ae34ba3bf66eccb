"""The recall pipeline (DESIGN §5): lanes -> fusion -> composite score -> MMR -> budget.

The entity lane and link expansion join this pipeline in a later step; each lane
that is absent simply contributes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from memlane.model import Filters, Record
from memlane.retrieve import lanes
from memlane.retrieve.budget import pack_results
from memlane.retrieve.fuse import Fused
from memlane.retrieve.mmr import diversify
from memlane.retrieve.score import DEFAULT_WEIGHTS, Scored, Weights, score_candidates
from memlane.retrieve.when import time_cue
from memlane.scope import Context
from memlane.store import Store

if TYPE_CHECKING:
    from memlane.embed import Embedder
    from memlane.retrieve.vectors import VectorIndex


@dataclass(frozen=True, slots=True)
class RecallResult:
    """The memories that matter for a query, best first, within the budget."""

    hits: tuple[Scored, ...]
    omitted: int  # ranked within the limit but left out by the token budget
    tokens_used: int
    lanes: Mapping[str, int]  # candidates each lane brought


# MMR for recall, tuned on the LoCoMo dev split (categories 1-4, MiniLM, hybrid lanes):
#   lambda 0.7 (DESIGN's starting value): R@10 .633, MRR .490
#   lambda 0.9:                           R@10 .659, MRR .503
#   off:                                  R@10 .662, MRR .510
# Conversations put several relevant turns side by side, so diversity costs recall
# there; 0.9 keeps near-duplicates from filling an agent's context for 0.3 points.
RECALL_MMR_LAMBDA = 0.9


# Session neighbours: the memory written just before or after a found one in the same
# session often holds what the found one sets up or answers (a question and its reply,
# a decision and its reason). The best NEIGHBOUR_SEEDS fused candidates lift their
# neighbours to at least NEIGHBOUR_SHARE of their own fused score. LoCoMo dev,
# categories 1-4, one session per LoCoMo session (R@10 / MRR): off .699 / .522,
# share 0.5 .737 / .528 (simulated: 0.7 .731 / .526, 0.9 .725 / .514; 3 to 10 seeds
# alike).
NEIGHBOUR_SEEDS = 5
NEIGHBOUR_SHARE = 0.5
NEIGHBOUR = "session"  # its name among a result's explain parts


@dataclass(frozen=True, slots=True)
class RecallOptions:
    limit: int = 10
    max_tokens: int | None = None
    weights: Weights = DEFAULT_WEIGHTS
    mmr_lambda: float | None = RECALL_MMR_LAMBDA  # None: no diversity re-ranking


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
    vector_lane: tuple[VectorIndex, Embedder] | None = None,
) -> RecallResult:
    """Run every available lane over the filtered store and rank what they found."""
    found = lanes.gather(store, query, filters, options.limit, vector_lane)
    fused, records = with_neighbours(store, filters, found.fused, found.records)
    scored = score_candidates(
        fused, records, now=now, context=context, weights=options.weights,
        cue=time_cue(query, now),
    )  # fmt: skip
    if options.mmr_lambda is None:
        ranked = scored[: options.limit]
    else:
        ranked = diversify(scored, lambda_=options.mmr_lambda, limit=options.limit)
    packed = pack_results(ranked, options.max_tokens)
    return RecallResult(
        hits=tuple(packed.kept),
        omitted=len(packed.omitted),
        tokens_used=packed.tokens_used,
        lanes={lane: len(hits) for lane, hits in found.found.items()},
    )


def with_neighbours(
    store: Store, filters: Filters, fused: Sequence[Fused], records: Mapping[str, Record]
) -> tuple[list[Fused], dict[str, Record]]:
    """The fused candidates with the session neighbours of the best few lifted in.

    Trigger: one of the best NEIGHBOUR_SEEDS candidates belongs to a session. Why: its
    neighbours in that session share its context but not always its words. Outcome:
    each neighbour (through the same filters) scores at least NEIGHBOUR_SHARE of the
    seed's fused score; the lift is its NEIGHBOUR part, ranked by the seed's rank.
    """
    out = {f.id: f for f in fused}
    known = dict(records)
    sessions: dict[str, list[Record]] = {}
    seeds = [f for f in fused if f.id in records][:NEIGHBOUR_SEEDS]
    for rank, seed in enumerate(seeds, start=1):
        session = records[seed.id].session_id
        if session is None:
            continue
        if session not in sessions:
            scope = replace(filters, session_id=session, order="oldest", limit=None)
            sessions[session] = store.query(scope)
        members = [r.id for r in sessions[session]]
        if seed.id not in members:
            continue
        at = members.index(seed.id)
        lift = NEIGHBOUR_SHARE * seed.score
        for record in sessions[session][max(0, at - 1) : at + 2]:
            current = out.get(record.id)
            own = current.score if current is not None else 0.0
            if record.id == seed.id or lift <= own:
                continue
            ranks = dict(current.ranks) if current is not None else {}
            shares = dict(current.contributions) if current is not None else {}
            ranks[NEIGHBOUR] = min(rank, ranks.get(NEIGHBOUR, rank))
            shares[NEIGHBOUR] = lift - own + shares.get(NEIGHBOUR, 0.0)
            out[record.id] = Fused(record.id, lift, ranks, shares)
            known[record.id] = record
    ordered = sorted(out.values(), key=lambda f: (-f.score, f.best_rank, f.id))
    return ordered, known
