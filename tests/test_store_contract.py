"""The Store contract on every backend: SQLite and PostgreSQL.

Each test runs through `Memory.open(location)` once per backend. PostgreSQL is a real
server: `MEMLANE_TEST_PG_URL` names one, otherwise the `pgserver` package starts a
bundled PostgreSQL 16 with pgvector once per test session (per xdist worker), and
each test gets a database of its own (the `pg_server`, `pg_store` and `pg_url` fixtures of
conftest.py).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import random
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from conftest import create_database, raw_sql
from memlane import Context, Memory
from memlane.embed import get_embedder
from memlane.embed.base import CHUNK_OVERLAP, CHUNK_TOKENS
from memlane.errors import Unavailable
from memlane.model import (
    Entity,
    EntityKind,
    EntityType,
    Filters,
    Predicate,
    Relation,
    replace,
)
from memlane.store import terms
from memlane.timeutil import utcnow

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")
from memlane.store.postgres.store import MIN_EF_SEARCH  # noqa: E402
from memlane.store.sqlite.store import SQLiteStore  # noqa: E402

BACKENDS = ["sqlite", "postgres"]
EVERYTHING = {"include_superseded": True, "include_private": True}
HOSTILE = ['"AND (" OR :*', "foo:* & !bar | (", "'unclosed", "-", "NOT", "a <-> b", ")(*&^%$#@!"]


def _location(backend: str, tmp_path: Path, request: pytest.FixtureRequest, tag: str) -> str:
    if backend == "sqlite":
        return str(tmp_path / f"{tag}.db")
    return create_database(request.getfixturevalue("pg_server"), f"memlane_{tag}")


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The location of a fresh, empty store on each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "memlane.db")
    return str(request.getfixturevalue("pg_store"))


def _open(location: str, agent: str = "ada", **options: object) -> Memory:
    return Memory.open(
        location, agent=agent, context=Context("proj", "main"),
        embedder=get_embedder("hash"), **options,  # type: ignore[arg-type]
    )  # fmt: skip


@pytest.fixture
def mem(store: str) -> Iterator[Memory]:
    with _open(store) as memory:
        yield memory


# ---- memories, versions and validity ----------------------------------------------


def test_add_get_update_keep_versions_and_history(mem: Memory) -> None:
    first = mem.add("Use pip for installs.", title="Installs", tags=["python"])
    assert first.landed
    mem.update(first.id, content="Use uv for installs.", reason="faster")
    mem.update(first.id, append=" Never pip.")
    current = mem.get(first.id)
    assert current.body == "Use uv for installs. Never pip." and current.version == 3
    history = mem.history(first.id)
    assert [v.number for v in history] == [1, 2, 3]
    assert [v.body for v in history][:2] == ["Use pip for installs.", "Use uv for installs."]
    assert history[0].reason == "faster"
    for version in history:
        assert mem.get(first.id, as_of=version.valid_from).body == version.body


def test_supersede_invalidate_and_as_of_reads(mem: Memory) -> None:
    old = mem.add("The API lives at api.example.com.", title="API host").id
    before = mem.get(old).created_at
    new = mem.supersede(old, "The API lives at api2.example.com.").id
    assert mem.get(old).superseded_by == new
    live = {r.id for r in mem.list()}
    assert new in live and old not in live
    assert [r.id for r in mem.list(as_of=before)] == [old]
    gone = mem.add("Deploys happen on Fridays.", title="Deploys").id
    mem.invalidate(gone, "no longer true")
    assert mem.get(gone).valid_until is not None
    assert gone not in {r.id for r in mem.list()}
    assert gone in {r.id for r in mem.list(include_superseded=True)}
    stats = mem.stats()
    assert (stats.total, stats.live, stats.superseded, stats.invalidated) == (3, 1, 1, 1)


def test_list_filters(mem: Memory) -> None:
    a = mem.add("Python builds use uv.", title="Builds", tags=["python", "build"]).id
    b = mem.add("Ship on Tuesdays.", title="Ship", kind="decision", importance=9).id
    c = mem.add("My private note on builds.", title="Mine", private=True).id
    assert {r.id for r in mem.list(tags=["python"])} == {a}
    assert {r.id for r in mem.list(kind="decision")} == {b}
    assert {r.id for r in mem.list(min_importance=8)} == {b}
    assert c in {r.id for r in mem.list(mine=True)}
    assert [r.id for r in mem.list(order="oldest", limit=2)] == [a, b]


def test_private_memories_stay_private(store: str) -> None:
    with _open(store, agent="ada") as ada, _open(store, agent="bob") as bob:
        secret = ada.add("Ada's private plan for the launch.", title="Plan", private=True).id
        assert secret in {r.id for r in ada.list(mine=True)}
        assert secret not in {r.id for r in bob.list(include_private=True)}
        assert not bob.search("launch plan")


# ---- keyword and vector search ----------------------------------------------------


def test_keyword_search_ranks_and_filters(mem: Memory) -> None:
    title = mem.add("Notes about the weekly sync.", title="Proxy configuration").id
    body = mem.add("We configure the proxy in nginx.conf for staging.", title="Staging").id
    mem.add("Unrelated gardening advice.", title="Garden")
    hits = mem.search("proxy")
    assert {h.record.id for h in hits} == {title, body}
    assert [h.rank for h in hits] == [1, 2]
    assert mem.search("configure proxy staging")[0].record.id == body
    assert mem.search("garden*")  # a prefix query
    assert mem.search("nothing matches this zebra") == []


def test_all_words_but_one_finds_a_memory_missing_any_one_of_them(mem: Memory) -> None:
    # "zephyr" and "quokka" are in three memories, "harbor" and "lantern" in many: the
    # search looks among the rarest words' memories first, and must miss none.
    each_but_one = {
        mem.add("Quokka harbor lantern notes.").id,
        mem.add("Zephyr harbor lantern notes.").id,
        mem.add("Zephyr quokka lantern notes.").id,
        mem.add("Zephyr quokka harbor notes.").id,
    }
    for i in range(8):
        mem.add(f"Harbor lantern log {i}.")
    found = mem.store.search("zephyr quokka harbor lantern", mem.filters(limit=20), "most")
    assert {h.record.id for h in found} == each_but_one
    with_prefix = mem.store.search("zeph* quokka harbor", mem.filters(limit=20), "most")
    assert {h.record.id for h in with_prefix} == each_but_one


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_keyword_text_never_errors(mem: Memory, text: str) -> None:
    mem.add('Quotes "AND (" and operators OR :* appear here.', title="Hostile")
    mem.search(text)  # no syntax error, whatever it finds
    mem.recall(text)


def test_vector_search_with_the_hash_embedder(mem: Memory) -> None:
    target = mem.add("The billing service retries failed card payments nightly.").id
    mem.add("Our cat sleeps on the warm laptop keyboard.")
    result = mem.recall("billing service retries failed card payments nightly")
    assert result.hits and result.hits[0].record.id == target
    assert result.lanes.get("vector", 0) >= 1


def test_scopes_and_kinds_of_live_memories_and_their_moves_are_vector_changes(
    mem: Memory,
) -> None:
    """A derived vector index keeps each memory's scope and kind: the store gives them
    for live memories, and a move to another scope or kind is a vector change."""
    kept = mem.add("The nightly export writes to the archive bucket.", kind="fact").id
    gone = mem.add("The old export wrote to tape.", kind="fact").id
    mem.invalidate(gone, "retired")
    assert {i: (s, k) for i, s, k in mem.store.scopes_and_kinds()} == {
        kept: ("project:proj@main", "fact")
    }
    assert list(mem.store.scopes_and_kinds([gone])) == []
    before = mem.store.last_vector_change()
    mem.update(kept, kind="decision")
    mem.update(kept, scope="global")
    changes = mem.store.vector_changes(before, 10)
    assert changes is not None and changes[1] == [kept]
    assert list(mem.store.scopes_and_kinds([kept])) == [(kept, "global", "decision")]


def test_pgvector_nearest_uses_the_stored_vectors(pg_url: str) -> None:
    with _open(pg_url) as memory:
        target = memory.add("Kubernetes pods restart when the liveness probe fails.").id
        memory.add("Sourdough needs a long cold fermentation.")
        with psycopg.connect(pg_url) as conn:
            [(profile,)] = conn.execute("SELECT DISTINCT profile FROM embedding").fetchall()
            names = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes")}
        assert any(n.startswith("embedding_hnsw_") for n in names) and "memory_terms" in names
        [vector] = [_array(b) for _, c, b in memory.store.vectors(profile, [target]) if c == -1]
        nearest = memory.store.nearest(profile, vector, 2)
        assert nearest is not None
        assert nearest[0][0] == target and nearest[0][1] == pytest.approx(1.0, abs=1e-5)


# ---- Store.nearest: the server-side vector index ------------------------------------

PROFILE = get_embedder("hash").profile.signature
# Words of the nearest-neighbour stores: a small vocabulary, so that memories and
# queries share words and their cosines spread from near 0 to near 1.
VOCABULARY = [hashlib.sha256(str(i).encode()).hexdigest()[:7] for i in range(120)]
# A body of this many words is embedded as several chunks.
LONG_WORDS = 3 * CHUNK_TOKENS


def _array(blob: bytes) -> npt.NDArray[np.float32]:
    return np.frombuffer(blob, dtype=np.float32)


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choices(VOCABULARY, k=count))


def _exact(store: Any, query: npt.NDArray[np.float32], k: int) -> list[tuple[str, float]]:
    """`nearest` by brute force: each memory's best cosine over every row `vectors`
    reads, entry and chunks."""
    unit = query / np.linalg.norm(query)
    best: dict[str, float] = {}
    for memory_id, _, blob in store.vectors(PROFILE):
        row = _array(blob)
        cosine = float(np.dot(row, unit) / np.linalg.norm(row))
        best[memory_id] = max(cosine, best.get(memory_id, -2.0))
    return sorted(best.items(), key=lambda pair: -pair[1])[:k]


def _assert_exact(
    store: Any, query: npt.NDArray[np.float32], found: list[tuple[str, float]] | None, k: int
) -> None:
    """`found` is the exact k nearest: the brute-force cosines, best first, each one
    that of the memory it names (memories tied within float error may swap places)."""
    assert found is not None
    exact = dict(_exact(store, query, 10**6))
    best = sorted(exact.values(), reverse=True)[:k]
    assert [c for _, c in found] == pytest.approx(best, abs=1e-5)
    assert [c for _, c in found] == pytest.approx([exact[i] for i, _ in found], abs=1e-5)
    assert len({i for i, _ in found}) == len(found)


def _fill(memory: Memory, rng: random.Random, count: int, words: int = 12) -> list[str]:
    result = memory.add_batch(
        [{"content": _words(rng, words), "allow_duplicate": True} for _ in range(count)]
    )
    ids = [str(line.result.id) for line in result.lines if line.result and line.result.landed]
    assert len(ids) == count
    return ids


def test_nearest_is_none_without_a_server_side_index(tmp_path: Path) -> None:
    with _open(str(tmp_path / "memlane.db")) as memory:
        memory.add("Kubernetes pods restart when the liveness probe fails.")
        [(_, _, blob)] = memory.store.vectors(PROFILE)
        assert memory.store.nearest(PROFILE, _array(blob), 5) is None


def test_nearest_is_exact_on_a_tiny_store_over_entry_and_chunk_rows(pg_store: str) -> None:
    rng = random.Random(7)
    with _open(pg_store) as memory:
        long = memory.add(_words(rng, LONG_WORDS), allow_duplicate=True).id
        _fill(memory, rng, 6)
        store = memory.store
        rows = list(store.vectors(PROFILE))
        chunks = [_array(b) for i, c, b in rows if i == long and c >= 0]
        assert len(chunks) >= 3  # the long memory owns an entry row and chunk rows
        queries = [chunks[1], *(_array(b) for _, c, b in rows if c == -1)]
        for query in queries:
            _assert_exact(store, query, store.nearest(PROFILE, query, 4), 4)
        found = store.nearest(PROFILE, chunks[1].tolist(), 1)  # a list of floats too
        assert found and found[0][0] == long and found[0][1] == pytest.approx(1.0, abs=1e-5)


def test_nearest_widens_past_the_rows_of_one_memory(pg_store: str) -> None:
    """One memory owns more rows nearest to the query than the first fetch takes (its
    chunks are one text repeated): the fetch widens until k memories came back."""
    rng = random.Random(11)
    # Every window is the same text; short words keep the body under the size limit.
    pattern = " ".join(w[:3] for w in _words(rng, CHUNK_TOKENS - CHUNK_OVERLAP).split())
    with _open(pg_store) as memory:
        repeated = memory.add(" ".join([pattern] * 50), allow_duplicate=True).id
        _fill(memory, rng, 10)
        store = memory.store
        rows = [_array(b) for i, c, b in store.vectors(PROFILE) if i == repeated and c >= 0]
        assert len(rows) > MIN_EF_SEARCH  # more than the first fetch
        found = store.nearest(PROFILE, rows[0], 3)
        assert found is not None and found[0][0] == repeated
        _assert_exact(store, rows[0], found, 3)


def test_nearest_recalls_the_exact_neighbours_through_hnsw(
    pg_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A few hundred memories, searched through the index (as a large store is): the
    HNSW answer holds at least 9 of the exact top 10 on average, with the exact cosines."""
    monkeypatch.setattr("memlane.store.postgres.store.EXACT_ROWS", -1)  # never
    rng = random.Random(3)
    with _open(pg_store) as memory:
        _fill(memory, rng, 400)
        memory.store.optimize()
        store, hits, wanted = memory.store, 0, 0
        for _ in range(25):
            query = np.asarray(memory.embedder.embed(_words(rng, 6)), dtype=np.float32)  # type: ignore[union-attr]
            found, expected = store.nearest(PROFILE, query, 10), dict(_exact(store, query, 10))
            assert found is not None and len(found) == 10
            hits += len(expected.keys() & {i for i, _ in found})
            wanted += len(expected)
            exact = dict(_exact(store, query, 400))
            assert [c for _, c in found] == pytest.approx([exact[i] for i, _ in found], abs=1e-5)
        assert hits / wanted >= 0.9


def test_nearest_never_returns_a_deleted_or_ended_memory(pg_store: str) -> None:
    rng = random.Random(5)
    with _open(pg_store) as memory:
        _fill(memory, rng, 30)
        store = memory.store
        query = np.asarray(memory.embedder.embed(_words(rng, 6)), dtype=np.float32)  # type: ignore[union-attr]
        before = store.nearest(PROFILE, query, 5)
        assert before is not None
        (deleted, _), (ended, _), (rewritten, _) = before[:3]
        with store.write() as w:
            w.delete(deleted)
        memory.invalidate(ended, "no longer true")
        with _open(pg_store, embed_on_write=False) as plain:  # its vectors left stale
            plain.update(rewritten, content=_words(rng, 12), auto_anchor=False)
        after = store.nearest(PROFILE, query, 30)
        assert after is not None
        assert not {deleted, ended, rewritten} & {i for i, _ in after}
        _assert_exact(store, query, after, 30)


def test_nearest_from_another_thread_reads_on_its_own_connection(pg_store: str) -> None:
    """While this thread's write transaction has deleted a memory (not committed yet),
    another thread's search still finds it; this thread's does not."""
    with _open(pg_store) as memory:
        first, *_ = _fill(memory, random.Random(9), 5)
        store = memory.store
        [query] = [_array(b) for i, c, b in store.vectors(PROFILE) if i == first and c == -1]
        with store.write() as w, ThreadPoolExecutor(1) as pool:
            w.delete(first)
            other = pool.submit(store.nearest, PROFILE, query, 1).result(timeout=60)
            mine = store.nearest(PROFILE, query, 1)
        assert other and other[0][0] == first
        assert mine and mine[0][0] != first


def test_a_side_reader_reads_the_store_from_another_thread(mem: Memory) -> None:
    """What recall's vector lane reads on its worker thread: the same memories through
    the same filters, while this thread goes on reading."""
    kept = mem.add("the side reader finds this note", tags=("side",)).id
    mem.add("a private note", private=True)
    filters = mem.filters(limit=None)
    with mem.store.side_reader() as side, ThreadPoolExecutor(1) as pool:
        assert side is not None
        there = pool.submit(side.query, filters).result(timeout=60)
        admitted = pool.submit(side.admitted, filters).result(timeout=60)
        here = mem.store.query(filters)
    assert [r.id for r in there] == [r.id for r in here] == [kept]
    assert admitted == [kept]


def test_a_side_reader_is_not_lent_inside_a_write_nor_twice(mem: Memory) -> None:
    """Inside this thread's write transaction another thread would not see what it
    wrote, so there is no side reader; nor while one is lent already (SQLite keeps one
    second connection). Outside both, one is lent again."""
    with mem.store.write(), mem.store.side_reader() as side:
        assert side is None
    with mem.store.side_reader() as first:
        assert first is not None
        if isinstance(mem.store, SQLiteStore):
            with mem.store.side_reader() as second:
                assert second is None
    with mem.store.side_reader() as again:
        assert again is not None


def test_an_in_memory_store_has_no_side_reader() -> None:
    """A second connection to ":memory:" would be another, empty database."""
    with Memory.open(":memory:", embedder=None) as memory, memory.store.side_reader() as side:
        assert side is None


def test_closing_the_store_closes_its_side_connection(tmp_path: Path) -> None:
    db = tmp_path / "side.db"

    def handles() -> int:
        fds = Path("/proc/self/fd")
        return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == str(db.resolve()))

    with _open(str(db)) as memory:
        memory.add("a note")
        with memory.store.side_reader() as side:
            assert side is not None and side.query(memory.filters())
        assert handles() == 2  # this connection and the side one
    assert handles() == 0


# ---- links, entities, sessions, registries, journal, reminders ----------------------


def test_links(mem: Memory) -> None:
    a = mem.add("Service A calls service B over gRPC.", title="A").id
    b = mem.add("Service B owns the orders table.", title="B").id
    link = mem.graph.link(a, b, "related", reason="same flow")
    assert {(x.source, x.target) for x in mem.graph.links(a)} >= {(a, b)}
    assert mem.graph.unlink(link.id).source in {a, b}
    assert all(x.type.value != "related" for x in mem.graph.links(a))


def test_links_of_several_memories_in_one_read_are_each_ones_links(mem: Memory) -> None:
    a, b, c, d = (
        mem.add(text, title=title).id
        for title, text in [
            ("A", "Service A calls service B over gRPC."),
            ("B", "Service B owns the orders table."),
            ("C", "Service C reads the orders table nightly."),
            ("D", "Unrelated: the office plants need water."),
        ]
    )
    mem.graph.link(a, b, "related", reason="same flow")
    mem.graph.link(c, b, "extends", reason="reads its table")
    mem.graph.link(d, c, "related", reason="a stretch")
    touching = mem.store.links_touching([a, b])
    assert touching == sorted(
        {x.id: x for m in (a, b) for x in mem.store.links(m)}.values(),
        key=lambda x: (x.created_at, int(x.id.removeprefix("l-"))),
    )
    ends = {(x.source, x.target) for x in touching}
    assert {(a, b), (c, b)} <= ends and (d, c) not in ends  # (the write may link too)


def test_session_neighbours_of_several_memories_in_one_read(mem: Memory) -> None:
    first, second, third = (
        mem.add(f"Step {n} of the migration: {text}.", session_id="s-1").id
        for n, text in enumerate(["dump the tables", "copy the files", "switch traffic"])
    )
    alone = mem.add("A note outside any session.").id
    assert mem.store.adjacent([first, second, alone]) == {first: (second,), second: (first, third)}


def test_entities(mem: Memory) -> None:
    mem.add("Alice met Bob at Acme Corp in Paris.", title="Meeting")
    mem.add("Alice joined Acme Corp as CTO.", title="Hire")
    names = {e.name for e in mem.graph.entities()}
    assert {"Paris", "Acme Corp"} <= names
    assert mem.graph.entity("Acme Corp").mentions == 2
    _, records = mem.graph.mentioning("Acme Corp")
    assert len(records) == 2
    mem.graph.merge_entities("Paris", "Acme Corp", confirm=True)
    assert "paris" in {a.lower() for a in mem.graph.entity("Acme Corp").aliases}


def test_the_entities_a_memory_names_most_named_first(mem: Memory) -> None:
    meeting = mem.add("Alice met Bob at Acme Corp in Paris.", title="Meeting").id
    hire = mem.add("Alice joined Acme Corp as CTO.", title="Hire").id
    named = mem.graph.entities_of(meeting)
    counts = {e.name: e.mentions for e in named}
    assert counts["Acme Corp"] == 2 and counts["Paris"] == 1
    assert named[0].mentions == 2 and named[-1].mentions == 1
    mem.retire(hire)
    assert {e.name: e.mentions for e in mem.graph.entities_of(meeting)}["Acme Corp"] == 1
    assert mem.graph.entities_of(mem.add("no names here at all").id) == []


def test_relations_and_entities_made_by_hand(mem: Memory) -> None:
    store, at = mem.rt.store, utcnow()
    made = Entity("e-by-hand-1", "Payments Team", EntityKind.TAG, ("paymentsteam",), 0, at,
                  EntityType.ORGANISATION)  # fmt: skip
    note = mem.add("The `LedgerService` keeps the books.").id
    ledger = mem.graph.entity("LedgerService")
    with store.write() as w:
        assert w.put_entity(made, "paymentsteam") == made.id
        again = Entity("e-by-hand-2", "payments team", EntityKind.TAG, (), 0, at)
        assert w.put_entity(again, "paymentsteam") == made.id  # the alias has its owner
        w.set_entity_type(ledger.id, EntityType.SERVICE)
        for number, predicate in enumerate((Predicate.OWNS, Predicate.RELATED_TO)):
            w.add_relation(Relation(f"r-{number}", made.id, "Payments Team", predicate,
                                    predicate.value, ledger.id, "LedgerService", at,
                                    context="books" if number else None,
                                    memory_id=note if number else None))  # fmt: skip
        assert w.end_relation("r-0", at) and not w.end_relation("r-0", at)
    assert store.entities.known("paymentsteam", "ada") == replace(made, aliases=("paymentsteam",))
    assert [e.id for e in store.entities.unnamed()] == [made.id]
    assert store.entities.known("ledgerservice", "ada").type is EntityType.SERVICE
    current = store.entities.relations([ledger.id], "ada")
    assert [(r.id, r.context, r.memory_id) for r in current] == [("r-1", "books", note)]
    both = store.entities.relations([made.id, ledger.id], "ada", current=False)
    assert [r.id for r in both] == ["r-0", "r-1"] and both[0].valid_to is not None
    assert store.entities.relation("r-0") == both[0]
    mem.forget(note)  # a relation learned from a memory goes with it
    assert [r.id for r in store.entities.relations([made.id], "ada", current=False)] == ["r-0"]
    assert store.entities.known("ledgerservice", "ada") is not None  # kept by "r-0"


def test_the_relations_migration_types_the_entities_a_store_has(store: str) -> None:
    with _open(store) as mem:
        mem.add("@ghopper moved src/app/main.py to `Flask`.")
    # the store as the previous schema left it (the later migrations run again)
    for statement in ("DROP TABLE relation", "ALTER TABLE entity DROP COLUMN entity_type",
                      "DELETE FROM schema_migrations WHERE version >= (SELECT version "
                      "FROM schema_migrations WHERE name = 'relations')"):  # fmt: skip
        raw_sql(store, statement)
    with _open(store) as mem:
        types = {e.name: e.type for e in mem.graph.entities()}
        assert types == {"@ghopper": EntityType.PERSON, "src/app/main.py": EntityType.FILE,
                         "main.py": EntityType.FILE, "Flask": EntityType.UNKNOWN}  # fmt: skip
        assert mem.graph.relate("@ghopper", "uses", "Flask").added


def test_sessions(mem: Memory) -> None:
    session = mem.lifecycle.create_session(type="work", project="proj")
    added = mem.add("Found the flaky test cause.", session_id=session.id).id
    assert [s.id for s in mem.lifecycle.sessions()] == [session.id]
    assert [r.id for r in mem.lifecycle.for_session(session.id)] == [added]
    mem.packs.close_session(session.id, summary=False)
    assert mem.lifecycle.sessions()[0].ended_at is not None


def test_exact_duplicates_in_a_session_are_skipped(mem: Memory) -> None:
    session = mem.lifecycle.create_session(type="work")
    first = mem.add("The build cache lives in /var/cache/ci.", session_id=session.id)
    again = mem.add("The build cache lives in /var/cache/ci.", session_id=session.id)
    assert again.skipped and again.duplicate_of == first.id


def test_swap_meta_sets_only_from_the_value_expected(mem: Memory) -> None:
    """The compare-and-swap the maintenance lock is taken with (tests/test_concurrency.py
    races two processes on it)."""
    with mem.store.write() as w:
        assert w.swap_meta("probe", None, "a")  # unset: inserted
        assert not w.swap_meta("probe", None, "b")  # set meanwhile: unchanged
        assert not w.swap_meta("probe", "stale", "c")
        assert w.swap_meta("probe", "a", "")
        assert w.swap_meta("probe", "", "d")
    assert mem.store.meta("probe") == "d"


def test_the_policy_is_serialized_only_inside_a_write(mem: Memory) -> None:
    with pytest.raises(RuntimeError, match="open write transaction"):
        mem.store.serialize_policy()
    with mem.store.write():
        mem.store.serialize_policy()
        mem.store.serialize_policy()  # taken again by the same transaction: no wait


def test_registries(mem: Memory) -> None:
    mem.registries.register("agents", "ada", description="Builder", domain="dev")
    assert [e.key for e in mem.registries.registry("agents")] == ["ada"]
    assert "fact" in {e.key for e in mem.registries.registry("categories")}
    mem.registries.unregister("agents", "ada")
    assert list(mem.registries.registry("agents")) == []


def test_journal(mem: Memory) -> None:
    added = mem.add("Rotate the API keys monthly.", title="Keys").id
    mem.update(added, append=" Use the vault.")
    operations = [e.operation for e in mem.journal(added)]
    assert len(operations) >= 2 and operations[-1] == "add"


def test_renaming_a_project_relabels_its_sessions_and_reminders(mem: Memory) -> None:
    kept = mem.lifecycle.create_session(type="work", project="other")
    moved = mem.lifecycle.create_session(type="work", project="proj")
    reminder = mem.lifecycle.remind("in 2 hours", "check the deploy")
    assert reminder.project == "proj"
    with mem.store.write() as w:
        w.rename_project("proj", "renamed")
    assert [s.id for s in mem.lifecycle.sessions("renamed")] == [moved.id]
    assert [s.id for s in mem.lifecycle.sessions("other")] == [kept.id]
    assert mem.lifecycle.sessions("proj") == []
    assert [r.project for r in mem.lifecycle.reminders()] == ["renamed"]


def test_reminders(mem: Memory) -> None:
    reminder = mem.lifecycle.remind("in 2 hours", "check the deploy")
    assert [r.id for r in mem.lifecycle.reminders()] == [reminder.id]
    mem.lifecycle.dismiss(reminder.id)
    assert mem.lifecycle.reminders() == []
    assert [r.id for r in mem.lifecycle.reminders(include_dismissed=True)] == [reminder.id]


# ---- export and import across backends ----------------------------------------------


def _full_store(mem: Memory, folder: Path) -> None:
    """Every kind an export carries (as tests/test_transfer.py's store)."""
    mem.registries.register("agents", "ada", description="Builder", domain="dev")
    session = mem.lifecycle.create_session(type="work", project="proj")
    x = mem.add("Ada Lovelace wrote the first program. Alice met Bob at Acme Corp.",
                title="History", tags=["history", "people"], importance=7,
                session_id=session.id, wake_phrases=["first program"], wake_order=2).id  # fmt: skip
    y = mem.add("Use uv for environments.", private=True).id
    mem.update(x, append=" Later Acme Corp hired Alice.")
    z = mem.supersede(y, "Use uv, never pip.").id
    w = mem.add("The billing API is slow on Mondays.", kind="lesson", occurred_at="2026-01-05",
                anchors=[x], applicability=["python"], content_type="code").id  # fmt: skip
    mem.graph.merge_entities("Alice", "Ada Lovelace", confirm=True)
    mem.graph.relate("Ada Lovelace", "works on", "Acme Corp", context="hired", memory=x)
    mem.graph.relate("Acme Corp", "based in", "London")
    mem.graph.unrelate("Acme Corp", "located in", "London")
    mem.graph.set_type("Acme Corp", "organisation")
    mem.invalidate(w, "fixed")
    mem.graph.link(x, z, "related", reason="same area")
    mem.reinforce(x)
    mem.lifecycle.remind("in 2 hours", "check the deploy")
    mem.add('Unicode: naïve café — 数据 🙂 "quoted" \\ backslash', title="Ünïcödé")


@pytest.mark.parametrize(("source", "target"), [("sqlite", "postgres"), ("postgres", "sqlite")])
def test_export_import_between_backends_is_lossless(
    source: str, target: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    origin = _location(source, tmp_path, request, "a")
    copy = _location(target, tmp_path, request, "b")
    with _open(origin) as a:
        _full_store(a, tmp_path)
        first = list(a.transfer.export_jsonl(**EVERYTHING))
    with _open(copy) as b:
        report = b.transfer.import_jsonl(first)
        assert report.errors == []
        assert list(b.transfer.export_jsonl(**EVERYTHING)) == first
        again = b.transfer.import_jsonl(first)
        assert again.added == 0 and again.errors == []
        found = b.search("Acme")
        assert found and found[0].record.title == "History"
        assert len(b.history(found[0].record.id)) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_import_reports_a_record_the_store_refuses_and_lands_the_rest(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # A link to a memory that is nowhere is refused by the store (PostgreSQL loads a
    # kind in chunks and then says which record); the same link twice is one link.
    with _open(_location(backend, tmp_path, request, "origin")) as mem:
        a = mem.add("Service A calls service B over gRPC.").id
        b = mem.add("Service B owns the orders table.").id
        mem.graph.link(a, b, "related", reason="same flow")
        lines = list(mem.transfer.export_jsonl(**EVERYTHING))
    links = [line for line in lines if '"kind":"link"' in line]  # (the write may link too)
    link = next(line for line in links if f'"target":"{b}"' in line)
    orphan = json.loads(link) | {"target": "m-nowhere0"}
    lines += [json.dumps(orphan), link]
    with _open(_location(backend, tmp_path, request, "copy")) as copy:
        report = copy.transfer.import_jsonl(lines)
        assert [n for n, _ in report.errors] == [len(lines) - 1]
        assert "names a memory not in the store or the file" in report.errors[0][1]
        assert report.counts["link"] == {"added": len(links), "unchanged": 1}
        assert report.counts["memory"] == {"added": 2}
        assert (a, b) in [(x.source, x.target) for x in copy.graph.links(a)]
        assert "m-nowhere0" not in {x.target for x in copy.graph.links(a)}


# ---- the server specifics: schema, backup, concurrency -----------------------------------


def test_migrations_are_recorded_and_idempotent(pg_url: str) -> None:
    from memlane.store.postgres import PostgresStore
    from memlane.store.postgres.schema import LATEST

    for _ in range(2):
        PostgresStore(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT version, name FROM schema_migrations").fetchall()
    assert [r[0] for r in rows] == list(range(1, LATEST + 1))


def test_a_time_window_reads_the_event_time_index_on_both_backends(
    pg_url: str, tmp_path: Path
) -> None:
    """--since/--until (and a recall's time cue) compare a memory's event time, else
    when it was written: an index on that expression answers a window without a scan."""
    import sqlite3
    from datetime import datetime

    from memlane.store.postgres import PostgresStore
    from memlane.store.sqlite.schema import EVENT_TIME

    may, june = datetime(2023, 5, 1), datetime(2023, 6, 1)
    sqlite_path = tmp_path / "s.db"
    for location in (str(sqlite_path), pg_url):
        with Memory.open(location, context=Context()) as mem:
            inside = mem.add("The launch party", occurred_at="2023-05-08T19:00:00").id
            mem.add("The retrospective", occurred_at="2023-06-02T10:00:00")
            window = mem.filters(scope="all", since=may, until=june)
            assert [r.id for r in mem.store.query(window)] == [inside]
    with sqlite3.connect(sqlite_path) as conn:
        plan = conn.execute(
            f"EXPLAIN QUERY PLAN SELECT id FROM memory e WHERE {EVENT_TIME} >= ? AND "
            f"{EVENT_TIME} < ?",
            ("2023-05-01", "2023-06-01"),
        ).fetchall()
    assert "USING INDEX memory_event_time" in str(plan)
    PostgresStore(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        found = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'memory_event_time'"
        ).fetchone()
    assert found is not None and "COALESCE(occurred_at, created_at)" in found[0]


def _word_counts(url: str) -> tuple[dict[str, int], dict[str, int], int, int]:
    """The kept word statistics and a recount: (kept, counted, kept total, memories)."""
    with psycopg.connect(url) as conn:
        kept = dict(conn.execute("SELECT term, df FROM term_df WHERE df <> 0").fetchall())
        counted = dict(
            conn.execute(
                "SELECT k, count(*) FROM memory, jsonb_object_keys(terms) k GROUP BY k"
            ).fetchall()
        )
        total = conn.execute("SELECT n, tokens FROM term_total").fetchone()
        memories = conn.execute(
            "SELECT count(*), sum(term_count) FROM memory WHERE terms IS NOT NULL"
        ).fetchone()
    assert total and memories
    assert total[1] == memories[1]  # the tokens kept are the tokens held
    return kept, counted, total[0], memories[0]


def test_word_statistics_stay_a_true_count_through_every_write(
    pg_store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with _open(pg_store) as mem:
        _full_store(mem, tmp_path)  # adds, update, supersede, invalidate, merge, links
        mem.add_batch([{"content": f"Batch note {i} about proxy caches"} for i in range(30)])
        first = mem.search("batch")[0].record.id
        mem.recall("proxy caches")  # counters only: no document changes
        mem.update(first, content="Rewritten without the old words entirely.")
        mem.forget(mem.search("batch")[0].record.id)
        exported = list(mem.transfer.export_jsonl(**EVERYTHING))
    kept, counted, total, memories = _word_counts(pg_store)
    # 30 batch notes, one forgotten, one rewritten (its derived title follows its body)
    assert kept == counted and kept["batch"] == 28 and "rewritten" in kept
    with psycopg.connect(pg_store) as conn:  # every word as SQLite's FTS5 holds it
        for table in ("memory", "memory_version"):
            rows = conn.execute(f"SELECT title, body, tags, terms, term_count FROM {table}")
            for title, body, tags, held, size in rows.fetchall():
                assert (held, size) == terms.weighted(title, body, tags)
    assert total == memories == 34
    copy = _location("postgres", tmp_path, request, "copy")
    with _open(copy) as other:
        assert other.transfer.import_jsonl(exported).errors == []
    assert _word_counts(copy) == (kept, counted, total, memories)


def test_keyword_ranking_reads_the_kept_word_counts(pg_store: str) -> None:
    with _open(pg_store) as mem:
        rare = mem.add("The zephyr deploy failed once.", title="Zephyr").id
        common = mem.add("The deploy of the deploy went fine.", title="Deploys").id
        for i in range(6):
            mem.add(f"Deploy {i} finished.", title=f"Run {i}")

        def best() -> str:
            return mem.store.search("zephyr deploy", Filters(), "any")[0].record.id

        assert best() == rare
        with psycopg.connect(pg_store) as conn:  # make the rare word look common
            conn.execute("UPDATE term_df SET df = 1000 WHERE term = 'zephyr'")
            conn.execute("UPDATE term_df SET df = 1 WHERE term = 'deploi'")
            conn.execute("UPDATE term_total SET n = 2000")
        assert best() == common


def test_prefix_words_score_alike_on_both_backends_now_and_as_of(
    tmp_path: Path, pg_store: str
) -> None:
    # A prefix word is every term that starts with it: PostgreSQL finds them in its
    # term counts and asks the index, and must score as FTS5 does, on the memories
    # and (as of an earlier instant) on their old versions, which it reads row by row.
    texts = [
        ("Deploys", "Deploy the parser, then deployment checks run."),
        ("Parsing", "The parser parses each partition; partial parses retry."),
        ("Parts", "Party planning: parts list and a parking map."),
        ("Other", "Nothing here starts like the query words."),
    ]
    scores = []
    for location in (str(tmp_path / "prefix.db"), pg_store):
        with _open(location) as mem:
            ids = {mem.add(text, title=title).id: title for title, text in texts}
            before = utcnow()
            first = next(i for i, title in ids.items() if title == "Parts")
            mem.update(first, content="Party planning moved; see the new page.")
            found = []
            for query in ("par*", "pars* deploy*", "part* parking map"):
                for filters in (Filters(), Filters(as_of=before)):
                    for match in ("all", "most", "any"):
                        hits = mem.store.search(query, filters, match)
                        found.append([(ids[h.record.id], h.score) for h in hits])
            scores.append(found)
    for hits, pg_hits in zip(*scores, strict=True):
        assert [t for t, _ in hits] == [t for t, _ in pg_hits]
        assert [s for _, s in hits] == pytest.approx([s for _, s in pg_hits], rel=1e-9)
    assert sum(len(hits) >= 2 for hits in scores[0]) >= 5


def test_many_matches_rank_the_same_newest_first_on_both_backends(
    tmp_path: Path, pg_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past a cap of matches, a search ranks the newest first (for "any", each word's
    # newest, sharing the cap): the same memories with the same scores on both
    # backends, and a page they cannot fill widens to every match.
    monkeypatch.setattr("memlane.store.base.RANK_CAP", 4)
    monkeypatch.setattr("memlane.store.base.ANY_RANK_CAP", 6)
    rng = random.Random(7)
    words = ["deploy", "cache", "kestrel", "ledger", "proxy", "queue"]
    texts = [
        " ".join(rng.choice(words[:2] if i % 3 else words) for _ in range(rng.randint(3, 9)))
        for i in range(30)
    ]
    queries = ["deploy", "deploy cache", "kestrel ledger deploy", "kes* queue cache", "proxy"]
    results = []
    for location in (str(tmp_path / "capped.db"), pg_store):
        with _open(location) as mem:
            ids = {mem.add(text, title=f"Note {i}").id: i for i, text in enumerate(texts)}
            found = []
            for query in queries:
                for match in ("all", "most", "any"):
                    for limit in (3, 8, 40):
                        hits = mem.store.search(query, Filters(limit=limit), match)
                        found.append([(ids[h.record.id], h.score) for h in hits])
            results.append(found)
    monkeypatch.setattr("memlane.store.base.RANK_CAP", 10**6)
    monkeypatch.setattr("memlane.store.base.ANY_RANK_CAP", 10**6)
    with _open(pg_store) as mem:
        uncapped = [
            [ids[h.record.id] for h in mem.store.search(q, Filters(limit=3), "any")]
            for q in queries
        ]
    for hits, pg_hits in zip(*results, strict=True):
        assert [i for i, _ in hits] == [i for i, _ in pg_hits]
        assert [s for _, s in hits] == pytest.approx([s for _, s in pg_hits], rel=1e-9)
    capped = [[i for i, _ in results[1][q * 9 + 6]] for q in range(len(queries))]
    assert capped != uncapped  # the caps changed what was ranked


def test_migration_4_gives_an_existing_stores_memories_their_terms(pg_store: str) -> None:
    from memlane.store.postgres import PostgresStore

    with _open(pg_store) as mem:
        mem.add_batch([{"content": f"Existing note {i} on caching"} for i in range(5)])
    with psycopg.connect(pg_store) as conn:  # no terms yet, as a store made before
        for operation in ("insert", "update", "delete"):
            conn.execute(f"DROP TRIGGER memlane_fts5_terms_{operation} ON memory")
            conn.execute(f"DROP FUNCTION memlane_fts5_terms_{operation}()")
        for table in ("memory", "memory_version"):
            conn.execute(f"DROP TRIGGER {table}_terms_stale ON {table}")
            conn.execute(f"ALTER TABLE {table} DROP COLUMN terms, DROP COLUMN term_count")
            conn.execute(f"ALTER TABLE {table} ADD COLUMN fts tsvector")
        conn.execute("DROP FUNCTION memlane_terms_stale()")
        conn.execute("DROP TABLE term_df, term_total, sighting")
        conn.execute("DROP INDEX memory_event_time")
        conn.execute("DROP TABLE relation")
        conn.execute("ALTER TABLE entity DROP COLUMN entity_type")
        conn.execute("CREATE TABLE fts_term (term text)")
        conn.execute("CREATE TABLE fts_count (n bigint)")
        for operation in ("insert", "update", "delete"):
            conn.execute(
                f"CREATE FUNCTION memlane_terms_{operation}() RETURNS trigger "
                "LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$"
            )
            conn.execute(
                f"CREATE TRIGGER memlane_terms_{operation} AFTER {operation} ON memory "
                f"FOR EACH STATEMENT EXECUTE FUNCTION memlane_terms_{operation}()"
            )
        conn.execute("DELETE FROM schema_migrations WHERE version >= 4")
    PostgresStore(pg_store).close()
    kept, counted, total, memories = _word_counts(pg_store)
    assert kept == counted and kept["cach"] == 5 and total == memories == 5


def _open_store(url: str) -> None:
    from memlane.store.postgres import PostgresStore

    PostgresStore(url).close()


def test_processes_opening_a_new_database_at_once_do_not_race(pg_url: str) -> None:
    from memlane.store.postgres.schema import LATEST

    with multiprocessing.get_context("spawn").Pool(4) as pool:
        pool.map(_open_store, [pg_url] * 4)
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()
    assert rows == (LATEST,)


def test_backup_defers_to_pg_dump(pg_url: str, tmp_path: Path) -> None:
    with _open(pg_url) as memory, pytest.raises(Unavailable, match="pg_dump"):
        memory.store.snapshot(tmp_path / "copy.db")


WRITERS, NOTES = 4, 12


def _fact(i: int) -> str:
    """Distinct texts: near-duplicate detection must not fold one fact into another."""
    return " ".join(hashlib.sha256(f"{i}-{n}".encode()).hexdigest()[:12] for n in range(3))


def _writer(url: str, agent: str, session_id: str, notes: int = NOTES) -> list[str]:
    """One process: `notes` memories of its own, each interleaved with a shared fact every
    writer adds (an exact duplicate across writers), a search and a recall after each."""
    with _open(url, agent="team") as memory:
        ids = []
        for i in range(notes):
            own = memory.add(
                f"{agent} {uuid.uuid4().hex} {uuid.uuid4().hex}", session_id=session_id
            )
            assert own.landed, own
            ids.append(str(own.id))
            memory.add(f"Shared {_fact(i)}", session_id=session_id)
            memory.search(agent)
            memory.recall(f"Shared {_fact(i)}")
        return ids


def _write_concurrently(store: str, writers: int, notes: int) -> None:
    """`writers` processes at once; then every write is there and no fact is twice."""
    with _open(store, agent="team") as memory:
        session = memory.lifecycle.create_session(type="work").id
    args = [(store, f"w{n}", session, notes) for n in range(writers)]
    with multiprocessing.get_context("spawn").Pool(writers) as pool:
        written = pool.starmap(_writer, args)  # a writer's error fails the test here
    with _open(store, agent="team") as memory:
        rows = memory.store.query(Filters(limit=None, include_superseded=True, any_visibility=True))
        assert {i for part in written for i in part} <= {r.id for r in rows}
        shared = sorted(r.body for r in rows if r.body.startswith("Shared "))
        assert shared == sorted(f"Shared {_fact(i)}" for i in range(notes))  # no twin
        assert len(rows) == writers * notes + notes


def test_concurrent_writers_lose_nothing_and_race_no_duplicate(store: str) -> None:
    _write_concurrently(store, WRITERS, NOTES)


def test_eight_processes_writing_and_recalling_on_one_server(pg_store: str) -> None:
    """The issue's fleet: eight agents' processes on one PostgreSQL database."""
    _write_concurrently(pg_store, 8, 8)


def test_missing_extra_names_the_install_command() -> None:
    from memlane.store.postgres import INSTALL

    assert INSTALL == "pip install 'memlane[postgres]'"
