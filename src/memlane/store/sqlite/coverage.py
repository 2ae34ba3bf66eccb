"""How much of the store the stored keyword postings (`postings`) hold: what every write
and every keyword search asks first, without loading numpy.

The postings hold the memories up to a watermark as they were at the last merge; the
memories added after it, and those at or below it that triggers mark stale (changed,
deleted, or added below it), are the changes. A store whose changes are a small share
of it is searched through the postings, and a writer merges once they reach that share.
"""

from __future__ import annotations

import sqlite3

# The store_meta key of the watermark: memories with seq at most this are in the postings
# unless stale. Absent (or 0): nothing was merged yet.
COVERED = "keyword_covered"
# A writer merges once the changes are more than this share of the memories merged (and
# more than MERGE_AFTER); a search goes through the postings up to twice as many.
FRESH_SHARE = 8
MERGE_AFTER = 1_000


def covered(conn: sqlite3.Connection) -> int:
    """The watermark (0: nothing merged yet)."""
    row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (COVERED,)).fetchone()
    return int(row[0]) if row else 0


def pending(conn: sqlite3.Connection, mark: int) -> int:
    """How many memories the postings miss or hold stale, at most (a deleted one counts)."""
    row = conn.execute(
        "SELECT (SELECT COALESCE(MAX(seq), 0) FROM memory), (SELECT count(*) FROM keyword_stale)"
    ).fetchone()
    return max(0, int(row[0]) - mark) + int(row[1])


def _share(mark: int) -> int:
    return max(MERGE_AFTER, mark // FRESH_SHARE)


def due(conn: sqlite3.Connection) -> bool:
    """Whether a writer should merge: the changes passed their share of the store."""
    mark = covered(conn)
    return pending(conn, mark) > _share(mark)


def searchable(conn: sqlite3.Connection) -> int:
    """The watermark when a search should go through the postings (they hold all but a
    small share of the store), else 0."""
    mark = covered(conn)
    return mark if mark > 0 and pending(conn, mark) <= 2 * _share(mark) else 0
