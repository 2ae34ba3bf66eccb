"""Forget: a memory, or a whole scope, out of every table and index, and its text out of
every memory derived from it."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

import msgspec

from memlane.errors import Invalid
from memlane.lazy import lazy_module
from memlane.model import (
    VERSIONED_FIELDS,
    Filters,
    LinkType,
    Record,
    Version,
    is_derivation,
    replace,
)
from memlane.runtime import Runtime
from memlane.store import Writer

if TYPE_CHECKING:
    from memlane.lifecycle import scrub as scrubbing
    from memlane.write import normalize
else:  # loaded by the first forget
    scrubbing = lazy_module("memlane.lifecycle.scrub")
    normalize = lazy_module("memlane.write.normalize")

# How far forgetting follows derivations (a summary of a keeper of a merge...).
MAX_DERIVATION_DEPTH = 4


class Forgotten(msgspec.Struct, frozen=True):
    """What a forget did: the memories removed, and the copies of their text."""

    ids: tuple[str, ...]
    scrubbed: tuple[str, ...] = ()  # derived memories its text was taken out of
    removed: tuple[str, ...] = ()  # derived memories made only of it: forgotten too
    unchanged: tuple[str, ...] = ()  # derived from it, but no sentence of it found there
    packs: tuple[str, ...] = ()  # pack files written again without it
    warnings: tuple[str, ...] = ()  # pack files that could not be


class _Copies(msgspec.Struct):
    scrubbed: dict[str, Record] = msgspec.field(default_factory=dict)
    removed: list[str] = msgspec.field(default_factory=list)
    unchanged: list[str] = msgspec.field(default_factory=list)
    hidden: set[str] = msgspec.field(default_factory=set)  # another owner's private copies


# Writes again without them every pack file that held these memories: (written, warnings).
RewritePacks = Callable[[Collection[str]], tuple[list[str], list[str]]]


class Forgetting:
    """Removal without a trace: only a journal line (who, when, why) stays."""

    def __init__(self, rt: Runtime, rewrite_packs: RewritePacks) -> None:
        self.rt = rt
        self.rewrite_packs = rewrite_packs

    def delete(self, memory_id: str) -> Forgotten:
        """Remove a memory from every table and index; the journal keeps one line, no content."""
        return self.forget(memory_id, operation="delete")

    def forget(
        self, memory_id: str, reason: str | None = None, *, operation: str = "forget"
    ) -> Forgotten:
        """Remove a memory from every table and index: content, versions, keyword index,
        vectors and chunks (the vector index file is rebuilt), links, mentions (and
        entities only it named), the wake log; and its sentences from every memory
        derived from it (see `Forgotten`); every pack file that held any of them is
        written again without them. The journal keeps one line: who, when, and
        `reason`, which must not repeat the content."""
        with self.rt.transaction() as w:
            record = self.rt.read(w, memory_id)
            done, hidden = self._forget(w, [record], operation, reason)
        return self._packs_after(_told(self._after_forget(done), hidden))

    def forget_scope(
        self, scope: str, *, confirm: bool = False, reason: str | None = None
    ) -> Forgotten:
        """Forget every memory of one scope (a project's with its branches) this agent
        may see, whatever its state, in one transaction: the public ones and its own
        private ones, never another owner's; the pack files that held any of them are
        written again. Without `confirm`, Invalid saying how many it would forget."""
        if scope.strip().lower() in ("", "all"):
            raise Invalid("forget --scope needs one scope (not all)")
        [name] = self.rt.filters(scope=scope).scopes or [scope]
        covered = tuple(s for s in self.rt.store.scopes() if s == name or s.startswith(f"{name}@"))
        ids = self.rt.store.admitted(
            Filters(
                scopes=covered,
                viewer=self.rt.agent,
                include_private=self.rt.agent is not None,
                include_superseded=True,
                limit=None,
            )
        )
        if not confirm:
            raise Invalid(f"would forget {len(ids)} memories in {name}; pass --confirm")
        with self.rt.transaction() as w:
            records = [r for r in (w.get(i) for i in ids) if r is not None]
            done, hidden = self._forget(w, records, "forget", reason)
        return self._packs_after(_told(self._after_forget(done), hidden))

    def _packs_after(self, done: Forgotten) -> Forgotten:
        written, warnings = self.rewrite_packs({*done.ids, *done.removed, *done.scrubbed})
        return replace(done, packs=tuple(written), warnings=tuple(warnings))

    def _forget(
        self, w: Writer, records: Sequence[Record], operation: str, reason: str | None
    ) -> tuple[Forgotten, set[str]]:
        """Delete `records` and scrub their copies: what was done, and the copies that
        are another owner's private memories (scrubbed all the same, named to no one)."""
        ids = {r.id for r in records}
        copies = self._scrub_copies(w, records, ids)
        for memory_id in [*ids, *copies.removed]:
            w.delete(memory_id)
        w.journal(operation, sorted(ids), self.rt.agent, _reason(reason))
        if copies.scrubbed:
            w.journal(
                "forget.scrub", sorted(copies.scrubbed), self.rt.agent, "forgotten text removed"
            )
        # A deleted memory's journal line shows to whoever wrote it: the line of another
        # owner's private copy names no actor, so it shows to no one.
        for actor, gone in (
            (self.rt.agent, [i for i in copies.removed if i not in copies.hidden]),
            (None, [i for i in copies.removed if i in copies.hidden]),
        ):
            if gone:
                w.journal(operation, gone, actor, "made only of forgotten text")
        return Forgotten(
            tuple(sorted(ids)),
            tuple(sorted(copies.scrubbed)),
            tuple(copies.removed),
            tuple(copies.unchanged),
        ), copies.hidden

    def _after_forget(self, done: Forgotten) -> Forgotten:
        """Once the forget committed: the vector index file, which holds forgotten
        vectors until rebuilt, removed; the copies that changed embedded again."""
        from memlane.retrieve.vectors import index_path

        path = index_path(self.rt.store.location)
        if path is not None:
            path.unlink(missing_ok=True)
        self.rt.drop_index()
        self.rt.embed_changed(list(done.scrubbed))
        return done

    def _scrub_copies(self, w: Writer, records: Sequence[Record], ids: set[str]) -> _Copies:
        """Take the forgotten texts out of every memory derived from them, following
        derivations up to MAX_DERIVATION_DEPTH."""
        copies = _Copies()
        for record in records:
            text = normalize.document_text(record)
            frontier, seen = [record.id], set(ids)
            for _ in range(MAX_DERIVATION_DEPTH):
                frontier = [
                    derived
                    for source in frontier
                    for derived in self._derived_from(source)
                    if derived not in seen and self._scrub_one(w, derived, text, ids, copies)
                ]
                seen.update(frontier)
        return copies

    def _derived_from(self, memory_id: str) -> list[str]:
        return [
            link.source
            for link in self.rt.store.links(memory_id)
            if link.target == memory_id and is_derivation(link)
        ]

    def _scrub_one(
        self, w: Writer, memory_id: str, text: str, ids: set[str], copies: _Copies
    ) -> bool:
        """Scrub one derived memory of `text`; True when its own derivations are to be
        followed (it still exists and held some of the text)."""
        if memory_id in copies.removed:
            return False
        derived = copies.scrubbed.get(memory_id) or w.get(memory_id)
        if derived is None:
            return False
        if not self.rt.visible(derived):
            copies.hidden.add(derived.id)
        kept = self._other_sources(w, derived.id, ids)
        body = scrubbing.scrub(derived.body, text, kept)
        if body == derived.body:
            if derived.id not in copies.scrubbed:
                copies.unchanged.append(derived.id)
            return False
        if not body:
            copies.removed.append(derived.id)
            copies.scrubbed.pop(derived.id, None)
            return True
        title = scrubbing.scrub(derived.title, text, kept) or normalize.derive_title(body)
        new = replace(derived, title=title, body=body, dedup_hash=normalize.dedup_hash(title, body))
        self.rt.commit_version(w, derived, new, "forget: forgotten text removed")
        for version in self.rt.store.versions(derived.id):
            self._scrub_version(w, version, text, kept)
        copies.scrubbed[derived.id] = w.get(derived.id) or new
        return True

    def _other_sources(self, w: Writer, memory_id: str, ids: set[str]) -> list[str]:
        """The texts a derived memory was made from, but those being forgotten; for a
        consolidation keeper, also its own first text (it said that before it absorbed)."""
        out = []
        for link in self.rt.store.links(memory_id):
            if link.source != memory_id or not is_derivation(link):
                continue
            if link.type is LinkType.SUPERSEDES and (link.reason or "").startswith("consolidated"):
                first = next(iter(self.rt.store.versions(memory_id)), None)
                if first is not None:
                    out.append(f"{first.fields.get('title', '')}\n{first.fields.get('body', '')}")
            if link.target not in ids:
                source = w.get(link.target)
                if source is not None:
                    out.append(normalize.document_text(source))
        return out

    def _scrub_version(self, w: Writer, version: Version, text: str, kept: Sequence[str]) -> None:
        fields = dict(version.fields)
        body = scrubbing.scrub(str(fields.get("body") or ""), text, kept)
        title = scrubbing.scrub(str(fields.get("title") or ""), text, kept)
        if (title, body) == (fields.get("title"), fields.get("body")):
            return
        fields.update(title=title or normalize.derive_title(body or "-"), body=body or "-")
        fields["dedup_hash"] = normalize.dedup_hash(fields["title"], fields["body"])
        w.rewrite_version(replace(version, fields={k: fields[k] for k in VERSIONED_FIELDS}))


def _told(done: Forgotten, hidden: set[str]) -> Forgotten:
    """What a forget tells its caller: the copies it may see, never another owner's."""
    return replace(
        done,
        scrubbed=tuple(i for i in done.scrubbed if i not in hidden),
        removed=tuple(i for i in done.removed if i not in hidden),
        unchanged=tuple(i for i in done.unchanged if i not in hidden),
    )


def _reason(reason: str | None) -> str | None:
    text = " ".join((reason or "").split())
    return text[:200] or None
