"""Writers and maintenance runs racing on every backend: the write policy's
near-duplicate and contradiction decisions, and consolidate's single-flight lock.

Each test starts real processes on one store (a SQLite file, or a database on the
real PostgreSQL server of conftest.py) and releases them from a barrier at the same
moment: what one process decided must be seen by the others, whichever wins.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memlane import Context, Memory, Unavailable
from memlane.embed import get_embedder
from memlane.locking import LOCK_META
from memlane.model import LinkType, WriteStatus
from memlane.store.sqlite.turns import Turns
from memlane.write import dedup

BACKENDS = ["sqlite", "postgres"]
# Seconds a process waits at a barrier, and the parent for a process, before the
# test fails instead of hanging (each process imports memlane and numpy first).
WAIT_S = 120
# Restatements of one fact: pairwise >= 0.92 alike as strings (the policy's cut-off is
# 0.85) and no word the others lack, so each one refreshes whichever landed first.
RESTATEMENTS = [
    "Run the database migrations before the integration tests.",
    "Run database migrations before the integration tests.",
    "Run the database migrations before integration tests.",
    "Run database migrations before integration tests!",
]
# A statement and its negation: alike once the negation is set aside.
STATEMENT = "Always run the database migrations before the integration tests."
NEGATION = "Never run the database migrations before the integration tests."


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The location of a fresh, empty store on each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "memlane.db")
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    return str(request.getfixturevalue("pg_store"))


def _open(location: str) -> Memory:
    return Memory.open(
        location, agent="team", context=Context("proj", "main"), embedder=get_embedder("hash")
    )


def _race(location: str, job: Callable[..., Any], args: list[tuple[Any, ...]]) -> list[Any]:
    """Run `job(location, barrier, *a)` in one process per `a`, all released by one
    barrier; their return values, in the order of `args` (a process's error fails)."""
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(len(args)), ctx.Queue()
    processes = [
        ctx.Process(target=_report, args=(job, n, results, location, barrier, *a))
        for n, a in enumerate(args)
    ]
    for process in processes:
        process.start()
    try:
        out = _collect(results, processes)
        for process in processes:
            process.join(timeout=WAIT_S)
            assert process.exitcode == 0, process
    finally:
        for process in processes:
            if process.is_alive():  # a failed test leaves no process of its own behind
                process.kill()
    return [out[n] for n in range(len(args))]


def _collect(results: Any, processes: list[Any]) -> dict[int, Any]:
    """Each process's (number, value); fails as soon as one reports an error or dies
    without reporting (the others may be left waiting at a barrier)."""
    out: dict[int, Any] = {}
    deadline = time.monotonic() + WAIT_S
    while len(out) < len(processes):
        try:
            n, value = results.get(timeout=1)
        except queue.Empty:
            dead = [p for n, p in enumerate(processes) if n not in out and p.exitcode is not None]
            assert not dead, f"died without a result: {dead}"
            assert time.monotonic() < deadline, "no result in time"
            continue
        assert not isinstance(value, BaseException), value
        out[n] = value
    return out


def _report(job: Callable[..., Any], n: int, results: Any, *args: Any) -> None:
    try:
        results.put((n, job(*args)))
    except BaseException as exc:
        results.put((n, RuntimeError(f"process {n}: {exc!r}")))
        raise


# ---- the write policy ------------------------------------------------------------


def _add(location: str, barrier: Any, text: str, importance: int) -> tuple[str, str, str | None]:
    """One writer: warmed up (connection, embedder, index) by a write of its own, then
    the add, at the barrier's moment. (status, id, contradicts) of the add."""
    with _open(location) as memory:
        assert memory.add(f"Warm-up {uuid.uuid4().hex}.", auto_anchor=False).landed
        barrier.wait(timeout=WAIT_S)
        result = memory.add(text, importance=importance, auto_anchor=False)
        return result.status.value, str(result.id), result.contradicts


def test_writers_restating_one_fact_at_once_land_it_once(store: str) -> None:
    """Every writer decides with the others' rows in sight: one adds the fact, each other
    refreshes it, and no refresh is lost (each raised the importance, each is journaled)."""
    importances = [2, 3, 4, 5]
    results = _race(store, _add, list(zip(RESTATEMENTS, importances, strict=True)))
    statuses = sorted(status for status, _, _ in results)
    assert statuses == ["added"] + ["refreshed"] * (len(RESTATEMENTS) - 1), results
    [memory_id] = {memory_id for _, memory_id, _ in results}
    with _open(store) as memory:
        facts = [r for r in memory.list(scope="all", limit=0) if "migrations" in r.body]
        assert [r.id for r in facts] == [memory_id]
        assert facts[0].importance == max(importances)
        refreshes = [e for e in memory.journal(memory_id) if e.operation == "refresh"]
        assert len(refreshes) == len(RESTATEMENTS) - 1


# Alike in meaning, not in letters: the same words reordered (hash-embedder cosine
# 0.98, string similarity 0.62, under the policy's 0.85): only the vectors tell.
REORDERED = (
    "The release checklist requires a changelog entry and a signed tag for every version.",
    "For every version the release checklist requires a signed tag and a changelog entry.",
)


def test_writers_restating_a_fact_in_other_words_at_once_land_it_once(store: str) -> None:
    """The second writer finds the first's vectors with its row: both commit together,
    so a restatement only the vectors recognise refreshes instead of landing twice."""
    results = _race(store, _add, [(REORDERED[0], 3), (REORDERED[1], 4)])
    assert sorted(status for status, _, _ in results) == ["added", "refreshed"], results
    [memory_id] = {memory_id for _, memory_id, _ in results}
    with _open(store) as memory:
        facts = [r for r in memory.list(scope="all", limit=0) if "checklist" in r.body]
        assert [r.id for r in facts] == [memory_id]


def test_a_statement_and_its_negation_at_once_are_linked_as_a_contradiction(
    store: str,
) -> None:
    """Whichever lands second sees the first: both stay, linked `contradicts`."""
    results = _race(store, _add, [(STATEMENT, 5), (NEGATION, 5)])
    by_status = {status: (memory_id, contradicts) for status, memory_id, contradicts in results}
    assert sorted(by_status) == [WriteStatus.ADDED.value, WriteStatus.CONTRADICTION.value]
    first, _ = by_status[WriteStatus.ADDED.value]
    second, contradicts = by_status[WriteStatus.CONTRADICTION.value]
    assert contradicts == first
    with _open(store) as memory:
        links = {
            (x.source, x.target)
            for x in memory.graph.links(first)
            if x.type is LinkType.CONTRADICTS
        }
        assert links == {(first, second), (second, first)}


# Writers and adds each for the tests that count every write: small, since each
# writer is a new process importing memlane and numpy.
WRITERS, ADDS = 4, 6


def _add_many(location: str, barrier: Any, n: int) -> list[tuple[str, str]]:
    """One writer: ADDS distinct memories from the barrier's moment; (status, id) each."""
    with _open(location) as memory:
        memory.stats()  # a connection open before the start
        barrier.wait(timeout=WAIT_S)
        out = []
        for i in range(ADDS):
            text = f"Writer {n} note {i}: the {uuid.uuid4().hex} build cache lives on disk {i}."
            result = memory.add(text, title=f"Writer {n} note {i}")
            out.append((result.status.value, str(result.id)))
        return out


def test_every_write_of_concurrent_writers_lands(store: str) -> None:
    """Writers adding at once, in turns: each add is acknowledged as added and every
    acknowledged memory is in the store afterwards, once."""
    results = _race(store, _add_many, [(n,) for n in range(WRITERS)])
    statuses = {status for writer in results for status, _ in writer}
    ids = [memory_id for writer in results for _, memory_id in writer]
    assert statuses == {WriteStatus.ADDED.value} and len(set(ids)) == WRITERS * ADDS
    with _open(store) as memory:
        stored = {r.id for r in memory.list(scope="all", limit=0)}
        assert set(ids) <= stored and len(stored) == WRITERS * ADDS
        added = {e.memory_id for e in memory.journal(limit=1000) if e.operation == "add"}
        assert set(ids) <= added


IDENTICAL = "The nightly backup job writes to the cold-storage bucket in eu-west-1."


@pytest.mark.parametrize("session", [None, "sess-1"], ids=["near-duplicate", "exact"])
def test_writers_adding_the_same_text_at_once_land_it_once(store: str, session: str | None) -> None:
    """The same add from every writer at once: one lands it; the others find it, as an
    exact duplicate of their session or as a restatement to refresh."""
    results = _race(store, _add_same, [(session,)] * WRITERS)
    statuses = sorted(status for status, _, _ in results)
    others = "already_persisted" if session else "refreshed"
    assert statuses == sorted(["added"] + [others] * (WRITERS - 1)), results
    [memory_id] = {memory_id for _, memory_id, _ in results}
    with _open(store) as memory:
        assert [r.id for r in memory.list(scope="all", limit=0) if "backup" in r.body] == [
            memory_id
        ]


def _add_same(location: str, barrier: Any, session: str | None) -> tuple[str, str, str | None]:
    with _open(location) as memory:
        assert memory.add(f"Warm-up {uuid.uuid4().hex}.", auto_anchor=False).landed
        barrier.wait(timeout=WAIT_S)
        result = memory.add(IDENTICAL, session_id=session)
        return result.status.value, str(result.id), result.contradicts


# ---- what lands between the policy's look and its transaction ------------------------


def _interleaved(location: str, later: Memory, first: str) -> Memory:
    """A writer whose policy reads its neighbours, then sees `first` land through
    another writer (`later` stays open), before its own transaction begins."""
    writer = _open(location)
    look = writer._policy.look

    def look_then_another_lands(drafts: Any) -> Any:
        seen = look(drafts)
        assert later.add(first, auto_anchor=False).landed
        return seen

    writer._policy.look = look_then_another_lands  # type: ignore[method-assign]
    return writer


@pytest.mark.parametrize(
    ("first", "second", "status"),
    [
        (RESTATEMENTS[0], RESTATEMENTS[1], WriteStatus.REFRESHED),
        (REORDERED[0], REORDERED[1], WriteStatus.REFRESHED),  # alike only in vectors
        (STATEMENT, NEGATION, WriteStatus.CONTRADICTION),
    ],
    ids=["restated", "reordered", "negated"],
)
def test_a_memory_landed_after_the_policy_looked_is_judged(
    store: str, first: str, second: str, status: WriteStatus
) -> None:
    """The neighbours are read before the write lock; what another writer commits in
    between is read again inside the transaction, so it is refreshed or contradicted,
    never landed beside."""
    with _open(store) as other, _interleaved(store, other, first) as writer:
        result = writer.add(second, auto_anchor=False)
        assert result.status is status, result
        landed = writer.list(scope="all", limit=0)
        assert len(landed) == (1 if status is WriteStatus.REFRESHED else 2)


def test_a_batch_line_landed_elsewhere_after_the_batch_looked_is_refreshed(store: str) -> None:
    with _open(store) as other, _interleaved(store, other, RESTATEMENTS[0]) as writer:
        result = writer.add_batch([{"content": RESTATEMENTS[1]}, {"content": "Unrelated note."}])
        assert [ln.result.status for ln in result.lines if ln.result] == [
            WriteStatus.REFRESHED,
            WriteStatus.ADDED,
        ]


# ---- maintenance -----------------------------------------------------------------

VARIANTS = [
    "Run the database migrations before the integration tests.",
    "Run the database migrations before the integration tests. Use a fresh database.",
    "Run the database migrations before the integration tests. Seed it with make seed.",
]


# Runs each process starts: two runs racing for a free lock collide only when their
# reads fall between the other's read and commit, so one round may not show a broken
# lock; each round is a fresh race (the first merges, the later ones find nothing).
ROUNDS = 10


def _consolidate(location: str, barrier: Any) -> list[tuple[str | None, str | None, int, int]]:
    """ROUNDS maintenance runs, each started at the barrier's moment; a run waits again
    once it has tried the lock, so a winner still holds it while the other tries
    (however fast either is). Per round: (skipped, notice, this pid, absorbed)."""
    with _open(location) as memory:
        acquire = memory.rt.lock.acquire

        def acquire_then_wait(operation: str) -> Any:
            taken = acquire(operation)
            barrier.wait(timeout=WAIT_S)
            return taken

        memory.rt.lock.acquire = acquire_then_wait  # type: ignore[method-assign]
        memory.stats()  # a connection open before the start
        out = []
        for _ in range(ROUNDS):
            barrier.wait(timeout=WAIT_S)
            report = memory.maintenance.consolidate(threshold=0.6, force=True)
            absorbed = report.plan.absorbed if report.plan else 0
            out.append((report.skipped, report.notice, os.getpid(), absorbed))
        return out


def test_two_consolidate_runs_at_once_one_runs_and_one_is_skipped(store: str) -> None:
    """Of two runs starting at once exactly one takes the lock and runs; the other is
    skipped with the lock notice naming it; nothing is merged twice."""
    with _open(store) as memory:
        ids = [memory.add(t, allow_duplicate=True).id for t in VARIANTS]
    rounds = list(zip(*_race(store, _consolidate, [(), ()]), strict=True))
    absorbed_per_round = []
    for number, results in enumerate(rounds):
        ran = [r for r in results if r[0] is None]
        skipped = [r for r in results if r[0] == "lock"]
        assert len(ran) == 1 and len(skipped) == 1, (number, results)
        notice, winner = skipped[0][1] or "", ran[0][2]
        assert notice.startswith(f"skipped: a consolidate run (pid {winner})"), notice
        absorbed_per_round.append(ran[0][3])
    assert absorbed_per_round == [len(VARIANTS) - 1] + [0] * (ROUNDS - 1)
    with _open(store) as memory:
        assert memory.store.meta(LOCK_META) == ""  # released
        [keeper] = [i for i in ids if memory.get(i).live]
        absorbed = sorted(i for i in ids if i != keeper)
        assert sorted(memory.maintenance.merged_from(keeper)) == absorbed
        assert memory.get(keeper).version == 2  # one merge, one new version
        for memory_id in ids:
            lines = [e for e in memory.journal(memory_id) if e.operation == "consolidate"]
            assert len(lines) == 1, (memory_id, lines)
        for memory_id in absorbed:
            assert memory.get(memory_id).superseded_by == keeper


# ---- read-modify-write: no lost update ---------------------------------------------

# Rounds of each read-modify-write race: two transactions lose an update only when both
# read before either commits, so one round may not show it; each round is a fresh race.
RMW_ROUNDS = 8
# Rounds of counting two memories while another process links them the other way.
COUNT_ROUNDS = 40
# The roles of the processes changing one memory at once (see _change).
ROLES = ["tag-a", "tag-b", "feedback", "link"]


def _distinct(memory: Memory, count: int) -> list[str]:
    """`count` new memories that the write policy folds into nothing."""
    return [
        str(memory.add(f"Note {uuid.uuid4().hex} {uuid.uuid4().hex}.", importance=1,
                       allow_duplicate=True, auto_anchor=False).id)
        for _ in range(count)
    ]  # fmt: skip


def _change(location: str, barrier: Any, memory_id: str, role: str, sources: list[str]) -> None:
    """One process: RMW_ROUNDS changes of one memory, each at the barrier's moment: a
    tag of its own (a new version), an applied use, or a `supports` link from a source
    of the round (importance, activation and trust of the target)."""
    with _open(location) as memory:
        memory.stats()  # a connection open before the start
        for n in range(RMW_ROUNDS):
            barrier.wait(timeout=WAIT_S)
            if role.startswith("tag"):
                memory.update(memory_id, add_tags=[f"{role}-{n}"], auto_anchor=False)
            elif role == "feedback":
                memory.feedback(memory_id, applied=True)
            else:
                memory.graph.link(sources[n], memory_id, "supports")


def test_changes_of_one_memory_at_once_are_all_kept(store: str) -> None:
    """Updates, feedback and links of one memory at the same moment: each one is applied
    to what the others wrote (no change silently overwritten), each version numbered
    once, each journaled."""
    with _open(store) as memory:
        target, *sources = _distinct(memory, 1 + RMW_ROUNDS)
        before = memory.get(target)
    _race(store, _change, [(target, role, sources) for role in ROLES])
    with _open(store) as memory:
        after = memory.get(target)
        tagged = {f"{role}-{n}" for role in ROLES if role.startswith("tag")
                  for n in range(RMW_ROUNDS)}  # fmt: skip
        assert tagged <= set(after.tags), sorted(tagged - set(after.tags))
        updates = 2 * RMW_ROUNDS
        assert [v.number for v in memory.history(target)] == list(range(1, updates + 2))
        assert after.applied_count == RMW_ROUNDS
        assert after.activation_count == RMW_ROUNDS
        assert after.importance == before.importance + RMW_ROUNDS
        assert after.trust_score == pytest.approx(
            min(1.0, before.trust_score + RMW_ROUNDS * dedup.TRUST_CORROBORATED)
        )
        operations = [e.operation for e in memory.journal(target)]
        assert operations.count("update") == updates
        assert operations.count("feedback.applied") == RMW_ROUNDS


def _count_or_link(location: str, barrier: Any, role: str, pairs: list[tuple[str, str]]) -> None:
    """One process, at the barrier's moment for each pair (A, B) with A < B: "count"
    shows both (recall counters, which lock their rows in id order, A first); "link"
    links B -> A (which reads B for modification, then A)."""
    with _open(location) as memory:
        memory.stats()
        for a, b in pairs:
            barrier.wait(timeout=WAIT_S)
            if role == "count":
                memory.surfaced([a, b])
            else:
                memory.graph.link(b, a, "supports")


def test_recall_counters_and_a_link_the_other_way_neither_deadlock_nor_lose(
    store: str,
) -> None:
    """Counting A and B (A first) races a link B -> A (B first): neither transaction
    fails on a deadlock, and every count and every link is kept."""
    with _open(store) as memory:
        ids = _distinct(memory, 2 * COUNT_ROUNDS)
        pairs = [(min(a, b), max(a, b)) for a, b in zip(ids[::2], ids[1::2], strict=True)]
    _race(store, _count_or_link, [("count", pairs), ("link", pairs)])
    with _open(store) as memory:
        for a, b in pairs:
            assert (memory.get(a).surfaced_count, memory.get(b).surfaced_count) == (1, 1)
            assert [(x.source, x.target) for x in memory.graph.links(a)] == [(b, a)]


def _link_pairs(location: str, barrier: Any, pairs: list[tuple[str, str]], kind: str) -> None:
    """One process: a link of `kind` per pair, each at the barrier's moment."""
    with _open(location) as memory:
        memory.stats()
        for source, target in pairs:
            barrier.wait(timeout=WAIT_S)
            memory.graph.link(source, target, kind)


def test_links_of_two_memories_in_opposite_orders_neither_deadlock_nor_lose(
    store: str,
) -> None:
    """`contradicts` A->B (reads A then B, lowers both trusts) races `supports` B->A
    (reads B then A, raises A's trust and importance): neither transaction fails on a
    deadlock, and A ends with both changes."""
    with _open(store) as memory:
        ids = _distinct(memory, 2 * RMW_ROUNDS)
        pairs = list(zip(ids[::2], ids[1::2], strict=True))
        trust = {i: memory.get(i).trust_score for i in ids}
    _race(store, _link_pairs, [(pairs, "contradicts"), ([(b, a) for a, b in pairs], "supports")])
    with _open(store) as memory:
        for a, b in pairs:
            first, second = memory.get(a), memory.get(b)
            lowered = dedup.clamp(trust[a] + dedup.TRUST_CONTRADICTED)
            raised = dedup.clamp(trust[a] + dedup.TRUST_CORROBORATED)
            either_order = {  # trust is clamped, so the order of the two matters
                round(dedup.clamp(lowered + dedup.TRUST_CORROBORATED), 6),
                round(dedup.clamp(raised + dedup.TRUST_CONTRADICTED), 6),
            }
            assert round(first.trust_score, 6) in either_order, (a, first.trust_score)
            assert second.trust_score == pytest.approx(
                dedup.clamp(trust[b] + dedup.TRUST_CONTRADICTED)
            )
            assert (first.importance, first.activation_count) == (2, 1)
            kinds = {(x.source, x.target, x.type.value) for x in memory.graph.links(a)}
            assert kinds == {(a, b, "contradicts"), (b, a, "contradicts"), (b, a, "supports")}


# ---- turns -----------------------------------------------------------------------


def test_a_writer_waits_for_its_turn_and_gives_up_after_its_timeout(tmp_path: Path) -> None:
    """Turns on one lock file, as separate writers hold them: while one holds its turn
    another waits, and gives up after its timeout with Unavailable; once the turn is
    given up the other takes it. The file is owner-only, like the store."""
    path = tmp_path / "memlane.db-writer.lock"
    first, second = Turns(path), Turns(path)
    first.take(1)
    with pytest.raises(Unavailable, match="another writer held the store"):
        second.take(0.05)
    first.give()
    second.take(1)
    with pytest.raises(Unavailable):
        first.take(0)
    second.give()
    for turns in (first, second):
        turns.close()
    assert path.stat().st_mode & 0o777 == 0o600
