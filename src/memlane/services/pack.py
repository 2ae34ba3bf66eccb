"""The curated pack and episode summaries."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from memlane.errors import Invalid, NotFound, Unavailable
from memlane.files import replace_file
from memlane.lazy import lazy_module
from memlane.model import (
    INJECTION_TAG,
    Link,
    LinkType,
    Record,
    Session,
    Taint,
    Visibility,
    WriteResult,
    as_dict,
    worst_taint,
)
from memlane.runtime import Records, Runtime, new_id, passive_ok
from memlane.store import Writer
from memlane.timeutil import utcnow

if TYPE_CHECKING:
    from memlane.lifecycle import pack as packing
    from memlane.lifecycle import summary as summaries
    from memlane.write import draft as drafting
    from memlane.write import normalize, pipeline
else:  # the pure parts and the write policy load with the first pack or episode summary
    packing = lazy_module("memlane.lifecycle.pack")
    summaries = lazy_module("memlane.lifecycle.summary")
    drafting = lazy_module("memlane.write.draft")
    normalize = lazy_module("memlane.write.normalize")
    pipeline = lazy_module("memlane.write.pipeline")

# What marks a memory as an episode's summary (with kind and category `summary`).
EPISODE_TAG = "episode"
# Writes a session's summary from its memories ((id, text) pairs); None: it could not.
Summarizer = Callable[[Sequence[tuple[str, str]]], str | None]
# A summary a model wrote: tagged so, and no more trusted than a tool's output.
MODEL_TAG = "llm"
MODEL_TAINT = Taint.UNTRUSTED_TOOL
# The store_meta key recording the pack files written (`Packs.write`), so that
# forgetting a memory can write them again without it.
PACKS_META = "packs"


class PackFile(msgspec.Struct, frozen=True):
    """A pack written to a file: how to write it again, and what it held."""

    scopes: list[str] | None
    max_bytes: int
    max_tokens: int | None
    include_private: bool
    agent: str | None
    ids: list[str]
    sha256: str


class ClosedSession(Session, frozen=True):
    """A session just closed, and the summary memory written for it (None: none was)."""

    summary_id: str | None = None
    summarised: tuple[str, ...] = ()  # the memories the summary links to
    warnings: tuple[str, ...] = ()


class Packs:
    """The curated pack, the pack files written from it, and closing a session with its
    episode summary (`Memory.packs`)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def build(
        self,
        scope: str | Sequence[str] | None = None,
        max_bytes: int = 32768,  # lifecycle.pack.PACK_MAX_BYTES (a test keeps them equal)
        max_tokens: int | None = None,
        *,
        include_private: bool = False,
    ) -> packing.Pack:
        """The most important live memories this agent may see, as budgeted markdown
        for a MEMORY.md / core.md tier (see lifecycle.pack).

        A pack is read without being asked (loaded into every session), so it admits
        what a passive recall admits: no injection risk, no untrusted web text, nothing
        below the passive confidence floor. Packing counts as no use of a memory.
        """
        packing.check_budget(max_bytes, max_tokens)
        filters = self.rt.filters(scope=scope, limit=0, include_private=include_private)
        floor = self.rt.recall_settings.passive_floor
        records = [r for r in self.rt.list(filters) if passive_ok(r, floor)]
        where = ", ".join(filters.scopes) if filters.scopes is not None else "all scopes"
        result = packing.pack(records, utcnow(), max_bytes, max_tokens, where)
        if not result.ids and not result.omitted:
            raise Invalid(f"nothing to pack: no live memory in {where} belongs in a curated tier")
        return result

    def write(
        self,
        path: Path,
        scope: str | Sequence[str] | None = None,
        max_bytes: int = 32768,
        max_tokens: int | None = None,
        *,
        include_private: bool = False,
    ) -> packing.Pack:
        """`build` written to a file, replaced whole (an agent loading it never reads
        half a pack), and recorded: forgetting a memory it holds writes it again. A pack
        holding private memories is created owner-only."""
        result = self.build(scope, max_bytes, max_tokens, include_private=include_private)
        _replace_file(path, result.markdown, private=include_private)
        filters = self.rt.filters(scope=scope, limit=0)
        scopes = list(filters.scopes) if filters.scopes is not None else None
        self._record_pack(
            path,
            PackFile(
                scopes,
                max_bytes,
                max_tokens,
                include_private,
                self.rt.agent,
                list(result.ids),
                _sha256(result.markdown),
            ),
        )
        return result

    def refresh(self, gone: Collection[str]) -> tuple[list[str], list[str]]:
        """The pack files written before that held one of `gone`, written again
        without it: (paths rewritten, warnings for those that could not be)."""
        written, warnings = [], []
        for path, recorded in self._packs().items():
            if not gone or not set(gone) & set(recorded.ids):
                continue
            file = Path(path)
            problem = _stale(file, recorded, self.rt.agent)
            if problem:
                warnings.append(f"{path}: {problem}; remove the forgotten text by hand")
                continue
            try:
                self.write(
                    file,
                    recorded.scopes,
                    recorded.max_bytes,
                    recorded.max_tokens,
                    include_private=recorded.include_private,
                )
            except Invalid:  # nothing left to pack: the file goes, as its pack would be empty
                file.unlink(missing_ok=True)
                self._record_pack(file, None)
            written.append(path)
        return written, warnings

    def _packs(self) -> dict[str, PackFile]:
        raw = self.rt.store.meta(PACKS_META)
        return msgspec.json.decode(raw, type=dict[str, PackFile]) if raw else {}

    def _record_pack(self, path: Path, recorded: PackFile | None) -> None:
        packs = self._packs()
        key = str(path.resolve())
        if recorded is None:
            packs.pop(key, None)
        else:
            packs[key] = recorded
        with self.rt.transaction() as w:
            w.set_meta(PACKS_META, msgspec.json.encode(packs).decode())

    def close_session(
        self, session_id: str, *, summary: bool = True, summarize: Summarizer | None = None
    ) -> ClosedSession:
        """End an open session. With `summary`, write a summary memory of the session's
        live memories this agent may see, linked to each (`derives`); a session without
        any gets none. The summary is `summarize`'s (a model's) when it gives one, else
        extractive."""
        sid = session_id.strip()
        found = self.rt.store.sessions.get(sid)
        if found is None or found.ended_at is not None:
            raise NotFound(f"no open session {session_id!r}")
        members = self._session_members(sid)
        # Trigger: an agent ending a session another agent started and it took no part
        # in. Why: that would take the session's summary from the agents whose work it
        # was. Outcome: to it the session does not exist (an operator, with no identity
        # of its own, may end any; an agent that wrote in a shared session may too).
        took_part = any(r.source_agent == self.rt.agent for r in members)
        if self.rt.agent is not None and found.agent not in (None, self.rt.agent) and not took_part:
            raise NotFound(f"no open session {session_id!r}")
        members = members if summary else []
        record = self._summary_record(sid, members, summarize) if members else None
        with self.rt.transaction() as w:
            if not w.close_session(sid, utcnow()):
                raise NotFound(f"no open session {session_id!r}")
            self.rt.journal(w, "session.close", None)
            written = self._land_summary(w, sid, record, members) if record else None
        return self._closed(sid, self.rt.reembedded(written) if written else None, members)

    def _session_members(self, session_id: str) -> Records:
        """The session's live memories this agent may see, in the order written."""
        filters = self.rt.filters(
            session_id=session_id, scope="all", limit=0, include_private=self.rt.agent is not None
        )
        return sorted(self.rt.list(filters), key=lambda r: (r.created_at, r.id))

    def _summary_record(
        self, session_id: str, members: Records, summarize: Summarizer | None
    ) -> Record | None:
        """The summary memory to write, through the capture policy; None when the
        members say nothing a summary could quote."""
        texts = [(r.id, normalize.document_text(r)) for r in members]
        written = (summarize(texts) or "").strip() if summarize else ""
        if written:  # a model read them all: as sure and as tainted as the least of them
            fields = _summary_fields(session_id, written, members, members, MODEL_TAINT)
        else:
            found = summaries.summarize(texts)
            if not found.text:
                return None
            quoted = [r for r in members if r.id in found.sources]
            fields = _summary_fields(session_id, found.text, quoted, members)
        from memlane.write.capture import capture, parse_mode  # its patterns: on write only

        captured = capture(fields, parse_mode(self.rt.capture_mode))
        draft = drafting.build_draft(captured.fields, self.rt.write_context())
        self.rt.check_category(draft.record.category)
        return draft.record

    def _land_summary(
        self, w: Writer, session_id: str, record: Record, members: Records
    ) -> WriteResult:
        [landed] = pipeline.land(w, [record], new_id, self.rt.agent)
        for member in members:
            w.add_link(
                Link(
                    landed.id,
                    member.id,
                    LinkType.DERIVES,
                    created_at=landed.created_at,
                    reason=f"summary of session {session_id}",
                )
            )
        return pipeline.added(landed)

    def _closed(
        self, session_id: str, written: WriteResult | None, members: Sequence[Record]
    ) -> ClosedSession:
        session = self.rt.store.sessions.get(session_id)
        if session is None:  # deleted between the write and this read
            raise NotFound(f"no session {session_id!r}")
        if written is None:
            return ClosedSession(**as_dict(session))
        return ClosedSession(
            **as_dict(session),
            summary_id=written.id,
            summarised=tuple(r.id for r in members),
            warnings=written.warnings,
        )


def _summary_fields(
    session_id: str,
    text: str,
    quoted: Records,
    members: Records,
    written_by: Taint | None = None,
) -> dict[str, Any]:
    """An episode summary's fields: it is as sure, as tainted and as risky as the
    memories it quotes, private when any member is (which sentences it quotes depends
    on them all), and sits in the scope most of the session's memories do."""
    scope = Counter(r.scope for r in members).most_common(1)[0][0]
    risky = any(INJECTION_TAG in r.tags for r in quoted)
    return {
        "content": text,
        "title": f"Session {session_id}: {normalize.derive_title(text)}",
        "kind": "summary",
        "category": "summary",
        "entry_type": "summary",
        "tags": [
            EPISODE_TAG,
            *([INJECTION_TAG] if risky else []),
            *([MODEL_TAG] if written_by else []),
        ],
        "resonance_type": "session",
        "source_type": "agent_session",
        "source_ref": f"session:{session_id}",
        "scope": scope,
        "confidence": min(r.confidence for r in quoted),
        "taint": worst_taint(
            *(r.taint for r in quoted), *([written_by] if written_by else [])
        ).value,
        "private": any(r.visibility is Visibility.PRIVATE for r in members),
    }


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _replace_file(path: Path, text: str, private: bool) -> None:
    try:
        replace_file(path, text, private=private)
    except (OSError, ValueError) as exc:
        raise Unavailable(f"cannot write {path}: {getattr(exc, 'strerror', None) or exc}") from None


def _stale(file: Path, recorded: PackFile, agent: str | None) -> str | None:
    """Why a recorded pack file cannot be written again now (None: it can)."""
    try:
        current = file.read_text(encoding="utf-8")
    except OSError:
        return "the pack file is gone"
    if _sha256(current) != recorded.sha256:
        return "the pack file changed since memlane wrote it"
    if recorded.include_private and recorded.agent != agent:
        return f"it holds {recorded.agent}'s private memories"
    return None
