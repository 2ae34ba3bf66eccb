"""The persisting half of the write path: the exact-duplicate gate, landing rows in
bulk, and versioned revision. Everything here runs inside one write transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from memlane.graph.entities import mentions_of
from memlane.model import (
    VERSIONED_FIELDS,
    Mention,
    Record,
    Version,
    WriteResult,
    WriteStatus,
    replace,
)
from memlane.scope import scope_project
from memlane.store import Writer
from memlane.timeutil import ONE_MICROSECOND, utcnow

DedupKey = tuple[str, str, str | None, str | None, str]
# An id is random; a collision is retried with a fresh one this many times.
_ID_ATTEMPTS = 5


def dedup_key(record: Record) -> DedupKey | None:
    """The exact-duplicate identity: hash within session, owner, author and category.

    Trigger: a write without a session id. Why: the gate catches a restatement within
    one session, so without one there is nothing to compare against. Outcome: None
    (bypass).
    """
    if record.session_id is None:
        return None
    return (
        record.dedup_hash,
        record.session_id,
        record.owner,
        record.source_agent,
        record.category,
    )


class Staged(msgspec.Struct):
    """Records admitted in this transaction but not yet inserted, with the entities
    each names when they were read before (None: read when they land)."""

    records: list[Record] = msgspec.field(default_factory=list)
    keys: dict[DedupKey, int] = msgspec.field(default_factory=dict)
    mentions: list[tuple[Mention, ...] | None] = msgspec.field(default_factory=list)

    def add(self, record: Record, mentions: tuple[Mention, ...] | None = None) -> int:
        key = dedup_key(record)
        if key is not None:
            self.keys.setdefault(key, len(self.records))
        self.records.append(record)
        self.mentions.append(mentions)
        return len(self.records) - 1


def duplicate_of(w: Writer, record: Record, staged: Staged) -> str | None:
    """The id of a live exact duplicate, in the store or staged earlier, if any."""
    key = dedup_key(record)
    if key is None:
        return None
    if key in staged.keys:
        return staged.records[staged.keys[key]].id
    return w.find_duplicate(*key)


def skipped(duplicate: str, record: Record) -> WriteResult:
    return WriteResult(
        id=duplicate,
        status=WriteStatus.ALREADY_PERSISTED,
        duplicate_of=duplicate,
        title=record.title,
    )


def added(record: Record) -> WriteResult:
    bypass = "bypassed_no_session" if record.session_id is None else None
    return WriteResult(
        id=record.id, status=WriteStatus.ADDED, dedup=bypass, title=record.title, version=1
    )


def land(
    w: Writer,
    records: Sequence[Record],
    new_id: Callable[[], str],
    actor: str | None,
    mentions: Sequence[tuple[Mention, ...] | None] = (),
) -> list[Record]:
    """Insert records in bulk with their sessions, entity mentions (each record's from
    `mentions` where given) and journal lines; returns them with their final ids (a
    random id already taken is replaced by a fresh one)."""
    final = list(records)
    pending = list(range(len(final)))
    for _ in range(_ID_ATTEMPTS):
        taken = set(w.insert([final[i] for i in pending]))
        pending = [i for i in pending if final[i].id in taken]
        if not pending:
            break
        for i in pending:
            final[i] = replace(final[i], id=new_id())
    else:
        raise RuntimeError("could not find a free id")
    sessions = {r.session_id: r for r in final if r.session_id is not None}
    for session_id, first in sessions.items():
        project, _ = scope_project(first.scope)
        w.ensure_session(session_id, first.created_at, first.source_agent, project)
    known = list(mentions) + [None] * (len(final) - len(mentions))
    w.set_mentions(
        {r.id: mentions_of(r) if m is None else m for r, m in zip(final, known, strict=True)}
    )
    w.journal("add", [r.id for r in final], actor)
    return final


def revise(w: Writer, old: Record, new: Record, reason: str, actor: str | None) -> Record:
    """Replace `old` by `new` under the same id, archiving old's content as a version.

    The new version starts strictly after the old one, so validity intervals never
    overlap even when two revisions land within the clock's resolution.
    """
    at = max(utcnow(), old.version_from + ONE_MICROSECOND)
    prior = Version(
        memory_id=old.id,
        number=old.version,
        valid_from=old.version_from,
        valid_until=at,
        reason=reason,
        actor=actor,
        fields={name: getattr(old, name) for name in VERSIONED_FIELDS},
    )
    final = replace(new, version=old.version + 1, version_from=at, updated_at=at)
    w.replace(final, prior)
    w.set_mentions({final.id: mentions_of(final)})
    w.journal("update", [old.id], actor)
    return final
