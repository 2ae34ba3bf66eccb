"""Numbered, transactional migrations of the SQLite schema.

Each migration is a function `mNNN_name(conn)`; it runs inside the caller's
`BEGIN IMMEDIATE` transaction and is recorded in `schema_migrations`. A shipped
migration is never edited: change the schema by adding the next one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from memlane.errors import SchemaTooNew

Migration = Callable[[sqlite3.Connection], None]

# Symbol blocks (arrows, dingbats, emoji) whose characters separate words. SQLite's
# unicode61 tables treat many newer emoji as letters, so "release🙂" would index as
# one word that no search for "release" finds. Fixed ranges, never edited: the
# tokenizer of a shipped index must not change.
_SEPARATOR_RANGES = (
    (0x2190, 0x21FF),
    (0x2300, 0x23FF),
    (0x25A0, 0x27BF),
    (0x2900, 0x297F),
    (0x2B00, 0x2BFF),
    (0x1F000, 0x1FAFF),
)
_SEPARATORS = "".join(chr(c) for low, high in _SEPARATOR_RANGES for c in range(low, high + 1))
TOKENIZE = f"porter unicode61 remove_diacritics 2 separators '{_SEPARATORS}'"
# BM25's weight of a hit in each indexed column: title, body, tags.
BM25_WEIGHTS = (3.0, 1.0, 1.5)

# Columns of a memory that a content version snapshots (see model.VERSIONED_FIELDS).
_VERSIONED_COLUMNS = """
    title TEXT NOT NULL, body TEXT NOT NULL, kind TEXT NOT NULL, category TEXT NOT NULL,
    content_type TEXT NOT NULL, tags TEXT NOT NULL, importance INTEGER NOT NULL,
    resonance_type TEXT, visibility TEXT NOT NULL, owner TEXT, session_id TEXT,
    applicability TEXT NOT NULL, wake_phrases TEXT NOT NULL, wake_order INTEGER,
    state TEXT, domain TEXT, source_ref TEXT, dedup_hash TEXT NOT NULL
"""


def _fts_index(table: str, content: str) -> str:
    """An FTS5 external-content index over title, body and tags of `content`, kept by
    insert and delete triggers; BM25 weighs a title hit 3x, a tag hit 1.5x."""
    return f"""
CREATE VIRTUAL TABLE {table} USING fts5(
    title, body, tags, content='{content}', content_rowid='seq',
    tokenize="{TOKENIZE}"
);
INSERT INTO {table}({table}, rank) VALUES ('rank', 'bm25({", ".join(map(str, BM25_WEIGHTS))})');
CREATE TRIGGER {table}_insert AFTER INSERT ON {content} BEGIN
    INSERT INTO {table}(rowid, title, body, tags)
    VALUES (new.seq, new.title, new.body, new.tags);
END;
CREATE TRIGGER {table}_delete AFTER DELETE ON {content} BEGIN
    INSERT INTO {table}({table}, rowid, title, body, tags)
    VALUES ('delete', old.seq, old.title, old.body, old.tags);
END;
"""


_M001 = f"""
CREATE TABLE memory (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL,
    {_VERSIONED_COLUMNS},
    signal TEXT, confidence REAL NOT NULL, taint TEXT NOT NULL, trust_score REAL NOT NULL,
    source_agent TEXT, source_type TEXT NOT NULL, entry_type TEXT NOT NULL,
    project TEXT, branch TEXT, ephemeral INTEGER NOT NULL DEFAULT 0,
    occurred_at TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    valid_from TEXT NOT NULL, valid_until TEXT,
    superseded_by TEXT, superseded_at TEXT, supersede_reason TEXT,
    version INTEGER NOT NULL DEFAULT 1, version_from TEXT NOT NULL,
    retrieval_count INTEGER NOT NULL DEFAULT 0, last_retrieved TEXT,
    surfaced_count INTEGER NOT NULL DEFAULT 0, last_surfaced TEXT,
    activation_count INTEGER NOT NULL DEFAULT 0, last_activated TEXT,
    reviewed_at TEXT, applied_count INTEGER NOT NULL DEFAULT 0,
    violated_count INTEGER NOT NULL DEFAULT 0
);
-- The exact-duplicate gate only looks within a session: rows without one need no entry.
CREATE INDEX memory_dedup ON memory(dedup_hash) WHERE session_id IS NOT NULL;
CREATE INDEX memory_updated ON memory(updated_at);
CREATE INDEX memory_scope ON memory(scope, updated_at);

CREATE TABLE memory_version (
    seq INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    valid_from TEXT NOT NULL,
    valid_until TEXT NOT NULL,
    reason TEXT NOT NULL,
    actor TEXT,
    {_VERSIONED_COLUMNS},
    UNIQUE (memory_id, number)
);

{_fts_index("memory_fts", "memory")}
CREATE TRIGGER memory_fts_update AFTER UPDATE OF title, body, tags ON memory BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, title, body, tags)
    VALUES ('delete', old.seq, old.title, old.body, old.tags);
    INSERT INTO memory_fts(rowid, title, body, tags)
    VALUES (new.seq, new.title, new.body, new.tags);
END;

{_fts_index("version_fts", "memory_version")}
CREATE TABLE link (
    source TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
    target TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    score REAL,
    reason TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (source, target, type)
);
CREATE INDEX link_target ON link(target);

CREATE TABLE entity (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE entity_alias (
    alias TEXT NOT NULL,
    entity_id TEXT NOT NULL REFERENCES entity(id) ON DELETE CASCADE,
    PRIMARY KEY (alias, entity_id)
);
CREATE TABLE mention (
    memory_id TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
    entity_id TEXT NOT NULL REFERENCES entity(id) ON DELETE CASCADE,
    PRIMARY KEY (memory_id, entity_id)
);
CREATE INDEX mention_entity ON mention(entity_id);

CREATE TABLE session (
    id TEXT PRIMARY KEY,
    type TEXT,
    project TEXT,
    agent TEXT,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    summary TEXT
);

CREATE TABLE registry (
    registry TEXT NOT NULL,
    key TEXT NOT NULL,
    data TEXT NOT NULL DEFAULT '{{}}',
    created_at TEXT NOT NULL,
    PRIMARY KEY (registry, key)
);

-- Append-only: who did what to which id, and when. Never content.
CREATE TABLE journal (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    operation TEXT NOT NULL,
    memory_id TEXT,
    actor TEXT
);
CREATE INDEX journal_memory ON journal(memory_id);
CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal BEGIN
    SELECT RAISE(ABORT, 'journal is append-only');
END;
CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal BEGIN
    SELECT RAISE(ABORT, 'journal is append-only');
END;
"""

# Categories every store starts with: one per kind, plus a catch-all.
DEFAULT_CATEGORIES: tuple[tuple[str, str], ...] = (
    ("general", "Anything without a more specific shelf"),
    ("fact", "Facts about the world, the code or the people"),
    ("preference", "How someone likes things done"),
    ("decision", "Choices made and why"),
    ("procedure", "How to do something, step by step"),
    ("lesson", "What went wrong or right, and what to do next time"),
    ("convention", "Agreed ways of working"),
    ("constraint", "Rules that must hold"),
    ("event", "Things that happened"),
    ("task", "Work to do"),
    ("insight", "Realisations and patterns"),
    ("person", "People and what matters about them"),
    ("quote", "Words worth keeping verbatim"),
    ("thread", "Open questions and conversations"),
    ("commitment", "Promises made"),
    ("summary", "Summaries of sessions or topics"),
)


def m001_initial(conn: sqlite3.Connection) -> None:
    for statement in _split(_M001):
        conn.execute(statement)
    conn.executemany(
        "INSERT INTO registry(registry, key, data, created_at) "
        "VALUES ('categories', ?, json_object('description', ?), "
        "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
        DEFAULT_CATEGORIES,
    )


_M002 = """
CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO store_meta(key, value) VALUES ('vector_epoch', '0');
-- Float32 vectors per memory, embedding profile and chunk; chunk -1 is the entry
-- vector (the normalised mean of the chunks). content_hash is the memory's
-- dedup_hash when embedded, so a vector of changed content is known to be stale.
CREATE TABLE embedding (
    memory_id TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
    profile TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    content_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (memory_id, profile, chunk)
);
-- Every change of the vectors moves the epoch, so a derived index knows it is stale.
CREATE TRIGGER embedding_epoch_insert AFTER INSERT ON embedding BEGIN
    UPDATE store_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_epoch';
END;
CREATE TRIGGER embedding_epoch_delete AFTER DELETE ON embedding BEGIN
    UPDATE store_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_epoch';
END;
-- New content makes a memory's vectors stale; a tombstone takes them out of the lane.
CREATE TRIGGER embedding_epoch_memory AFTER UPDATE OF dedup_hash, superseded_at, valid_until
ON memory BEGIN
    UPDATE store_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_epoch';
END;
"""


def m002_vectors(conn: sqlite3.Connection) -> None:
    for statement in _split(_M002):
        conn.execute(statement)


_M003 = """
-- An alias names one entity (merging entities moves aliases, never duplicates them).
-- Both tables become WITHOUT ROWID: every write records its mentions, and a table
-- keyed by its primary key alone updates one b-tree fewer per row.
CREATE TABLE entity_alias_new (
    alias TEXT PRIMARY KEY,
    entity_id TEXT NOT NULL REFERENCES entity(id) ON DELETE CASCADE
) WITHOUT ROWID;
INSERT OR IGNORE INTO entity_alias_new SELECT alias, entity_id FROM entity_alias;
DROP TABLE entity_alias;
ALTER TABLE entity_alias_new RENAME TO entity_alias;
CREATE INDEX entity_alias_entity ON entity_alias(entity_id);
CREATE TABLE mention_new (
    memory_id TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
    entity_id TEXT NOT NULL REFERENCES entity(id) ON DELETE CASCADE,
    PRIMARY KEY (memory_id, entity_id)
) WITHOUT ROWID;
INSERT INTO mention_new SELECT memory_id, entity_id FROM mention;
DROP TABLE mention;
ALTER TABLE mention_new RENAME TO mention;
CREATE INDEX mention_entity ON mention(entity_id);
"""


def m003_entities(conn: sqlite3.Connection) -> None:
    for statement in _split(_M003):
        conn.execute(statement)
    # Which extractor version wrote the mentions: writes keep them current from here
    # on (version 1 of graph.entities), so an empty store is current; memories written
    # before this migration have none ("0"), and the first entity read fills them in.
    empty = conn.execute("SELECT NOT EXISTS (SELECT 1 FROM memory)").fetchone()[0]
    conn.execute(
        "INSERT INTO store_meta(key, value) VALUES ('entity_extractor', ?)",
        ("1" if empty else "0",),
    )


def m004_session_order(conn: sqlite3.Connection) -> None:
    # A session's memories in writing order (the rowid, seq, ends every index entry).
    conn.execute("CREATE INDEX memory_session ON memory(session_id) WHERE session_id IS NOT NULL")


_M005 = """
-- Which memories' vectors changed, in order, so a derived index catches up on what
-- changed instead of reading every vector again after each write.
CREATE TABLE vector_change (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL
);
CREATE TRIGGER vector_change_insert AFTER INSERT ON embedding BEGIN
    INSERT INTO vector_change(memory_id) VALUES (new.memory_id);
END;
CREATE TRIGGER vector_change_delete AFTER DELETE ON embedding BEGIN
    INSERT INTO vector_change(memory_id) VALUES (old.memory_id);
END;
CREATE TRIGGER vector_change_memory AFTER UPDATE OF dedup_hash, superseded_at, valid_until
ON memory BEGIN
    INSERT INTO vector_change(memory_id) VALUES (new.id);
END;
"""


def m005_vector_changes(conn: sqlite3.Connection) -> None:
    for statement in _split(_M005):
        conn.execute(statement)


def m006_source_hash(conn: sqlite3.Connection) -> None:
    # A file: source's content hash at write time, so reads can flag a stale source.
    conn.execute("ALTER TABLE memory ADD COLUMN source_hash TEXT")


def m007_reminders(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE reminder (id TEXT PRIMARY KEY, text TEXT NOT NULL, due_at TEXT NOT NULL, "
        "created_at TEXT NOT NULL, agent TEXT, project TEXT, dismissed_at TEXT)"
    )
    conn.execute("CREATE INDEX reminder_due ON reminder(due_at) WHERE dismissed_at IS NULL")


# The wake ritual's sessions and its guess log (guess rows belong to the agent that
# wrote them: every read filters by agent), and the phrase-vector cache.
WAKE_SCHEMA = (
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


def m008_wake(conn: sqlite3.Connection) -> None:
    for statement in WAKE_SCHEMA:
        conn.execute(statement)


def m009_journal_detail(conn: sqlite3.Connection) -> None:
    # Why a line was written (forget --reason), never the content itself.
    conn.execute("ALTER TABLE journal ADD COLUMN detail TEXT")


def m010_sightings(conn: sqlite3.Connection) -> None:
    # Each later session that restated a memory (a refresh): the session sees it too.
    conn.execute(
        "CREATE TABLE sighting (memory_id TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE, "
        "session_id TEXT NOT NULL, seen_at TEXT NOT NULL, source_ref TEXT, agent TEXT, "
        "PRIMARY KEY (memory_id, session_id))"
    )
    conn.execute("CREATE INDEX sighting_session ON sighting(session_id)")


# A memory's event time, else when it was written: what --since/--until compare.
EVENT_TIME = "COALESCE(occurred_at, created_at)"


def m011_event_time(conn: sqlite3.Connection) -> None:
    # When a memory happened (its event time, else when it was written): what time
    # windows (--since/--until, a recall's time cue) read, without a scan of every row.
    conn.execute(f"CREATE INDEX memory_event_time ON memory({EVENT_TIME})")


# What an entity is (memlane.model.EntityType): paths are files and @handles people;
# the rest is unknown until someone says. And the relations between entities: a
# relation is ended (valid_to), never deleted; one learned from a memory goes when
# that memory is forgotten.
RELATION_SCHEMA = (
    "ALTER TABLE entity ADD COLUMN entity_type TEXT NOT NULL DEFAULT 'unknown'",
    "UPDATE entity SET entity_type = CASE type WHEN 'path' THEN 'file' "
    "WHEN 'handle' THEN 'person' ELSE 'unknown' END",
    "CREATE TABLE relation (id TEXT PRIMARY KEY, "
    "subject_id TEXT NOT NULL REFERENCES entity(id), predicate TEXT NOT NULL, "
    "label TEXT NOT NULL, object_id TEXT NOT NULL REFERENCES entity(id), context TEXT, "
    "memory_id TEXT REFERENCES memory(id) ON DELETE CASCADE, "
    "valid_from TEXT NOT NULL, valid_to TEXT)",
    "CREATE INDEX relation_subject ON relation(subject_id)",
    "CREATE INDEX relation_object ON relation(object_id)",
    "CREATE INDEX relation_memory ON relation(memory_id) WHERE memory_id IS NOT NULL",
)


def m012_relations(conn: sqlite3.Connection) -> None:
    for statement in RELATION_SCHEMA:
        conn.execute(statement)


_M013 = """
DROP TRIGGER embedding_epoch_memory;
DROP TRIGGER vector_change_memory;
-- A memory moved to another scope or kind changes its vectors too: a derived index
-- keeps each memory's scope and kind beside them.
CREATE TRIGGER embedding_epoch_memory
AFTER UPDATE OF dedup_hash, superseded_at, valid_until, scope, kind ON memory BEGIN
    UPDATE store_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_epoch';
END;
CREATE TRIGGER vector_change_memory
AFTER UPDATE OF dedup_hash, superseded_at, valid_until, scope, kind ON memory BEGIN
    INSERT INTO vector_change(memory_id) VALUES (new.id);
END;
"""


def m013_vector_groups(conn: sqlite3.Connection) -> None:
    for statement in _split(_M013):
        conn.execute(statement)


# The keyword index's postings as arrays (see store.sqlite.postings): a row per term, the
# terms of each memory they hold, and the memories at or below the watermark changed since
# they were merged.
_M014 = """
CREATE TABLE IF NOT EXISTS keyword_term (
    id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE,
    seqs BLOB NOT NULL, freqs BLOB NOT NULL, sizes BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS keyword_row (seq INTEGER PRIMARY KEY, terms BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS keyword_stale (seq INTEGER PRIMARY KEY);
CREATE TRIGGER IF NOT EXISTS keyword_stale_insert AFTER INSERT ON memory
WHEN new.seq <= (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'keyword_covered')
BEGIN
    INSERT OR IGNORE INTO keyword_stale(seq) VALUES (new.seq);
END;
CREATE TRIGGER IF NOT EXISTS keyword_stale_update AFTER UPDATE OF title, body, tags ON memory
WHEN old.seq <= (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'keyword_covered')
BEGIN
    INSERT OR IGNORE INTO keyword_stale(seq) VALUES (old.seq);
END;
CREATE TRIGGER IF NOT EXISTS keyword_stale_delete AFTER DELETE ON memory
WHEN old.seq <= (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'keyword_covered')
BEGIN
    INSERT OR IGNORE INTO keyword_stale(seq) VALUES (old.seq);
END;
"""


def m014_keyword_postings(conn: sqlite3.Connection) -> None:
    for statement in _split(_M014):
        conn.execute(statement)
    if conn.execute("SELECT 1 FROM memory LIMIT 1").fetchone():
        # A store that holds memories is searched through its postings at once.
        from memlane.store.sqlite import postings  # numpy; it reads this module too

        postings.merge(conn)


MIGRATIONS: tuple[tuple[int, str, Migration], ...] = (
    (1, "initial", m001_initial),
    (2, "vectors", m002_vectors),
    (3, "entities", m003_entities),
    (4, "session_order", m004_session_order),
    (5, "vector_changes", m005_vector_changes),
    (6, "source_hash", m006_source_hash),
    (7, "reminders", m007_reminders),
    (8, "wake", m008_wake),
    (9, "journal_detail", m009_journal_detail),
    (10, "sightings", m010_sightings),
    (11, "event_time", m011_event_time),
    (12, "relations", m012_relations),
    (13, "vector_groups", m013_vector_groups),
    (14, "keyword_postings", m014_keyword_postings),
)
LATEST = MIGRATIONS[-1][0]


def _split(script: str) -> list[str]:
    """Split a script into statements, keeping trigger bodies whole."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    return [s for s in statements if s]


def current_version(conn: sqlite3.Connection) -> int:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_migrations'"
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return int(row[0])


def check_not_newer(version: int, location: str) -> None:
    if version > LATEST:
        raise SchemaTooNew(
            f"{location} has schema version {version}, newer than this memlane understands "
            f"({LATEST}); upgrade memlane to open it"
        )


def migrate(conn: sqlite3.Connection, location: str) -> int:
    """Apply pending migrations; the caller holds a write transaction."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    version = current_version(conn)
    check_not_newer(version, location)
    for number, name, step in MIGRATIONS:
        if number > version:
            step(conn)
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) "
                "VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                (number, name),
            )
    conn.execute(f"PRAGMA user_version = {LATEST}")
    return LATEST
