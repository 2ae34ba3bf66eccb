"""The recall pipeline (DESIGN §5): lanes -> fusion -> composite score -> MMR -> budget.

The entity lane and link expansion join this pipeline in a later step; each lane
that is absent simply contributes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from memlane.model import Filters
from memlane.retrieve import lanes
from memlane.retrieve.budget import pack_results
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
    scored = score_candidates(
        found.fused, found.records, now=now, context=context, weights=options.weights,
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
