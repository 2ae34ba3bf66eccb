"""The gold recall set: fixed corpus, pinned clock, one parametrized check.

The corpus and the cases are data (tests/gold_cases.py). The store is built once per
module through the public `Memory` API with the deterministic `hash` embedder while
the clock is pinned: `memlane.timeutil.utcnow` and every module that imported it by
name are patched, and the clock moves only when the script says so. A separate
integration test replays the same corpus with the real MiniLM model and asks true
paraphrases (no word shared with the target).
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

import memlane
import memlane.timeutil
from gold_cases import (
    CASES,
    CODER,
    MYSQL_TO_PG,
    NOW,
    PARAPHRASES,
    SCRIPT,
    STAGING_INVALIDATED,
    STEP,
    T0,
    Add,
    Case,
    Invalidate,
    Link,
    Paraphrase,
    Retire,
    Supersede,
    Update,
)
from memlane import Context, Memory
from memlane.embed import Embedder, get_embedder
from memlane.model import WriteStatus

if TYPE_CHECKING:
    from memlane.retrieve.result import Extra
    from memlane.retrieve.score import Scored

WRITER_CONTEXT = Context("alpha", "main")
MIN_CASES = 40
MIN_PER_CATEGORY = {
    "keyword": 3, "scope": 3, "tombstone": 3, "as_of": 3, "private": 3, "entity": 3,
    "paraphrase": 3, "passive": 3, "linked": 1, "time_cue": 2, "budget": 1, "explain": 3,
}  # fmt: skip


# ---- the pinned clock -------------------------------------------------------------------


class Clock:
    """utcnow() for the whole package: a fixed instant that moves forward on request."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def set(self, when: datetime) -> None:
        assert when >= self.now, f"the clock never goes back ({when} < {self.now})"
        self.now = when


def _modules_importing_utcnow() -> list[ModuleType]:
    """Every memlane module that does `from memlane.timeutil import ... utcnow ...`."""
    root = Path(memlane.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "utcnow" not in text:
            continue
        tree = ast.parse(text)
        if any(
            isinstance(node, ast.ImportFrom)
            and node.module == "memlane.timeutil"
            and any(alias.name == "utcnow" for alias in node.names)
            for node in ast.walk(tree)
        ):
            parts = path.relative_to(root.parent).with_suffix("").parts
            found.append(importlib.import_module(".".join(parts)))
    return found


@pytest.fixture(scope="module")
def clock() -> Iterator[Clock]:
    original = memlane.timeutil.utcnow
    pinned = Clock(T0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(memlane.timeutil, "utcnow", pinned)
        users = _modules_importing_utcnow()
        assert users, "no module imports utcnow by name: the search is broken"
        for module in users:
            mp.setattr(module, "utcnow", pinned)
        stray = [
            name
            for name, module in list(sys.modules.items())
            if name.startswith("memlane") and getattr(module, "utcnow", None) is original
        ]
        assert not stray, f"modules still reading the real clock: {stray}"
        yield pinned


# ---- the store ----------------------------------------------------------------------------


@dataclass
class Gold:
    """A built gold store: ids by key, and readers by (agent, project, branch)."""

    path: Path
    embedder: Embedder
    ids: dict[str, str]
    readers: dict[tuple[str, str, str], Memory] = field(default_factory=dict)

    keys: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.keys = {memory_id: key for key, memory_id in self.ids.items()}

    def key(self, memory_id: str) -> str:
        return self.keys.get(memory_id, memory_id)

    def reader(self, agent: str, context: tuple[str, str]) -> Memory:
        slot = (agent, *context)
        if slot not in self.readers:
            self.readers[slot] = Memory.open(
                self.path, agent=agent, context=Context(*context), embedder=self.embedder
            )
        return self.readers[slot]

    def close(self) -> None:
        for memory in self.readers.values():
            memory.close()


def build(path: Path, embedder: Embedder, clock: Clock) -> dict[str, str]:
    """Replay SCRIPT into a new store at `path`; the ids it handed out, by key."""
    ids: dict[str, str] = {}
    writers: dict[str, Memory] = {}

    def writer(agent: str) -> Memory:
        if agent not in writers:
            writers[agent] = Memory.open(  # a throwaway store: fewer fsyncs
                path, agent=agent, context=WRITER_CONTEXT, embedder=embedder, synchronous="normal"
            )
        return writers[agent]

    try:
        for step in SCRIPT:
            when = getattr(step, "when", None)
            clock.set(when if when is not None else clock.now + STEP)
            match step:
                case Add(key, content, fields, agent):
                    result = writer(agent).add(content, **fields)
                    assert result.status is WriteStatus.ADDED, (key, result)
                    ids[key] = result.id
                case Supersede(key, old, content, reason):
                    result = writer(CODER).supersede(ids[old], content, reason=reason)
                    assert result.status is WriteStatus.ADDED, (key, result)
                    ids[key] = result.id
                case Update(key, title, content, reason):
                    writer(CODER).update(ids[key], title=title, content=content, reason=reason)
                case Invalidate(key, reason):
                    writer(CODER).invalidate(ids[key], reason)
                case Retire(key, reason):
                    writer(CODER).retire(ids[key], reason)
                case Link(source, target, kind, reason):
                    writer(CODER).graph.link(ids[source], ids[target], kind, reason)
                case _:
                    raise AssertionError(f"unknown step {step!r}")
    finally:
        for memory in writers.values():
            memory.close()
    return ids


def built(path: Path, embedder: Embedder, clock: Clock) -> Iterator[Gold]:
    ids = build(path, embedder, clock)
    clock.set(max(clock.now, NOW))
    gold = Gold(path, embedder, ids)
    try:
        yield gold
    finally:
        gold.close()


@pytest.fixture(scope="module")
def gold(tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Iterator[Gold]:
    yield from built(tmp_path_factory.mktemp("gold") / "gold.db", get_embedder("hash"), clock)


# ---- the set itself -----------------------------------------------------------------------


def test_the_gold_set_is_well_formed() -> None:
    keys = [s.key for s in SCRIPT if isinstance(s, Add | Supersede)]
    assert len(keys) == len(set(keys)) and len(keys) >= 60
    assert len(CASES) >= MIN_CASES
    assert len({c.id for c in CASES}) == len(CASES)
    per_category: dict[str, int] = {}
    for case in CASES:
        per_category[case.category] = per_category.get(case.category, 0) + 1
        named = [
            case.expect_top, *case.expect_in_top_k, *case.expect_absent, *case.expect_lanes,
            *case.expect_held_back, *case.expect_budget_dropped, *case.keyword_misses,
            *case.expect_linked, *(case.outranks_unbudgeted or ()),
        ]  # fmt: skip
        unknown = [k for k in named if k is not None and k not in keys]
        assert not unknown, (case.id, unknown)
        assert (
            case.expect_top or case.expect_in_top_k or case.expect_absent
            or case.expect_held_back or case.explain
        ), f"{case.id} checks nothing"  # fmt: skip
    for category, least in MIN_PER_CATEGORY.items():
        assert per_category.get(category, 0) >= least, (category, per_category)
    assert {p.target for p in PARAPHRASES} <= set(keys)


def test_the_store_was_written_on_the_pinned_clock(gold: Gold, clock: Clock) -> None:
    mem = gold.reader(CODER, ("alpha", "main"))
    first = next(step for step in SCRIPT if isinstance(step, Add))
    assert first is SCRIPT[0] and first.when is None
    assert mem.get(gold.ids[first.key]).created_at == T0 + STEP
    old, new = mem.get(gold.ids["billing_db_mysql"]), mem.get(gold.ids["billing_db_pg"])
    assert old.superseded_at == new.created_at == MYSQL_TO_PG
    assert mem.get(gold.ids["staging_port"]).valid_until == STAGING_INVALIDATED
    assert clock() == NOW


# ---- the cases ----------------------------------------------------------------------------


def _param(case: Case) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
    return pytest.param(case, id=case.id, marks=marks)


def _describe(gold: Gold, hits: Sequence[Scored], extras: Sequence[Extra]) -> str:
    shown = [f"{gold.key(h.record.id)}{sorted(h.ranks)}:{h.score:.3f}" for h in hits]
    linked = [f"{gold.key(e.record.id)}(contested={e.neighbour.contested})" for e in extras]
    return f"results {shown}; linked {linked}"


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_gold_case(gold: Gold, case: Case) -> None:
    mem = gold.reader(case.agent, case.context)
    options = case.options()
    result = mem.recall(
        case.query, limit=case.limit, max_tokens=case.max_tokens, passive=case.passive,
        count=False, **options,
    )  # fmt: skip
    hits, extras = list(result.hits), list(result.extras)
    ranked = [gold.key(h.record.id) for h in hits]
    linked = {gold.key(e.record.id): e for e in extras}
    seen = _describe(gold, hits, extras)

    if case.expect_top is not None:
        assert ranked[:1] == [case.expect_top], seen
    for key in case.expect_in_top_k:
        assert key in ranked[: case.k], f"{key} not in the top {case.k}: {seen}"
    scored = {gold.key(s.record.id) for s in result.candidates}
    for key in case.expect_absent:
        assert key not in ranked and key not in linked, f"{key} surfaced: {seen}"
        assert key not in scored, f"{key} passed the filters (it was ranked, not shown)"
    held = {gold.key(i) for i in result.held_back}
    for key in case.expect_held_back:
        assert key in held, f"{key} was not held back (held: {sorted(held)}): {seen}"
        assert key not in ranked and key not in linked, f"{key} surfaced: {seen}"
    dropped = {gold.key(i) for i in result.budget_dropped}
    for key in case.expect_budget_dropped:
        assert key in dropped and key not in ranked, f"{key} not dropped by the budget: {seen}"
    for key, lanes in case.expect_lanes.items():
        [hit] = [h for h in hits if h.record.id == gold.ids[key]] or [None]
        assert hit is not None, f"{key} not found: {seen}"
        assert set(lanes) <= set(hit.ranks), f"{key} found by {sorted(hit.ranks)}: {seen}"
    for key in case.keyword_misses:
        plain = mem.search(case.query, **options)
        assert gold.ids[key] not in {h.record.id for h in plain}, f"keyword search found {key}"
    for key, contested in case.expect_linked.items():
        assert key in linked and key not in ranked, f"{key} is not a linked extra: {seen}"
        assert linked[key].neighbour.contested is contested, seen
    if case.expect_top_body is not None:
        assert case.expect_top_body in hits[0].record.body, hits[0].record.body
    if case.outranks_unbudgeted is not None:
        above, below = (gold.ids[k] for k in case.outranks_unbudgeted)
        free = mem.recall(case.query, limit=case.limit, count=False, **options)
        order = [h.record.id for h in free.hits]
        assert above in order and below in order, _describe(gold, list(free.hits), [])
        assert order.index(above) < order.index(below), _describe(gold, list(free.hits), [])
        assert result.omitted >= 1 and result.tokens_used <= case.max_tokens
    for target, verdict in case.explain.items():
        explained = mem.explain(
            case.query, gold.ids.get(target, target), limit=case.limit,
            max_tokens=case.max_tokens, passive=case.passive, **options,
        )  # fmt: skip
        [got] = explained.verdicts
        assert got.reason == verdict, f"{target}: {got}; {seen}"
        if target in gold.ids and verdict != "not_in_store":
            assert got.id == gold.ids[target]


# ---- the real model: true paraphrases -----------------------------------------------------


@pytest.fixture(scope="module")
def gold_minilm(tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Iterator[Gold]:
    path = tmp_path_factory.mktemp("gold-minilm") / "gold.db"
    clock.now = T0  # the same script at the same instants as the hash store
    yield from built(path, get_embedder("minilm"), clock)


def _paraphrase(case: Paraphrase, with_xfail: bool) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if with_xfail and case.xfail else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.integration
@pytest.mark.parametrize("case", [_paraphrase(p, with_xfail=False) for p in PARAPHRASES])
def test_minilm_vector_lane_finds_a_true_paraphrase(gold_minilm: Gold, case: Paraphrase) -> None:
    mem = gold_minilm.reader(CODER, case.context)
    target = gold_minilm.ids[case.target]
    keyword = [h.record.id for h in mem.search(case.query)]
    assert target not in keyword, "keyword search finds it: not a true paraphrase"
    nearest = [h.record.id for h in mem.search(case.query, mode="vector")]
    assert target in nearest[:3], [gold_minilm.key(i) for i in nearest[:5]]


@pytest.mark.integration
@pytest.mark.parametrize("case", [_paraphrase(p, with_xfail=True) for p in PARAPHRASES])
def test_minilm_recall_finds_a_true_paraphrase(gold_minilm: Gold, case: Paraphrase) -> None:
    mem = gold_minilm.reader(CODER, case.context)
    result = mem.recall(case.query, limit=3, count=False)
    seen = _describe(gold_minilm, list(result.hits), [])
    found = [h for h in result.hits if h.record.id == gold_minilm.ids[case.target]]
    assert found, f"{case.target} not in the top 3: {seen}"
    assert "vector" in found[0].ranks, seen
