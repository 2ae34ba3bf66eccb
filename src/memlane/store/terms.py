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

import math
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager

from memlane.store.sqlite.schema import BM25_WEIGHTS, TOKENIZE

COLUMNS = ("title", "body", "tags")
# The column weights of the SQLite index's rank.
RANK_WEIGHTS = dict(zip(COLUMNS, BM25_WEIGHTS, strict=True))
# FTS5's bm25 constants.
K1, B = 1.2, 0.75
# FTS5's floor for the IDF of a word in at least half the rows.
MIN_IDF = 1e-6


def idf(rows: float, hits: float) -> float:
    """FTS5's inverse document frequency: log((N - n + 0.5) / (n + 0.5)), floored."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0 else MIN_IDF


class _Tokenizer:
    """One in-memory FTS5 table per thread, emptied after each use."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", isolation_level=None)
        self.conn.execute(
            f'CREATE VIRTUAL TABLE doc USING fts5({", ".join(COLUMNS)}, tokenize="{TOKENIZE}")'
        )
        self.conn.execute("CREATE VIRTUAL TABLE doc_terms USING fts5vocab(doc, 'instance')")

    @contextmanager
    def indexed(self, rows: Iterable[tuple[int, str, str, str]]) -> Iterator[sqlite3.Connection]:
        """The connection with `rows` (rowid, title, body, tags) in table `doc`, read
        through `doc_terms` (fts5vocab instance) and `doc_docsize`; emptied after."""
        self.conn.executemany("INSERT INTO doc(rowid, title, body, tags) VALUES (?, ?, ?, ?)", rows)
        try:
            yield self.conn
        finally:
            self.conn.execute("DELETE FROM doc")

    def instances(self, rows: list[tuple[str, str, str]]) -> list[list[tuple[str, str]]]:
        """Each token of each row (title, body, tags) as FTS5 indexes it: (term,
        column), in order."""
        with self.indexed((i, *row) for i, row in enumerate(rows)) as conn:
            found: list[list[tuple[str, str]]] = [[] for _ in rows]
            query = 'SELECT doc, term, col FROM doc_terms ORDER BY doc, col, "offset"'
            for doc, term, column in conn.execute(query):
                found[doc].append((str(term), str(column)))
            return found


_local = threading.local()


def _tokenizer() -> _Tokenizer:
    tokenizer: _Tokenizer | None = getattr(_local, "tokenizer", None)
    if tokenizer is None:
        tokenizer = _local.tokenizer = _Tokenizer()
    return tokenizer


def _instances(rows: list[tuple[str, str, str]]) -> list[list[tuple[str, str]]]:
    return _tokenizer().instances(rows)


def indexed(
    rows: Iterable[tuple[int, str, str, str]],
) -> AbstractContextManager[sqlite3.Connection]:
    """This thread's in-memory FTS5 index holding `rows` (rowid, title, body, tags), as
    the SQLite store's index would: tables `doc`, `doc_terms` (fts5vocab instance) and
    `doc_docsize`; emptied when the block ends."""
    return _tokenizer().indexed(rows)


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
