"""The wake ritual's sessions, its guess log and the phrase-vector cache, on PostgreSQL.

The port of `memlane.store.sqlite.wake`; guess rows belong to the agent that wrote them.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg

from memlane.model import WakeGuess, WakeRitual
from memlane.store.wake_rows import (
    GUESS_COLUMNS,
    RITUAL_COLUMNS,
    guess_from_row,
    guess_params,
    ritual_from_row,
    ritual_params,
    without_title,
)

Conn = psycopg.Connection[tuple[Any, ...]]


def _marks(n: int) -> str:
    return ", ".join(["%s"] * n)


def put_ritual(conn: Conn, r: WakeRitual) -> None:
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in RITUAL_COLUMNS.split(", ")[1:])
    conn.execute(
        f"INSERT INTO wake_session({RITUAL_COLUMNS}) VALUES ({_marks(12)}) "
        f"ON CONFLICT (id) DO UPDATE SET {updates}",
        ritual_params(r),
    )


def ritual(conn: Conn, session_id: str) -> WakeRitual | None:
    found = conn.execute(
        f"SELECT {RITUAL_COLUMNS} FROM wake_session WHERE id = %s", (session_id,)
    ).fetchone()
    if found is None:
        return None
    return ritual_from_row(found)


def put_guess(conn: Conn, g: WakeGuess) -> None:
    conn.execute(
        f"INSERT INTO wake_guess({GUESS_COLUMNS}) VALUES ({_marks(19)})",
        guess_params(g),
    )


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
        f"SELECT {GUESS_COLUMNS} FROM wake_guess WHERE {' AND '.join(where)} "
        "ORDER BY created_at, session_id, step",
        params,
    )
    return [guess_from_row(r) for r in rows]


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
        conn.execute(
            "UPDATE wake_session SET sequence = %s, last_response = NULL WHERE id = %s",
            (without_title(sequence, memory_id), session_id),
        )
