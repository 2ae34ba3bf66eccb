"""The stored keyword postings (store.sqlite.postings): every search through them ranks
its matches exactly as FTS5 ranks the same query, before and after a merge, whatever
was added, changed or deleted in between; deleted words leave them; a reader never
writes them."""

from __future__ import annotations

import random
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import numpy as np
import pytest

from memlane import Context, Memory
from memlane.model import Filters
from memlane.services import writing
from memlane.store import base
from memlane.store.sqlite import coverage, postings, sql
from memlane.store.sqlite.store import FEW_MATCHES, SQLiteStore

pytestmark = pytest.mark.sqlite_only  # the postings are the SQLite store's

# "deploy" and "deployed" share a token, as do "cache" and "caching"; "k8s.io" is a
# phrase of two tokens: searches with them are left to FTS5.
WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
    "november oscar papa deploy deployed cache caching billing proxy rotate token "
    "k8s.io quokka"
).split()
QUERIES = (
    "alpha bravo",
    "alpha bravo charlie",
    "delta echo foxtrot golf",
    "billing proxy rotate token hotel",
    "kilo",
    "mike november oscar papa lima",
    "deploy cache",
    "deploy deployed",
    "k8s.io alpha",
    "bill*",
    "quokka juliet india",
    "zzzunheld alpha bravo",
)


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _items(rng: random.Random, count: int) -> list[dict[str, object]]:
    return [
        {
            "title": _text(rng, rng.randint(1, 4)),
            "body": _text(rng, rng.randint(3, 25)),
            "tags": [rng.choice(WORDS[:12])],
            "allow_duplicate": True,
        }
        for _ in range(count)
    ]


def _fts5(conn: sqlite3.Connection, text: str, match: str) -> dict[int, float]:
    query = sql.fts_query(text, match)
    if query is None:
        return {}
    rows = conn.execute(
        "SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH ?", (query,)
    ).fetchall()
    return {int(r[0]): float(r[1]) for r in rows}


def _merge(path: Path) -> int:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    read = postings.merge(conn)
    conn.execute("COMMIT")
    conn.close()
    return read


def _assert_exact(path: Path) -> int:
    """Every query and step through the postings equals FTS5's ranks; how many the
    postings answered."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    reader = postings.Postings(conn)
    answered = 0
    for text in QUERIES:
        for match in ("all", "most", "any"):
            if sql.fts_query(text, match) is None:
                continue
            terms = reader.terms(sql.fts_terms(text))
            if terms is None:
                continue
            ranked = postings.combined(terms, match)
            answered += 1
            mine = dict(zip(ranked.seqs.tolist(), ranked.scores.tolist(), strict=True))
            assert mine == _fts5(conn, text, match), (text, match)
    conn.close()
    return answered


def _covered(path: Path) -> int:
    conn = sqlite3.connect(path)
    row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (coverage.COVERED,)).fetchone()
    conn.close()
    return int(row[0]) if row else 0


def _stored(path: Path) -> dict[str, tuple[list[int], list[float], list[float]]]:
    conn = sqlite3.connect(path)
    terms = [str(r[0]) for r in conn.execute("SELECT term FROM keyword_term")]
    out = {}
    for term in terms:
        posting = postings._read(conn, term)
        out[term] = (posting.seqs.tolist(), posting.freqs.tolist(), posting.sizes.tolist())
    conn.close()
    return out


def test_searches_through_the_postings_rank_as_fts5_through_adds_changes_and_deletes(
    tmp_path: Path,
) -> None:
    rng = random.Random(7)
    path = tmp_path / "m.db"
    with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
        ids = [line.result.id for line in mem.add_batch(_items(rng, 120)).lines if line.result]
    assert _assert_exact(path) == 0  # nothing merged yet: FTS5 answers
    assert _merge(path) == 120
    assert _assert_exact(path) > 20
    with Memory.open(path, agent="t", context=Context("p", "main")) as mem:  # after the watermark
        newer = [line.result.id for line in mem.add_batch(_items(rng, 15)).lines if line.result]
        for memory_id in ids[:10]:  # below it: changed
            mem.update(memory_id, content=_text(rng, 12), title=_text(rng, 2))
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM keyword_stale").fetchone()[0] == 10
    conn.close()
    assert _assert_exact(path) > 20  # the stale and the new answered by FTS5
    assert _merge(path) == 25
    assert _assert_exact(path) > 20
    with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
        mem.update(ids[20], content=_text(rng, 8))
        for memory_id in ids[10:15]:  # a delete merges what is stale, so its words leave
            mem.delete(memory_id)
        mem.delete(newer[-1])  # the newest memory: its seq is taken again, below the mark
        mem.add_batch(_items(rng, 2))
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM keyword_stale").fetchone()[0] == 1
    conn.close()
    assert _assert_exact(path) > 20
    _merge(path)
    assert _assert_exact(path) > 20
    merged = _stored(path)
    rebuilt = tmp_path / "rebuilt.db"
    shutil.copy(path, rebuilt)
    conn = sqlite3.connect(rebuilt)
    conn.execute("DELETE FROM keyword_term")
    conn.execute("DELETE FROM keyword_row")
    conn.execute("DELETE FROM store_meta WHERE key = ?", (coverage.COVERED,))
    conn.commit()
    conn.close()
    _merge(rebuilt)
    assert _stored(rebuilt) == merged  # merging changes equals building from scratch


# Small caps, so that the many matches of a word are ranked newest first. An all-words
# cap is never below the few matches FTS5 ranks in the walk that finds them.
SMALL_CAPS = (FEW_MATCHES, 8)


@pytest.mark.parametrize("caps", [None, SMALL_CAPS], ids=["uncapped", "newest-first"])
def test_a_store_search_through_the_postings_equals_one_through_fts5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caps: tuple[int, int] | None
) -> None:
    """With small caps, the many matches of a word are ranked newest first, as FTS5's
    windows rank them."""
    capped: list[str] = []
    if caps is not None:
        monkeypatch.setattr(base, "RANK_CAP", caps[0])
        monkeypatch.setattr(base, "ANY_RANK_CAP", caps[1])
        for name in ("newest", "windows"):
            real = getattr(postings, name)
            monkeypatch.setattr(
                postings, name, lambda *a, _real=real, _name=name: capped.append(_name) or _real(*a)
            )
    rng = random.Random(11)
    plain = tmp_path / "plain.db"
    with Memory.open(plain, agent="t", context=Context("p", "main")) as mem:
        mem.add_batch(_items(rng, 150))
        mem.add_batch([dict(i, scope="global") for i in _items(rng, 30)])
    stored = tmp_path / "stored.db"
    shutil.copy(plain, stored)
    _merge(stored)
    with (
        closing(SQLiteStore(plain, read_only=True)) as fts5,
        closing(SQLiteStore(stored, read_only=True)) as kept,
    ):
        for text in QUERIES:
            for match in ("all", "most", "any"):
                for filters in (
                    Filters(limit=5),
                    Filters(limit=3, scopes=("global",)),
                    Filters(limit=None),
                ):
                    expected = fts5.search_scores(text, filters, match)
                    assert kept.search_scores(text, filters, match) == expected
    assert set(capped) == ({"newest", "windows"} if caps else set())


def test_words_of_a_deleted_memory_leave_the_postings(tmp_path: Path) -> None:
    rng = random.Random(3)
    path = tmp_path / "m.db"
    with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
        mem.add_batch(_items(rng, 40))
        doomed = mem.add("Quokkazanzibar holds the deploy key.").id
    _merge(path)
    assert "quokkazanzibar" in _stored(path)
    with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
        mem.forget(doomed)
    assert "quokkazanzibar" not in _stored(path)
    conn = sqlite3.connect(path)
    conn.execute("VACUUM")
    conn.close()
    for file in tmp_path.glob("m.db*"):
        assert b"uokkazanzibar" not in file.read_bytes(), file.name


def test_writers_merge_once_the_changes_are_a_share_of_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(coverage, "MERGE_AFTER", 20)
    rng = random.Random(5)
    path = tmp_path / "m.db"
    with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
        for item in _items(rng, 20):
            mem.add(str(item["body"]), title=str(item["title"]), allow_duplicate=True)
        assert _covered(path) == 0  # 20 changes: not more than MERGE_AFTER
        mem.add("one more note about alpha", allow_duplicate=True)
        assert _covered(path) == 21
        for item in _items(rng, 20):
            mem.add(str(item["body"]), allow_duplicate=True)
        assert _covered(path) == 21  # 20 since: not yet a share
    assert _assert_exact(path) > 20


def test_a_reader_searches_the_postings_and_writes_nothing(tmp_path: Path) -> None:
    rng = random.Random(9)
    path = tmp_path / "m.db"
    with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
        mem.add_batch(_items(rng, 60))
    _merge(path)
    before = path.read_bytes()
    with closing(SQLiteStore(path, read_only=True)) as store:
        assert store.search_scores("alpha bravo", Filters(limit=5), "any")
        wal = Path(f"{path}-wal")
        assert not wal.exists() or wal.stat().st_size == 0
    assert path.read_bytes() == before


@pytest.mark.parametrize("share", [0, 10**9], ids=["sorted", "marked"])
def test_hits_join_the_same_whether_sorted_or_marked(
    monkeypatch: pytest.MonkeyPatch, share: int
) -> None:
    monkeypatch.setattr(postings, "SORTED_SHARE", share)
    rng = np.random.default_rng(1)
    hits = rng.integers(1, 5_000, 3_000)
    seqs, where = postings._union(hits)
    expected_seqs, expected_where = np.unique(hits, return_inverse=True)
    assert seqs.tolist() == expected_seqs.tolist()
    assert where.tolist() == expected_where.tolist()


def test_a_search_beside_a_merging_writer_counts_every_memory_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watermark, the stale list, the postings and FTS5's matches are read in one
    snapshot: a merge between them would count the memories it folds in twice, and a
    word every memory holds would then be held by more memories than there are."""
    monkeypatch.setattr(coverage, "MERGE_AFTER", 1)
    monkeypatch.setattr(coverage, "FRESH_SHARE", 10**9)  # a merge every second write
    rng = random.Random(13)
    path = tmp_path / "m.db"
    with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
        mem.add_batch([dict(i, body=f"zulu {i['body']}") for i in _items(rng, 40)])
    _merge(path)
    stop, errors, searched = threading.Event(), [], [0]

    def search() -> None:
        with closing(SQLiteStore(path, read_only=True)) as store:
            while not stop.is_set():
                try:
                    assert store.search_scores("zulu alpha", Filters(limit=5), "any")
                except Exception as exc:  # the writer's thread reports it
                    errors.append(exc)
                    return
                searched[0] += 1

    reader = threading.Thread(target=search)
    reader.start()
    try:
        with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
            for item in _items(rng, 200):
                mem.add(f"zulu {item['body']}", allow_duplicate=True)
    finally:
        stop.set()
        reader.join()
    assert errors == []
    assert searched[0] > 50


def _merged_then_ten_more(tmp_path: Path, rng: random.Random, words: str) -> Path:
    """A store of 40 memories holding "zulu", merged, then 10 more holding `words`."""
    path = tmp_path / "m.db"
    with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
        mem.add_batch([dict(i, body=f"zulu {i['body']}") for i in _items(rng, 40)])
    _merge(path)
    with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
        mem.add_batch([dict(i, body=f"{words} {i['body']}") for i in _items(rng, 10)])
    return path


@contextmanager
def _merging_as_postings_are_read(conn: sqlite3.Connection, path: Path) -> Iterator[list[int]]:
    """Another connection merges the first time `conn` reads a term's postings; what
    it merged is listed."""
    merged: list[int] = []

    def merge_first(statement: str) -> None:
        if "FROM keyword_term" in statement and not merged:
            merged.append(_merge(path))

    conn.set_trace_callback(merge_first)
    try:
        yield merged
    finally:
        conn.set_trace_callback(None)


def test_a_search_reads_the_postings_and_fts5_in_one_snapshot(tmp_path: Path) -> None:
    """A merge that commits between the search's reads (here: as it is about to read a
    term's postings) is not seen: its memories count once, from FTS5."""
    path = _merged_then_ten_more(tmp_path, random.Random(17), "zulu")
    conn = sqlite3.connect(path, isolation_level=None)
    with _merging_as_postings_are_read(conn, path) as merged:
        terms = postings.Postings(conn).terms(['"zulu"'])
    assert merged == [10]
    assert terms is not None
    ranked = postings.combined(terms, "all")
    assert sorted(ranked.seqs.tolist()) == list(range(1, 51))
    assert dict(zip(ranked.seqs.tolist(), ranked.scores.tolist(), strict=True)) == _fts5(
        conn, "zulu", "all"
    )
    conn.close()


@pytest.mark.parametrize("kept", [postings.KEPT_BYTES, 1], ids=["kept", "let-go"])
def test_kept_terms_are_read_again_once_the_store_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: int
) -> None:
    """A term's postings are kept while the store is unchanged: a write by another
    connection, or by the searching one, has them read again. With room for one term,
    each is let go as the next is read."""
    monkeypatch.setattr(postings, "KEPT_BYTES", kept)
    rng = random.Random(19)
    path = tmp_path / "m.db"
    with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
        mem.add_batch([dict(i, body=f"zulu {i['body']}") for i in _items(rng, 40)])
    _merge(path)
    query = "zulu alpha bravo"

    def assert_as_fts5(store: SQLiteStore) -> None:
        for match in ("all", "most", "any"):
            found = dict(store.search_scores(query, Filters(limit=None), match))
            conn = sqlite3.connect(path)
            ids = dict(conn.execute("SELECT seq, id FROM memory").fetchall())
            conn.close()
            assert found == {ids[s]: -r for s, r in _fts5(store.conn, query, match).items()}

    with closing(SQLiteStore(path, read_only=True)) as reader:
        assert_as_fts5(reader)
        with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
            mem.add("zulu alpha bravo charlie, said again", allow_duplicate=True)
        assert_as_fts5(reader)  # another connection wrote
    with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
        assert_as_fts5(mem.rt.store)
        first = mem.add("Zulu quokka rotates the alpha billing token weekly.").id
        assert_as_fts5(mem.rt.store)  # this connection wrote
        again = mem.add("Zulu quokka rotates the alpha billing token every week.")
        assert again.id == first or any(first in w for w in again.warnings)


def test_a_kept_term_and_one_read_after_a_merge_began_come_from_one_snapshot(
    tmp_path: Path,
) -> None:
    """A term kept from the last search is joined with terms read now: a merge that
    commits as this search reads its new term is seen by neither, and the next search
    reads them all again."""
    path = _merged_then_ten_more(tmp_path, random.Random(23), "zulu alpha")
    conn = sqlite3.connect(path, isolation_level=None)
    reader = postings.Postings(conn)
    assert reader.terms(['"zulu"']) is not None  # kept, as of before the merge
    with _merging_as_postings_are_read(conn, path) as merged:
        terms = reader.terms(['"zulu"', '"alpha"'])
    assert merged == [10]
    assert terms is not None
    for match in ("all", "any"):
        ranked = postings.combined(terms, match)
        mine = dict(zip(ranked.seqs.tolist(), ranked.scores.tolist(), strict=True))
        assert mine == _fts5(conn, "zulu alpha", match)
    again = reader.terms(['"zulu"', '"alpha"'])
    assert again is not None and again is not terms  # the merge changed the version
    conn.close()


@pytest.mark.parametrize("trusted", [True, False], ids=["searching-nothing", "searching"])
def test_a_batch_merges_between_its_transactions_only_when_it_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusted: bool
) -> None:
    """A batch whose lines skip the write policy searches nothing: its postings are
    merged once, after its last transaction. One whose lines are judged merges as it
    goes, at each share, for the searches of its later lines."""
    monkeypatch.setattr(coverage, "MERGE_AFTER", 20)
    monkeypatch.setattr(writing, "BATCH_CHUNK", 25)
    merges: list[int] = []
    real = postings.merge

    def counted(conn: sqlite3.Connection, *, stale_only: bool = False) -> int:
        merges.append(real(conn, stale_only=stale_only))
        return merges[-1]

    monkeypatch.setattr(postings, "merge", counted)
    items = [dict(i, allow_duplicate=trusted) for i in _items(random.Random(29), 300)]
    path = tmp_path / "m.db"
    with Memory.open(path, agent="t", context=Context("p", "main")) as mem:
        landed = [line.result.id for line in mem.add_batch(items).lines if line.result]
    assert len(landed) == 300
    conn = sqlite3.connect(path)
    newest = conn.execute("SELECT MAX(seq) FROM memory").fetchone()[0]
    conn.close()
    assert _covered(path) == newest  # every memory merged by the batch's end
    assert (len(merges) == 1) if trusted else (len(merges) > 2)
    assert _assert_exact(path) > 20
