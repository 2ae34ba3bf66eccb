"""The wake ritual's sessions, its guess log and the phrase-vector cache, in SQLite.

Guess rows belong to the agent that wrote them: every read filters by agent.
"""

from __future__ import annotations

import json
import sqlite3

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

SCHEMA = (
    "CREATE TABLE wake_session (id TEXT PRIMARY KEY, agent TEXT NOT NULL, "
    "created_at TEXT NOT NULL, version INTEGER NOT NULL, sequence TEXT NOT NULL, "
    "wake INTEGER, model TEXT, entry INTEGER NOT NULL, chunk INTEGER NOT NULL, "
    "step INTEGER NOT NULL, last_response TEXT, completed_at TEXT)",
    "CREATE TABLE wake_guess (session_id TEXT NOT NULL REFERENCES wake_session(id), "
    "step INTEGER NOT NULL, agent TEXT NOT NULL, memory_id TEXT NOT NULL, "
    "chunk INTEGER NOT NULL, position INTEGER NOT NULL, title TEXT NOT NULL, "
    "guess TEXT NOT NULL, phrases TEXT NOT NULL, source TEXT NOT NULL, "
    "match_kind TEXT NOT NULL, phrase_index INTEGER, bucket TEXT NOT NULL, "
    "chunk_sha256 TEXT NOT NULL, created_at TEXT NOT NULL, wake INTEGER, model TEXT, "
    "scored_at TEXT, scores TEXT, guess_vector BLOB, PRIMARY KEY (session_id, step))",
    "CREATE INDEX wake_guess_agent ON wake_guess(agent, wake)",
    "CREATE INDEX wake_guess_memory ON wake_guess(agent, memory_id, created_at)",
    # Authored-phrase vectors keyed by sha256(profile + normalised phrase): no text kept.
    "CREATE TABLE wake_phrase_embedding (key TEXT PRIMARY KEY, vector BLOB NOT NULL)",
)


def put_ritual(conn: sqlite3.Connection, r: WakeRitual) -> None:
    conn.execute(
        f"INSERT OR REPLACE INTO wake_session({RITUAL_COLUMNS}) VALUES ({', '.join('?' * 12)})",
        ritual_params(r),
    )


def ritual(conn: sqlite3.Connection, session_id: str) -> WakeRitual | None:
    row = conn.execute(f"SELECT {RITUAL_COLUMNS} FROM wake_session WHERE id = ?", (session_id,))
    found = row.fetchone()
    if found is None:
        return None
    return ritual_from_row(found)


def put_guess(conn: sqlite3.Connection, g: WakeGuess) -> None:
    conn.execute(
        f"INSERT INTO wake_guess({GUESS_COLUMNS}) VALUES ({', '.join('?' * 19)})",
        guess_params(g),
    )


def score_guess(
    conn: sqlite3.Connection,
    session_id: str,
    step: int,
    scores: dict[str, float | int | None],
    vector: bytes,
    at: str,
) -> None:
    conn.execute(
        "UPDATE wake_guess SET scores = ?, guess_vector = ?, scored_at = ? "
        "WHERE session_id = ? AND step = ?",
        (json.dumps(scores), vector, at, session_id, step),
    )


def guesses(
    conn: sqlite3.Connection,
    agent: str,
    *,
    wake: int | None = None,
    memory_id: str | None = None,
    session_id: str | None = None,
    pending: bool | None = None,
) -> list[WakeGuess]:
    """One agent's guess rows, oldest first, narrowed by the given keys."""
    where, params = ["agent = ?"], list[object]([agent])
    for column, value in (("wake", wake), ("memory_id", memory_id), ("session_id", session_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if pending is not None:
        where.append("scored_at IS NULL" if pending else "scored_at IS NOT NULL")
    rows = conn.execute(
        f"SELECT {GUESS_COLUMNS} FROM wake_guess WHERE {' AND '.join(where)} "
        "ORDER BY created_at, session_id, step",
        params,
    )
    return [guess_from_row(r) for r in rows]


def guess_vectors(conn: sqlite3.Connection, agent: str) -> dict[tuple[str, int], bytes]:
    """The stored guess vectors of an agent's scored rows, by (session, step)."""
    rows = conn.execute(
        "SELECT session_id, step, guess_vector FROM wake_guess "
        "WHERE agent = ? AND guess_vector IS NOT NULL",
        (agent,),
    )
    return {(r[0], r[1]): r[2] for r in rows}


def phrase_vector(conn: sqlite3.Connection, key: str) -> bytes | None:
    row = conn.execute("SELECT vector FROM wake_phrase_embedding WHERE key = ?", (key,))
    found = row.fetchone()
    return bytes(found[0]) if found else None


def put_phrase_vector(conn: sqlite3.Connection, key: str, vector: bytes) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO wake_phrase_embedding(key, vector) VALUES (?, ?)", (key, vector)
    )


def forget_memory(conn: sqlite3.Connection, memory_id: str) -> None:
    """A forgotten memory leaves the ritual too: its guess rows (they hold its title
    and the guesses at it) go, and rituals that walked it lose its title and their
    stored last response (which may quote it; such a ritual can no longer replay)."""
    conn.execute("DELETE FROM wake_guess WHERE memory_id = ?", (memory_id,))
    rows = conn.execute(
        "SELECT id, sequence FROM wake_session WHERE sequence LIKE ?", (f'%"{memory_id}"%',)
    ).fetchall()
    for session_id, sequence in rows:
        conn.execute(
            "UPDATE wake_session SET sequence = ?, last_response = NULL WHERE id = ?",
            (without_title(sequence, memory_id), session_id),
        )
