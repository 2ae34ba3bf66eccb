"""The `Memory` facade: every operation an interface can ask of memlane."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlane.errors import Conflict, Invalid, MemlaneError, NotFound
from memlane.lazy import lazy_module
from memlane.model import (
    REINFORCE_CAP,
    VERSIONED_FIELDS,
    BatchLine,
    BatchResult,
    Check,
    Filters,
    Hit,
    Kind,
    Link,
    LinkType,
    Patch,
    Record,
    RegistryEntry,
    State,
    Stats,
    Version,
    Visibility,
    WriteResult,
    WriteStatus,
    replace,
)
from memlane.scope import Context, detect_context
from memlane.store import EMBED_PROFILE_META, Writer, open_store
from memlane.timeutil import parse_instant, utcnow
from memlane.write import inputs
from memlane.write.settings import Limits

if TYPE_CHECKING:  # numpy and the models load only when vectors are used
    from memlane.embed import Embedded, Embedder
    from memlane.write import dedup, normalize, pipeline, screen
    from memlane.write import draft as drafting
    from memlane.write import patch as patching
    from memlane.write.capture import Captured
    from memlane.write.dedup import Decision
    from memlane.write.draft import Draft
    from memlane.write.pipeline import Staged
else:  # the write policy loads with the first write: a read never runs it
    dedup = lazy_module("memlane.write.dedup")
    drafting = lazy_module("memlane.write.draft")
    normalize = lazy_module("memlane.write.normalize")
    patching = lazy_module("memlane.write.patch")
    pipeline = lazy_module("memlane.write.pipeline")
    screen = lazy_module("memlane.write.screen")

from memlane import runtime
from memlane.facade import backup, health
from memlane.facade.backup import BackupOps, RestoreReport
from memlane.facade.consolidate import ConsolidateOps
from memlane.facade.forget import ForgetOps, Forgotten
from memlane.facade.graph import Graph
from memlane.facade.health import HealthOps
from memlane.facade.lifecycle import Lifecycle
from memlane.facade.pack import Packs
from memlane.facade.policy import Batch, PolicyOps, contradicting, with_decision
from memlane.facade.reflect import ReflectOps
from memlane.facade.registries import Registries
from memlane.facade.transfer import MigrationReport, Transfer
from memlane.facade.vectors import VectorOps
from memlane.facade.wake import Wake
from memlane.runtime import (
    _ACCESS_FIELDS,
    BATCH_CHUNK,
    ID_PREFIX,
    REANALYZE_AFTER,
    BatchItem,
    Journal,
    Records,
    Versions,
)

__all__ = ["Memory"]


def _moved(feature: str, name: str, old: str | None = None) -> Any:
    """A method that moved to a feature's namespace (`Memory.graph.link` for
    `Memory.link`, `Memory.wake.begin` for `Memory.wake_begin`): the `old` name (else
    the same) still works, with a DeprecationWarning, for one more release."""
    was = old or name

    def moved(self: Memory, *args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"Memory.{was} is now Memory.{feature}.{name}; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(getattr(self, feature), name)(*args, **kwargs)

    moved.__name__ = moved.__qualname__ = was
    moved.__doc__ = f"Deprecated: use `Memory.{feature}.{name}`."
    return moved


# A committed add-batch chunk: its lines, and the landed ids still without vectors.
ChunkOutcome = tuple[list[BatchLine], list[str]]


class Memory(
    VectorOps,
    HealthOps,
    PolicyOps,
    ConsolidateOps,
    ReflectOps,
    BackupOps,
    ForgetOps,
):
    """Long-term memory over one store. Open with `Memory.open(path)`.

    The everyday operations are methods (add, get, update, recall, search, list,
    forget, history, ...); the rest are grouped by feature and loaded on first use:
    `graph` (links and entities), `registries` (categories, agents, projects,
    applicability, tag counts, type lists), `wake` (called: the identity cascade; the
    ritual and its guess log), `transfer` (export, import, migration), `lifecycle`
    (review, reminders, sessions, vital signs), `packs` (the curated pack and episode
    summaries).
    """

    @cached_property
    def graph(self) -> Graph:
        """Typed links between memories, and the entities they name."""
        return Graph(self.rt)

    @cached_property
    def registries(self) -> Registries:
        """Categories, agents, projects, applicability; tag counts and type lists."""
        return Registries(self.rt)

    @cached_property
    def wake(self) -> Wake:
        """The identity cascade (call it), the one-guess ritual and its guess log."""
        return Wake(self.rt)

    @cached_property
    def transfer(self) -> Transfer:
        """Export and import (JSONL, CSV, Markdown) and migration to another store."""
        return Transfer(self.rt, self.add_batch)

    @cached_property
    def lifecycle(self) -> Lifecycle:
        """Reinforcement, feedback, review, reminders, sessions and vital signs."""
        return Lifecycle(self.rt)

    @cached_property
    def packs(self) -> Packs:
        """The curated pack, pack files, and closing a session with its summary."""
        return Packs(self.rt)

    def reinforce(self, memory_id: str, amount: int = 1, cap: int = REINFORCE_CAP) -> Record:
        """Raise a memory's importance (see Lifecycle.reinforce)."""
        return self.lifecycle.reinforce(memory_id, amount, cap)

    def feedback(self, memory_id: str, *, applied: bool) -> Record:
        """Count one use of a memory, applied or violated (see Lifecycle.feedback)."""
        return self.lifecycle.feedback(memory_id, applied=applied)

    def migrate_to(self, target: Memory, *, force: bool = False) -> MigrationReport:
        """Deprecated: use `Memory.transfer.migrate_to(target.transfer)`."""
        warnings.warn(
            "Memory.migrate_to is now Memory.transfer.migrate_to; the old name goes in the "
            "next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.transfer.migrate_to(target.transfer, force=force)

    link = _moved("graph", "link")
    unlink = _moved("graph", "unlink")
    links = _moved("graph", "links")
    contradict = _moved("graph", "contradict")
    neighbourhood = _moved("graph", "neighbourhood")
    entities = _moved("graph", "entities")
    entity = _moved("graph", "entity")
    entities_of = _moved("graph", "entities_of")
    mentioning = _moved("graph", "mentioning")
    merge_entities = _moved("graph", "merge_entities")
    wake_fetch = _moved("wake", "fetch", "wake_fetch")
    wake_begin = _moved("wake", "begin", "wake_begin")
    wake_respond = _moved("wake", "respond", "wake_respond")
    wake_score = _moved("wake", "score", "wake_score")
    wake_log = _moved("wake", "log", "wake_log")
    latest_scored_wake = _moved("wake", "latest_scored", "latest_scored_wake")
    export_records = _moved("transfer", "export_records")
    export_jsonl = _moved("transfer", "export_jsonl")
    export_csv = _moved("transfer", "export_csv")
    export_markdown = _moved("transfer", "export_markdown")
    exported_record = _moved("transfer", "exported_record")
    import_jsonl = _moved("transfer", "import_jsonl")
    import_csv = _moved("transfer", "import_csv")
    migration_records = _moved("transfer", "migration_records")
    registry = _moved("registries", "registry")
    register = _moved("registries", "register")
    unregister = _moved("registries", "unregister")
    registry_entry = _moved("registries", "registry_entry")
    usage = _moved("registries", "usage")
    tags = _moved("registries", "tags")
    review = _moved("lifecycle", "review")
    reviewed = _moved("lifecycle", "reviewed")
    remind = _moved("lifecycle", "remind")
    reminders = _moved("lifecycle", "reminders")
    due_reminders = _moved("lifecycle", "due_reminders")
    dismiss = _moved("lifecycle", "dismiss")
    open_threads = _moved("lifecycle", "open_threads")
    growth = _moved("lifecycle", "growth")
    health = _moved("lifecycle", "health")
    create_session = _moved("lifecycle", "create_session")
    sessions = _moved("lifecycle", "sessions")
    for_session = _moved("lifecycle", "for_session")
    fact_session = _moved("lifecycle", "fact_session")
    pack = _moved("packs", "build", "pack")
    write_pack = _moved("packs", "write", "write_pack")
    refresh_packs = _moved("packs", "refresh", "refresh_packs")
    close_session = _moved("packs", "close_session")

    @staticmethod
    def types(name: str) -> list[str]:
        """Deprecated: use `Memory.registries.types` (or `Registries.types`)."""
        warnings.warn(
            "Memory.types is now Memory.registries.types; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return Registries.types(name)

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        agent: str | None = None,
        context: Context | None = None,
        limits: Limits | None = None,
        synchronous: str = "full",
        embedder: Embedder | Callable[[], Embedder | None] | None = None,
        embed_problem: str | None = None,
        embed_on_write: bool = True,
    ) -> Memory:
        """Create or open the store at `path`; the context defaults to the working directory.

        Pass an `embedder` (see `memlane.embed.get_embedder`) for vectors and the vector
        lane; without one every other operation works the same.
        """
        ctx = context if context is not None else detect_context(Path.cwd())
        return cls(
            open_store(path, synchronous),
            agent=agent,
            context=ctx,
            limits=limits,
            embedder=embedder,
            embed_problem=embed_problem,
            embed_on_write=embed_on_write,
        )

    @classmethod
    def restore_snapshot(
        cls, path: str | Path, snapshot: str | Path, *, force: bool = False
    ) -> RestoreReport:
        """Replace the store at `path` with a verified snapshot. An existing store is
        replaced only with `force`, never while a maintenance run holds its lock, and
        only after a copy of it is kept beside it (outside the snapshot naming, so
        retention never deletes it). The restored store is verified again."""
        db, source = Path(path).expanduser(), Path(snapshot).expanduser()
        checked = backup.check_snapshot(source)
        kept = None
        if db.exists() and db.stat().st_size > 0:
            if not force:
                raise Conflict(f"{db} exists; pass --force to replace it (a copy is kept)")
            with cls.open(db, context=Context()) as current, current.maintenance_lock("restore"):
                kept = db.with_name(f"{db.name}.pre-restore-{utcnow():%Y%m%dT%H%M%S%fZ}")
                current.store.snapshot(kept)
        return RestoreReport(db, source, backup.put_in_place(db, source, checked), kept)

    def add(self, content: str, title: str | None = None, **fields: Any) -> WriteResult:
        """Store one memory through the write policy; see `memlane add --help` for fields."""
        anchor = fields.pop("auto_anchor", True)
        captured = self._captured({"content": content, "title": title, **fields})
        draft = drafting.build_draft(captured.fields, self._write_context())
        draft = replace(draft, record=self._pinned(draft.record))
        self._check_embed_profile(draft.no_embed)
        [doc] = self._embed_drafts([None if draft.no_embed else draft.record])
        looked = self._look([(draft.record, doc)] if _judged(draft) else [])
        cleared = [draft.record] if screen.unchanged(draft.record) else []
        with self.rt.transaction() as w:
            w.keep([draft.record.dedup_hash] if captured.keeps else [])
            w.cleared(cleared)
            batch = self._batch(vectors=doc is not None, looked=looked)
            result = self._persist(w, draft, doc, batch)
            if result.landed and result.id is not None and doc is not None:
                self._with_rows(w, {result.id: doc})
        result = with_capture(result, captured)
        if result.landed and not draft.no_embed and doc is None:
            result = self._reembedded(result)  # the model failed before: once more
        return self._auto_anchored(result) if anchor else result

    def seed_agent(
        self, name: str, meta: Mapping[str, Any], body: str
    ) -> tuple[RegistryEntry, WriteResult | None]:
        """Register an agent from a seed file (front matter: description, domain) and
        keep its body as the agent's identity memory: importance 9 (a wake core memory)
        unless the front matter says otherwise, tagged `agent:<name>`. Seeding the same
        file again changes nothing (the exact-duplicate check of session `seed`)."""
        entry = self.registries.register(
            "agents", name, description=meta.get("description"), domain=meta.get("domain")
        )
        if not body.strip():
            return entry, None
        known = {
            "title",
            "kind",
            "category",
            "importance",
            "tags",
            "wake_phrases",
            "wake_order",
            "private",
            "scope",
            "resonance_type",
        }
        fields = {k: v for k, v in meta.items() if k in known}
        fields.setdefault("importance", 9)
        fields.setdefault("title", f"{name}: who I am")
        fields["tags"] = [*(fields.get("tags") or []), f"agent:{name}"]
        return entry, self.add(body.strip(), session_id="seed", **fields)

    def _screened(self, record: Record, mode: str | None) -> tuple[Record, Captured]:
        """A revised record's title, body and tags through the capture policy. A title
        derived from the body is derived again from the screened body, not screened
        itself: a secret in both is one secret, reported once."""
        derived = record.title == normalize.derive_title(record.body)
        captured = self._captured(
            {
                "title": None if derived else record.title,
                "content": record.body,
                "tags": list(record.tags),
                "capture_mode": mode,
            }
        )
        body = captured.fields["content"]
        title = normalize.derive_title(body) if derived else captured.fields["title"]
        tags = tuple(dict.fromkeys(captured.fields["tags"]))
        return replace(
            record, title=title, body=body, tags=tags, dedup_hash=normalize.dedup_hash(title, body)
        ), captured

    def _captured(self, fields: Mapping[str, Any]) -> Captured:
        """The capture policy on a write's fields (`capture_mode`: this write's mode)."""
        from memlane.write.capture import capture, parse_mode

        given = dict(fields)
        mode = parse_mode(given.pop("capture_mode", None) or self.capture_mode)
        return capture(given, mode)

    def _admit(self, w: Writer, draft: Draft, staged: Staged) -> WriteResult | None:
        """The exact-duplicate gate: a skip result, or None when the draft may land."""
        self.rt.check_category(draft.record.category)
        if draft.allow_duplicate:
            return None
        duplicate = pipeline.duplicate_of(w, draft.record, staged)
        return pipeline.skipped(duplicate, draft.record) if duplicate else None

    def _decide(self, draft: Draft, doc: Embedded | None, batch: Batch) -> Decision:
        """Near-duplicate, contradiction or new."""
        if not _judged(draft):
            return dedup.NEW
        return self._judge(draft.record, doc, batch)

    def _persist(
        self,
        w: Writer,
        draft: Draft,
        doc: Embedded | None = None,
        batch: Batch | None = None,
        decision: Decision | None = None,
    ) -> WriteResult:
        """One add: the gates (or the `decision` they reached), then the row with its
        anchors and the thread it closes."""
        skip = self._admit(w, draft, pipeline.Staged())
        if skip is not None:
            return skip
        if decision is None:
            decision = self._decide(draft, doc, batch or Batch())
        if decision.verdict is dedup.Verdict.REFRESH:
            return self._refresh(w, draft.record, decision)
        record = draft.record
        if decision.verdict is dedup.Verdict.CONTRADICTION:
            record = contradicting(record)
        thread = self._thread_to_close(w, draft.close_thread)
        anchors = [self.rt.read(w, a).id for a in draft.anchors]
        [rec] = pipeline.land(w, [record], runtime.new_id, self.agent)
        if decision.verdict is dedup.Verdict.CONTRADICTION:
            self._contradict(w, rec, decision)
        for anchor in anchors:
            w.add_link(Link(rec.id, anchor, LinkType.ANCHOR, created_at=rec.created_at))
        if thread is not None:
            closed = replace(thread, state=State.CLOSED)
            pipeline.revise(w, thread, closed, f"closed by {rec.id}", self.agent)
            w.add_link(Link(rec.id, thread.id, LinkType.UPDATES, reason="closes thread"))
        return with_decision(pipeline.added(rec), decision)

    def _thread_to_close(self, w: Writer, thread_id: str | None) -> Record | None:
        if thread_id is None:
            return None
        thread = self.rt.live(w, thread_id)
        if thread.kind is not Kind.THREAD:
            raise Invalid(f"{thread.id} is a {thread.kind.value}, not a thread")
        if thread.state is State.CLOSED:
            raise Conflict(f"thread {thread.id} is already closed")
        return thread

    def add_batch(self, items: Iterable[BatchItem]) -> BatchResult:
        """Add many memories; a bad item is reported by its line number and skipped.

        Items are dicts or JSON object lines (str or UTF-8 bytes). Blank lines are
        ignored but keep their line numbers.
        """
        return BatchResult(tuple(self.iter_batch(items)))

    def iter_batch(self, items: Iterable[BatchItem]) -> Iterator[BatchLine]:
        """`add_batch`, yielding each line's outcome once its transaction has committed."""
        chunk: list[tuple[int, BatchItem]] = []
        landed = 0
        self._check_embed_profile(no_embed=False)
        for number, item in enumerate(items, start=1):
            if isinstance(item, (str, bytes)) and not item.strip():
                continue
            chunk.append((number, item))
            if len(chunk) >= BATCH_CHUNK:
                landed += len(chunk)
                yield from self._embedded_lines(*self._batch_chunk(chunk))
                chunk = []
        if chunk:
            landed += len(chunk)
            yield from self._embedded_lines(*self._batch_chunk(chunk))
        if landed >= REANALYZE_AFTER:
            self.store.optimize()

    def _batch_chunk(self, chunk: list[tuple[int, BatchItem]]) -> ChunkOutcome:
        """One transaction: every line through the write policy; new rows land in bulk,
        with the vectors made for them.

        Returns the lines' outcomes and the ids of the landed memories still to embed
        (their embedding failed before the transaction).
        """
        out: dict[int, BatchLine] = {}
        drafts: dict[int, Draft] = {}
        captures: dict[int, Captured] = {}
        for number, item in chunk:
            try:
                captures[number] = self._captured(inputs.json_object(item))
                draft = drafting.build_draft(captures[number].fields, self._write_context())
                drafts[number] = replace(draft, record=self._pinned(draft.record))
            except (Invalid, NotFound, Conflict) as exc:
                out[number] = BatchLine(number, error=str(exc))
        wanted = [None if d.no_embed else d.record for d in drafts.values()]
        docs = dict(zip(drafts, self._embed_drafts(wanted), strict=True))
        looked = self._look([(d.record, docs[n]) for n, d in drafts.items() if _judged(d)])
        cleared = [d.record for d in drafts.values() if screen.unchanged(d.record)]
        with self.rt.transaction() as w:
            w.keep(d.record.dedup_hash for n, d in drafts.items() if captures[n].keeps)
            w.cleared(cleared)
            vectors = any(d is not None for d in docs.values())
            batch = self._batch(vectors, looked)
            out.update(self._policy_lines(w, drafts, docs, batch))
            landed = {
                ln.result.id: docs[ln.line]
                for ln in out.values()
                if ln.result and ln.result.id and ln.result.landed and not drafts[ln.line].no_embed
            }
            self._with_rows(w, {i: doc for i, doc in landed.items() if doc is not None})
        results = [
            replace(ln, result=with_capture(ln.result, captures[ln.line])) if ln.result else ln
            for ln in (out[number] for number, _ in chunk)
        ]
        return results, [i for i, doc in landed.items() if doc is None]

    def _policy_lines(
        self,
        w: Writer,
        drafts: Mapping[int, Draft],
        docs: Mapping[int, Embedded | None],
        batch: Batch,
    ) -> dict[int, BatchLine]:
        """Each draft's outcome. New rows are staged and land together; a line that
        refreshes or contradicts another, or names earlier rows (anchors, a thread),
        lands the staged rows first and is written on its own."""
        out: dict[int, BatchLine] = {}
        staged, lines = pipeline.Staged(), dict[int, int]()
        decisions: dict[int, Decision] = {}
        for number, draft in drafts.items():
            doc = docs[number]
            try:
                skip = self._admit(w, draft, staged)
                if skip is not None:
                    out[number] = BatchLine(number, result=skip)
                    continue
                decision = self._decide(draft, doc, batch)
                alone = (
                    draft.close_thread or draft.anchors or decision.verdict is not dedup.Verdict.NEW
                )
                if not alone:
                    lines[staged.add(draft.record)] = number
                    decisions[number] = decision
                    batch.add(draft.record, doc)
                    continue
                out.update(self._land_staged(w, staged, lines, decisions))
                staged, lines = pipeline.Staged(), {}
                result = self._persist(w, draft, doc, batch, decision)
                out[number] = BatchLine(number, result=result)
                if result.landed and result.id:
                    batch.add(replace(draft.record, id=result.id), doc)
            except (Invalid, NotFound, Conflict) as exc:
                out[number] = BatchLine(number, error=str(exc))
        out.update(self._land_staged(w, staged, lines, decisions))
        return out

    def _land_staged(
        self, w: Writer, staged: Staged, lines: dict[int, int], decisions: Mapping[int, Decision]
    ) -> dict[int, BatchLine]:
        """Insert the staged rows; their lines' results, keyed by line number."""
        final = pipeline.land(w, staged.records, runtime.new_id, self.agent)
        out = {}
        for i, record in enumerate(final):
            number = lines[i]
            result = with_decision(pipeline.added(record), decisions.get(number, dedup.NEW))
            out[number] = BatchLine(number, result=result)
        return out

    def get(self, memory_id: str, as_of: datetime | str | None = None) -> Record:
        """One memory; with `as_of`, the version that was valid then."""
        full = self.resolve(memory_id)
        if as_of is None:
            return self.rt.as_read([self.rt.shown(self.store.get(full), memory_id)])[0]
        at = parse_instant(as_of, "as-of") if not isinstance(as_of, datetime) else as_of
        record = self.store.get(full, as_of=at)
        if record is None or not self.rt.visible(record):
            self.rt.shown(self.store.get(full), memory_id)  # NotFound if never visible
            raise NotFound(f"{full} was not valid at {at.isoformat()}")
        return record

    def recent(
        self,
        days: int = 10,
        all_types: bool = False,
        resonance_type: str | None = None,
        sort: str = "chronological",
        limit: int = 100,
        **options: Any,
    ) -> Records:
        """Recent memories: ephemeral facts by default, all kinds with `all_types`."""
        if days < 0:
            raise Invalid("--days must not be negative")
        if sort not in ("chronological", "resonance"):
            raise Invalid("--sort must be chronological or resonance")
        types = [resonance_type] if resonance_type else ([] if all_types else ["ephemeral"])
        return self.list(
            since=utcnow() - timedelta(days=days),
            resonance_types=types,
            limit=limit,
            order="created" if sort == "chronological" else "importance",
            **options,
        )

    def hidden_private_count(self, filters: Filters, query: str | None = None) -> int:
        """How many of the viewer's own private memories a public-only read hid."""
        if self.agent is None or filters.include_private or filters.mine:
            return 0
        mine = replace(filters, mine=True, limit=None)
        found = self.store.search(query, mine) if query else self.store.query(mine)
        return len(found)

    def chunk_count(self, memory_id: str) -> int:
        """How many chunk vectors a memory has under the store's embedding profile (0:
        none, or a body short enough for its entry vector alone)."""
        record = self.rt.read(self.store, memory_id)
        profile = self.store.meta(EMBED_PROFILE_META)
        if not profile:
            return 0
        return sum(1 for _, chunk, _ in self.store.vectors(profile, [record.id]) if chunk >= 0)

    def elsewhere_count(self, filters: Filters, query: str | None = None) -> int:
        """How many memories the same read finds in the scopes it did not read (0 when
        it read every scope): what an empty answer from the wrong folder hides."""
        if filters.scopes is None:
            return 0
        inside = set(filters.scopes)
        everywhere = replace(filters, scopes=None, limit=None)
        found = self.store.search(query, everywhere) if query else self.store.query(everywhere)
        return sum(1 for item in found if _scope_of(item) not in inside)

    def history(self, memory_id: str) -> Versions:
        """Every content version, oldest first; the last one is current (valid_until None)."""
        record = self.rt.read(self.store, memory_id)
        current = Version(
            memory_id=record.id,
            number=record.version,
            valid_from=record.version_from,
            valid_until=None,
            reason="current",
            actor=None,
            fields={name: getattr(record, name) for name in VERSIONED_FIELDS},
        )
        return [*self.store.versions(record.id), current]

    def journal(self, memory_id: str | None = None, limit: int = 100) -> Journal:
        """Journal lines, newest first; a deleted memory's id still finds its lines."""
        full = None
        if memory_id:
            try:
                full = self.resolve(memory_id)
            except NotFound:
                full = memory_id if memory_id.startswith(ID_PREFIX) else ID_PREFIX + memory_id
        return self.store.journal_entries(full, limit, viewer=self.agent)

    def stats(self) -> Stats:
        """The store's counts over the memories this agent may see."""
        return self.store.stats(self.agent)

    def update(
        self,
        memory_id: str,
        patch: Patch | None = None,
        reason: str | None = None,
        *,
        auto_anchor: bool = True,
        capture_mode: str | None = None,
        **changes: Any,
    ) -> WriteResult:
        """Change a memory in place; its prior content becomes a version (see `history`).

        Anchors are links, not content: changing only them writes no version. Changed
        text goes through the capture policy (`capture_mode`, as on add); changed
        content re-anchors the memory to its neighbours unless `auto_anchor` is False.
        """
        patch = patch or patching.make_patch(changes)
        captured = None
        with self.rt.transaction() as w:
            old = self.rt.live(w, memory_id)
            new = patching.apply_patch(old, patch, self.limits, self.agent)
            if (new.title, new.body, new.tags) != (old.title, old.body, old.tags):
                new, captured = self._screened(new, capture_mode)
                w.keep([new.dedup_hash] if captured.keeps else [])
            if new != old:
                new = self._pinned(new)  # a revision is about the file as it is now
            if new.category != old.category:
                self.rt.check_category(new.category)
            anchors_changed = self._update_anchors(w, old, patch)
            if new == old and not anchors_changed:
                raise Invalid("nothing to change: the update leaves the memory as it is")
            final = self._commit_version(w, old, new, reason or "updated") if new != old else old
        result = WriteResult(
            id=final.id, status=WriteStatus.UPDATED, title=final.title, version=final.version
        )
        if captured is not None:
            result = with_capture(result, captured)
        if final.dedup_hash == old.dedup_hash:
            return result
        result = self._reembedded(result)
        return self._auto_anchored(result) if auto_anchor else result

    def _update_anchors(self, w: Writer, record: Record, patch: Patch) -> bool:
        """Apply the anchor modes of a patch as link changes; True when any changed."""
        wanted = patching.anchor_targets(record.anchors, patch)
        if wanted == record.anchors:
            return False
        resolved = {self.rt.read(w, a).id for a in wanted}
        for gone in set(record.anchors) - resolved:
            w.remove_link(record.id, gone, LinkType.ANCHOR)
        for added in resolved - set(record.anchors):
            w.add_link(Link(record.id, added, LinkType.ANCHOR, created_at=utcnow()))
        self.rt.journal(w, "anchors", record.id)
        return set(record.anchors) != resolved

    def restore(
        self, memory_id: str, version: int | None = None, *, auto_anchor: bool = True
    ) -> WriteResult:
        """Bring back an earlier version's content (the previous one by default)."""
        with self.rt.transaction() as w:
            old = self.rt.live(w, memory_id)
            versions = {v.number: v for v in self.store.versions(old.id)}
            number = old.version - 1 if version is None else version
            if number == old.version:
                raise Invalid(f"version {number} of {old.id} is already current")
            if number not in versions:
                known = ", ".join(str(n) for n in sorted(versions)) or "none"
                raise NotFound(f"{old.id} has no version {number} (earlier versions: {known})")
            fields = {k: v for k, v in versions[number].fields.items() if k not in _ACCESS_FIELDS}
            new = replace(old, **fields)
            final = self._commit_version(w, old, new, f"restored version {number}")
        result = self._reembedded(
            WriteResult(
                id=final.id, status=WriteStatus.UPDATED, title=final.title, version=final.version
            )
        )
        return self._auto_anchored(result) if auto_anchor else result

    def forget(
        self, memory_id: str, reason: str | None = None, *, operation: str = "forget"
    ) -> Forgotten:
        """Forget a memory (see ForgetOps.forget), and write again without it every pack
        file that held it."""
        return self._packs_after(super().forget(memory_id, reason, operation=operation))

    def forget_scope(
        self, scope: str, *, confirm: bool = False, reason: str | None = None
    ) -> Forgotten:
        """Forget a scope (see ForgetOps.forget_scope), and write again the pack files
        that held any of its memories."""
        return self._packs_after(super().forget_scope(scope, confirm=confirm, reason=reason))

    def _packs_after(self, done: Forgotten) -> Forgotten:
        written, warnings = self.packs.refresh({*done.ids, *done.removed, *done.scrubbed})
        return replace(done, packs=tuple(written), warnings=tuple(warnings))

    def doctor(
        self, backup_dir: Path | None = None, backup_every: timedelta | None = None
    ) -> list[Check]:
        """Every self-check, the maintenance lock's included (see HealthOps.doctor)."""
        return [*super().doctor(backup_dir, backup_every), self.maintenance_check()]

    @staticmethod
    def diagnose(location: str | Path, problem: MemlaneError) -> list[Check]:
        """`doctor`'s checks of a store that could not be opened: the reason, and what
        a read-only look at its pages finds."""
        return health.diagnose(str(location), problem)

    def _tombstone(self, w: Writer, record: Record, **stamp: Any) -> None:
        w.replace(replace(record, updated_at=utcnow(), **stamp), None)

    def supersede(
        self,
        memory_id: str,
        content: str,
        title: str | None = None,
        reason: str | None = None,
        *,
        force: bool = False,
        **fields: Any,
    ) -> WriteResult:
        """A new memory replaces an old one, which stays for audit with `superseded_by`.
        A public successor of a private memory needs `force`, as `update` does. Its text
        goes through the capture policy, as on add."""
        with self.rt.transaction() as w:
            old = self.rt.live(w, memory_id)
            captured = self._captured(
                {**drafting.inherited_fields(old), "content": content, "title": title, **fields}
            )
            draft = drafting.build_draft(captured.fields, self._write_context())
            w.keep([draft.record.dedup_hash] if captured.keeps else [])
            _keeps_private([old], draft.record, force)
            self.rt.check_category(draft.record.category)
            [new] = pipeline.land(w, [draft.record], runtime.new_id, self.agent)
            self._tombstone(
                w,
                old,
                superseded_by=new.id,
                superseded_at=new.created_at,
                supersede_reason=reason or "superseded",
            )
            self.rt.journal(w, "supersede", old.id)
            w.add_link(Link(new.id, old.id, LinkType.SUPERSEDES, reason=reason))
        result = WriteResult(id=new.id, status=WriteStatus.ADDED, title=new.title)
        return self._reembedded(with_capture(result, captured))

    def invalidate(self, memory_id: str, reason: str) -> Record:
        """End a memory's validity now, with the reason it is no longer true."""
        if not reason or not reason.strip():
            raise Invalid("invalidate needs a non-empty --reason")
        with self.rt.transaction() as w:
            old = self.rt.live(w, memory_id)
            self._tombstone(w, old, valid_until=utcnow(), supersede_reason=reason.strip())
            self.rt.journal(w, "invalidate", old.id)
        return self.rt.read(self.store, old.id)

    def retire(self, memory_id: str, reason: str | None = None) -> Record:
        """Drop a memory that has no successor; it stays for audit and as-of reads."""
        with self.rt.transaction() as w:
            old = self.rt.live(w, memory_id)
            self._tombstone(w, old, superseded_at=utcnow(), supersede_reason=reason or "retired")
            self.rt.journal(w, "retire", old.id)
        return self.rt.read(self.store, old.id)

    def merge(
        self,
        memory_ids: Iterable[str],
        content: str,
        title: str | None = None,
        *,
        force: bool = False,
        **fields: Any,
    ) -> WriteResult:
        """Merge memories into one new memory (importance: the maximum); the rest are
        superseded. It is private when any source is (a public one needs `force`). Its
        text goes through the capture policy, as on add; it carries its sources' marks.

        Every id must name a live memory the caller may see: one that does not (a typo,
        another owner's private memory) is NotFound and nothing is merged, so a typo
        never turns a merge into the supersession of the one memory named right."""
        with self.rt.transaction() as w:
            sources: Records = []
            for memory_id in dict.fromkeys(memory_ids):
                try:
                    sources.append(self.rt.live(w, memory_id))
                except NotFound as exc:
                    raise NotFound(f"{exc}; nothing was merged") from None
            if not sources:
                raise Invalid("name the memories to merge")
            private = [s for s in sources if s.visibility is Visibility.PRIVATE]
            inherited = {
                **drafting.inherited_fields(private[0] if private else sources[0]),
                "importance": max(s.importance for s in sources),
                "tags": list(dict.fromkeys(t for s in sources for t in s.tags)),
            }
            captured = self._captured({**inherited, "content": content, "title": title, **fields})
            draft = drafting.build_draft(captured.fields, self._write_context())
            w.keep([draft.record.dedup_hash] if captured.keeps else [])
            _keeps_private(sources, draft.record, force)
            self.rt.check_category(draft.record.category)
            [new] = pipeline.land(w, [draft.record], runtime.new_id, self.agent)
            for source in sources:
                self._tombstone(
                    w,
                    source,
                    superseded_by=new.id,
                    superseded_at=new.created_at,
                    supersede_reason=f"merged into {new.id}",
                )
                w.add_link(Link(new.id, source.id, LinkType.SUPERSEDES, reason="merge"))
        result = WriteResult(id=new.id, status=WriteStatus.ADDED, title=new.title)
        return self._reembedded(with_capture(result, captured))


def _judged(draft: Draft) -> bool:
    """Whether the near-duplicate policy judges a draft.

    Trigger: the write may land twice, closes a thread or names its anchors. Why: a
    refresh would drop that act (the thread would stay open). Outcome: it lands as
    written.
    """
    return not (draft.allow_duplicate or draft.close_thread or draft.anchors)


def with_capture(result: WriteResult, captured: Captured) -> WriteResult:
    """A write's result, told what the capture policy redacted, kept or tagged."""
    if not captured.warnings:
        return result
    return replace(
        result,
        warnings=(*captured.warnings, *result.warnings),
        redactions=captured.redacted,
    )


def _keeps_private(sources: Records, new: Record, force: bool) -> None:
    """Refuse a public successor of a private memory unless forced (as `update` does)."""
    exposed = any(s.visibility is Visibility.PRIVATE for s in sources)
    if exposed and new.visibility is Visibility.PUBLIC and not force:
        raise Invalid("a public successor exposes a private memory to everyone: pass --force")


def _scope_of(item: Record | Hit) -> str:
    return item.record.scope if isinstance(item, Hit) else item.scope
