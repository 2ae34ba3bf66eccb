"""Writing: every change to memories goes through here, through the write policy.

One add reads top to bottom: the capture policy on the fields (write.capture), a draft
(write.draft), its vectors and stored neighbours read before the transaction
(services.policy), then in one transaction the exact-duplicate gate, the near-duplicate
and contradiction decision (write.dedup), the row with its anchors and vectors
(write.pipeline), and after it the automatic anchors (services.anchoring). Revisions
(update, restore, supersede, invalidate, retire, merge) keep the old content as a
version or the old memory for audit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any, NamedTuple

from memlane import runtime
from memlane.errors import Conflict, Invalid, NotFound
from memlane.lazy import lazy_module
from memlane.model import (
    ACCESS_FIELDS,
    BatchLine,
    BatchResult,
    Kind,
    Link,
    LinkType,
    Mention,
    Patch,
    Record,
    RegistryEntry,
    State,
    Visibility,
    WriteResult,
    WriteStatus,
    replace,
)
from memlane.runtime import (
    BATCH_CHUNK,
    REANALYZE_AFTER,
    BatchItem,
    Records,
    Runtime,
)
from memlane.services.anchoring import Anchoring
from memlane.services.policy import Batch, WritePolicy, contradicting, with_decision
from memlane.store import Writer
from memlane.timeutil import utcnow

if TYPE_CHECKING:  # the write policy loads with the first write: a read never runs it
    from concurrent.futures import Executor, Future

    from memlane.embed import Embedded
    from memlane.services import preparing
    from memlane.write import dedup, normalize, pipeline, screen
    from memlane.write import draft as drafting
    from memlane.write import patch as patching
    from memlane.write.capture import Captured
    from memlane.write.dedup import Decision
    from memlane.write.draft import Draft
    from memlane.write.pipeline import Staged
    from memlane.write.prepare import Prepared
else:
    dedup = lazy_module("memlane.write.dedup")
    drafting = lazy_module("memlane.write.draft")
    normalize = lazy_module("memlane.write.normalize")
    patching = lazy_module("memlane.write.patch")
    preparing = lazy_module("memlane.services.preparing")
    pipeline = lazy_module("memlane.write.pipeline")
    screen = lazy_module("memlane.write.screen")

# A committed add-batch chunk: its lines, and the landed ids still without vectors.
ChunkOutcome = tuple[list[BatchLine], list[str]]


class Ready(NamedTuple):
    """A chunk (or part of one) of a batch ready to be written: its lines as prepared, the drafts by
    line number, and their vectors (None: not embedded now)."""

    lines: list[Prepared]
    drafts: dict[int, Draft]
    docs: dict[int, Embedded | None]

    @classmethod
    def joined(cls, parts: Sequence[Ready]) -> Ready:
        """The parts of a chunk as one."""
        return cls(
            [line for part in parts for line in part.lines],
            {n: d for part in parts for n, d in part.drafts.items()},
            {n: d for part in parts for n, d in part.docs.items()},
        )


# Registers an agent (registry "agents"): what seeding an agent needs of the registries.
Register = Callable[..., RegistryEntry]


class Writing:
    """Add, add in batches, update, restore, supersede, invalidate, retire and merge."""

    def __init__(
        self, rt: Runtime, policy: WritePolicy, anchoring: Anchoring, register: Register
    ) -> None:
        self.rt = rt
        self.policy = policy
        self.anchoring = anchoring
        self.register = register

    def add(self, content: str, title: str | None = None, **fields: Any) -> WriteResult:
        """Store one memory through the write policy; see `memlane add --help` for fields."""
        anchor = fields.pop("auto_anchor", True)
        captured = self._captured({"content": content, "title": title, **fields})
        draft = drafting.build_draft(captured.fields, self.rt.write_context())
        draft = replace(draft, record=self.rt.pinned(draft.record))
        self.rt.check_embed_profile(draft.no_embed)
        [doc] = self.policy.embed_drafts([None if draft.no_embed else draft.record])
        looked = self.policy.look([(draft.record, doc)] if _judged(draft) else [])
        cleared = [draft.record] if screen.unchanged(draft.record) else []
        with self.rt.transaction() as w:
            w.keep([draft.record.dedup_hash] if captured.keeps else [])
            w.cleared(cleared)
            batch = self.policy.start(vectors=doc is not None, looked=looked)
            result = self._persist(w, draft, doc, batch)
            if result.landed and result.id is not None and doc is not None:
                self.rt.with_vectors(w, {result.id: doc})
        result = with_capture(result, captured)
        if result.landed and not draft.no_embed and doc is None:
            result = self.rt.reembedded(result)  # the model failed before: once more
        return self.anchoring.anchored(result) if anchor else result

    def seed_agent(
        self, name: str, meta: Mapping[str, Any], body: str
    ) -> tuple[RegistryEntry, WriteResult | None]:
        """Register an agent from a seed file (front matter: description, domain) and
        keep its body as the agent's identity memory: importance 9 (a wake core memory)
        unless the front matter says otherwise, tagged `agent:<name>`. Seeding the same
        file again changes nothing (the exact-duplicate check of session `seed`)."""
        entry = self.register(
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
        mode = parse_mode(given.pop("capture_mode", None) or self.rt.capture_mode)
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
        return self.policy.judge(draft.record, doc, batch)

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
            return self.policy.refresh(w, draft.record, decision)
        record = draft.record
        if decision.verdict is dedup.Verdict.CONTRADICTION:
            record = contradicting(record)
        thread = self._thread_to_close(w, draft.close_thread)
        anchors = [self.rt.read(w, a).id for a in draft.anchors]
        [rec] = pipeline.land(w, [record], runtime.new_id, self.rt.agent)
        if decision.verdict is dedup.Verdict.CONTRADICTION:
            self.policy.contradict(w, rec, decision)
        for anchor in anchors:
            w.add_link(Link(rec.id, anchor, LinkType.ANCHOR, created_at=rec.created_at))
        if thread is not None:
            closed = replace(thread, state=State.CLOSED)
            pipeline.revise(w, thread, closed, f"closed by {rec.id}", self.rt.agent)
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
        """`add_batch`, yielding each line's outcome once its transaction has committed.

        The chunks go through three stages at once: while one is written, the next is
        embedded on a thread and the one after it prepared (parsed, captured, drafted:
        write.prepare) by worker processes (services.preparing). A chunk is written in
        transactions of the parts embedded by then (see `_embedded_by_now`).
        """
        from concurrent.futures import ThreadPoolExecutor

        landed = unmerged = 0
        self.rt.check_embed_profile(no_embed=False)
        with (
            self.rt.store.bulk_writes(),
            preparing.Preparer(
                self.rt.capture_mode, self.rt.write_context(), self.rt.batch_workers
            ) as preparer,
            ThreadPoolExecutor(1, thread_name_prefix="memlane-embed") as embedding,
        ):
            written: list[Future[Ready]] | None = None
            for ready in chain(self._ready_chunks(items, preparer, embedding), [None]):
                for chunk in _embedded_by_now(written or []):
                    yield from self.rt.embedded_lines(*self._batch_chunk(chunk))
                    landed, unmerged = landed + len(chunk.lines), unmerged + len(chunk.lines)
                    # Trigger: a long batch. Why: each chunk adds a keyword-index
                    # segment, and the policy's searches of the later lines look up
                    # every one. Outcome: merged as it goes, a page for each line landed.
                    if ready is not None and unmerged >= REANALYZE_AFTER:
                        self.rt.store.optimize(unmerged, statistics=False)
                        unmerged = 0
                written = ready
        if landed >= REANALYZE_AFTER:
            self.rt.store.optimize(landed)

    def _ready_chunks(
        self, items: Iterable[BatchItem], preparer: preparing.Preparer, embedding: Executor
    ) -> Iterator[list[Future[Ready]]]:
        """Each chunk of the batch, its parts being embedded, once every part is
        prepared and the next chunk is being prepared. A part is embedded as soon as it
        is prepared, while the rest of its chunk still is."""
        ahead: list[preparing.Part] = []
        for parts in chain((preparer.start(c) for c in _chunks(items)), [[]]):
            if ahead:
                yield [embedding.submit(self._embedded, lines) for lines in preparer.each(ahead)]
            ahead = parts

    def _embedded(self, lines: list[Prepared]) -> Ready:
        """A prepared part's drafts, their files' hashes taken, and their vectors."""
        drafts = {
            p.number: replace(p.draft, record=self.rt.pinned(p.draft.record))
            for p in lines
            if p.draft is not None
        }
        wanted = [None if d.no_embed else d.record for d in drafts.values()]
        docs = dict(zip(drafts, self.policy.embed_drafts(wanted), strict=True))
        return Ready(lines, drafts, docs)

    def _batch_chunk(self, chunk: Ready) -> ChunkOutcome:
        """One transaction: every line of the chunk through the write policy; new rows
        land in bulk, with the vectors made for them.

        Returns the lines' outcomes and the ids of the landed memories still to embed
        (their embedding failed before the transaction).
        """
        lines, drafts, docs = chunk
        out = {p.number: BatchLine(p.number, error=p.error) for p in lines if p.error}
        captures = {p.number: p.captured for p in lines if p.captured is not None}
        cleared = [drafts[p.number].record for p in lines if p.cleared]
        looked = self.policy.look([(d.record, docs[n]) for n, d in drafts.items() if _judged(d)])
        with self.rt.transaction() as w:
            w.keep(d.record.dedup_hash for n, d in drafts.items() if captures[n].keeps)
            w.cleared(cleared)
            vectors = any(d is not None for d in docs.values())
            batch = self.policy.start(vectors, looked)
            w.cleared_names(name for p in lines for name in p.clean_names)
            mentions = {p.number: p.mentions for p in lines if p.draft is not None}
            out.update(self._policy_lines(w, drafts, docs, batch, mentions))
            landed = {
                ln.result.id: docs[ln.line]
                for ln in out.values()
                if ln.result and ln.result.id and ln.result.landed and not drafts[ln.line].no_embed
            }
            self.rt.with_vectors(w, {i: doc for i, doc in landed.items() if doc is not None})
        results = [
            replace(ln, result=with_capture(ln.result, captures[ln.line])) if ln.result else ln
            for ln in (out[p.number] for p in lines)
        ]
        return results, [i for i, doc in landed.items() if doc is None]

    def _policy_lines(
        self,
        w: Writer,
        drafts: Mapping[int, Draft],
        docs: Mapping[int, Embedded | None],
        batch: Batch,
        mentions: Mapping[int, tuple[Mention, ...]],
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
                    lines[staged.add(draft.record, mentions.get(number))] = number
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
        final = pipeline.land(w, staged.records, runtime.new_id, self.rt.agent, staged.mentions)
        out = {}
        for i, record in enumerate(final):
            number = lines[i]
            result = with_decision(pipeline.added(record), decisions.get(number, dedup.NEW))
            out[number] = BatchLine(number, result=result)
        return out

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
            new = patching.apply_patch(old, patch, self.rt.limits, self.rt.agent)
            if (new.title, new.body, new.tags) != (old.title, old.body, old.tags):
                new, captured = self._screened(new, capture_mode)
                w.keep([new.dedup_hash] if captured.keeps else [])
            if new != old:
                new = self.rt.pinned(new)  # a revision is about the file as it is now
            if new.category != old.category:
                self.rt.check_category(new.category)
            anchors_changed = self._update_anchors(w, old, patch)
            if new == old and not anchors_changed:
                raise Invalid("nothing to change: the update leaves the memory as it is")
            if new.scope != old.scope:
                reason = patching.move_reason(old.scope, new.scope, reason)
                w.journal("move", [old.id], self.rt.agent, f"{old.scope} -> {new.scope}")
            final = self.rt.commit_version(w, old, new, reason or "updated") if new != old else old
        result = WriteResult(
            id=final.id, status=WriteStatus.UPDATED, title=final.title, version=final.version
        )
        if captured is not None:
            result = with_capture(result, captured)
        if final.dedup_hash == old.dedup_hash:
            return result
        result = self.rt.reembedded(result)
        return self.anchoring.anchored(result) if auto_anchor else result

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
            versions = {v.number: v for v in self.rt.store.versions(old.id)}
            number = old.version - 1 if version is None else version
            if number == old.version:
                raise Invalid(f"version {number} of {old.id} is already current")
            if number not in versions:
                known = ", ".join(str(n) for n in sorted(versions)) or "none"
                raise NotFound(f"{old.id} has no version {number} (earlier versions: {known})")
            fields = {k: v for k, v in versions[number].fields.items() if k not in ACCESS_FIELDS}
            new = replace(old, **fields)
            final = self.rt.commit_version(w, old, new, f"restored version {number}")
        result = self.rt.reembedded(
            WriteResult(
                id=final.id, status=WriteStatus.UPDATED, title=final.title, version=final.version
            )
        )
        return self.anchoring.anchored(result) if auto_anchor else result

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
            draft = drafting.build_draft(captured.fields, self.rt.write_context())
            w.keep([draft.record.dedup_hash] if captured.keeps else [])
            _keeps_private([old], draft.record, force)
            self.rt.check_category(draft.record.category)
            [new] = pipeline.land(w, [draft.record], runtime.new_id, self.rt.agent)
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
        return self.rt.reembedded(with_capture(result, captured))

    def invalidate(self, memory_id: str, reason: str) -> Record:
        """End a memory's validity now, with the reason it is no longer true."""
        if not reason or not reason.strip():
            raise Invalid("invalidate needs a non-empty --reason")
        with self.rt.transaction() as w:
            old = self.rt.live(w, memory_id)
            self._tombstone(w, old, valid_until=utcnow(), supersede_reason=reason.strip())
            self.rt.journal(w, "invalidate", old.id)
        return self.rt.read(self.rt.store, old.id)

    def retire(self, memory_id: str, reason: str | None = None) -> Record:
        """Drop a memory that has no successor; it stays for audit and as-of reads."""
        with self.rt.transaction() as w:
            old = self.rt.live(w, memory_id)
            self._tombstone(w, old, superseded_at=utcnow(), supersede_reason=reason or "retired")
            self.rt.journal(w, "retire", old.id)
        return self.rt.read(self.rt.store, old.id)

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
            draft = drafting.build_draft(captured.fields, self.rt.write_context())
            w.keep([draft.record.dedup_hash] if captured.keeps else [])
            _keeps_private(sources, draft.record, force)
            self.rt.check_category(draft.record.category)
            [new] = pipeline.land(w, [draft.record], runtime.new_id, self.rt.agent)
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
        return self.rt.reembedded(with_capture(result, captured))


def _chunks(items: Iterable[BatchItem]) -> Iterator[list[tuple[int, BatchItem]]]:
    """The batch's lines, numbered from 1, in chunks of BATCH_CHUNK; blank lines are
    left out but keep their numbers."""
    chunk: list[tuple[int, BatchItem]] = []
    for number, item in enumerate(items, start=1):
        if isinstance(item, (str, bytes)) and not item.strip():
            continue
        chunk.append((number, item))
        if len(chunk) >= BATCH_CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _embedded_by_now(parts: Sequence[Future[Ready]]) -> Iterator[Ready]:
    """A chunk's parts, in order, as transactions: the next part (waited for) and the
    parts after it embedded by then.

    Trigger: an embedder slower than the write that leaves this machine's cores free (a
    server, a GPU). Why: a chunk written once all its parts are embedded leaves the
    writer idle while they are, and the embedder idle while it writes. Outcome: the
    writer takes what is ready while the embedder goes on with the rest; with a fast
    embedder every part is ready and the chunk is one transaction.
    """
    at = 0
    while at < len(parts):
        done = [parts[at].result()]
        at += 1
        while at < len(parts) and parts[at].done():
            done.append(parts[at].result())
            at += 1
        yield Ready.joined(done)


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
