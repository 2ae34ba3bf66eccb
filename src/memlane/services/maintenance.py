"""The maintenance namespace (`Memory.maintenance`): consolidate and organize fold live
near-duplicates without losing text, one run at a time under the maintenance lock.

The decisions are pure (lifecycle.consolidate, lifecycle.organize); `Maintenance`
reads the candidates, guards a run (one at a time, not too often) and writes the plan.

- Single flight: a run holds the maintenance lock (memlane.locking); a run that
  finds it held, from any process, is skipped with a notice (exit 0 at the CLI), so
  no rows are ever planned or merged by two runs at once.
- Cadence gate: a run is skipped while the last one is recent and the store has
  barely grown (lifecycle.consolidate.cadence_skip); `force` bypasses it. consolidate
  and organize share the gate, the clock and the lock: one maintenance run at a time.
- A dry run computes the same plan and stops before writing; it models both guards,
  so "would skip by cadence gate" is what a real run would then do.
- Prune (consolidate's `prune`): the live memories lifecycle.prune's rules retire,
  in the same guarded run and transaction as the merges; never a member of a merge.
- `merged_from`: the store has no column for it, so a keeper's provenance is its
  `supersedes` links whose reason starts "consolidated" (`:truncated` appended when
  the text did not fit); `merged_from(id)` reads them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import msgspec

from memlane.errors import Invalid
from memlane.lazy import lazy_module
from memlane.lifecycle.prune import KEPT_IMPORTANCE, Pruned, PruneRules, pruned
from memlane.locking import busy
from memlane.model import (
    Cadence,
    Check,
    Filters,
    Kind,
    Link,
    LinkType,
    Record,
    Visibility,
    replace,
)
from memlane.runtime import Runtime, new_id
from memlane.store import EMBED_PROFILE_META, Writer
from memlane.timeutil import from_text, to_text, utcnow

if TYPE_CHECKING:
    from memlane.lifecycle import consolidate as cons
    from memlane.lifecycle import organize as org
    from memlane.lifecycle.consolidate import Absorbed, LastRun, Merge, Plan, Vectors
    from memlane.lifecycle.organize import Topic, TopicPlan
    from memlane.write import draft as drafting
    from memlane.write import normalize, pipeline
else:  # the planning modules and the write path load with the first run: a recall never needs them
    cons = lazy_module("memlane.lifecycle.consolidate")
    org = lazy_module("memlane.lifecycle.organize")
    drafting = lazy_module("memlane.write.draft")
    normalize = lazy_module("memlane.write.normalize")
    pipeline = lazy_module("memlane.write.pipeline")


# The store_meta keys consolidate and organize share (two entry points, one clock).
LAST_RUN_META = "consolidate.last_run"
# The reason on the supersedes links that record a keeper's provenance.
MERGED_LINK = "consolidated"
# A run's progress: done of total (None while unknown), and its phase ("planning",
# "merging", "summarising", "embedding").
Progress = Callable[[int, int | None, str], None]


def _untold(done: int, total: int | None, what: str) -> None:
    """The progress of a run nobody watches."""


SUMMARY_CATEGORY = "summary"


class MaintenanceReport(msgspec.Struct, frozen=True):
    """What a consolidate or organize run did (or, dry, would do)."""

    operation: str  # consolidate | organize
    dry_run: bool
    plan: Plan | None = None  # None when skipped
    topics: tuple[TopicPlan, ...] = ()  # organize only
    skipped: str | None = None  # "lock" or "cadence"
    notice: str | None = None  # why it was skipped, for people
    written: tuple[str, ...] = ()  # summary rows created or refreshed (real organize)
    warnings: tuple[str, ...] = ()
    pruned: tuple[Pruned, ...] = ()  # consolidate with prune: retired (dry: would be)


class _Work(msgspec.Struct, frozen=True):
    """A run's plan and the records it was made from (checked again before writing)."""

    plan: Plan
    records: Mapping[str, Record]
    topics: tuple[TopicPlan, ...] = ()
    pruned: tuple[Pruned, ...] = ()


class Maintenance:
    """Consolidate and organize, and the maintenance lock their runs (and reflection's,
    and a restore) hold."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def lock(self, operation: str = "maintenance") -> AbstractContextManager[None]:
        """Hold the maintenance lock for `operation` (Conflict while another run holds
        it): no consolidate, organize, reflect or restore runs meanwhile."""
        return self.rt.lock.held(operation)

    def check(self) -> Check:
        """`doctor`'s check: whether a maintenance run holds the lock now."""
        return self.rt.lock.check()

    def consolidate(
        self,
        threshold: float | None = None,
        *,
        dry_run: bool = False,
        scope: str | None = None,
        force: bool = False,
        cadence: Cadence | None = None,
        prune: PruneRules | None = None,
        progress: Progress = _untold,
    ) -> MaintenanceReport:
        """Fold live near-duplicates (similarity >= `threshold`, 0.80 by default) this
        agent may see, in `scope` (every scope by default), into their best-used, most
        confident member; with `prune`, also retire what its rules name
        (lifecycle.prune). See the module docstring for the guards; `dry_run` writes
        nothing. `progress` is told each phase, and the merges as they are written."""
        alike = cons.DEFAULT_THRESHOLD if threshold is None else threshold
        if not 0.0 < alike <= 1.0:
            raise Invalid("--threshold must be above 0 and at most 1")
        cap = cons.MAX_CANDIDATES
        filters = self.rt.filters(
            scope=scope or "all", limit=cap + 1, include_private=self.rt.agent is not None
        )

        def work() -> _Work:
            progress(0, None, "planning")
            found = [r for r in self.rt.store.query(filters) if not org.is_summary_row(r)]
            planned = self._planned(found[:cap], alike, len(found) > cap)
            if prune is None:
                return planned
            return replace(planned, pruned=self._prunable(scope, prune, planned.plan))

        gate = cadence or cons.DEFAULT_CADENCE
        return self._run("consolidate", dry_run, force, gate, work, progress)

    def organize(
        self,
        *,
        dry_run: bool = False,
        force: bool = False,
        cadence: Cadence | None = None,
        working_set: int | None = None,
        progress: Progress = _untold,
    ) -> MaintenanceReport:
        """Consolidate the `working_set` most recent live memories (256 by default),
        then group what is left into topics and keep one extractive summary row per
        topic. `progress` is told each phase, and the merges and topics as they are
        written."""
        size = org.WORKING_SET if working_set is None else working_set
        if size < 0:
            raise Invalid("the working set must not be negative")

        def work() -> _Work:
            progress(0, None, "planning")
            done = self._planned(self._working_set(size), cons.DEFAULT_THRESHOLD)
            found = org.topics(org.after(list(done.records.values()), done.plan))
            if found:
                self.rt.check_category(SUMMARY_CATEGORY)
            return replace(done, topics=self._topic_plans(found))

        gate = cadence or cons.DEFAULT_CADENCE
        return self._run("organize", dry_run, force, gate, work, progress)

    def merged_from(self, memory_id: str) -> list[str]:
        """The memories consolidation folded into this one, first merged first; an id
        ends `:truncated` when its text did not fit and stays on its own row."""
        record = self.rt.read(self.rt.store, memory_id)
        out = [
            link.target + (cons.TRUNCATED if (link.reason or "").endswith(cons.TRUNCATED) else "")
            for link in self.rt.store.links(record.id)
            if link.source == record.id
            and link.type is LinkType.SUPERSEDES
            and (link.reason or "").startswith(MERGED_LINK)
        ]
        return list(dict.fromkeys(out))

    # ---- a guarded run ----------------------------------------------------------

    def _run(
        self,
        operation: str,
        dry_run: bool,
        force: bool,
        cadence: Cadence,
        work: Callable[[], _Work],
        progress: Progress,
    ) -> MaintenanceReport:
        """Lock, gate, plan, and (unless dry) write: the one path both commands take."""
        verb = "would skip" if dry_run else "skipped"
        token, holder = (
            (None, self.rt.lock.holder(utcnow())) if dry_run else self.rt.lock.acquire(operation)
        )
        held = holder is not None if dry_run else token is None
        if held:
            return MaintenanceReport(
                operation, dry_run, skipped="lock", notice=f"{verb}: {busy(holder)}"
            )
        try:
            gate = None if force else self._gate(cadence)
            if gate is not None:
                notice = f"{verb} by cadence gate ({gate}); --force runs it now"
                return MaintenanceReport(operation, dry_run, skipped="cadence", notice=notice)
            planned = work()
            report = MaintenanceReport(
                operation, dry_run, planned.plan, planned.topics, pruned=planned.pruned
            )
            if holder is not None:  # a stale lock, taken over
                report = replace(report, warnings=(f"took over a stale lock: {busy(holder)}",))
            return report if dry_run else self._write(report, planned, progress)
        finally:
            if token is not None:
                self.rt.lock.release(token)

    def _gate(self, cadence: Cadence) -> str | None:
        return cons.cadence_skip(
            self._last_run(), self.rt.store.stats(None, everyone=True).live, utcnow(), cadence
        )

    def _last_run(self) -> LastRun | None:
        raw = self.rt.store.meta(LAST_RUN_META)
        try:
            data = json.loads(raw) if raw else None
            return cons.LastRun(from_text(data["at"]), int(data["live"])) if data else None
        except (ValueError, KeyError, TypeError):  # unreadable: treated as never run
            return None

    # ---- planning ---------------------------------------------------------------

    def _planned(self, records: Sequence[Record], threshold: float, capped: bool = False) -> _Work:
        caps = cons.Caps(self.rt.limits.body_bytes, self.rt.limits.tags)
        vectors = self._entry_vectors([r.id for r in records])
        return _Work(
            cons.plan(records, threshold, vectors, caps, capped), {r.id: r for r in records}
        )

    def _entry_vectors(self, ids: Sequence[str]) -> Vectors:
        """The current entry vectors of these memories under the store's own profile
        (no model is loaded to read them); {} when the store has none."""
        profile = self.rt.store.meta(EMBED_PROFILE_META)
        if not ids or not profile:
            return {}
        import numpy as np

        return {
            memory_id: np.frombuffer(blob, dtype="<f4").astype(np.float32)
            for memory_id, chunk, blob in self.rt.store.vectors(profile, ids)
            if chunk == -1
        }

    def _working_set(self, size: int) -> list[Record]:
        """The `size` most recently updated live memories this agent may see, without
        organize's summary rows."""
        limit = size
        while size:
            filters = self.rt.filters(
                scope="all", limit=limit, include_private=self.rt.agent is not None
            )
            found = self.rt.store.query(filters)
            kept = [r for r in found if not org.is_summary_row(r)]
            if len(kept) >= size or len(found) < limit:
                return kept[:size]
            limit += size
        return []

    def _topic_plans(self, found: Sequence[Topic]) -> tuple[TopicPlan, ...]:
        """Each topic with what happens to its summary row: create, update, unchanged."""
        rows = self._summary_rows()
        out = []
        for topic in found:
            row = rows.get(topic.key)
            if row is None:
                out.append(org.TopicPlan(topic, "create", None))
            elif (row.title, row.body) == (topic.title, topic.summary):
                out.append(org.TopicPlan(topic, "unchanged", row.id))
            else:
                out.append(org.TopicPlan(topic, "update", row.id))
        return tuple(out)

    def _summary_rows(self) -> dict[str, Record]:
        filters = Filters(
            kinds=(Kind.SUMMARY,),
            viewer=self.rt.agent,
            include_private=self.rt.agent is not None,
            limit=None,
        )
        rows = self.rt.store.query(filters)
        return {
            r.source_ref: r for r in rows if r.source_ref and r.source_ref.startswith(org.TOPIC_REF)
        }

    def _prunable(self, scope: str | None, rules: PruneRules, plan: Plan) -> tuple[Pruned, ...]:
        """The live memories this agent may see (in `scope`) that the prune rules
        retire, none of them in one of the plan's merges."""
        now = utcnow()
        filters = self.rt.filters(
            scope=scope or "all",
            until=now - timedelta(days=rules.age_days),
            limit=0,
            order="created",
            include_private=self.rt.agent is not None,
            # Neither rule takes a memory this important: the read skips them.
            max_importance=KEPT_IMPORTANCE - 1,
            resonance_basis="raw",
        )
        merging = {i for m in plan.merges for i in (m.keeper, *(a.id for a in m.absorbed))}
        found = [r for r in self.rt.store.query(filters) if r.id not in merging]
        return pruned(found, now, rules)

    # ---- writing ----------------------------------------------------------------

    def _write(
        self, report: MaintenanceReport, work: _Work, progress: Progress
    ) -> MaintenanceReport:
        """The plan in one transaction (the clock recorded with it), then new vectors
        for the memories whose text changed."""
        warnings = list(report.warnings)
        with self.rt.transaction() as w:
            changed = self._apply_merges(w, work, warnings, progress)
            retired = self._retire(w, work.pruned, warnings)
            topics = [t for t in work.topics if t.action != "unchanged"]
            written = []
            for topic in topics:
                written.append(self._write_topic(w, topic))
                progress(len(written), len(topics), "summarising")
            stamp = {
                "at": to_text(utcnow()),
                "live": self.rt.store.stats(None, everyone=True).live,
                "by": report.operation,
            }
            w.set_meta(LAST_RUN_META, json.dumps(stamp))
        progress(0, None, "embedding")
        failed = self.rt.embed_changed([*changed, *written])
        warnings += [f"{i}: embedding deferred ({why})" for i, why in failed.items()]
        return replace(report, written=tuple(written), warnings=tuple(warnings), pruned=retired)

    def _retire(
        self, w: Writer, planned: Sequence[Pruned], warnings: list[str]
    ) -> tuple[Pruned, ...]:
        """Retire each planned memory still live; the ones retired."""
        now, done = utcnow(), []
        for item in planned:
            current = w.get(item.id)
            if current is None or not current.live:
                warnings.append(f"{item.id}: no longer live; not pruned")
                continue
            stamped = replace(
                current, updated_at=now, superseded_at=now, supersede_reason=item.reason
            )
            w.replace(stamped, None)
            self.rt.journal(w, "prune", item.id)
            done.append(item)
        return tuple(done)

    def _apply_merges(
        self, w: Writer, work: _Work, warnings: list[str], progress: Progress
    ) -> list[str]:
        """Each merge whose members are as planned; the keepers whose text changed."""
        changed = []
        for number, merge in enumerate(work.plan.merges, start=1):
            progress(number, len(work.plan.merges), "merging")
            members = [merge.keeper, *(a.id for a in merge.absorbed)]
            current = {i: w.get(i) for i in members}
            moved = [i for i in members if not _as_planned(work.records[i], current[i])]
            if moved:
                warnings.append(
                    f"{merge.keeper}: {', '.join(moved)} changed since planned; "
                    "left for the next run"
                )
                continue
            keeper = current[merge.keeper]
            assert keeper is not None  # _as_planned checked it
            if self._merge_into(w, keeper, merge):
                changed.append(keeper.id)
        return changed

    def _merge_into(self, w: Writer, keeper: Record, merge: Merge) -> bool:
        """One merge: the keeper's new version, the absorbed superseded and linked.
        True when the keeper's text changed."""
        new = cons.merged_record(keeper, merge, normalize.dedup_hash)
        if new != keeper:
            why = f"consolidated: merged_from {', '.join(merge.merged_from)}"
            self.rt.commit_version(w, keeper, new, why)
        now = utcnow()
        for absorbed in merge.absorbed:
            old = w.get(absorbed.id)
            assert old is not None  # checked by _apply_merges in this transaction
            self._absorb(w, old, keeper.id, absorbed, now)
        self.rt.journal(w, "consolidate", keeper.id)
        return new.dedup_hash != keeper.dedup_hash

    def _absorb(
        self, w: Writer, record: Record, keeper: str, absorbed: Absorbed, now: datetime
    ) -> None:
        why = cons.absorbed_reason(keeper, absorbed)
        w.replace(
            replace(
                record,
                updated_at=now,
                superseded_by=keeper,
                superseded_at=now,
                supersede_reason=why,
            ),
            None,
        )
        reason = MERGED_LINK + (cons.TRUNCATED if absorbed.truncated else "")
        w.add_link(Link(keeper, record.id, LinkType.SUPERSEDES, absorbed.similarity, reason, now))
        self.rt.journal(w, "consolidate", record.id)

    def _write_topic(self, w: Writer, planned: TopicPlan) -> str:
        """Create or refresh a topic's summary row, linked `derives` to its members."""
        topic = planned.topic
        if planned.summary_id is None:
            summary = self._new_summary(w, topic)
        else:
            old = w.get(planned.summary_id)
            assert old is not None  # read by this run; summaries are only ours to change
            new = replace(
                old,
                title=topic.title,
                body=topic.summary,
                taint=topic.taint,
                dedup_hash=normalize.dedup_hash(topic.title, topic.summary),
            )
            summary = self.rt.commit_version(w, old, new, "organize: topic refreshed")
        for member in topic.members:
            w.add_link(Link(summary.id, member, LinkType.DERIVES, reason="organize topic"))
        self.rt.journal(w, "organize", summary.id)
        return summary.id

    def _new_summary(self, w: Writer, topic: Topic) -> Record:
        fields = {
            "content": topic.summary,
            "title": topic.title,
            "kind": Kind.SUMMARY.value,
            "category": SUMMARY_CATEGORY,
            "scope": topic.scope,
            "source_ref": topic.key,
            "private": topic.visibility is Visibility.PRIVATE,
            "owner": topic.owner,
            "entry_type": "summary",
            "taint": topic.taint.value,
            "tags": ["organize"],
        }
        draft = drafting.build_draft(fields, self.rt.write_context())
        [record] = pipeline.land(w, [draft.record], new_id, self.rt.agent)
        return record


def _as_planned(planned: Record, current: Record | None) -> bool:
    """Whether a memory is still live with the content it was planned on."""
    return (
        current is not None
        and current.live
        and (current.version, current.dedup_hash) == (planned.version, planned.dedup_hash)
    )
