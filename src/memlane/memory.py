"""The `Memory` facade: every operation an interface can ask of memlane."""

from __future__ import annotations

import base64
import difflib
import json
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlane.errors import AmbiguousId, Conflict, Invalid, MemlaneError, NotFound, Unavailable
from memlane.model import (
    TYPE_REGISTRIES,
    VERSIONED_FIELDS,
    BatchLine,
    BatchResult,
    Filters,
    Hit,
    JournalEntry,
    Kind,
    Link,
    LinkType,
    Record,
    RegistryEntry,
    State,
    Stats,
    Taint,
    Version,
    Visibility,
    WriteResult,
    WriteStatus,
)
from memlane.retrieve.filters import make_filters
from memlane.scope import Context, detect_context
from memlane.store import Store, Writer, open_store
from memlane.timeutil import parse_instant, utcnow
from memlane.write import pipeline
from memlane.write.draft import Draft, Limits, WriteContext, build_draft, inherited_fields
from memlane.write.patch import Patch, anchor_targets, apply_patch, make_patch
from memlane.write.pipeline import Staged

if TYPE_CHECKING:  # numpy and the models load only when vectors are used
    from memlane.embed import Embedder
    from memlane.retrieve.recall import RecallOptions, RecallResult
    from memlane.retrieve.vectors import VectorIndex
    from memlane.write.embedding import EmbedOutcome

ID_PREFIX = "m-"
# RFC 4648 base32 digits mapped onto Crockford's lowercase alphabet (no i, l, o, u).
_TO_ID = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789abcdefghjkmnpqrstvwxyz")
# Lines per transaction in add-batch. Large enough to amortize the commit (random
# index pages are rewritten once per transaction: at 100k memories, 2,000-line
# chunks halve the commit cost of 500-line ones), small enough that a crash loses
# at most this many unacknowledged lines and other writers wait well under a second.
BATCH_CHUNK = 2000
# A batch this large can change the shape of the data enough to mislead the planner.
REANALYZE_AFTER = 1000
REGISTRIES = ("categories", "agents", "projects", "applicability")
BatchItem = Mapping[str, Any] | str | bytes
# Who may see a memory is never rolled back by restoring an older version.
_ACCESS_FIELDS = frozenset({"visibility", "owner"})
# Aliases: inside Memory, `list` names the method, not the builtin.
Records = list[Record]
Hits = list[Hit]
Versions = list[Version]
Links = list[Link]
Journal = list[JournalEntry]
Entries = list[RegistryEntry]
Names = list[str]


def new_id() -> str:
    """A random id: 40 bits as 8 Crockford base32 characters (retried if ever taken)."""
    return ID_PREFIX + base64.b32encode(secrets.token_bytes(5)).decode("ascii").translate(_TO_ID)


class Memory:
    """Long-term memory over one store. Open with `Memory.open(path)`."""

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
        """`embedder`: an Embedder, or a factory called on first need (so a read that
        needs no vectors never loads a model); None: no vector lane. `embed_problem`
        says why a configured one is unusable (writes then report embed_deferred);
        `embed_on_write` False defers all embedding to `embed --pending`."""
        self.store = store
        self.agent = agent
        self.context = context or Context()
        self.limits = limits or Limits()
        self._embedder_source = embedder
        self._embedder: Embedder | None = None
        self.embed_problem = embed_problem
        self.embed_on_write = embed_on_write
        self._categories: set[str] = set()
        self._index: VectorIndex | None = None
        # How recall weighs and diversifies (interfaces set these from the settings).
        self.recall_settings = _default_recall_settings()

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

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- helpers -----------------------------------------------------------

    def _write_context(self) -> WriteContext:
        return WriteContext(
            now=utcnow(), new_id=new_id, agent=self.agent, context=self.context, limits=self.limits
        )

    def resolve(self, memory_id: str) -> str:
        """The full id for an id or an unambiguous prefix (with or without `m-`)."""
        text = memory_id.strip()
        if not text:
            raise Invalid("empty id")
        prefix = text if text.startswith(ID_PREFIX) else ID_PREFIX + text
        candidates = self.store.resolve(prefix, self.agent)
        if prefix in candidates:
            return prefix
        if not candidates:
            raise NotFound(f"no memory with id {memory_id!r}")
        if len(candidates) > 1:
            raise AmbiguousId(memory_id, candidates)
        return candidates[0]

    def _visible(self, record: Record) -> bool:
        return record.visibility is Visibility.PUBLIC or record.owner == self.agent

    def _load(self, reader: Store | Writer, memory_id: str) -> Record:
        record = reader.get(self.resolve(memory_id))
        if record is None or not self._visible(record):
            raise NotFound(f"no memory with id {memory_id!r}")
        return record

    def _live(self, w: Writer, memory_id: str) -> Record:
        record = self._load(w, memory_id)
        if not record.live:
            raise Conflict(f"{record.id} is {record.tombstone_text}; tombstones are write-once")
        return record

    @contextmanager
    def _transaction(self) -> Iterator[Writer]:
        """One write transaction; registry lookups cached inside it stay consistent."""
        self._categories = set()
        with self.store.write() as w:
            yield w

    def _check_category(self, category: str) -> None:
        """Refuse an unregistered category (looked up once per transaction)."""
        if category in self._categories:
            return
        self._categories = {e.key for e in self.store.registry("categories")}
        if category not in self._categories:
            near = difflib.get_close_matches(category, sorted(self._categories), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise Invalid(
                f"unknown category {category!r}{hint}; add it with: memlane categories add {category}"
            )

    def _journal(self, w: Writer, operation: str, memory_id: str | None) -> None:
        w.journal(operation, [memory_id], self.agent)

    # ---- capture -----------------------------------------------------------

    def add(self, content: str, title: str | None = None, **fields: Any) -> WriteResult:
        """Store one memory through the write policy; see `memlane add --help` for fields."""
        draft = build_draft({"content": content, "title": title, **fields}, self._write_context())
        self._check_embed_profile(draft.no_embed)
        with self._transaction() as w:
            result = self._persist(w, draft)
        if result.skipped or draft.no_embed:
            return result
        return self._reembedded(result)

    def _admit(self, w: Writer, draft: Draft, staged: Staged) -> WriteResult | None:
        """The exact-duplicate gate: a skip result, or None when the draft may land."""
        self._check_category(draft.record.category)
        if draft.allow_duplicate:
            return None
        duplicate = pipeline.duplicate_of(w, draft.record, staged)
        return pipeline.skipped(duplicate, draft.record) if duplicate else None

    def _persist(self, w: Writer, draft: Draft) -> WriteResult:
        """One add: the gate, then the row with its anchors and the thread it closes."""
        skip = self._admit(w, draft, Staged())
        if skip is not None:
            return skip
        thread = self._thread_to_close(w, draft.close_thread)
        anchors = [self._load(w, a).id for a in draft.anchors]
        [rec] = pipeline.land(w, [draft.record], new_id, self.agent)
        for anchor in anchors:
            w.add_link(Link(rec.id, anchor, LinkType.ANCHOR, created_at=rec.created_at))
        if thread is not None:
            closed = replace(thread, state=State.CLOSED)
            pipeline.revise(w, thread, closed, f"closed by {rec.id}", self.agent)
            w.add_link(Link(rec.id, thread.id, LinkType.UPDATES, reason="closes thread"))
        return pipeline.added(rec)

    def _thread_to_close(self, w: Writer, thread_id: str | None) -> Record | None:
        if thread_id is None:
            return None
        thread = self._live(w, thread_id)
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

    def _batch_chunk(self, chunk: list[tuple[int, BatchItem]]) -> tuple[list[BatchLine], list[str]]:
        """One transaction: admit each line, then land the admitted rows in bulk.

        Returns the lines' outcomes and the ids of the landed memories to embed.
        """
        out: dict[int, BatchLine] = {}
        staged, lines = Staged(), dict[int, int]()
        skip_embed: set[int] = set()  # line numbers that asked for no_embed
        with self._transaction() as w:
            for number, item in chunk:
                try:
                    draft = build_draft(_batch_fields(item), self._write_context())
                    if draft.no_embed:
                        skip_embed.add(number)
                    if draft.close_thread or draft.anchors:  # they name rows landed before
                        out.update(self._land_staged(w, staged, lines))
                        staged, lines = Staged(), {}
                        out[number] = BatchLine(number, result=self._persist(w, draft))
                        continue
                    skip = self._admit(w, draft, staged)
                    if skip is not None:
                        out[number] = BatchLine(number, result=skip)
                    else:
                        lines[staged.add(draft.record)] = number
                except (Invalid, NotFound, Conflict) as exc:
                    out[number] = BatchLine(number, error=str(exc))
            out.update(self._land_staged(w, staged, lines))
        results = [out[number] for number, _ in chunk]
        embed = [
            ln.result.id
            for ln in results
            if ln.result and ln.result.id and not ln.result.skipped and ln.line not in skip_embed
        ]
        return results, embed

    def _reembedded(self, result: WriteResult) -> WriteResult:
        """Vectors for the memory a write just created or changed; deferred on failure."""
        if result.id is None:
            return result
        failed = self._embed_ids([result.id])
        return _deferred(result, failed[result.id]) if result.id in failed else result

    def _embedded_lines(self, lines: list[BatchLine], ids: list[str]) -> list[BatchLine]:
        """Embed a committed chunk's new memories; a failure marks its lines deferred."""
        failed = self._embed_ids(ids)
        if not failed:
            return lines
        return [
            replace(ln, result=_deferred(ln.result, failed[ln.result.id]))
            if ln.result and ln.result.id in failed
            else ln
            for ln in lines
        ]

    # ---- embeddings --------------------------------------------------------

    @property
    def embedder(self) -> Embedder | None:
        """The embedder, created on first use; None when there is none or it failed."""
        source = self._embedder_source
        if self._embedder is None and source is not None:
            if callable(source):
                try:
                    self._embedder = source()
                except MemlaneError as exc:  # unusable: every other operation still works
                    self.embed_problem = str(exc)
                self._embedder_source = self._embedder
            else:
                self._embedder = source
        return self._embedder

    def _check_embed_profile(self, no_embed: bool) -> None:
        """Refuse a write that would mix vector profiles in one store."""
        if self.embed_on_write and not no_embed and self.embedder is not None:
            from memlane.write import embedding

            embedding.check_profile(self.store, self.embedder)

    def _embed_ids(self, ids: Sequence[str]) -> dict[str, str]:
        """Embed memories that just changed; {id: why} for those left without vectors.

        Trigger: no embedder is configured. Outcome: nothing to do, nothing deferred.
        Trigger: an embedder is configured but unusable, or it fails. Outcome: the
        memories stay (the write landed) and are reported embed_deferred.
        """
        if not ids or not self.embed_on_write:
            return {}
        if self.embedder is None:
            return dict.fromkeys(ids, self.embed_problem) if self.embed_problem else {}
        from memlane.write import embedding

        records = self.store.query(Filters(ids=tuple(ids), any_visibility=True, limit=None))
        outcome = embedding.embed_records(self.store, self.embedder, records)
        return dict.fromkeys(outcome.failed, outcome.error or "embedding failed")

    def embed(
        self,
        memory_id: str | None = None,
        *,
        pending: bool = False,
        all: bool = False,
        long_only: int | None = None,
    ) -> EmbedOutcome:
        """Embed one memory, the pending ones (missing or stale vectors), or all live ones;
        `long_only` N narrows to bodies of at least N characters."""
        if sum((memory_id is not None, pending, all)) != 1:
            raise Invalid("embed takes exactly one of: an id, --pending, --all")
        if self.embedder is None:
            raise Unavailable(f"cannot embed: {self.embed_problem or 'no embedding profile'}")
        if memory_id is not None:
            records = [self._load(self.store, memory_id)]
        elif pending:
            records = self.store.unembedded(self.embedder.profile.signature)
        else:
            records = self.list(scope="all", limit=0, include_private=self.agent is not None)
        if long_only is not None:
            records = [r for r in records if len(r.body) >= long_only]
        return self._embed_all(records)

    def _embed_all(self, records: Sequence[Record]) -> EmbedOutcome:
        from memlane.write import embedding

        done: list[str] = []
        failed: list[str] = []
        error = None
        for start in range(0, len(records), embedding.EMBED_CHUNK):
            part = records[start : start + embedding.EMBED_CHUNK]
            outcome = embedding.embed_records(self.store, self._need_embedder(), part)
            done += outcome.embedded
            failed += outcome.failed
            error = error or outcome.error
        return embedding.EmbedOutcome(tuple(done), tuple(failed), error)

    def _need_embedder(self) -> Embedder:
        if self.embedder is None:
            raise Unavailable(f"cannot embed: {self.embed_problem or 'no embedding profile'}")
        return self.embedder

    def reembed(self, embedder: Embedder, dry_run: bool = False) -> int:
        """Re-embed every live memory with another profile and make it the store's profile.

        The old vectors are replaced in one transaction per batch of memories, and the
        store's profile moves only when all of them succeeded; running it again is safe.
        """
        from memlane.write import embedding

        records = self.store.query(Filters(any_visibility=True, limit=None))
        if dry_run:
            return len(records)
        documents = embedding.embed_documents(
            embedder, [embedding.document_text(r) for r in records]
        )
        with self.store.write() as w:
            w.drop_vectors()
            w.set_meta(embedding.PROFILE_KEY, embedder.profile.signature)
            embedding.put_documents(w, embedder, records, documents)
            self._journal(w, "reembed", None)
        self._embedder_source, self._embedder = embedder, embedder
        self.embed_problem, self._index = None, None
        return len(records)

    def _land_staged(
        self, w: Writer, staged: Staged, lines: dict[int, int]
    ) -> dict[int, BatchLine]:
        """Insert the staged rows; their lines' results, keyed by line number."""
        final = pipeline.land(w, staged.records, new_id, self.agent)
        return {
            lines[i]: BatchLine(lines[i], result=pipeline.added(r)) for i, r in enumerate(final)
        }

    # ---- reads -------------------------------------------------------------

    def get(self, memory_id: str, as_of: datetime | str | None = None) -> Record:
        """One memory; with `as_of`, the version that was valid then."""
        full = self.resolve(memory_id)
        if as_of is None:
            return self._load(self.store, full)
        at = parse_instant(as_of, "as-of") if not isinstance(as_of, datetime) else as_of
        record = self.store.get(full, as_of=at)
        if record is None or not self._visible(record):
            self._load(self.store, full)  # NotFound if it never existed for this viewer
            raise NotFound(f"{full} was not valid at {at.isoformat()}")
        return record

    def filters(self, **options: Any) -> Filters:
        """Filters from keyword options (see `retrieve.filters.make_filters`)."""
        return make_filters(self.context, self.agent, options)

    def list(self, filters: Filters | None = None, **options: Any) -> Records:
        return self.store.query(filters or self.filters(**options))

    def search(
        self, query: str, filters: Filters | None = None, mode: str = "keyword", **options: Any
    ) -> Hits:
        """Search: `keyword` (BM25: all words, else all but one, else any word), `vector`
        (nearest by meaning) or `hybrid` (both, fused by reciprocal rank)."""
        from memlane.retrieve import lanes

        chosen = filters or self.filters(**options)
        if mode not in lanes.MODES:
            raise Invalid(f"invalid search mode {mode!r}; choose from: {', '.join(lanes.MODES)}")
        if mode == "keyword":
            return lanes.keyword(self.store, query, chosen)
        index, embedder = self._vector_lane()
        if mode == "vector":
            return lanes.vector(self.store, index, embedder, query, chosen)
        return lanes.hybrid(self.store, index, embedder, query, chosen)

    def recall(
        self,
        query: str,
        filters: Filters | None = None,
        *,
        limit: int = 10,
        max_tokens: int | None = None,
        passive: bool = False,
        activate: bool = False,
        count: bool = True,
        **options: Any,
    ) -> RecallResult:
        """The few memories that matter for `query`, ranked and explained (DESIGN §5).

        Explicit reads count in retrieval_count; `passive` reads (hooks) count in
        surfaced_count only, and never surface injection-risk, untrusted-web or
        low-confidence memories. `activate` also resets their decay clocks. `count`
        False writes nothing (evaluations: popularity must not feed back into them).
        """
        from memlane.retrieve.recall import recall

        if limit < 1:
            raise Invalid("--limit must be at least 1 for recall")
        chosen = filters or self.filters(**options)
        vector_lane = self._vector_lane() if self.embedder is not None else None
        settings = replace(self.recall_settings, limit=limit, max_tokens=max_tokens)
        result = recall(
            self.store, query, chosen, now=utcnow(), context=self.context,
            options=settings, vector_lane=vector_lane,
        )  # fmt: skip
        if passive:
            result = replace(result, hits=tuple(h for h in result.hits if _passive_ok(h.record)))
        ids = [h.record.id for h in result.hits]
        if ids and count:
            with self._transaction() as w:
                w.touch(ids, "surfaced" if passive else "retrieval", utcnow())
                if activate:
                    w.touch(ids, "activation", utcnow())
        return result

    def _vector_lane(self) -> tuple[VectorIndex, Embedder]:
        """The vector index of this store's profile; Unavailable without an embedder."""
        if self.embedder is None:
            why = self.embed_problem or "no embedding profile is configured"
            raise Unavailable(f"the vector lane is unavailable: {why}")
        from memlane.retrieve.vectors import VectorIndex
        from memlane.write import embedding

        embedding.check_profile(self.store, self.embedder)
        if self._index is None:
            profile = self.embedder.profile
            self._index = VectorIndex(self.store, profile.signature, profile.dimension)
        return self._index, self.embedder

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

    def history(self, memory_id: str) -> Versions:
        """Every content version, oldest first; the last one is current (valid_until None)."""
        record = self._load(self.store, memory_id)
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

    def links(self, memory_id: str) -> Links:
        return self.store.links(self._load(self.store, memory_id).id)

    def journal(self, memory_id: str | None = None, limit: int = 100) -> Journal:
        """Journal lines, newest first; a deleted memory's id still finds its lines."""
        full = None
        if memory_id:
            try:
                full = self.resolve(memory_id)
            except NotFound:
                full = memory_id if memory_id.startswith(ID_PREFIX) else ID_PREFIX + memory_id
        return self.store.journal_entries(full, limit)

    def stats(self) -> Stats:
        return self.store.stats()

    # ---- revise ------------------------------------------------------------

    def _commit_version(self, w: Writer, old: Record, new: Record, reason: str) -> Record:
        return pipeline.revise(w, old, new, reason, self.agent)

    def update(
        self, memory_id: str, patch: Patch | None = None, reason: str | None = None, **changes: Any
    ) -> WriteResult:
        """Change a memory in place; its prior content becomes a version (see `history`).

        Anchors are links, not content: changing only them writes no version.
        """
        patch = patch or make_patch(changes)
        with self._transaction() as w:
            old = self._live(w, memory_id)
            new = apply_patch(old, patch, self.limits)
            if new.category != old.category:
                self._check_category(new.category)
            anchors_changed = self._update_anchors(w, old, patch)
            if new == old and not anchors_changed:
                raise Invalid("nothing to change: the update leaves the memory as it is")
            final = self._commit_version(w, old, new, reason or "updated") if new != old else old
        result = WriteResult(
            id=final.id, status=WriteStatus.UPDATED, title=final.title, version=final.version
        )
        return self._reembedded(result) if final.dedup_hash != old.dedup_hash else result

    def _update_anchors(self, w: Writer, record: Record, patch: Patch) -> bool:
        """Apply the anchor modes of a patch as link changes; True when any changed."""
        wanted = anchor_targets(record.anchors, patch)
        if wanted == record.anchors:
            return False
        resolved = {self._load(w, a).id for a in wanted}
        for gone in set(record.anchors) - resolved:
            w.remove_link(record.id, gone, LinkType.ANCHOR)
        for added in resolved - set(record.anchors):
            w.add_link(Link(record.id, added, LinkType.ANCHOR, created_at=utcnow()))
        self._journal(w, "anchors", record.id)
        return set(record.anchors) != resolved

    def restore(self, memory_id: str, version: int | None = None) -> WriteResult:
        """Bring back an earlier version's content (the previous one by default)."""
        with self._transaction() as w:
            old = self._live(w, memory_id)
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
        return self._reembedded(
            WriteResult(
                id=final.id, status=WriteStatus.UPDATED, title=final.title, version=final.version
            )
        )

    def _tombstone(self, w: Writer, record: Record, **stamp: Any) -> None:
        w.replace(replace(record, updated_at=utcnow(), **stamp), None)

    def supersede(
        self,
        memory_id: str,
        content: str,
        title: str | None = None,
        reason: str | None = None,
        **fields: Any,
    ) -> WriteResult:
        """A new memory replaces an old one, which stays for audit with `superseded_by`."""
        with self._transaction() as w:
            old = self._live(w, memory_id)
            draft = build_draft(
                {**inherited_fields(old), "content": content, "title": title, **fields},
                self._write_context(),
            )
            self._check_category(draft.record.category)
            [new] = pipeline.land(w, [draft.record], new_id, self.agent)
            self._tombstone(
                w,
                old,
                superseded_by=new.id,
                superseded_at=new.created_at,
                supersede_reason=reason or "superseded",
            )
            self._journal(w, "supersede", old.id)
            w.add_link(Link(new.id, old.id, LinkType.SUPERSEDES, reason=reason))
        return self._reembedded(WriteResult(id=new.id, status=WriteStatus.ADDED, title=new.title))

    def invalidate(self, memory_id: str, reason: str) -> Record:
        """End a memory's validity now, with the reason it is no longer true."""
        if not reason or not reason.strip():
            raise Invalid("invalidate needs a non-empty --reason")
        with self._transaction() as w:
            old = self._live(w, memory_id)
            self._tombstone(w, old, valid_until=utcnow(), supersede_reason=reason.strip())
            self._journal(w, "invalidate", old.id)
        return self._load(self.store, old.id)

    def retire(self, memory_id: str, reason: str | None = None) -> Record:
        """Drop a memory that has no successor; it stays for audit and as-of reads."""
        with self._transaction() as w:
            old = self._live(w, memory_id)
            self._tombstone(w, old, superseded_at=utcnow(), supersede_reason=reason or "retired")
            self._journal(w, "retire", old.id)
        return self._load(self.store, old.id)

    def merge(
        self, memory_ids: Iterable[str], content: str, title: str | None = None, **fields: Any
    ) -> WriteResult:
        """Merge memories into one new memory (importance: the maximum); the rest are superseded."""
        warnings: Names = []
        with self._transaction() as w:
            sources: Records = []
            for memory_id in dict.fromkeys(memory_ids):
                try:
                    sources.append(self._live(w, memory_id))
                except NotFound as exc:
                    warnings.append(f"skipped: {exc}")
            if not sources:
                raise NotFound("none of the memories to merge exist")
            inherited = {
                **inherited_fields(sources[0]),
                "importance": max(s.importance for s in sources),
                "tags": list(dict.fromkeys(t for s in sources for t in s.tags)),
            }
            draft = build_draft(
                {**inherited, "content": content, "title": title, **fields}, self._write_context()
            )
            self._check_category(draft.record.category)
            [new] = pipeline.land(w, [draft.record], new_id, self.agent)
            for source in sources:
                self._tombstone(
                    w,
                    source,
                    superseded_by=new.id,
                    superseded_at=new.created_at,
                    supersede_reason=f"merged into {new.id}",
                )
                w.add_link(Link(new.id, source.id, LinkType.SUPERSEDES, reason="merge"))
        return self._reembedded(
            WriteResult(
                id=new.id, status=WriteStatus.ADDED, warnings=tuple(warnings), title=new.title
            )
        )

    def delete(self, memory_id: str) -> str:
        """Remove a memory from every table and index; the journal keeps one line, no content."""
        with self._transaction() as w:
            record = self._load(w, memory_id)
            w.delete(record.id)
            self._journal(w, "delete", record.id)
        return record.id

    # ---- registries --------------------------------------------------------

    def registry(self, name: str) -> Entries:
        _check_registry(name)
        return self.store.registry(name)

    def register(self, registry: str, key: str, **data: Any) -> RegistryEntry:
        """Add (or update) an entry of a registry: categories, agents, projects, applicability."""
        _check_registry(registry)
        key = key.strip()
        if not key or len(key) > 64 or any(c in key for c in ",\n\t"):
            raise Invalid(f"invalid {registry} name {key!r}: 1-64 characters, no commas")
        data = {k: v for k, v in data.items() if v is not None}
        entry = RegistryEntry(registry, key, data, utcnow())
        with self._transaction() as w:
            w.put_registry(entry)
            self._journal(w, f"{registry}.add", None)
        return entry

    def unregister(self, name: str, key: str) -> None:
        """Remove a registry entry; a category still used by any memory is refused."""
        _check_registry(name)
        if name == "categories":
            used = self.store.usage("category", key)
            if used:
                raise Conflict(f"category {key!r} is used by {used} memories; it stays")
        with self._transaction() as w:
            if not w.remove_registry(name, key):
                raise NotFound(f"no {name} entry {key!r}")
            self._journal(w, f"{name}.remove", None)
        self._categories.discard(key)

    def registry_entry(self, name: str, key: str) -> RegistryEntry:
        for entry in self.registry(name):
            if entry.key == key:
                return entry
        raise NotFound(f"no {name} entry {key!r}")

    def usage(self, field: str, value: str) -> int:
        return self.store.usage(field, value)

    def tags(self, category: str | None = None) -> dict[str, int]:
        return self.store.tag_counts(self.agent, category)

    @staticmethod
    def types(name: str) -> Names:
        """Valid values of a typed field: kinds, source-types, relationship-types, ..."""
        key = name.strip().lower().replace("_", "-")
        if key not in TYPE_REGISTRIES:
            raise Invalid(f"unknown type list {name!r}; choose from: {', '.join(TYPE_REGISTRIES)}")
        return [member.value for member in TYPE_REGISTRIES[key]]


def _check_registry(name: str) -> None:
    if name not in REGISTRIES:
        raise Invalid(f"unknown registry {name!r}; choose from: {', '.join(REGISTRIES)}")


def _default_recall_settings() -> RecallOptions:
    from memlane.retrieve.recall import RecallOptions

    return RecallOptions()


# Passive reads (hooks inject without being asked) hold back what could mislead a model.
PASSIVE_CONFIDENCE_FLOOR = 0.25
_PASSIVE_BLOCKED_TAGS = frozenset({"injection-risk"})


def _passive_ok(record: Record) -> bool:
    return (
        record.taint is not Taint.UNTRUSTED_WEB
        and record.confidence >= PASSIVE_CONFIDENCE_FLOOR
        and not _PASSIVE_BLOCKED_TAGS.intersection(record.tags)
    )


def _deferred(result: WriteResult, why: str) -> WriteResult:
    return replace(
        result,
        status=WriteStatus.EMBED_DEFERRED,
        warnings=(*result.warnings, f"embedding deferred ({why}); run `memlane embed --pending`"),
    )


def _batch_fields(item: Mapping[str, Any] | str | bytes) -> Mapping[str, Any]:
    if isinstance(item, bytes):
        try:
            item = item.decode("utf-8")
        except UnicodeDecodeError:
            raise Invalid("line is not valid UTF-8") from None
    if isinstance(item, str):
        try:
            item = json.loads(item.removeprefix("\ufeff"))  # a BOM from Windows editors
        except ValueError as exc:
            raise Invalid(f"not valid JSON: {exc.args[0] if exc.args else exc}") from None
        except RecursionError:
            raise Invalid("JSON nested too deeply") from None
    if not isinstance(item, Mapping):
        raise Invalid("each line must be a JSON object")
    return item
