"""Keyword terms exactly as the SQLite backend's FTS5 index holds them.

Trigger: the PostgreSQL backend must rank keyword matches as SQLite does (issue 8:
LoCoMo recall the same on both backends). Why: PostgreSQL's parser and stemmers split
and stem otherwise: over the 11,946 distinct words of LoCoMo dev and a bench corpus,
its Snowball `english` stemmer disagreed with FTS5's porter on 369 (9,216 of 247,665
occurrences), Snowball `porter` still on 9, and its parser makes extra tokens of
hyphenated words, e-mails and URLs. Outcome: FTS5 itself tokenizes, in an in-memory
table with the SQLite index's own tokenizer, and `fts5vocab` reads the terms back.
"""

from __future__ import annotations

import sqlite3
import threading

from memlane.store.sqlite.schema import TOKENIZE

# A document's terms: term -> its count in (title, body, tags).
Frequencies = dict[str, list[int]]
COLUMNS = ("title", "body", "tags")
# The column weights of the SQLite index's rank, bm25(3.0, 1.0, 1.5).
RANK_WEIGHTS = (3.0, 1.0, 1.5)


class _Tokenizer:
    """One in-memory FTS5 table per thread, emptied after each text."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", isolation_level=None)
        self.conn.execute(
            f'CREATE VIRTUAL TABLE doc USING fts5({", ".join(COLUMNS)}, tokenize="{TOKENIZE}")'
        )
        self.conn.execute("CREATE VIRTUAL TABLE doc_terms USING fts5vocab(doc, 'instance')")

    def frequencies(self, title: str, body: str, tags: str) -> tuple[Frequencies, int]:
        self.conn.execute("INSERT INTO doc(rowid, title, body, tags) VALUES (1, ?, ?, ?)",
                          (title, body, tags))  # fmt: skip
        try:
            rows = self.conn.execute("SELECT term, col FROM doc_terms").fetchall()
        finally:
            self.conn.execute("DELETE FROM doc")
        counts: Frequencies = {}
        for term, column in rows:
            counts.setdefault(term, [0, 0, 0])[COLUMNS.index(column)] += 1
        return counts, len(rows)

    def terms(self, text: str) -> list[str]:
        self.conn.execute("INSERT INTO doc(rowid, title, body, tags) VALUES (1, '', ?, '')",
                          (text,))  # fmt: skip
        try:
            rows = self.conn.execute('SELECT term FROM doc_terms ORDER BY "offset"').fetchall()
        finally:
            self.conn.execute("DELETE FROM doc")
        return [str(r[0]) for r in rows]


_local = threading.local()


def _tokenizer() -> _Tokenizer:
    tokenizer: _Tokenizer | None = getattr(_local, "tokenizer", None)
    if tokenizer is None:
        tokenizer = _local.tokenizer = _Tokenizer()
    return tokenizer


def document(title: str, body: str, tags: str) -> tuple[Frequencies, int]:
    """A memory's terms with their counts per column, and its length in tokens (what
    FTS5's bm25 reads as the document's size)."""
    return _tokenizer().frequencies(title, body, tags)


def weighted(title: str, body: str, tags: str) -> tuple[dict[str, float], int]:
    """A memory's terms with their counts weighted as the rank weighs columns (what
    FTS5's bm25 sums for a phrase in a row), and its length in tokens."""
    counts, size = document(title, body, tags)
    weights = RANK_WEIGHTS
    return {t: sum(w * c for w, c in zip(weights, n, strict=True)) for t, n in counts.items()}, size


def phrase(text: str) -> list[str]:
    """The terms of one query word (a quoted FTS5 string), in order: usually one."""
    return _tokenizer().terms(text)
