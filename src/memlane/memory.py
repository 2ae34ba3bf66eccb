"""`Memory`: the one object the interfaces work with. It holds a runtime (memlane.runtime)
and composes the feature services (memlane.services) over it."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, cast

from memlane.embed.base import Embedder
from memlane.errors import Invalid, MemlaneError, NotFound
from memlane.lifecycle.review import ReviewPolicy
from memlane.model import (
    REINFORCE_CAP,
    VERSIONED_FIELDS,
    BatchLine,
    BatchResult,
    Check,
    EmbedOutcome,
    Filters,
    Patch,
    Record,
    RegistryEntry,
    Stats,
    Taint,
    Version,
    WriteResult,
)
from memlane.retrieve.explain import Explanation
from memlane.retrieve.recall import RecallOptions
from memlane.retrieve.result import RecallResult, Searched
from memlane.runtime import (
    ID_PREFIX,
    BatchItem,
    Hits,
    Journal,
    Names,
    Records,
    Runtime,
    Versions,
)
from memlane.scope import Context, detect_context
from memlane.services.backup import RestoreReport, restore_snapshot
from memlane.services.forget import Forgetting, Forgotten
from memlane.services.recall import RECALL_LIMIT, Progress, Recall
from memlane.services.transfer import MigrationReport, Transfer
from memlane.store import SchemaStatus, Store, migrate_schema, open_store, schema_status
from memlane.timeutil import parse_instant, utcnow
from memlane.write.anchors import ANCHOR_LOW, MAX_ANCHORS, AnchorPlan
from memlane.write.settings import Limits, Thresholds

if TYPE_CHECKING:
    # The feature namespaces load with their first use (a cached property below): a
    # cold `memlane recall` imports none of them (`memlane bench` times it).
    from memlane.services.admin import Admin
    from memlane.services.anchoring import Anchoring
    from memlane.services.graph import Graph
    from memlane.services.lifecycle import Lifecycle
    from memlane.services.maintenance import Maintenance
    from memlane.services.pack import Packs
    from memlane.services.policy import WritePolicy
    from memlane.services.reflect import Reflector
    from memlane.services.registries import Registries
    from memlane.services.scoping import Scoping
    from memlane.services.wake import Wake
    from memlane.services.writing import Writing

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


T = TypeVar("T")
# Return types named outside the class, whose `list` method would shadow the builtin.
AnchorPlans = list[tuple[str, AnchorPlan]]
Checks = list[Check]
Redactions = list[tuple[str, str]]  # (field, kind) of each secret the store redacted


class _OnRuntime(Generic[T]):
    """An attribute of `Memory` that is its runtime's, read and set through it."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, facade: Any, owner: Any = None) -> T:
        if facade is None:  # read on the class: the descriptor itself
            return cast(T, self)
        return cast(T, getattr(facade.rt, self.name))

    def __set__(self, facade: Any, value: T) -> None:
        setattr(facade.rt, self.name, value)


class Memory:
    """Long-term memory over one store. Open with `Memory.open(path)`.

    The everyday operations are methods (add, get, update, recall, search, list,
    forget, history, ...); the rest are grouped by feature and loaded on first use:
    `graph` (links and entities), `registries` (categories, agents, projects,
    applicability, tag counts, type lists), `wake` (called: the identity cascade; the
    ritual and its guess log), `transfer` (export, import, migration), `lifecycle`
    (review, reminders, sessions, vital signs), `packs` (the curated pack and episode
    summaries), `maintenance` (consolidate, organize, and their lock), `reflection`
    (insights and pack proposals), `admin` (doctor, backup), `scopes` (rekeying,
    canonical projects, promotion).
    """

    store: _OnRuntime[Store] = _OnRuntime()
    agent: _OnRuntime[str | None] = _OnRuntime()
    context: _OnRuntime[Context] = _OnRuntime()
    limits: _OnRuntime[Limits] = _OnRuntime()
    embed_problem: _OnRuntime[str | None] = _OnRuntime()
    embed_on_write: _OnRuntime[bool] = _OnRuntime()
    recall_settings: _OnRuntime[RecallOptions] = _OnRuntime()
    write_policy: _OnRuntime[Thresholds] = _OnRuntime()
    review_policy: _OnRuntime[ReviewPolicy] = _OnRuntime()
    capture_mode: _OnRuntime[str] = _OnRuntime()
    batch_workers: _OnRuntime[int | None] = _OnRuntime()
    default_taint: _OnRuntime[Taint] = _OnRuntime()
    redactions: _OnRuntime[Redactions] = _OnRuntime()

    def __init__(
        self,
        store: Store,
        *,
        agent: str | None = None,
        context: Context | None = None,
        limits: Limits | None = None,
        embedder: Embedder | Callable[[], Embedder | None] | None = None,
        embed_problem: str | None = None,
        embed_on_write: bool = True,
    ) -> None:
        """Memory over `store` (see Runtime for the other arguments)."""
        self.rt = Runtime(
            store,
            agent=agent,
            context=context,
            limits=limits,
            embedder=embedder,
            embed_problem=embed_problem,
            embed_on_write=embed_on_write,
        )

    def close(self) -> None:
        self.rt.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def embedder(self) -> Embedder | None:
        """The embedder, created on first use; None when there is none or it failed."""
        return self.rt.embedder

    def resolve(self, memory_id: str, scopes: Sequence[str] | None = None) -> str:
        """The full id for an id or an unambiguous prefix (with or without `m-`); with
        `scopes`, only their memories are candidates (any other is NotFound)."""
        return self.rt.resolve(memory_id, scopes)

    def in_scopes(self, ids: Sequence[str], scopes: Sequence[str]) -> set[str]:
        """Those of `ids` that are memories in `scopes`, in any state."""
        return self.rt.in_scopes(ids, scopes)

    def filters(self, **options: Any) -> Filters:
        """Filters from keyword options (see `retrieve.filters.make_filters`)."""
        return self.rt.filters(**options)

    def list(self, filters: Filters | None = None, **options: Any) -> Records:
        """The memories the filters (or these keyword options) select, as read."""
        return self.rt.list(filters, **options)

    def review_due_count(self, **options: Any) -> int:
        """How many memories `review` lists with the same `options` under the review
        policy: the count stats, health, doctor and the home screen show. Reads only."""
        return self.rt.review_due_count(**options)

    @cached_property
    def _forgetting(self) -> Forgetting:
        return Forgetting(self.rt, self.packs.refresh)

    @cached_property
    def _policy(self) -> WritePolicy:
        from memlane.services.policy import WritePolicy

        return WritePolicy(self.rt)

    @cached_property
    def _anchoring(self) -> Anchoring:
        from memlane.services.anchoring import Anchoring

        return Anchoring(self.rt, self._policy)

    @cached_property
    def _writing(self) -> Writing:
        from memlane.services.writing import Writing

        return Writing(self.rt, self._policy, self._anchoring, self.registries.register)

    @cached_property
    def graph(self) -> Graph:
        """Typed links between memories, and the entities they name."""
        from memlane.services.graph import Graph

        return Graph(self.rt)

    @cached_property
    def registries(self) -> Registries:
        """Categories, agents, projects, applicability; tag counts and type lists."""
        from memlane.services.registries import Registries

        return Registries(self.rt)

    @cached_property
    def wake(self) -> Wake:
        """The identity cascade (call it), the one-guess ritual and its guess log."""
        from memlane.services.wake import Wake

        return Wake(self.rt)

    @cached_property
    def transfer(self) -> Transfer:
        """Export and import (JSONL, CSV, Markdown) and migration to another store."""
        return Transfer(self.rt, self._writing.iter_batch)

    @cached_property
    def maintenance(self) -> Maintenance:
        """Consolidate and organize, and the maintenance lock their runs hold."""
        from memlane.services.maintenance import Maintenance

        return Maintenance(self.rt)

    @cached_property
    def reflection(self) -> Reflector:
        """Insights and pack proposals from what was written since the last reflection,
        through the writing service, tied to their sources by the graph's links."""
        from memlane.services.reflect import Reflector

        return Reflector(self.rt, writes=self._writing, link=self.graph.link)

    @cached_property
    def admin(self) -> Admin:
        """Self-checks (doctor) and verified backups of the store."""
        from memlane.services.admin import Admin

        return Admin(self.rt)

    @cached_property
    def lifecycle(self) -> Lifecycle:
        """Reinforcement, feedback, review, reminders, sessions and vital signs."""
        from memlane.services.lifecycle import Lifecycle

        return Lifecycle(self.rt)

    @cached_property
    def scopes(self) -> Scoping:
        """Moving memories between scopes: rekeying a scope, folding aliased projects
        under their canonical name, promotion up the scope ladder."""
        from memlane.services.scoping import Scoping

        return Scoping(self.rt)

    @cached_property
    def packs(self) -> Packs:
        """The curated pack, pack files, and closing a session with its summary."""
        from memlane.services.pack import Packs

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
    consolidate = _moved("maintenance", "consolidate")
    organize = _moved("maintenance", "organize")
    merged_from = _moved("maintenance", "merged_from")
    reflect = _moved("reflection", "reflect")
    proposals = _moved("reflection", "proposals")
    apply_proposals = _moved("reflection", "apply_proposals")
    maintenance_lock = _moved("maintenance", "lock", "maintenance_lock")
    maintenance_check = _moved("maintenance", "check", "maintenance_check")
    doctor = _moved("admin", "doctor")
    backup = _moved("admin", "backup")
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
    def types(name: str) -> Names:
        """Deprecated: use `Memory.registries.types` (or `Registries.types`)."""
        warnings.warn(
            "Memory.types is now Memory.registries.types; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        from memlane.services.registries import Registries

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
        migrate: bool = True,
    ) -> Memory:
        """Create or open the store at `path`; the context defaults to the working directory.

        Pass an `embedder` (see `memlane.embed.get_embedder`) for vectors and the vector
        lane; without one every other operation works the same. `migrate=False` refuses
        a store an older memlane made (SchemaOutdated) instead of migrating it (see
        `Memory.migrate_schema`).
        """
        ctx = context if context is not None else detect_context(Path.cwd())
        return cls(
            open_store(path, synchronous, migrate=migrate),
            agent=agent,
            context=ctx,
            limits=limits,
            embedder=embedder,
            embed_problem=embed_problem,
            embed_on_write=embed_on_write,
        )

    @staticmethod
    def schema_status(path: str | Path) -> SchemaStatus:
        """Where the schema of the store at `path` stands and which migrations are
        pending; creates, migrates and writes nothing."""
        return schema_status(path)

    @staticmethod
    def migrate_schema(path: str | Path) -> SchemaStatus:
        """Apply the pending migrations of the existing store at `path`; returns its
        status before (`pending`: what was applied)."""
        return migrate_schema(path)

    @classmethod
    def restore_snapshot(
        cls, path: str | Path, snapshot: str | Path, *, force: bool = False
    ) -> RestoreReport:
        """Replace the store at `path` with a verified snapshot, keeping a copy of the
        store it replaces (see services.backup.restore_snapshot)."""
        return restore_snapshot(Path(path), Path(snapshot), force=force)

    def add(self, content: str, title: str | None = None, **fields: Any) -> WriteResult:
        """Store one memory through the write policy; see `memlane add --help` for fields."""
        return self._writing.add(content, title, **fields)

    def seed_agent(
        self, name: str, meta: Mapping[str, Any], body: str
    ) -> tuple[RegistryEntry, WriteResult | None]:
        """Register an agent from a seed file and keep its body as its identity memory."""
        return self._writing.seed_agent(name, meta, body)

    def add_batch(self, items: Iterable[BatchItem]) -> BatchResult:
        """Add many memories; a bad item is reported by its line number and skipped."""
        return self._writing.add_batch(items)

    def iter_batch(self, items: Iterable[BatchItem]) -> Iterator[BatchLine]:
        """`add_batch`, yielding each line's outcome once its transaction has committed."""
        return self._writing.iter_batch(items)

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
        """Change a memory in place; its prior content becomes a version (see `history`)."""
        return self._writing.update(
            memory_id, patch, reason, auto_anchor=auto_anchor, capture_mode=capture_mode, **changes
        )

    def restore(
        self, memory_id: str, version: int | None = None, *, auto_anchor: bool = True
    ) -> WriteResult:
        """Bring back an earlier version's content (the previous one by default)."""
        return self._writing.restore(memory_id, version, auto_anchor=auto_anchor)

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
        """A new memory replaces an old one, which stays for audit with `superseded_by`."""
        return self._writing.supersede(memory_id, content, title, reason, force=force, **fields)

    def invalidate(self, memory_id: str, reason: str) -> Record:
        """End a memory's validity now, with the reason it is no longer true."""
        return self._writing.invalidate(memory_id, reason)

    def retire(self, memory_id: str, reason: str | None = None) -> Record:
        """Drop a memory that has no successor; it stays for audit and as-of reads."""
        return self._writing.retire(memory_id, reason)

    def merge(
        self,
        memory_ids: Iterable[str],
        content: str,
        title: str | None = None,
        *,
        force: bool = False,
        **fields: Any,
    ) -> WriteResult:
        """Merge memories into one new memory; the rest are superseded by it."""
        return self._writing.merge(memory_ids, content, title, force=force, **fields)

    def auto_anchor(
        self,
        memory_id: str | None = None,
        *,
        threshold: float = ANCHOR_LOW,
        max_anchors: int = MAX_ANCHORS,
        dry_run: bool = False,
        fill: bool = False,
        progress: Progress | None = None,
    ) -> AnchorPlans:
        """Anchor one memory (or every live one) to its nearest neighbours; the plans.
        `progress(done, total)` is told after each memory."""
        return self._anchoring.auto_anchor(
            memory_id,
            threshold=threshold,
            max_anchors=max_anchors,
            dry_run=dry_run,
            fill=fill,
            progress=progress,
        )

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
        as_of: str | datetime | None = None,
        **options: Any,
    ) -> Records:
        """Recent memories: ephemeral facts by default, all kinds with `all_types`.
        `as_of` T: what was recent then (the `days` before T, as the store read at T:
        memories created by then and valid then)."""
        if days < 0:
            raise Invalid("--days must not be negative")
        if sort not in ("chronological", "resonance"):
            raise Invalid("--sort must be chronological or resonance")
        types = [resonance_type] if resonance_type else ([] if all_types else ["ephemeral"])
        at = parse_instant(as_of, "as-of") if as_of is not None else None
        return self.list(
            since=(at or utcnow()) - timedelta(days=days),
            as_of=at,
            resonance_types=types,
            limit=limit,
            order="created" if sort == "chronological" else "importance",
            **options,
        )

    @cached_property
    def _recall(self) -> Recall:
        return Recall(self.rt)

    def embed(
        self,
        memory_id: str | None = None,
        *,
        pending: bool = False,
        all: bool = False,
        long_only: int | None = None,
        progress: Progress | None = None,
    ) -> EmbedOutcome:
        """Embed one memory, the pending ones, or all live ones (see Recall.embed)."""
        return self._recall.embed(
            memory_id, pending=pending, all=all, long_only=long_only, progress=progress
        )

    def reembed(
        self, embedder: Embedder, dry_run: bool = False, progress: Progress | None = None
    ) -> int:
        """Re-embed every live memory with another profile (see Recall.reembed)."""
        return self._recall.reembed(embedder, dry_run, progress)

    def search(
        self,
        query: str,
        filters: Filters | None = None,
        mode: str = "keyword",
        *,
        activate: bool = False,
        **options: Any,
    ) -> Hits:
        """Search by keyword, vector or both: the hits of `searched`."""
        return self.searched(query, filters, mode, activate=activate, **options).hits

    def searched(
        self,
        query: str,
        filters: Filters | None = None,
        mode: str = "keyword",
        *,
        activate: bool = False,
        **options: Any,
    ) -> Searched:
        """A search with its evidence (see Recall.searched)."""
        return self._recall.searched(query, filters, mode, activate=activate, **options)

    def recall(
        self,
        query: str,
        filters: Filters | None = None,
        *,
        limit: int = RECALL_LIMIT,
        max_tokens: int | None = None,
        passive: bool = False,
        activate: bool = False,
        count: bool = True,
        **options: Any,
    ) -> RecallResult:
        """The few memories that matter for `query`, ranked and explained (see Recall.recall)."""
        return self._recall.recall(
            query,
            filters,
            limit=limit,
            max_tokens=max_tokens,
            passive=passive,
            activate=activate,
            count=count,
            **options,
        )

    def surfaced(self, memory_ids: Sequence[str]) -> None:
        """Count a passive showing of these memories (see Recall.surfaced)."""
        self._recall.surfaced(memory_ids)

    def explain(
        self,
        query: str,
        target: str | None = None,
        filters: Filters | None = None,
        *,
        limit: int = RECALL_LIMIT,
        max_tokens: int | None = None,
        passive: bool = False,
        **options: Any,
    ) -> Explanation:
        """Why each target surfaced in a recall or not (see Recall.explain)."""
        return self._recall.explain(
            query, target, filters, limit=limit, max_tokens=max_tokens, passive=passive, **options
        )

    def hidden_private_count(self, filters: Filters, query: str | None = None) -> int:
        """How many of the viewer's own private memories a public-only read hid."""
        return self._recall.hidden_private_count(filters, query)

    def chunk_count(self, memory_id: str) -> int:
        """How many chunk vectors a memory has under the store's embedding profile."""
        return self._recall.chunk_count(memory_id)

    def elsewhere_count(self, filters: Filters, query: str | None = None) -> int:
        """How many memories the same read finds in the scopes it did not read."""
        return self._recall.elsewhere_count(filters, query)

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

    def delete(self, memory_id: str) -> Forgotten:
        """Remove a memory from every table and index; the journal keeps one line."""
        return self._forgetting.delete(memory_id)

    def forget(
        self, memory_id: str, reason: str | None = None, *, operation: str = "forget"
    ) -> Forgotten:
        """Remove a memory and every copy of its text; the journal keeps one line."""
        return self._forgetting.forget(memory_id, reason, operation=operation)

    def forget_scope(
        self, scope: str, *, confirm: bool = False, reason: str | None = None
    ) -> Forgotten:
        """Forget every memory of one scope this agent may see (needs `confirm`)."""
        return self._forgetting.forget_scope(scope, confirm=confirm, reason=reason)

    @staticmethod
    def diagnose(location: str | Path, problem: MemlaneError) -> Checks:
        """`doctor`'s checks of a store that could not be opened: the reason, and what
        a read-only look at its pages finds."""
        from memlane.services.admin import Admin

        return Admin.diagnose(location, problem)
