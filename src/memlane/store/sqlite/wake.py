"""The wake ritual's sessions, its guess log and the phrase-vector cache, in SQLite:
the schema here, the statements in memlane.store.dialect (PostgreSQL's too).

Guess rows belong to the agent that wrote them: every read filters by agent.
"""

from __future__ import annotations

from functools import partial

from memlane.store.dialect import wake as shared
from memlane.store.sqlite.sql import SQLITE

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


forget_memory = partial(shared.forget_memory, SQLITE)
