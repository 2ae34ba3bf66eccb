"""Keyword terms exactly as the SQLite backend's FTS5 index holds them.

Trigger: the PostgreSQL backend must rank keyword matches as SQLite does, so that
recall finds the same on both. Why: PostgreSQL's parser and stemmers split and stem
otherwise: its Snowball `english` stemmer and FTS5's porter disagree on a few percent
of the words of real notes, Snowball `porter` on a handful, and its parser makes extra
tokens of hyphenated words, e-mails and URLs. Outcome: FTS5 itself tokenizes, in an
in-memory table with the SQLite index's own tokenizer, and `fts5vocab` reads the terms
back.
"""

from __future__ import annotations

import sqlite3
import threading

from memlane.store.sqlite.schema import TOKENIZE

COLUMNS = ("title", "body", "tags")
# The column weights of the SQLite index's rank, bm25(3.0, 1.0, 1.5).
RANK_WEIGHTS = dict(zip(COLUMNS, (3.0, 1.0, 1.5), strict=True))


class _Tokenizer:
    """One in-memory FTS5 table per thread, emptied after each text."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", isolation_level=None)
        self.conn.execute(
            f'CREATE VIRTUAL TABLE doc USING fts5({", ".join(COLUMNS)}, tokenize="{TOKENIZE}")'
        )
        self.conn.execute("CREATE VIRTUAL TABLE doc_terms USING fts5vocab(doc, 'instance')")

    def instances(self, rows: list[tuple[str, str, str]]) -> list[list[tuple[str, str]]]:
        """Each token of each row (title, body, tags) as FTS5 indexes it: (term,
        column), in order."""
        self.conn.executemany(
            "INSERT INTO doc(rowid, title, body, tags) VALUES (?, ?, ?, ?)",
            ((i, *row) for i, row in enumerate(rows)),
        )
        try:
            found: list[list[tuple[str, str]]] = [[] for _ in rows]
            query = 'SELECT doc, term, col FROM doc_terms ORDER BY doc, col, "offset"'
            for doc, term, column in self.conn.execute(query):
                found[doc].append((str(term), str(column)))
            return found
        finally:
            self.conn.execute("DELETE FROM doc")


_local = threading.local()


def _instances(rows: list[tuple[str, str, str]]) -> list[list[tuple[str, str]]]:
    tokenizer: _Tokenizer | None = getattr(_local, "tokenizer", None)
    if tokenizer is None:
        tokenizer = _local.tokenizer = _Tokenizer()
    return tokenizer.instances(rows)


def weighted(title: str, body: str, tags: str) -> tuple[dict[str, float], int]:
    """A memory's terms, each with its count weighted as the rank weighs columns (what
    FTS5's bm25 sums for a phrase in a row), and its length in tokens."""
    found = _instances([(title, body, tags)])[0]
    counts: dict[str, float] = {}
    for term, column in found:
        counts[term] = counts.get(term, 0.0) + RANK_WEIGHTS[column]
    return counts, len(found)


# Query words whose terms are remembered (a store's vocabulary is mostly this few).
# Trigger: the write policy searches each line's words twice. Why: tokenizing through
# FTS5 costs most of a millisecond a search. Outcome: a word is tokenized once.
_WORDS_KEPT = 8192
_phrases: dict[str, tuple[str, ...]] = {}


def phrases(texts: list[str]) -> list[tuple[str, ...]]:
    """The terms of each query word (a quoted FTS5 string), in order: usually one."""
    known = {text: _phrases.get(text) for text in texts}
    new = [text for text, terms in known.items() if terms is None]
    if new:
        if len(_phrases) + len(new) > _WORDS_KEPT:
            _phrases.clear()
        found = _instances([("", text, "") for text in new])
        for text, instances in zip(new, found, strict=True):
            known[text] = _phrases[text] = tuple(term for term, _ in instances)
    return [known[text] or () for text in texts]
