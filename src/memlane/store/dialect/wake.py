"""The wake ritual's sessions, guess log and phrase-vector cache, written once for both
stores (see memlane.store.dialect).
"""

from __future__ import annotations

import json

from memlane.model import WakeGuess, WakeRitual
from memlane.store.dialect import Connection, Dialect
from memlane.store.wake_rows import (
    GUESS_COLUMNS,
    RITUAL_COLUMNS,
    guess_from_row,
    guess_params,
    ritual_from_row,
    ritual_params,
    without_title,
)

# Guess rows belong to the agent that wrote them: every read filters by agent.


def put_ritual(d: Dialect, conn: Connection, r: WakeRitual) -> None:
    conn.execute(d.upsert("wake_session", RITUAL_COLUMNS, "id"), ritual_params(r))


def ritual(d: Dialect, conn: Connection, session_id: str) -> WakeRitual | None:
    found = conn.execute(
        f"SELECT {RITUAL_COLUMNS} FROM wake_session WHERE id = {d.mark}", (session_id,)
    ).fetchone()
    if found is None:
        return None
    return ritual_from_row(found)


def put_guess(d: Dialect, conn: Connection, g: WakeGuess) -> None:
    marks = d.marks(len(GUESS_COLUMNS.split(", ")))
    conn.execute(f"INSERT INTO wake_guess({GUESS_COLUMNS}) VALUES ({marks})", guess_params(g))


def score_guess(
    d: Dialect,
    conn: Connection,
    session_id: str,
    step: int,
    scores: dict[str, float | int | None],
    vector: bytes,
    at: str,
) -> None:
    m = d.mark
    conn.execute(
        f"UPDATE wake_guess SET scores = {m}, guess_vector = {m}, scored_at = {m} "
        f"WHERE session_id = {m} AND step = {m}",
        (json.dumps(scores), vector, at, session_id, step),
    )


def guesses(
    d: Dialect,
    conn: Connection,
    agent: str,
    *,
    wake: int | None = None,
    memory_id: str | None = None,
    session_id: str | None = None,
    pending: bool | None = None,
) -> list[WakeGuess]:
    """One agent's guess rows, oldest first, narrowed by the given keys."""
    where, params = [f"agent = {d.mark}"], list[object]([agent])
    for column, value in (("wake", wake), ("memory_id", memory_id), ("session_id", session_id)):
        if value is not None:
            where.append(f"{column} = {d.mark}")
            params.append(value)
    if pending is not None:
        where.append("scored_at IS NULL" if pending else "scored_at IS NOT NULL")
    rows = conn.execute(
        f"SELECT {GUESS_COLUMNS} FROM wake_guess WHERE {' AND '.join(where)} "
        "ORDER BY created_at, session_id, step",
        params,
    )
    return [guess_from_row(r) for r in rows]


def guess_vectors(d: Dialect, conn: Connection, agent: str) -> dict[tuple[str, int], bytes]:
    """The stored guess vectors of an agent's scored rows, by (session, step)."""
    rows = conn.execute(
        "SELECT session_id, step, guess_vector FROM wake_guess "
        f"WHERE agent = {d.mark} AND guess_vector IS NOT NULL",
        (agent,),
    )
    return {(r[0], r[1]): bytes(r[2]) for r in rows}


def phrase_vector(d: Dialect, conn: Connection, key: str) -> bytes | None:
    found = conn.execute(
        f"SELECT vector FROM wake_phrase_embedding WHERE key = {d.mark}", (key,)
    ).fetchone()
    return bytes(found[0]) if found else None


def put_phrase_vector(d: Dialect, conn: Connection, key: str, vector: bytes) -> None:
    conn.execute(d.upsert("wake_phrase_embedding", "key, vector", "key"), (key, vector))


def forget_memory(d: Dialect, conn: Connection, memory_id: str) -> None:
    """A forgotten memory leaves the ritual too: its guess rows (they hold its title
    and the guesses at it) go, and rituals that walked it lose its title and their
    stored last response (which may quote it; such a ritual can no longer replay)."""
    conn.execute(f"DELETE FROM wake_guess WHERE memory_id = {d.mark}", (memory_id,))
    walked, quoted = d.contains("sequence", f'"{memory_id}"')
    rows = conn.execute(
        f"SELECT id, sequence FROM wake_session WHERE {walked}", (quoted,)
    ).fetchall()
    for session_id, sequence in rows:
        conn.execute(
            f"UPDATE wake_session SET sequence = {d.mark}, last_response = NULL "
            f"WHERE id = {d.mark}",
            (without_title(sequence, memory_id), session_id),
        )
