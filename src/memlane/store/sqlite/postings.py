"""The keyword index's postings kept as arrays: each term's memories with their
weighted counts and lengths, so that a search ranks every match with numpy, scoring
each as FTS5's bm25 does.

FTS5 ranks a match in microseconds, walking its index for every phrase of the query,
and a common word matches a large share of the store. Here a term's postings are one
row of three arrays: reading them costs little more than their bytes, and ranking
them is a few vector operations.

The stored postings hold the memories up to a watermark (`coverage`) as they were when
last merged. What changed since is asked of FTS5 itself: memories added after the
watermark, and those at or below it that triggers mark stale (changed, deleted, or
added below it). A single-term FTS5 search gives exactly such a memory's share of a
score, so every score equals FTS5's `rank` for the same query, to the last bit. `merge`
folds the changes in.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from memlane.store import terms as tokens
from memlane.store.sqlite import coverage
from memlane.store.sqlite.schema import BM25_WEIGHTS
from memlane.store.terms import K1, B, idf

# Memories tokenized per step of a merge: the in-memory index holds this many at once.
MERGE_STEP = 20_000
# The bytes of terms' memories and shares a connection keeps while the store is
# unchanged (see Postings).
KEPT_BYTES = 64 << 20
# Hits fewer than the highest memory number over this are sorted to join them, more are
# marked in an array that long (see _union).
SORTED_SHARE = 16

Seqs = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


class Ranked(NamedTuple):
    """Every match of a query, as FTS5 `rank` scores them (negative, best least)."""

    seqs: Seqs
    scores: Floats


class _Posting(NamedTuple):
    """A term's postings. Stored, the counts are float32 and the lengths uint32: a
    weighted count is a multiple of 0.5 and a length a whole number, both exact in
    those widths for any memory of fewer than 2^23 words; read, both are float64, so
    the arithmetic is FTS5's."""

    seqs: Seqs
    freqs: Floats  # the term's count in each memory, each column weighted as in BM25
    sizes: Floats  # each memory's length in tokens (every column)


class Stats(NamedTuple):
    rows: int
    avgdl: float


def _varints(blob: bytes) -> list[int]:
    """SQLite's variable-length integers (as FTS5 stores its totals and row sizes)."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for k in range(9):
            byte = blob[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def index_stats(conn: sqlite3.Connection) -> Stats:
    """The row count and mean row length FTS5's BM25 uses (its averages record)."""
    row = conn.execute("SELECT block FROM memory_fts_data WHERE id = 1").fetchone()
    totals = _varints(row[0]) if row else [0]
    rows = totals[0]
    return Stats(rows, sum(totals[1:]) / rows if rows else 0.0)


def shares(posting: _Posting, weight: float, stats: Stats) -> Floats:
    """Each memory's part of a BM25 score from one term, in FTS5's order of operations."""
    f = posting.freqs
    return weight * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * posting.sizes / stats.avgdl)))


def phrase_groups(count: int, match: str) -> list[tuple[int, ...]]:
    """The query's groups of terms (by index) as `sql.fts_query` joins them: one group
    of all for "all", one group per term for "any", every group of all but one for
    "most"."""
    terms = range(count)
    if match == "all":
        return [tuple(terms)]
    if match == "most":
        return list(itertools.combinations(terms, count - 1))
    return [(t,) for t in terms]


class Joined(NamedTuple):
    """Memories holding a query's terms, with each term's hits and shares among them."""

    seqs: Seqs
    has: npt.NDArray[np.bool_]  # term by memory
    share: npt.NDArray[np.float64]  # term by memory, 0 where it is not held


class Terms:
    """A query's terms: each term's memories (in order) and their shares of a BM25
    score, joined over the memories that may match a step of the query."""

    def __init__(self, parts: Sequence[tuple[Seqs, Floats]]) -> None:
        self.parts = parts
        self._joined: Joined | None = None

    def joined(self) -> Joined:
        """The terms over the memories holding any of them."""
        if self._joined is None:
            self._joined = joined(self.parts)
        return self._joined

    def narrowed(self, match: str) -> Joined:
        """The terms over the memories that may match `match`: for "all" those of the
        rarest term, for "most" those of the two rarest (a memory missing one term
        holds one of them); every memory of any term for "any".

        Trigger: the all-words and most-words steps, as the write policy asks for
        each memory it adds. Why: a common term's hits are most of the join, and
        marking or sorting them costs more than finding the few candidates in them.
        Outcome: each term's hits are looked up for the candidates only."""
        if match == "any":
            return self.joined()
        lead = sorted(range(len(self.parts)), key=lambda i: len(self.parts[i][0]))
        lead = lead[: 1 if match == "all" else 2]
        seqs = _merged([self.parts[i][0] for i in lead])
        has = np.zeros((len(self.parts), len(seqs)), bool)
        share = np.zeros((len(self.parts), len(seqs)))
        for i, (term_seqs, term_shares) in enumerate(self.parts):
            if term_seqs is seqs:  # the one leading term
                has[i], share[i] = True, term_shares
                continue
            at = np.searchsorted(term_seqs, seqs)
            found = at < len(term_seqs)
            found[found] = term_seqs[at[found]] == seqs[found]
            has[i], share[i, found] = found, term_shares[at[found]]
        return Joined(seqs, has, share)


def _merged(runs: Sequence[Seqs]) -> Seqs:
    """The distinct memories of `runs`, each in order, in order (the sort merges runs)."""
    if len(runs) == 1:
        return runs[0]
    both: Seqs = np.sort(np.concatenate(runs), kind="stable")
    first = np.ones(len(both), bool)
    first[1:] = both[1:] != both[:-1]
    distinct: Seqs = both[first]
    return distinct


def joined(parts: Sequence[tuple[Seqs, Floats]]) -> Joined:
    """`parts` (each term's memories and shares) over the memories of any of them."""
    if not parts:
        return Joined(np.zeros(0, np.int64), np.zeros((0, 0), bool), np.zeros((0, 0)))
    seqs, where = _union(np.concatenate([p[0] for p in parts]))
    has = np.zeros((len(parts), len(seqs)), bool)
    share = np.zeros((len(parts), len(seqs)))
    start = 0
    for i, (term_seqs, term_shares) in enumerate(parts):
        at = where[start : start + len(term_seqs)]
        has[i, at], share[i, at] = True, term_shares
        start += len(term_seqs)
    return Joined(seqs, has, share)


def _union(hits: Seqs) -> tuple[Seqs, npt.NDArray[np.intp]]:
    """The distinct memories of `hits` in order, and where each hit is among them.

    A common word's hits are a large share of the store: marking them in an array as
    long as the store costs less than sorting them (SORTED_SHARE), as a rare word's few
    hits sort faster than such an array is made."""
    if not len(hits) or len(hits) * SORTED_SHARE < int(hits.max()):
        seqs, where = np.unique(hits, return_inverse=True)
        return seqs, where
    held = np.zeros(int(hits.max()) + 1, bool)
    held[hits] = True
    seqs = np.flatnonzero(held)
    slot = np.zeros(len(held), np.intp)
    slot[seqs] = np.arange(len(seqs))
    return seqs.astype(np.int64), slot[hits]


def combined(query: Terms, match: str) -> Ranked:
    """The matches of the query's terms joined as `match`, each scored as FTS5 scores
    it: the shares of every phrase of the matched groups, summed in the query's order
    (a memory's unmatched phrases add nothing)."""
    terms = query.narrowed(match)
    groups = phrase_groups(len(terms.has), match)
    # A memory matches a group when it holds each of the group's terms: "all" every
    # term, "most" all but one, "any" one.
    needed = min(len(g) for g in groups) if groups else 1
    matched = np.flatnonzero(terms.has.sum(axis=0) >= needed)
    if not len(matched):
        return Ranked(terms.seqs[matched], np.zeros(0))
    has, share = terms.has[:, matched], terms.share[:, matched]
    score = np.zeros(len(matched))
    for group in groups:
        whole = has[list(group)].all(axis=0)
        for term in group:
            score += np.where(whole, share[term], 0.0)
    return Ranked(terms.seqs[matched], -score)


def newest(ranked: Ranked, cap: int) -> Ranked:
    """The newest `cap` matches of `ranked` (all of them when they are no more)."""
    if len(ranked.seqs) <= cap:
        return ranked
    floor = np.partition(ranked.seqs, len(ranked.seqs) - cap - 1)[len(ranked.seqs) - cap - 1]
    keep = ranked.seqs > floor
    return Ranked(ranked.seqs[keep], ranked.scores[keep])


def windows(query: Terms, cap: int) -> Ranked:
    """The matches of any of `terms` within each term's window, at most `cap` in all: a
    term's newest matches, the budget shared evenly and a rare term's unused share
    passed to the others (fewest matches first); a memory scores its terms' shares
    within their windows, summed in that order (see SQLiteStore._windows)."""
    terms = query.joined()
    counts = [min(int(c), cap + 1) for c in terms.has.sum(axis=1)]
    score = np.zeros(len(terms.seqs))
    inside = np.zeros(len(terms.seqs), bool)
    left = cap
    for i, term in enumerate(sorted(range(len(counts)), key=lambda t: counts[t])):
        share = max(1, left // (len(counts) - i))
        window = terms.has[term]
        if counts[term] > share:  # the seqs are in order: the newest are the last
            window = np.zeros(len(terms.seqs), bool)
            window[np.flatnonzero(terms.has[term])[-share:]] = True
        score += np.where(window, terms.share[term], 0.0)
        inside |= window
        left -= min(counts[term], share)
    return Ranked(terms.seqs[inside], -score[inside])


def best(ranked: Ranked, taken: int) -> Ranked:
    """The `taken` best matches of `ranked` (in no order), with every match of the
    last score taken."""
    if taken >= len(ranked.scores):
        return ranked
    last = ranked.scores[np.argpartition(ranked.scores, taken - 1)[taken - 1]]
    keep = ranked.scores <= last
    return Ranked(ranked.seqs[keep], ranked.scores[keep])


class _View(NamedTuple):
    """What every term's part of a search reads besides its postings, while the store
    is unchanged: the watermark, FTS5's averages and the stale memories."""

    mark: int
    stats: Stats
    stale: Seqs


class Postings:
    """Searches of one connection through the stored postings.

    A term's memories and shares are kept while the store is unchanged (neither this
    connection nor another wrote), at most KEPT_BYTES of them, the least recently used
    let go first: the searches of a batch's new memories, and a reader's queries,
    share their common words."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._version: tuple[int, int] | None = None  # the store as the kept terms read it
        self._view: _View | None = None
        self._kept: OrderedDict[str, tuple[Seqs, Floats]] = OrderedDict()
        self._kept_bytes = 0
        self._last: tuple[tuple[str, ...], Terms] | None = None

    def terms(self, words: Sequence[str]) -> Terms | None:
        """The postings of the quoted `words` (as `sql.fts_terms` gives them); None when
        they cannot answer a search exactly: a prefix, a word the index holds as a
        phrase (several tokens), two words of one token, or postings not caught up."""
        held = _tokens(words)
        if held is None:
            return None
        # The watermark, the stale list, the postings and FTS5's matches are read in one
        # snapshot: a merge committed between them would count memories twice.
        alone = not self._conn.in_transaction
        if alone:
            self._conn.execute("BEGIN")
        try:
            # The pragma's read begins the snapshot: a commit after it changes the
            # next search's version, and this search reads none of it.
            version = (
                int(self._conn.execute("PRAGMA data_version").fetchone()[0]),
                self._conn.total_changes,
            )
            view = self._view
            if version != self._version or view is None:
                self._forget()
                mark = coverage.searchable(self._conn)
                view = _View(mark, index_stats(self._conn), _stale(self._conn, mark))
                self._version, self._view = version, view
            if not view.mark:
                return None
            # Trigger: the steps of one keyword search (all words, all but one, any
            # word). Why: each joins the same terms' postings. Outcome: they are joined
            # once.
            if self._last is None or self._last[0] != tuple(words):
                parts = [self._part(w, t, view) for w, t in zip(words, held, strict=True)]
                self._last = (tuple(words), Terms(parts))
            return self._last[1]
        finally:
            if alone:
                self._conn.execute("COMMIT")

    def _forget(self) -> None:
        self._kept.clear()
        self._kept_bytes, self._last, self._view = 0, None, None

    def _part(self, word: str, token: str, view: _View) -> tuple[Seqs, Floats]:
        """The term's memories (in order) and their shares of a BM25 score: the
        postings hold the memories up to the watermark, FTS5 the rest."""
        kept = self._kept.get(token)
        if kept is not None:
            self._kept.move_to_end(token)
            return kept
        stored = _read(self._conn, token)
        if view.stale.size:
            keep = ~np.isin(stored.seqs, view.stale)
            stored = _Posting(stored.seqs[keep], stored.freqs[keep], stored.sizes[keep])
        fresh = self._conn.execute(_FRESH, {"word": word, "covered": view.mark}).fetchall()
        weight = idf(view.stats.rows, len(stored.seqs) + len(fresh))
        seqs, scores = stored.seqs, shares(stored, weight, view.stats)
        if fresh:  # in order: the stale ones lie among the stored
            seqs = np.concatenate([seqs, np.array([r[0] for r in fresh], np.int64)])
            scores = np.concatenate([scores, -np.array([r[1] for r in fresh], np.float64)])
            order = np.argsort(seqs, kind="stable")
            seqs, scores = seqs[order], scores[order]
        self._kept[token] = (seqs, scores)
        self._kept_bytes += seqs.nbytes + scores.nbytes
        while self._kept_bytes > KEPT_BYTES and len(self._kept) > 1:
            _, (old_seqs, old_scores) = self._kept.popitem(last=False)
            self._kept_bytes -= old_seqs.nbytes + old_scores.nbytes
        return seqs, scores


def _stale(conn: sqlite3.Connection, mark: int) -> Seqs:
    if not mark:
        return np.zeros(0, np.int64)
    return np.array([r[0] for r in conn.execute(_STALE)], np.int64)


def _tokens(words: Sequence[str]) -> tuple[str, ...] | None:
    """The index token of each quoted word, or None when one is a prefix, is held as
    several tokens or none, or shares its token with another word."""
    if any(w.endswith("*") for w in words):
        return None
    found = tokens.phrases([w[1:-1] for w in words])
    if any(len(t) != 1 for t in found):
        return None
    held = tuple(t[0] for t in found)
    return held if len(set(held)) == len(held) else None


_STALE = "SELECT seq FROM keyword_stale"
# A word's matches the stored postings do not hold as they are: added after the watermark,
# or stale at or below it.
_FRESH = (
    "SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH :word AND rowid > :covered "
    "UNION ALL SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH :word "
    "AND rowid IN (SELECT seq FROM keyword_stale)"
)


_EMPTY = _Posting(np.zeros(0, np.int64), np.zeros(0), np.zeros(0))


def _read(conn: sqlite3.Connection, term: str) -> _Posting:
    row = conn.execute(
        "SELECT seqs, freqs, sizes FROM keyword_term WHERE term = ?", (term,)
    ).fetchone()
    if row is None:
        return _EMPTY
    return _Posting(
        np.frombuffer(row[0], np.int64),
        np.frombuffer(row[1], np.float32).astype(np.float64),
        np.frombuffer(row[2], np.uint32).astype(np.float64),
    )


# Each term of an fts5vocab instance table {vocab} (which lists a term's hits by
# memory, then column), its memories and the column of each hit, in one row.
_HITS = """
SELECT term, group_concat(doc, ' '),
       group_concat(CASE col WHEN 'title' THEN 0 WHEN 'body' THEN 1 ELSE 2 END, '')
FROM {vocab} GROUP BY term
"""
_WEIGHTS = np.array(BM25_WEIGHTS)


def _postings_of(conn: sqlite3.Connection, vocab: str, docsize: str) -> dict[str, _Posting]:
    """The postings an FTS5 index holds, read through its fts5vocab instance table
    `vocab` and its row sizes `docsize`."""
    sizes = {
        int(seq): float(sum(_varints(blob)))
        for seq, blob in conn.execute(f"SELECT id, sz FROM {docsize}").fetchall()
    }
    out = {}
    for term, docs, cols in conn.execute(_HITS.format(vocab=vocab)).fetchall():
        hits = np.array(docs.split(" "), np.int64)
        weights = _WEIGHTS[np.frombuffer(cols.encode(), np.uint8) - ord("0")]
        starts = np.flatnonzero(np.diff(hits, prepend=-1))  # a memory's hits are adjacent
        seqs = hits[starts]
        freqs = np.add.reduceat(weights, starts)
        out[term] = _Posting(seqs, freqs, np.array([sizes[s] for s in seqs.tolist()]))
    return out


def _tokenized(rows: Sequence[tuple[int, str, str, str]]) -> dict[str, _Posting]:
    """The postings of `rows` (seq, title, body, tags), as the keyword index would hold
    them (an in-memory FTS5 table with its tokenizer and columns)."""
    with tokens.indexed(rows) as conn:
        return _postings_of(conn, "doc_terms", "doc_docsize")


def merge(conn: sqlite3.Connection, *, stale_only: bool = False) -> int:
    """Fold every change since the last merge into the stored postings; the caller holds
    a write transaction. Returns how many memories were (re)read. `stale_only`: only
    the memories at or below the watermark that changed (as a delete needs, so that its
    words leave the postings): a few terms' rows, where the memories added since may be
    many; the watermark stays."""
    covered = coverage.covered(conn)
    newest = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM memory").fetchone()[0])
    removed: dict[int, list[int]] = {}  # term id: memories leaving its postings
    for seq, ids in conn.execute(
        "SELECT seq, terms FROM keyword_row WHERE seq IN (SELECT seq FROM keyword_stale)"
    ).fetchall():
        for term_id in np.frombuffer(ids, np.int32).tolist():
            removed.setdefault(term_id, []).append(int(seq))
    conn.execute("DELETE FROM keyword_row WHERE seq IN (SELECT seq FROM keyword_stale)")
    names = _names(conn, list(removed))
    changes: dict[str, tuple[list[int], list[_Posting]]] = {
        names[i]: (seqs, []) for i, seqs in removed.items()
    }
    read = 0
    if covered == 0:  # nothing stored yet: the keyword index holds every memory's postings
        steps: Iterable[dict[str, _Posting]] = [_whole_index(conn)]
    else:
        steps = (_tokenized(rows) for rows in _steps(conn, covered, stale_only))
    for step in steps:
        for term, posting in step.items():
            changes.setdefault(term, ([], []))[1].append(posting)
    term_ids, row_ids = [], []
    for term, (leaving, coming) in changes.items():
        term_id = _rewrite(conn, term, leaving, coming, fresh=covered == 0)
        for posting in coming:
            term_ids.append(np.full(len(posting.seqs), term_id, np.int32))
            row_ids.append(posting.seqs)
    if row_ids:
        ids, seqs = np.concatenate(term_ids), np.concatenate(row_ids)
        order = np.argsort(seqs, kind="stable")
        ids, seqs = ids[order], seqs[order]
        starts = np.flatnonzero(np.diff(seqs, prepend=-1))
        read = len(starts)
        conn.executemany(
            "INSERT INTO keyword_row(seq, terms) VALUES (?, ?)",
            (
                (int(seqs[a]), ids[a:b].tobytes())
                for a, b in zip(starts.tolist(), [*starts[1:].tolist(), len(seqs)], strict=True)
            ),
        )
    if not stale_only:
        conn.execute(
            "INSERT INTO store_meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (coverage.COVERED, str(max(covered, newest))),
        )
    conn.execute("DELETE FROM keyword_stale")
    return read


def _names(conn: sqlite3.Connection, term_ids: list[int]) -> dict[int, str]:
    if not term_ids:
        return {}
    rows = conn.execute(
        "SELECT id, term FROM keyword_term WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(term_ids),),
    ).fetchall()
    return {int(r[0]): str(r[1]) for r in rows}


def _whole_index(conn: sqlite3.Connection) -> dict[str, _Posting]:
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.keyword_index_terms "
        "USING fts5vocab(main, memory_fts, instance)"
    )
    return _postings_of(conn, "temp.keyword_index_terms", "main.memory_fts_docsize")


def _steps(
    conn: sqlite3.Connection, covered: int, stale_only: bool
) -> Iterable[list[tuple[int, str, str, str]]]:
    """The memories to (re)read, MERGE_STEP at a time: the stale ones that still exist,
    and (unless `stale_only`) those after the watermark."""
    query = (
        "SELECT seq, title, body, tags FROM memory "
        "WHERE seq IN (SELECT seq FROM keyword_stale) AND seq <= :covered"
    )
    if not stale_only:
        query += " UNION ALL SELECT seq, title, body, tags FROM memory WHERE seq > :covered"
    cursor = conn.execute(query + " ORDER BY seq", {"covered": covered})
    while step := cursor.fetchmany(MERGE_STEP):
        yield [(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in step]


def _rewrite(
    conn: sqlite3.Connection,
    term: str,
    leaving: list[int],
    coming: list[_Posting],
    *,
    fresh: bool,
) -> int:
    """Write `term`'s postings without the memories `leaving` and with those `coming`;
    its id (-1 when no memory holds it any more). `fresh`: nothing is stored yet."""
    old = _EMPTY if fresh else _read(conn, term)
    if leaving:
        keep = ~np.isin(old.seqs, np.array(leaving, np.int64))
        old = _Posting(old.seqs[keep], old.freqs[keep], old.sizes[keep])
    seqs = np.concatenate([old.seqs, *(p.seqs for p in coming)])
    if not len(seqs):
        conn.execute("DELETE FROM keyword_term WHERE term = ?", (term,))
        return -1
    freqs = np.concatenate([old.freqs, *(p.freqs for p in coming)])
    sizes = np.concatenate([old.sizes, *(p.sizes for p in coming)])
    order = np.argsort(seqs, kind="stable")
    row = conn.execute(
        "INSERT INTO keyword_term(term, seqs, freqs, sizes) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(term) DO UPDATE SET seqs = excluded.seqs, freqs = excluded.freqs, "
        "sizes = excluded.sizes RETURNING id",
        (
            term,
            seqs[order].tobytes(),
            freqs[order].astype(np.float32).tobytes(),
            sizes[order].astype(np.uint32).tobytes(),
        ),
    ).fetchone()
    return int(row[0])
