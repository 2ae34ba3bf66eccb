"""The wake tables' rows as values, for every backend: the column lists and the
conversions between rows and WakeRitual / WakeGuess. Only the SQL differs by backend."""

from __future__ import annotations

import json
from typing import Any

from memlane.model import WakeGuess, WakeRitual
from memlane.timeutil import from_text, to_text

RITUAL_COLUMNS = (
    "id, agent, created_at, version, sequence, wake, model, entry, chunk, step, "
    "last_response, completed_at"
)
GUESS_COLUMNS = (
    "session_id, step, agent, memory_id, chunk, position, title, guess, phrases, source, "
    "match_kind, phrase_index, bucket, chunk_sha256, created_at, wake, model, scored_at, scores"
)


def ritual_params(r: WakeRitual) -> tuple[Any, ...]:
    return (
        r.id,
        r.agent,
        to_text(r.created_at),
        r.version,
        json.dumps(r.sequence),
        r.wake,
        r.model,
        r.entry,
        r.chunk,
        r.step,
        r.last_response,
        to_text(r.completed_at) if r.completed_at else None,
    )


def ritual_from_row(row: Any) -> WakeRitual:
    sequence = tuple((str(i), str(t)) for i, t in json.loads(row[4]))
    return WakeRitual(
        row[0],
        row[1],
        from_text(row[2]),
        row[3],
        sequence,
        row[5],
        row[6],
        row[7],
        row[8],
        row[9],
        row[10],
        from_text(row[11]) if row[11] else None,
    )


def guess_params(g: WakeGuess) -> tuple[Any, ...]:
    """A new (unscored) guess row."""
    return (
        g.session_id,
        g.step,
        g.agent,
        g.memory_id,
        g.chunk,
        g.position,
        g.title,
        g.guess,
        json.dumps(g.phrases),
        g.source,
        g.match_kind,
        g.phrase_index,
        g.bucket,
        g.chunk_sha256,
        to_text(g.created_at),
        g.wake,
        g.model,
        None,
        None,
    )


def guess_from_row(row: Any) -> WakeGuess:
    return WakeGuess(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        row[6],
        row[7],
        tuple(json.loads(row[8])),
        row[9],
        row[10],
        row[11],
        row[12],
        row[13],
        from_text(row[14]),
        row[15],
        row[16],
        from_text(row[17]) if row[17] else None,
        json.loads(row[18]) if row[18] else {},
    )


def without_title(sequence: str, memory_id: str) -> str:
    """A ritual's stored sequence with a forgotten memory's title blanked."""
    return json.dumps([[i, "" if i == memory_id else t] for i, t in json.loads(sequence)])
