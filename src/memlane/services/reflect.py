"""Reflection over the store: insights from memories not reflected on yet,
and pack operations held for approval. The policy is lifecycle.reflect; the model is
the caller's lifecycle.llm.Model (or none: then only the deterministic findings).

Each batch's insights land through the write policy as `insight` memories tagged
`reflection`, linked (`derives`) to the memories they draw on, and the watermark moves
past the batch in the same run. A batch whose answers were malformed twice moves
nothing: the next run reads it again. Proposed pack operations wait in the store's
meta table (per scope) until `apply_proposals` carries the approved ones out through
add, update, merge and retire, like any other write.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from memlane.errors import Invalid, MemlaneError, NotFound
from memlane.lazy import lazy_module
from memlane.lifecycle import reflect as policy
from memlane.lifecycle.llm import Model, Spent
from memlane.lifecycle.review import due_for_review
from memlane.model import Filters, Kind, Link, LinkType, Record, Visibility, WriteResult
from memlane.runtime import Runtime, passive_ok
from memlane.timeutil import utcnow

if TYPE_CHECKING:
    from memlane.lifecycle import consolidate as cons
    from memlane.lifecycle import pack as packing
else:  # loaded with the first reflection
    cons = lazy_module("memlane.lifecycle.consolidate")
    packing = lazy_module("memlane.lifecycle.pack")

# Alike enough to be shown as a cluster to a person reflecting (token Jaccard): looser
# than consolidate's 0.80, which folds near-duplicates.
CLUSTER_SIMILARITY = 0.5
# An insight is a model's synthesis: believed less than a person's note (0.6).
INSIGHT_CONFIDENCE = 0.5


class Writes(Protocol):
    """The writes reflection goes through: the write policy's add, update, merge and
    retire (the writing service is one)."""

    def add(self, content: str, title: str | None = None, **fields: Any) -> WriteResult: ...

    def update(
        self, memory_id: str, patch: Any = None, reason: str | None = None, **changes: Any
    ) -> WriteResult: ...

    def merge(
        self, memory_ids: Iterable[str], content: str, title: str | None = None, **fields: Any
    ) -> WriteResult: ...

    def retire(self, memory_id: str, reason: str | None = None) -> Record: ...


class Reflection(msgspec.Struct, frozen=True):
    """What a reflection run did, and what it left."""

    scope: str
    new: int  # memories not reflected on when the run began
    reflected: int  # of those, reflected on in this run
    insights: tuple[str, ...] = ()  # the insight memories written
    proposals: tuple[policy.Proposal, ...] = ()  # pack operations proposed in this run
    skipped: str | None = None  # why no batch was sent to the model
    breach: str | None = None  # why the run stopped early (budget, failure)
    malformed: tuple[str, ...] = ()  # why a batch's answers were rejected
    findings: policy.Findings | None = None  # the deterministic part, without a model
    batch: tuple[str, ...] = ()  # without a model: the memories its next batch would hold
    calls: int = 0
    tokens: int = 0


class Applied(msgspec.Struct, frozen=True):
    proposal: policy.Proposal
    result: tuple[str, ...] = ()  # the memories written or ended
    error: str | None = None


class Reflector:
    """Reflection (see the module docstring); its writes go through `writes`, and
    `link` (the graph's) ties an insight to its sources."""

    def __init__(self, rt: Runtime, writes: Writes, link: Callable[..., Link]) -> None:
        self.rt = rt
        self._writes = writes
        self._link = link

    def _reflect_scope(self, scope: str | None) -> tuple[Filters, str]:
        filters = self.rt.filters(scope=scope, limit=0, include_private=self.rt.agent is not None)
        key = ",".join(filters.scopes) if filters.scopes is not None else "all"
        return filters, key

    def _packed(
        self, records: Sequence[Record], now: datetime, where: str
    ) -> tuple[list[Record], packing.Pack]:
        """The memories a pack may hold (what a passive read admits), and the pack."""
        floor = self.rt.recall_settings.passive_floor
        admitted = [r for r in records if passive_ok(r, floor)]
        return admitted, packing.pack(admitted, now, packing.PACK_MAX_BYTES, None, where)

    def reflect(
        self,
        model: Model | None,
        *,
        scope: str | None = None,
        days: int | None = None,
        min_new: int = policy.MIN_NEW,
        batch_size: int = policy.BATCH_SIZE,
        drain: bool = False,
    ) -> Reflection:
        """Reflect on the memories not reflected on yet (oldest first, `batch_size` a
        batch; every batch with `drain`), or, without a model, report the deterministic
        findings. `days`: without a watermark, only memories of the last `days`."""
        if min_new < 0 or batch_size < 1 or (days is not None and days < 1):
            raise Invalid("--min-new must be >= 0, --batch-size and --days >= 1")
        now = utcnow()
        filters, key = self._reflect_scope(scope)
        records = self.rt.list(filters)
        mark = policy.decode_mark(self.rt.store.meta(f"{policy.WATERMARK_META}:{key}"))
        since = now - timedelta(days=days) if days else None
        todo = policy.unreflected(records, mark, since)
        base = Reflection(scope=key, new=len(todo), reflected=0)
        if not todo:
            return msgspec.structs.replace(base, skipped="no new memories to reflect on")
        if len(todo) < min_new:
            return msgspec.structs.replace(
                base, skipped=f"{len(todo)} new memories; the novelty gate wants {min_new}"
            )
        if model is None:
            batch = todo[:batch_size]
            return msgspec.structs.replace(
                base,
                skipped="no model (MEMLANE_LLM_CMD): the deterministic findings only",
                findings=self._findings(batch, now),
                batch=tuple(r.id for r in batch),
            )
        # Single flight, with consolidate and organize too: each rewrites memories a
        # batch may name. A run while another holds the lock is a Conflict.
        with self.rt.lock.held("reflect"):
            return self._run_batches(model, base, filters, todo, batch_size, drain, now)

    def _run_batches(
        self,
        model: Model,
        base: Reflection,
        filters: Filters,
        todo: list[Record],
        batch_size: int,
        drain: bool,
        now: datetime,
    ) -> Reflection:
        insights: list[str] = []
        proposals: list[policy.Proposal] = []
        done, breach = 0, None
        while done < len(todo) and (drain or done == 0):
            batch = todo[done : done + batch_size]
            records = self.rt.list(filters)  # with the last batch's insights
            admitted, pack = self._packed(records, now, base.scope)
            packed = [r for r in admitted if r.id in set(pack.ids)]
            ids, shown = [r.id for r in batch], list(pack.ids)

            def parse(text: str, ids: list[str] = ids, shown: list[str] = shown) -> policy.Answer:
                return policy.parse(text, ids, shown)

            try:
                answer = model.ask(policy.prompt(batch, packed), parse)
            except Spent as exc:
                breach = str(exc)
                break
            if answer is None:  # malformed twice: this batch waits for the next run
                break
            # The model read the whole prompt: what it writes may say any of it.
            private = any(r.visibility is Visibility.PRIVATE for r in (*batch, *packed))
            insights += self._store_insights(answer.insights, private)
            proposals += self._propose(
                answer.ops, admitted, pack.markdown, now, base.scope, private
            )
            with self.rt.transaction() as w:
                w.set_meta(
                    f"{policy.WATERMARK_META}:{base.scope}",
                    policy.encode_mark(policy.mark_of(batch[-1])),
                )
            done += len(batch)
        return msgspec.structs.replace(
            base,
            reflected=done,
            insights=tuple(insights),
            proposals=tuple(proposals),
            breach=breach,
            malformed=tuple(model.malformed),
            calls=model.calls,
            tokens=model.tokens,
        )

    def _store_insights(self, found: Sequence[policy.Insight], private: bool) -> list[str]:
        """The insights as memories, private when the model read private memories."""
        written, writes = [], self._writes
        for insight in found:
            result = writes.add(
                insight.content,
                insight.title,
                kind=Kind.INSIGHT.value,
                tags=[policy.REFLECTION_TAG],
                confidence=INSIGHT_CONFIDENCE,
                taint="untrusted_tool",
                source_type="agent_session",
                private=private,
            )
            if not result.landed or result.id is None:
                continue
            for source in dict.fromkeys(insight.sources):
                self._link(result.id, source, LinkType.DERIVES.value, "reflection", reinforce=False)
            written.append(result.id)
        return written

    def _propose(
        self,
        ops: Sequence[policy.Op],
        admitted: list[Record],
        before: str,
        now: datetime,
        key: str,
        private: bool,
    ) -> list[policy.Proposal]:
        """Each operation with the diff from the pack `before` to the pack after it."""
        if not ops:
            return []
        made = []
        for op in ops:
            after = packing.pack(
                policy.pack_after(admitted, op, now), now, packing.PACK_MAX_BYTES, None, key
            ).markdown
            made.append(
                policy.Proposal(
                    f"p-{secrets.token_hex(3)}",
                    op.op,
                    tuple(op.ids),
                    op.reason,
                    op.content,
                    op.title,
                    policy.diff(before, after),
                    now,
                    private,
                )
            )
        with self.rt.transaction() as w:
            pending = self._pending(key)
            w.set_meta(self._proposals_key(key), msgspec.json.encode([*pending, *made]).decode())
        return made

    def _proposals_key(self, key: str) -> str:
        """Where the proposals of a scope wait: each agent's apart from the others'.

        Trigger: an agent reflects with its private memories in the pack. Why: the
        diffs of its proposals quote them, and another agent applying or listing them
        would read them. Outcome: an agent lists and applies only its own proposals.
        """
        mine = f":{self.rt.agent}" if self.rt.agent is not None else ""
        return f"{policy.PROPOSALS_META}:{key}{mine}"

    def _pending(self, key: str) -> list[policy.Proposal]:
        raw = self.rt.store.meta(self._proposals_key(key))
        if not raw:
            return []
        try:
            return msgspec.json.decode(raw, type=list[policy.Proposal])
        except (msgspec.DecodeError, msgspec.ValidationError):
            return []

    def proposals(self, scope: str | None = None) -> list[policy.Proposal]:
        """The pack operations reflection proposed that wait for approval."""
        return self._pending(self._reflect_scope(scope)[1])

    def apply_proposals(self, ids: Sequence[str], scope: str | None = None) -> list[Applied]:
        """Carry out the approved proposals (in the order given) through the write
        path; each leaves the pending list, done or failed with the reason."""
        key = self._reflect_scope(scope)[1]
        with self.rt.lock.held("reflect --apply"):
            return self._apply_pending(key, ids)

    def _apply_pending(self, key: str, ids: Sequence[str]) -> list[Applied]:
        pending = {p.id: p for p in self._pending(key)}
        if unknown := [i for i in ids if i not in pending]:
            raise NotFound(
                f"no pending proposal {', '.join(unknown)} (see `memlane reflect --list`)"
            )
        out = []
        for proposal_id in dict.fromkeys(ids):
            proposal = pending.pop(proposal_id)
            try:
                out.append(Applied(proposal, self._apply(proposal)))
            except MemlaneError as exc:
                out.append(Applied(proposal, error=str(exc)))
        with self.rt.transaction() as w:
            w.set_meta(
                self._proposals_key(key), msgspec.json.encode(list(pending.values())).decode()
            )
        return out

    def _apply(self, p: policy.Proposal) -> tuple[str, ...]:
        reason, writes = f"reflection: {p.reason}", self._writes
        if p.op == "retire":
            return tuple(writes.retire(memory_id, reason).id for memory_id in p.ids)
        content = p.content or ""
        # A model that read private memories wrote this text: it lands private.
        private: dict[str, Any] = {"private": True} if p.private else {}
        if p.op == "rewrite":
            if p.private and self.rt.read(self.rt.store, p.ids[0]).visibility is Visibility.PUBLIC:
                raise Invalid(
                    "this rewrite was written from private memories; "
                    "it cannot replace a public memory's text"
                )
            writes.update(p.ids[0], content=content, reason=reason)
            return (p.ids[0],)
        if p.op == "merge":
            merged = writes.merge(p.ids, content, p.title, **private)
            return (merged.id,) if merged.id else ()
        added = writes.add(
            content,
            p.title,
            importance=policy.ADDED_IMPORTANCE,
            tags=[policy.REFLECTION_TAG],
            **private,
        )
        if added.id is None:
            return ()
        for source in p.ids:
            self._link(added.id, source, LinkType.DERIVES.value, reason, reinforce=False)
        return (added.id,)

    def _findings(self, batch: list[Record], now: datetime) -> policy.Findings:
        pairs = cons.near_pairs(batch, CLUSTER_SIMILARITY)
        groups = tuple(
            (batch[leader].id, *(batch[j].id for j, _ in members))
            for leader, members in cons.clusters(batch, pairs)
        )
        review = self.rt.review_policy
        due = due_for_review(
            batch,
            now,
            review.threshold,
            review.min_importance,
            self.rt.recall_settings.shape.half_lives,
        )
        stale = tuple((r.id, round(p, 3)) for r, p in due)
        ids = [r.id for r in batch]
        contradicting: dict[str, list[str]] = {}
        for link in self.rt.store.links_touching(ids):
            if link.type is LinkType.CONTRADICTS:
                contradicting.setdefault(link.source, []).append(link.target)
        return policy.Findings(groups, stale, policy.contradictions(ids, contradicting))
