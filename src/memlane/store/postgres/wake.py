"""The wake ritual's sessions, its guess log and the phrase-vector cache, on PostgreSQL.

The port of `memlane.store.sqlite.wake`; guess rows belong to the agent that wrote them.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg

from memlane.model import WakeGuess, WakeRitual
from memlane.timeutil import from_text, to_text

Conn = psycopg.Connection[tuple[Any, ...]]
_RITUAL = (
    "id, agent, created_at, version, sequence, wake, model, entry, chunk, step, "
    "last_response, completed_at"
)
_GUESS = (
    "session_id, step, agent, memory_id, chunk, position, title, guess, phrases, source, "
    "match_kind, phrase_index, bucket, chunk_sha256, created_at, wake, model, scored_at, scores"
)


def _marks(n: int) -> str:
    return ", ".join(["%s"] * n)


def put_ritual(conn: Conn, r: WakeRitual) -> None:
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in _RITUAL.split(", ")[1:])
    conn.execute(
        f"INSERT INTO wake_session({_RITUAL}) VALUES ({_marks(12)}) "
        f"ON CONFLICT (id) DO UPDATE SET {updates}",
        (r.id, r.agent, to_text(r.created_at), r.version, json.dumps(r.sequence), r.wake,
         r.model, r.entry, r.chunk, r.step, r.last_response,
         to_text(r.completed_at) if r.completed_at else None),
    )  # fmt: skip


def ritual(conn: Conn, session_id: str) -> WakeRitual | None:
    found = conn.execute(
        f"SELECT {_RITUAL} FROM wake_session WHERE id = %s", (session_id,)
    ).fetchone()
    if found is None:
        return None
    sequence = tuple((str(i), str(t)) for i, t in json.loads(found[4]))
    return WakeRitual(
        found[0], found[1], from_text(found[2]), found[3], sequence, found[5], found[6],
        found[7], found[8], found[9], found[10], from_text(found[11]) if found[11] else None,
    )  # fmt: skip


def put_guess(conn: Conn, g: WakeGuess) -> None:
    conn.execute(
        f"INSERT INTO wake_guess({_GUESS}) VALUES ({_marks(19)})",
        (g.session_id, g.step, g.agent, g.memory_id, g.chunk, g.position, g.title, g.guess,
         json.dumps(g.phrases), g.source, g.match_kind, g.phrase_index, g.bucket,
         g.chunk_sha256, to_text(g.created_at), g.wake, g.model, None, None),
    )  # fmt: skip


def score_guess(
    conn: Conn,
    session_id: str,
    step: int,
    scores: dict[str, float | int | None],
    vector: bytes,
    at: str,
) -> None:
    conn.execute(
        "UPDATE wake_guess SET scores = %s, guess_vector = %s, scored_at = %s "
        "WHERE session_id = %s AND step = %s",
        (json.dumps(scores), vector, at, session_id, step),
    )


def _guess(row: Any) -> WakeGuess:
    return WakeGuess(
        row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7],
        tuple(json.loads(row[8])), row[9], row[10], row[11], row[12], row[13],
        from_text(row[14]), row[15], row[16], from_text(row[17]) if row[17] else None,
        json.loads(row[18]) if row[18] else {},
    )  # fmt: skip


def guesses(
    conn: Conn,
    agent: str,
    *,
    wake: int | None = None,
    memory_id: str | None = None,
    session_id: str | None = None,
    pending: bool | None = None,
) -> list[WakeGuess]:
    where, params = ["agent = %s"], list[object]([agent])
    for column, value in (("wake", wake), ("memory_id", memory_id), ("session_id", session_id)):
        if value is not None:
            where.append(f"{column} = %s")
            params.append(value)
    if pending is not None:
        where.append("scored_at IS NULL" if pending else "scored_at IS NOT NULL")
    rows = conn.execute(
        f"SELECT {_GUESS} FROM wake_guess WHERE {' AND '.join(where)} "
        "ORDER BY created_at, session_id, step",
        params,
    )
    return [_guess(r) for r in rows]


def guess_vectors(conn: Conn, agent: str) -> dict[tuple[str, int], bytes]:
    rows = conn.execute(
        "SELECT session_id, step, guess_vector FROM wake_guess "
        "WHERE agent = %s AND guess_vector IS NOT NULL",
        (agent,),
    )
    return {(r[0], r[1]): bytes(r[2]) for r in rows}


def phrase_vector(conn: Conn, key: str) -> bytes | None:
    found = conn.execute(
        "SELECT vector FROM wake_phrase_embedding WHERE key = %s", (key,)
    ).fetchone()
    return bytes(found[0]) if found else None


def put_phrase_vector(conn: Conn, key: str, vector: bytes) -> None:
    conn.execute(
        "INSERT INTO wake_phrase_embedding(key, vector) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET vector = EXCLUDED.vector",
        (key, vector),
    )


def forget_memory(conn: Conn, memory_id: str) -> None:
    """A forgotten memory leaves the ritual too (see the SQLite backend's twin)."""
    conn.execute("DELETE FROM wake_guess WHERE memory_id = %s", (memory_id,))
    rows = conn.execute(
        "SELECT id, sequence FROM wake_session WHERE strpos(sequence, %s) > 0",
        (f'"{memory_id}"',),
    ).fetchall()
    for session_id, sequence in rows:
        blanked = [[i, "" if i == memory_id else t] for i, t in json.loads(sequence)]
        conn.execute(
            "UPDATE wake_session SET sequence = %s, last_response = NULL WHERE id = %s",
            (json.dumps(blanked), session_id),
        )
