"""The review queue: corrections mined from transcripts, waiting for a person (or an
agent) to decide what becomes a memory. A JSON file per scope in the hook dir, never
the store: mining and reviewing work while the store is locked or missing, and nothing
lands without review (`memlane add --signal user` takes what clears it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec

from memlane.hooks import state
from memlane.hooks.extract import Correction
from memlane.write.secrets import redact

QUEUE_DIR = "queue"
# `queue clear --drop-stale`: items queued longer ago than this, below this confidence.
STALE_DAYS = 14
STALE_BELOW = 0.7


class Queued(msgspec.Struct, frozen=True):
    id: str
    message: str
    type: str
    patterns: tuple[str, ...]
    confidence: float
    source: str  # the transcript it was mined from
    turn: int
    queued_at: datetime
    redacted: bool = False  # a likely secret was masked before it was queued


def path_for(directory: Path, scope: str) -> Path:
    return state.safe_file(directory / QUEUE_DIR, scope)


def load(directory: Path, scope: str) -> list[Queued]:
    """The scope's queue, oldest first; an unreadable file is an empty queue."""
    return items_in(path_for(directory, scope))


def _save(directory: Path, scope: str, items: Sequence[Queued]) -> None:
    state.write_atomic(path_for(directory, scope), msgspec.json.encode(list(items)).decode())


def queued(found: Correction, source: str, now: datetime) -> Queued:
    """A mined correction as queued: secrets masked (the queue is a plain file), and an
    id from its text, so mining the same transcript again queues nothing twice."""
    text, redactions = redact(found.message)
    ident = hashlib.sha256(found.message.casefold().encode("utf-8")).hexdigest()[:10]
    return Queued(
        f"q-{ident}",
        text,
        found.type,
        found.patterns,
        found.confidence,
        source,
        found.turn,
        now,
        bool(redactions),
    )


def add(directory: Path, scope: str, items: Iterable[Queued]) -> list[Queued]:
    """Queue the items not queued already; the ones added."""
    current = load(directory, scope)
    known = {q.id for q in current}
    new: list[Queued] = []
    for item in items:
        if item.id not in known:
            known.add(item.id)
            new.append(item)
    if new:
        _save(directory, scope, [*current, *new])
    return new


def clear(
    directory: Path,
    scope: str,
    *,
    ids: Sequence[str] = (),
    everything: bool = False,
    stale: bool = False,
    now: datetime | None = None,
) -> list[Queued]:
    """Remove the items named, all of them, or the stale ones; the ones removed."""
    current = load(directory, scope)
    cutoff = (now or datetime.now(UTC)) - timedelta(days=STALE_DAYS)

    def goes(q: Queued) -> bool:
        if everything:
            return True
        if stale:
            return q.queued_at < cutoff and q.confidence < STALE_BELOW
        return q.id in ids

    removed = [q for q in current if goes(q)]
    if removed:
        _save(directory, scope, [q for q in current if not goes(q)])
    return removed


def as_dict(item: Queued) -> dict[str, object]:
    return msgspec.to_builtins(item)  # type: ignore[no-any-return]


def items_in(path: Path) -> list[Queued]:
    """The items of the queue file at `path`; an unreadable file holds none."""
    try:
        return msgspec.json.decode(path.read_bytes(), type=list[Queued])
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return []
