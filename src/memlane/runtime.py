"""The runtime every feature of memlane works through: the store, who is acting and
where, the embedder and its vector index, id resolution, reading a memory as this
agent may see it, write transactions and the read counters.

Features (memlane.services: writing, recall, the graph, lifecycle, maintenance,
administration) hold a Runtime and never reach into one another through it: a feature
that needs another's work is given it when built, and `Memory` composes them.
"""

from __future__ import annotations

import base64
import difflib
import itertools
import secrets
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from memlane.embed.base import Embedded, Embedder
from memlane.errors import AmbiguousId, Conflict, Invalid, MemlaneError, NotFound, Unavailable
from memlane.lifecycle.review import ReviewPolicy, due_for_review
from memlane.locking import MaintenanceLock
from memlane.model import (
    BatchLine,
    Filters,
    Hit,
    JournalEntry,
    Link,
    Record,
    RegistryEntry,
    Taint,
    Version,
    Visibility,
    WriteResult,
    WriteStatus,
    replace,
)
from memlane.retrieve.filters import make_filters
from memlane.retrieve.recall import RecallOptions
from memlane.scope import Context
from memlane.store import Store, Writer
from memlane.timeutil import utcnow
from memlane.write.settings import Limits, Thresholds

if TYPE_CHECKING:  # numpy loads only when vectors are used, the write policy with a write
    from memlane.retrieve.served import Index
    from memlane.write.draft import WriteContext
    from memlane.write.screen import ScreenedWriter

ID_PREFIX = "m-"
# RFC 4648 base32 digits mapped onto Crockford's lowercase alphabet (no i, l, o, u).
_TO_ID = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789abcdefghjkmnpqrstvwxyz")
# Lines per transaction in add-batch. Large enough to amortize the commit (random
# index pages are rewritten once per transaction, so larger chunks rewrite each page
# fewer times: `memlane bench` measures it), small enough that a crash loses at most
# this many unacknowledged lines and other writers wait well under a second.
BATCH_CHUNK = 2000
# A batch this large can change the shape of the data enough to mislead the planner.
REANALYZE_AFTER = 1000
REGISTRIES = ("categories", "agents", "projects", "applicability")
# The store_meta key naming the extractor version that wrote the entity mentions.
ENTITY_META = "entity_extractor"
BatchItem = Mapping[str, Any] | str | bytes
# Aliases: inside Memory, `list` names the method, not the builtin.
Records = list[Record]
Due = list[tuple[Record, float]]  # memories due for review, with their recall probability
Hits = list[Hit]
Versions = list[Version]
Links = list[Link]
Journal = list[JournalEntry]
Entries = list[RegistryEntry]
Names = list[str]
BatchLines = list[BatchLine]


def new_id() -> str:
    """A random id: 40 bits as 8 Crockford base32 characters (retried if ever taken)."""
    return ID_PREFIX + base64.b32encode(secrets.token_bytes(5)).decode("ascii").translate(_TO_ID)


# Passive reads (hooks inject without being asked) hold back what could mislead a model.
_PASSIVE_BLOCKED_TAGS = frozenset({"injection-risk"})
# What passive reads learned of a text by reading it, by its dedup hash (bounded).
_EMIT_VERDICTS: dict[str, bool] = {}
_EMIT_VERDICTS_MAX = 4096


def passive_ok(record: Record, floor: float) -> bool:
    """Whether a passive read may show a memory: not untrusted web, not an injection
    risk, and at least `floor` sure.

    Trigger: every memory a passive read would emit. Why: a stored tag reflects the
    tagger of the day it was written (an older store, a manual capture, text that
    reached the store before the tagger knew its phrasing). Outcome: the text is read
    again as it is emitted: one that reads as instructions to a model, or that holds a
    secret (kept by a reviewed or manual capture), is held back too.
    """
    return (
        record.taint is not Taint.UNTRUSTED_WEB
        and record.confidence >= floor
        and not _PASSIVE_BLOCKED_TAGS.intersection(record.tags)
        and _emittable(record)
    )


def _emittable(record: Record) -> bool:
    verdict = _EMIT_VERDICTS.get(record.dedup_hash)
    if verdict is None:
        from memlane.write.injection import is_injection
        from memlane.write.secrets import find_secrets

        text = f"{record.title}\n{record.body}"
        verdict = not is_injection(text) and not find_secrets(text)
        if len(_EMIT_VERDICTS) >= _EMIT_VERDICTS_MAX:
            _EMIT_VERDICTS.clear()
        _EMIT_VERDICTS[record.dedup_hash] = verdict
    return verdict


class Runtime:
    """Store, identity, context, limits and settings; the embedder and its index; id
    resolution, visibility, transactions and read counters."""

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
        self.lock = MaintenanceLock(store)  # one maintenance run at a time
        self.agent = agent
        self.context = context or Context()
        self.limits = limits or Limits()
        self._embedder_source = embedder
        self._embedder: Embedder | None = None
        self.embed_problem = embed_problem
        self.embed_on_write = embed_on_write
        self._categories: set[str] = set()
        self._index: Index | None = None
        self._entities_checked = False
        # How recall weighs and diversifies, and how alike a new memory must be to
        # restate or contradict another (interfaces set these from the settings).
        self.recall_settings = RecallOptions()
        self.write_policy = Thresholds()
        self.review_policy = ReviewPolicy()  # when a memory is due for review
        self.capture_mode = "auto"  # secrets redacted unless a write asks otherwise
        self.batch_workers: int | None = None  # add-batch's preparing processes (None: auto)
        # (field, kind) of every secret the store's door redacted (write.screen) that
        # no write result reported: interfaces tell the user.
        self.redactions: list[tuple[str, str]] = []
        # The taint of writes that name none: a person at the CLI is trusted_internal;
        # agent surfaces (MCP, hooks) set untrusted_tool.
        self.default_taint = Taint.TRUSTED_INTERNAL

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- ids and visibility ------------------------------------------------------

    def resolve(self, memory_id: str, scopes: Sequence[str] | None = None) -> str:
        """The full id for an id or an unambiguous prefix (with or without `m-`); with
        `scopes`, only their memories are candidates (any other is NotFound)."""
        if not isinstance(memory_id, str):
            raise Invalid(f"a memory id is a string, not {type(memory_id).__name__}")
        text = memory_id.strip()
        if not text:
            raise Invalid("empty id")
        prefix = text if text.startswith(ID_PREFIX) else ID_PREFIX + text
        candidates = self.store.resolve(prefix, self.agent, scopes=scopes)
        if prefix in candidates:
            return prefix
        if not candidates:
            raise NotFound(f"no memory with id {memory_id!r}")
        if len(candidates) > 1:
            raise AmbiguousId(memory_id, candidates)
        return candidates[0]

    def in_scopes(self, ids: Sequence[str], scopes: Sequence[str]) -> set[str]:
        """Those of `ids` that are memories in `scopes`, in any state."""
        if not ids:
            return set()
        within = Filters(
            ids=tuple(ids),
            scopes=tuple(scopes),
            any_visibility=True,
            include_superseded=True,
            limit=None,
        )
        return set(self.store.admitted(within))

    def visible(self, record: Record) -> bool:
        """Public, or private to this agent (a private memory is nobody's without one)."""
        mine = self.agent is not None and record.owner == self.agent
        return record.visibility is Visibility.PUBLIC or mine

    def visible_id(self, memory_id: str) -> bool:
        """Whether the memory with this full id exists and this agent may see it."""
        record = self.store.get(memory_id)
        return record is not None and self.visible(record)

    def read(self, reader: Store | Writer, memory_id: str) -> Record:
        """The memory with this id or unambiguous prefix, as stored, through `reader`
        (the store, or a transaction); NotFound when missing or someone else's."""
        return self.shown(reader.get(self.resolve(memory_id)), memory_id)

    def shown(self, record: Record | None, given: str) -> Record:
        """`record`, or NotFound (naming `given`) when it is missing or private to
        someone else."""
        if record is None or not self.visible(record):
            raise NotFound(f"no memory with id {given!r}")
        return record

    def live(self, w: Writer, memory_id: str) -> Record:
        """`read` through a transaction, for a write: Conflict when the memory has
        ended (tombstones are write-once)."""
        record = self.read(w, memory_id)
        if not record.live:
            raise Conflict(f"{record.id} is {record.tombstone_text}; tombstones are write-once")
        return record

    def as_read(self, records: Sequence[Record], sources: bool = True) -> Records:
        """Records as this agent reads them: anchors only to memories it may see (one
        query for all of them); with `sources`, a file: source checked against the hash
        written with it, a changed or vanished one lowering the memory's confidence."""
        targets = tuple({a for r in records for a in r.anchors})
        if targets:
            seen = set(
                self.store.admitted(
                    Filters(
                        ids=targets,
                        viewer=self.agent,
                        include_private=self.agent is not None,
                        include_superseded=True,
                        limit=None,
                    )
                )
            )
            records = [
                r
                if set(r.anchors) <= seen
                else replace(r, anchors=tuple(a for a in r.anchors if a in seen))
                for r in records
            ]
        return [_source_checked(r) for r in records] if sources else list(records)

    def filters(self, **options: Any) -> Filters:
        """Filters from keyword options (see `retrieve.filters.make_filters`)."""
        return make_filters(self.context, self.agent, options)

    def list(self, filters: Filters | None = None, **options: Any) -> Records:
        """The memories the filters (or these keyword options) select, as read."""
        return self.as_read(self.store.query(filters or self.filters(**options)))

    def unembedded(self, profile: str) -> Records:
        """Live memories this agent may see without current vectors of `profile`."""
        return [r for r in self.store.unembedded(profile) if self.visible(r)]

    # ---- writes ------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[ScreenedWriter]:
        """One write transaction; registry lookups cached inside it stay consistent.

        Every text it writes passes the capture policy (write.screen) unless the write
        says its capture mode keeps a memory's text (`keep`). What the screen
        redacted is added to `redactions`.
        """
        from memlane.write.screen import ScreenedWriter

        self._categories = set()
        with self.store.write() as inner:
            w = ScreenedWriter(inner)
            yield w
        self.redactions += w.found

    def write_context(self) -> WriteContext:
        """Who writes, where, when, under which limits: what a draft is built with."""
        from memlane.write.draft import WriteContext

        return WriteContext(
            now=utcnow(),
            new_id=new_id,
            agent=self.agent,
            context=self.context,
            limits=self.limits,
            default_taint=self.default_taint,
        )

    def pinned(self, record: Record) -> Record:
        """A record about to be written: a file: source's hash taken (see write.sources)."""
        from memlane.write.sources import pinned

        recorded = pinned(record.source_ref, Path.cwd())
        return record if recorded == record.source_hash else replace(record, source_hash=recorded)

    def commit_version(self, w: Writer, old: Record, new: Record, reason: str) -> Record:
        """Write `new` over `old`, keeping `old`'s content as a version."""
        from memlane.write.pipeline import revise

        return revise(w, old, new, reason, self.agent)

    def journal(self, w: Writer, operation: str, memory_id: str | None) -> None:
        """A journal line for `operation` on `memory_id`, by this agent."""
        w.journal(operation, [memory_id], self.agent)

    def count(self, memory_ids: Sequence[str], *counters: str) -> None:
        """Count a read of these memories on each counter (one transaction).

        Trigger: a store opened read-only. Why: a read must work on a file it may not
        write; its counters are bookkeeping, not the answer. Outcome: nothing counted.

        The store's own writer, not `transaction`: a counter is no text, so the capture
        policy has nothing to screen, and importing its screens (hundreds of compiled
        patterns) would cost a new `recall` process more than the whole read.
        """
        if not memory_ids or self.store.read_only:
            return
        now = utcnow()
        with self.store.write() as w:
            for counter in counters:
                w.touch(memory_ids, counter, now)

    def check_category(self, category: str) -> None:
        """Refuse an unregistered category (looked up once per transaction)."""
        if category in self._categories:
            return
        self._categories = {e.key for e in self.store.registries.entries("categories")}
        if category not in self._categories:
            near = difflib.get_close_matches(category, sorted(self._categories), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            # The fix is a command line to paste: a name it cannot show as typed (a
            # control character) gets no command, only its escaped name above.
            fix = f"; add it with: memlane categories add {shlex.quote(category)}"
            raise Invalid(
                f"unknown category {category!r}{hint}{fix if category.isprintable() else ''}"
            )

    def forget_category(self, category: str) -> None:
        """A category just unregistered is refused from now on."""
        self._categories.discard(category)

    def entities_current(self) -> None:
        """Bring every memory's entity mentions up to the current extractor, once.

        Trigger: the store's mentions were written by another extractor version (or
        before mentions existed). Outcome: all of them are re-read, a chunk per
        transaction, and the version recorded last, so an interrupted pass resumes. A
        read-only store is read with the mentions it has.
        """
        from memlane.graph.entities import EXTRACTOR_VERSION, mentions_of

        if (
            self._entities_checked
            or self.store.read_only
            or self.store.meta(ENTITY_META) == EXTRACTOR_VERSION
        ):
            self._entities_checked = True
            return
        records = iter(self.store.iter_all())
        while chunk := list(itertools.islice(records, BATCH_CHUNK)):
            with self.store.write() as w:
                w.set_mentions({r.id: mentions_of(r) for r in chunk})
        with self.store.write() as w:
            w.set_meta(ENTITY_META, EXTRACTOR_VERSION)
        self._entities_checked = True

    # ---- review ------------------------------------------------------------------

    def review_queue(self, policy: ReviewPolicy, options: Mapping[str, Any]) -> Due:
        """Live memories this agent may see that are due for review under `policy`, their
        recall decaying by the recall half-lives, most decayed first: what `review`
        lists and `review_due_count` counts. `options` are the shared filters (scope,
        kind, ...); the default scope is this project's and global. The records are as
        stored: due-ness reads no anchor and no source file, so a count checks none."""
        chosen = replace(
            self.filters(**{"limit": 0, **options}),
            min_importance=policy.min_importance,
            raw_resonance=True,
        )
        half_lives = self.recall_settings.shape.half_lives
        return due_for_review(
            self.store.query(chosen),
            utcnow(),
            policy.threshold,
            policy.min_importance,
            half_lives,
        )

    def review_due_count(self, **options: Any) -> int:
        """How many memories `review` lists with the same `options` under the review
        policy: the count stats, health, doctor and the home screen show. Reads only."""
        return len(self.review_queue(self.review_policy, options))

    # ---- the embedder and the vector index ----------------------------------------

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

    def vector_lane(self) -> tuple[Index, Embedder]:
        """The vector index of this store's profile; Unavailable without an embedder."""
        if self.embedder is None:
            why = self.embed_problem or "no embedding profile is configured"
            raise Unavailable(f"the vector lane is unavailable: {why}")
        from memlane.retrieve.served import index_for
        from memlane.write import embedding

        embedding.check_profile(self.store, self.embedder)
        if self._index is None:
            profile = self.embedder.profile
            self._index = index_for(self.store, profile.signature, profile.dimension)
        return self._index, self.embedder

    def settle_profile(self) -> None:
        """Never mix vector profiles in one store: an embedder of a profile other than
        the store's vectors is set aside (its problem says how to fix it), so a write
        lands without vectors, reported embed_deferred, and `embed --pending` under the
        store's profile catches up."""
        if self.embedder is None:
            return
        from memlane.write import embedding

        try:
            embedding.check_profile(self.store, self.embedder)
        except Conflict as exc:
            self.embed_problem = str(exc)
            self._embedder = self._embedder_source = None

    def embed_changed(self, ids: Sequence[str]) -> dict[str, str]:
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

    def check_embed_profile(self, no_embed: bool) -> None:
        """A write that will embed sets aside an embedder of another profile than the
        store's vectors (see settle_profile)."""
        if self.embed_on_write and not no_embed:
            self.settle_profile()

    def with_vectors(self, w: Writer, made: Mapping[str, Embedded]) -> None:
        """Vectors made before a write's transaction, stored in it with their rows.

        Trigger: add and add-batch, whose vectors the write policy makes first. Why:
        stored by a second transaction after the rows committed, a new memory was for
        a moment without vectors, and another writer's policy judging a restatement
        then could not see the two were alike in meaning: both landed. Outcome: rows
        and vectors commit together; a memory whose embedding failed is embedded after
        the commit (deferred if it fails again).
        """
        if not made or self.embedder is None:
            return
        from memlane.write import embedding

        # One read for the chunk, on the transaction's connection (it sees its rows);
        # Writer.get would lock row by row on a server.
        records = self.store.query(Filters(ids=tuple(made), any_visibility=True, limit=None))
        documents = [made[r.id] for r in records]
        embedding.store_documents(self.store, w, self.embedder, records, documents)

    def reembedded(self, result: WriteResult) -> WriteResult:
        """Vectors for the memory a write just created or changed; deferred on failure."""
        if result.id is None:
            return result
        failed = self.embed_changed([result.id])
        return _deferred(result, failed[result.id]) if result.id in failed else result

    def embedded_lines(self, lines: BatchLines, ids: Names) -> BatchLines:
        """Embed a committed chunk's new memories; a failure marks its lines deferred."""
        failed = self.embed_changed(ids)
        if not failed:
            return lines
        return [
            replace(ln, result=_deferred(ln.result, failed[ln.result.id]))
            if ln.result and ln.result.id in failed
            else ln
            for ln in lines
        ]

    def use_embedder(self, embedder: Embedder) -> None:
        """Make `embedder` this runtime's (the store's vectors were just made by it)."""
        self._embedder_source, self._embedder = embedder, embedder
        self.embed_problem, self._index = None, None

    def drop_index(self) -> None:
        """Forget the vector index: the next vector read builds it again."""
        self._index = None


def _deferred(result: WriteResult, why: str) -> WriteResult:
    return replace(
        result,
        status=WriteStatus.EMBED_DEFERRED,
        warnings=(*result.warnings, f"embedding deferred ({why}); run `memlane embed --pending`"),
    )


def _source_checked(record: Record) -> Record:
    """A record with a file: source checked against the hash written with it: a changed
    or vanished source lowers its confidence (see write.sources)."""
    if record.source_hash is None:
        return record
    from memlane.write.sources import STALE_CONFIDENCE, SourceState, source_state

    state = source_state(record.source_hash)
    if state is None:
        return record
    factor = 1.0 if state is SourceState.FRESH else STALE_CONFIDENCE
    return replace(record, source_state=state.value, confidence=record.confidence * factor)
