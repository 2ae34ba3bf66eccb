"""Automatic anchors: each memory linked to its nearest neighbours in meaning (or in
words, without vectors), kept current as memories are written. The plan is pure
(write.anchors)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memlane.errors import Invalid, MemlaneError
from memlane.lazy import lazy_module
from memlane.model import Filters, Link, LinkType, Record, WriteResult, replace
from memlane.runtime import Runtime
from memlane.services.policy import NEIGHBOURS, WritePolicy, key_words
from memlane.store import Writer
from memlane.timeutil import utcnow
from memlane.write.anchors import (
    ANCHOR_HIGH,
    ANCHOR_LOW,
    AUTO_REASON,
    MAX_ANCHORS,
    AnchorPlan,
    plan_anchors,
    text_jaccard,
)

if TYPE_CHECKING:
    from memlane.write import normalize
else:  # loads with the first write: a read never runs it
    normalize = lazy_module("memlane.write.normalize")


class Anchoring:
    """A memory's automatic anchors, planned from its neighbours and written."""

    def __init__(self, rt: Runtime, policy: WritePolicy) -> None:
        self.rt = rt
        self.policy = policy

    def auto_anchor(
        self,
        memory_id: str | None = None,
        *,
        threshold: float = ANCHOR_LOW,
        max_anchors: int = MAX_ANCHORS,
        dry_run: bool = False,
        fill: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[tuple[str, AnchorPlan]]:
        """Anchor one memory (or every live one this agent may see) to its neighbours in
        [threshold, 0.95] and prune automatic anchors that fell out; `fill`: only those
        without anchors; `dry_run`: plan only. The plans, by memory id. `progress` is
        told the memories done of all."""
        if not 0.0 <= threshold <= ANCHOR_HIGH:
            raise Invalid(f"--threshold must be between 0 and {ANCHOR_HIGH}")
        if max_anchors < 0:
            raise Invalid("--max-anchors must not be negative")
        if memory_id is not None:
            targets = [self.rt.read(self.rt.store, memory_id)]
        else:
            mine = self.rt.agent is not None  # an anonymous reader has no private memories
            targets = self.rt.store.query(
                self.rt.filters(scope="all", include_private=mine, limit=0)
            )
        plans = []
        for done, record in enumerate(targets, start=1):
            if progress is not None:
                progress(done, len(targets))
            if fill and record.anchors:
                continue
            plan = self._plan(record, threshold, max_anchors)
            if not dry_run and plan.changes:
                with self.rt.transaction() as w:
                    self._write(w, record, plan)
            plans.append((record.id, plan))
        return plans

    def anchored(self, result: WriteResult) -> WriteResult:
        """After a write that landed: its memory's automatic anchors, kept current. A
        failure here never fails the write (it is reported).

        Trigger: every add. Why: planning reads the memory's links and its nearest
        neighbours, which no other writer should wait for. Outcome: the plan is made
        before the transaction; the transaction only checks the memory is still live
        and writes the links that change (a link written twice is written once).
        """
        if not result.landed or result.id is None:
            return result
        try:
            record = self.rt.read(self.rt.store, result.id)
            plan = self._plan(record)
            if plan.changes:
                with self.rt.transaction() as w:
                    self._write(w, self.rt.live(w, record.id), plan)
        except MemlaneError as exc:
            return replace(result, warnings=(*result.warnings, f"auto-anchor skipped: {exc}"))
        return result

    def _plan(
        self, record: Record, low: float = ANCHOR_LOW, max_anchors: int = MAX_ANCHORS
    ) -> AnchorPlan:
        mine = [x for x in self.rt.store.links(record.id) if x.source == record.id]
        # Anchors to memories this agent may not see are none of its business: never
        # planned, named or pruned.
        anchors = [x for x in mine if x.type is LinkType.ANCHOR and self.rt.visible_id(x.target)]
        current = {x.target: x.score for x in anchors if x.reason == AUTO_REASON}
        manual = {x.target for x in anchors if x.reason != AUTO_REASON}
        similar = {i: s for i, s in self._similar(record, set(current)).items() if i not in manual}
        return plan_anchors(similar, current, low, ANCHOR_HIGH, max_anchors)

    def _write(self, w: Writer, record: Record, plan: AnchorPlan) -> None:
        at = utcnow()
        for target in plan.prune:
            w.remove_link(record.id, target, LinkType.ANCHOR)
        for target, score in plan.add:
            w.add_link(Link(record.id, target, LinkType.ANCHOR, score, AUTO_REASON, at))
        self.rt.journal(w, "auto-anchor", record.id)

    def _similar(self, record: Record, also: set[str]) -> dict[str, float]:
        """Neighbour id -> similarity: cosine of the stored vectors when the memory has
        them, else token Jaccard with its keyword neighbours (and with `also`). Only live
        memories of the same scope this agent may see, never itself."""
        near = Filters(
            scopes=(record.scope,), viewer=self.rt.agent, include_private=True, limit=NEIGHBOURS
        )
        vector = self._entry_vector(record.id)
        if vector is not None:
            index, _ = self.rt.vector_lane()
            scores = self.policy.nearest(vector, index.snapshot(), near, NEIGHBOURS + 1)
            scores.update(self.policy.cosines(vector, [i for i in also if i not in scores]))
            ids = tuple(i for i in scores if i != record.id)
            kept = self.rt.store.admitted(replace(near, ids=ids, limit=None)) if ids else []
            return {i: scores[i] for i in kept}
        text = normalize.document_text(record)
        found = {h.record.id: h.record for h in self.rt.store.search(key_words(text), near, "most")}
        found.update(
            (r.id, r) for r in self.rt.store.query(replace(near, ids=tuple(also), limit=None))
        )
        found.pop(record.id, None)
        return {i: text_jaccard(text, normalize.document_text(r)) for i, r in found.items()}

    def _entry_vector(self, memory_id: str) -> Any:
        """A memory's current entry vector (None: it has none, or there is no embedder)."""
        if self.rt.embedder is None:
            return None
        from memlane.embed.blob import from_blobs

        signature, dim = self.rt.embedder.profile.signature, self.rt.embedder.dimension
        for _, chunk, blob in self.rt.store.vectors(signature, [memory_id]):
            if chunk == -1:
                return from_blobs([blob], dim)[0]
        return None
