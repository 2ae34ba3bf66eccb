"""Checks shared by the crash and concurrency tests: a store file is consistent, and the
environment a memlane child process runs in."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from memlane.write.normalize import dedup_hash


def env(tmp_path: Path, db: Path) -> dict[str, str]:
    return {
        **os.environ,
        "MEMLANE_DB": str(db),
        "MEMLANE_AGENT": "tester",
        "MEMLANE_PROJECT_ALIASES": str(tmp_path / "aliases.json"),
        "MEMLANE_EMBED_PROFILE": "hash",
    }


def count_by_tag(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT j.value, COUNT(*) FROM memory m, json_each(m.tags) j GROUP BY j.value"
        )
        return {str(tag): int(n) for tag, n in rows}


def assert_consistent(db: Path) -> int:
    """Integrity, FTS in step with the rows, every row whole; returns the memory count."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')")
        conn.execute("INSERT INTO version_fts(version_fts) VALUES ('integrity-check')")
        memories = conn.execute("SELECT COUNT(*) FROM memory").fetchone()[0]
        docs = conn.execute("SELECT COUNT(*) FROM memory_fts_docsize").fetchone()[0]
        assert docs == memories
        orphans = conn.execute(
            "SELECT COUNT(*) FROM memory_fts_docsize d "
            "WHERE NOT EXISTS (SELECT 1 FROM memory m WHERE m.seq = d.id)"
        ).fetchone()[0]
        assert orphans == 0
        journaled = conn.execute("SELECT COUNT(*) FROM journal WHERE operation = 'add'").fetchone()
        assert journaled[0] == memories
        for title, body, digest in conn.execute("SELECT title, body, dedup_hash FROM memory"):
            assert title and body
            assert digest == dedup_hash(title, body)
        # every version but the current one is kept, numbered 1..version-1 with no gap
        gaps = conn.execute(
            "SELECT COUNT(*) FROM memory m WHERE m.version - 1 != "
            "(SELECT COUNT(*) FROM memory_version v WHERE v.memory_id = m.id)"
        ).fetchone()[0]
        assert gaps == 0
        return int(memories)
    finally:
        conn.close()
