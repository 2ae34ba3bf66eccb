"""The recall pipeline's pure parts on hand-made inputs: RRF fusion, the composite
score, MMR, token budgets and time cues. No database, a pinned clock."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone

import pytest

from memlane import Context, Invalid
from memlane.model import Kind, MemoryClass, Record, ResonanceType, replace
from memlane.retrieve.budget import (
    estimate_tokens,
    kind_priority,
    pack,
    pack_results,
)
from memlane.retrieve.dialogue import asks, named, speaker, weigh_lines
from memlane.retrieve.fuse import BM25, ENTITY, VECTOR, Fused, convex, normalized, rrf
from memlane.retrieve.mmr import cosine, diversify, mmr, similarity_by_id
from memlane.retrieve.score import (
    DEFAULT_WEIGHTS,
    Scored,
    Weights,
    decay,
    half_life_days,
    importance,
    popularity,
    recency,
    scope_boost,
    score_candidates,
    trust,
)
from memlane.retrieve.when import NO_CUE, TimeCue, event_time, time_cue, time_fit
from memlane.words import jaccard, tokens

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
CTX = Context("proj", "main")


def rec(memory_id: str, **fields: object) -> Record:
    base = Record(
        id=memory_id,
        scope="project:proj@main",
        title=f"title {memory_id}",
        body=f"body {memory_id}",
        kind=Kind.FACT,
        category="general",
        created_at=NOW,
        updated_at=NOW,
        valid_from=NOW,
        version_from=NOW,
        dedup_hash=f"dh1:{memory_id}",
    )
    return replace(base, **fields)


# ---- RRF --------------------------------------------------------------------------


def test_rrf_adds_each_lane_share():
    fused = rrf({BM25: ["a", "b", "c"], VECTOR: ["b", "d"]})
    assert [f.id for f in fused] == ["b", "a", "d", "c"]
    by_id = {f.id: f for f in fused}
    assert by_id["b"].score == math.fsum((1 / 62, 1 / 61))
    assert by_id["a"].score == 1 / 61
    assert by_id["c"].score == 1 / 63
    assert by_id["b"].ranks == {BM25: 2, VECTOR: 1}
    assert by_id["b"].contributions == {BM25: 1 / 62, VECTOR: 1 / 61}


def test_rrf_with_no_lanes_or_empty_lanes_is_empty():
    assert rrf({}) == []
    assert rrf({BM25: [], VECTOR: [], ENTITY: []}) == []


def test_rrf_one_empty_lane_leaves_the_other_as_it_was():
    assert [f.id for f in rrf({BM25: ["x", "y"], ENTITY: []})] == ["x", "y"]


def test_rrf_ties_break_by_best_rank_then_id_whatever_the_lane_order():
    forward = rrf({BM25: ["y", "p"], VECTOR: ["x", "q"], ENTITY: ["q", "p"]})
    backward = rrf({ENTITY: ["q", "p"], VECTOR: ["x", "q"], BM25: ["y", "p"]})
    # q = 1/61 + 1/62 > p = 2/62 > x = y = 1/61, and x and y both rank 1 somewhere.
    assert [f.id for f in forward] == ["q", "p", "x", "y"]
    assert [(f.id, f.score) for f in forward] == [(f.id, f.score) for f in backward]


def test_rrf_equal_scores_order_by_id():
    assert [f.id for f in rrf({BM25: ["zeta"], VECTOR: ["alpha"]})] == ["alpha", "zeta"]


def test_rrf_counts_an_id_once_per_lane_at_its_best_rank():
    (only,) = rrf({BM25: ["a", "a", "a"]})
    assert only.ranks == {BM25: 1}
    assert only.score == 1 / 61


def test_rrf_k_is_a_whole_number_of_at_least_one():
    assert rrf({BM25: ["a"]}, k=1)[0].score == 0.5
    for bad in (0, -5, True, 1.5):
        with pytest.raises(Invalid):
            rrf({BM25: ["a"]}, k=bad)


# ---- convex fusion -----------------------------------------------------------------


def test_convex_weighs_each_lanes_min_max_normalised_score():
    weights = {BM25: 0.6, VECTOR: 0.4}
    fused = convex(
        {BM25: [("a", 9.0), ("b", 5.0), ("c", 1.0)], VECTOR: [("b", 0.8), ("d", 0.4)]}, weights
    )
    by_id = {f.id: f for f in fused}
    assert by_id["a"].contributions == {BM25: 0.6}
    assert by_id["b"].contributions == {BM25: 0.6 * 0.5, VECTOR: 0.4}
    assert by_id["c"].score == 0.0 and by_id["d"].score == 0.0
    assert by_id["b"].ranks == {BM25: 2, VECTOR: 1}
    # b: 0.3 + 0.4 > a: 0.6; c and d tie at 0 and d ranks better in its lane.
    assert [f.id for f in fused] == ["b", "a", "d", "c"]


def test_convex_lane_of_equal_scores_gives_each_its_whole_weight():
    fused = convex({BM25: [("x", 2.0), ("y", 2.0)]}, {BM25: 0.6})
    assert [(f.id, f.score) for f in fused] == [("x", 0.6), ("y", 0.6)]


def test_exact_ties_fall_by_content_so_other_ids_rank_the_same_memories_alike():
    """Two stores holding the same memories under other ids: the content key (a dedup
    hash) orders a tie, whatever the ids; without one, the id does."""
    even = {BM25: 0.5, VECTOR: 0.5}
    first = convex({BM25: [("x", 1.0)], VECTOR: [("y", 1.0)]}, even, {"x": "h2", "y": "h1"})
    other = convex({BM25: [("q", 1.0)], VECTOR: [("p", 1.0)]}, even, {"q": "h1", "p": "h2"})
    assert [f.id for f in first] == ["y", "x"] and [f.id for f in other] == ["q", "p"]
    assert [f.id for f in convex({BM25: [("y", 1.0)], VECTOR: [("x", 1.0)]}, even)] == ["x", "y"]
    assert [f.id for f in rrf({BM25: ["a"], VECTOR: ["b"]}, content={"a": "z", "b": "c"})] == [
        "b",
        "a",
    ]


def test_convex_empty_lanes_and_repeats():
    assert convex({}) == []
    assert convex({BM25: [], VECTOR: []}) == []
    (only,) = convex({BM25: [("a", 3.0), ("a", 1.0)]}, {BM25: 1.0})
    assert only.ranks == {BM25: 1}


def test_convex_refuses_a_lane_without_a_weight():
    with pytest.raises(Invalid):
        convex({ENTITY: [("a", 1.0)]}, {BM25: 0.6, VECTOR: 0.4})


def test_normalized_puts_the_best_at_one():
    fused = rrf({BM25: ["a", "b"], VECTOR: ["a"]})
    assert normalized(fused) == {"a": 1.0, "b": (1 / 62) / (2 / 61)}
    assert normalized([]) == {}


# ---- weights ----------------------------------------------------------------------


def test_default_weights_sum_to_one():
    w = DEFAULT_WEIGHTS
    assert math.fsum((w.relevance, w.importance, w.confidence, w.recency, w.popularity)) == 1.0


def test_weights_that_do_not_sum_to_one_are_refused():
    with pytest.raises(Invalid, match=r"sum to 1, not 1\.1"):
        Weights(relevance=0.6)
    with pytest.raises(Invalid, match="sum to 1"):
        Weights(0.1, 0.1, 0.1, 0.1, 0.1)


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), float("inf"), True, "0.5"])
def test_a_weight_outside_zero_to_one_is_refused(bad):
    with pytest.raises(Invalid):
        Weights(relevance=bad)


def test_weights_summing_to_one_in_floats_are_accepted():
    assert Weights(0.1, 0.2, 0.3, 0.3, 0.1).confidence == 0.3
    assert Weights(1.0, 0.0, 0.0, 0.0, 0.0).relevance == 1.0


# ---- score parts --------------------------------------------------------------------


def test_decay_is_one_half_at_exactly_one_half_life():
    assert decay(90.0, 90.0) == 0.5
    assert decay(0.0, 3.0) == 1.0
    assert decay(6.0, 3.0) == pytest.approx(0.25)
    assert decay(-5.0, 3.0) == 1.0  # an event in the future is as fresh as now


@pytest.mark.parametrize(
    ("kind", "memory_class", "days"),
    [
        (Kind.EVENT, MemoryClass.EPISODIC, 3),
        (Kind.FACT, MemoryClass.SEMANTIC, 90),
        (Kind.DECISION, MemoryClass.SEMANTIC, 90),
        (Kind.PROCEDURE, MemoryClass.PROCEDURAL, 180),
    ],
)
def test_recency_halves_after_the_half_life_of_the_class(kind, memory_class, days):
    assert half_life_days(memory_class) == days
    record = rec("a", kind=kind, created_at=NOW - days * DAY)
    assert recency(record, NOW) == pytest.approx(0.5)


def test_an_unknown_class_has_a_week_half_life():
    assert half_life_days(None) == 7.0


@pytest.mark.parametrize("exempt", [ResonanceType.FOUNDATIONAL, ResonanceType.TRANSFORMATIVE])
def test_foundational_and_transformative_memories_do_not_age(exempt):
    old = rec("a", kind=Kind.EVENT, created_at=NOW - 1000 * DAY, resonance_type=exempt)
    assert recency(old, NOW) == 1.0
    assert recency(replace(old, resonance_type=ResonanceType.OPERATIONAL), NOW) < 1e-90


def test_recency_counts_from_the_event_time_when_there_is_one():
    record = rec("a", kind=Kind.EVENT, created_at=NOW, occurred_at=NOW - 3 * DAY)
    assert event_time(record) == NOW - 3 * DAY
    assert recency(record, NOW) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("stored", "weeks", "expected"),
    [
        (1, 0, 0.0),
        (10, 0, 1.0),
        (12, 0, 1.0),  # above 10 is allowed, capped at 1
        (0, 0, 0.0),
        (5, 0, 4 / 9),
        (5, 2, (5 * 0.95**2 - 1) / 9),  # weekly decay of resonance
    ],
)
def test_importance_maps_effective_resonance_onto_zero_to_one(stored, weeks, expected):
    record = rec("a", importance=stored, created_at=NOW - timedelta(weeks=weeks))
    assert importance(record, NOW) == pytest.approx(expected)


def test_importance_decays_from_the_last_activation():
    record = rec("a", importance=5, created_at=NOW - 10 * DAY * 7, last_activated=NOW)
    assert importance(record, NOW) == pytest.approx(4 / 9)


def test_importance_of_decay_exempt_memories_does_not_fade():
    record = rec(
        "a", importance=10, created_at=NOW - 500 * DAY, resonance_type=ResonanceType.FOUNDATIONAL
    )
    assert importance(record, NOW) == 1.0


def test_trust_is_confidence_times_trust_score():
    assert trust(rec("a", confidence=0.6, trust_score=0.5)) == pytest.approx(0.3)
    assert trust(rec("a", confidence=0.9, trust_score=1.05)) == pytest.approx(0.945)
    assert trust(rec("a", confidence=1.0, trust_score=1.2)) == 1.0


@pytest.mark.parametrize(
    ("retrieved", "surfaced", "expected"),
    [(0, 0, 0.0), (4, 5, math.log(10) / math.log(101)), (100, 0, 1.0), (900, 900, 1.0)],
)
def test_popularity_is_log_scaled_and_capped(retrieved, surfaced, expected):
    record = rec("a", retrieval_count=retrieved, surfaced_count=surfaced)
    assert popularity(record) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("scope", "boost"),
    [
        ("project:proj@main", 1.0),
        ("project:proj", 0.85),
        ("global", 0.7),
        ("project:other", 0.3),
        ("project:other@main", 0.3),
        ("project:proj@feature", 0.3),
    ],
)
def test_scope_boost(scope, boost):
    assert scope_boost(scope, CTX) == boost


def test_scope_boost_without_a_project():
    assert scope_boost("global", Context()) == 0.7
    assert scope_boost("project:proj", Context()) == 0.3


# ---- the composite score ------------------------------------------------------------


def two_candidates() -> tuple[list[Fused], dict[str, Record]]:
    a = rec(
        "a",
        importance=10,
        resonance_type=ResonanceType.FOUNDATIONAL,
        confidence=0.5,
        created_at=NOW - 400 * DAY,
    )
    b = rec(
        "b",
        scope="global",
        importance=1,
        confidence=1.0,
        trust_score=0.5,
        retrieval_count=100,
        created_at=NOW - 90 * DAY,
    )
    return rrf({BM25: ["a", "b"], VECTOR: ["a"]}), {"a": a, "b": b}


def test_score_candidates_computes_the_documented_formula():
    fused, records = two_candidates()
    a, b = score_candidates(fused, records, now=NOW, context=CTX)
    assert (a.record.id, b.record.id) == ("a", "b")
    # a: relevance 1, importance 1, confidence·trust 0.5, recency 1 (exempt), popularity 0.
    assert a.score == pytest.approx(0.50 + 0.15 + 0.15 * 0.5 + 0.10 * 1.0)
    # b: relevance (1/62)/(2/61), importance 0, trust 0.5, recency 0.5, popularity 1; global.
    relevance_b = (1 / 62) / (2 / 61)
    assert b.relevance == pytest.approx(relevance_b)
    expected_b = (0.5 * relevance_b + 0.15 * 0.5 + 0.10 * 0.5 + 0.10 * 1.0) * 0.7
    assert b.score == pytest.approx(expected_b)


def test_score_parts_explain_each_result():
    fused, records = two_candidates()
    a, b = score_candidates(fused, records, now=NOW, context=CTX)
    assert set(a.parts) == {
        "bm25",
        "vector",
        "entity",
        "recency",
        "importance",
        "trust",
        "scope",
        "popularity",
        "time",
    }
    assert a.parts["bm25"] == pytest.approx(0.5)
    assert a.parts["vector"] == pytest.approx(0.5)
    assert a.parts["entity"] == 0.0
    assert a.parts["bm25"] + a.parts["vector"] + a.parts["entity"] == pytest.approx(a.relevance)
    assert b.parts == pytest.approx(
        {
            "bm25": (1 / 62) / (2 / 61),
            "vector": 0.0,
            "entity": 0.0,
            "recency": 0.5,
            "importance": 0.0,
            "trust": 0.5,
            "popularity": 1.0,
            "scope": 0.7,
            "time": 1.0,
        }
    )
    assert b.ranks == {BM25: 2}


def test_other_weights_change_the_order():
    fused, records = two_candidates()
    records["a"] = replace(records["a"], scope="project:other")
    only_popularity = Weights(0.0, 0.0, 0.0, 0.0, 1.0)
    ranked = score_candidates(fused, records, now=NOW, context=CTX, weights=only_popularity)
    assert [s.record.id for s in ranked] == ["b", "a"]


def test_fused_ids_without_a_record_are_left_out_and_do_not_shift_relevance():
    fused = rrf({BM25: ["gone", "b"]})
    (b,) = score_candidates(fused, {"b": rec("b")}, now=NOW, context=CTX)
    assert b.relevance == 1.0


def test_no_candidates_score_nothing():
    assert score_candidates([], {}, now=NOW, context=CTX) == []


def test_equal_scores_order_by_id():
    fused = rrf({BM25: ["n"], VECTOR: ["m"]})
    ranked = score_candidates(fused, {"n": rec("n"), "m": rec("m")}, now=NOW, context=CTX)
    assert [s.record.id for s in ranked] == ["m", "n"]
    assert ranked[0].score == ranked[1].score


def test_a_time_window_demotes_memories_outside_it():
    inside = rec("in", kind=Kind.EVENT, occurred_at=NOW - 1 * DAY)
    outside = rec("out", kind=Kind.EVENT, occurred_at=NOW - 40 * DAY)
    cue = time_cue("what happened yesterday", NOW)
    fused = rrf({BM25: ["out", "in"]})
    ranked = score_candidates(fused, {"in": inside, "out": outside}, now=NOW, context=CTX, cue=cue)
    assert [s.record.id for s in ranked] == ["in", "out"]
    assert ranked[1].parts["time"] == 0.5


# ---- MMR ----------------------------------------------------------------------------

SIMILAR = {frozenset("ab"): 0.95, frozenset("ac"): 0.1, frozenset("bc"): 0.1}


def sim(x: str, y: str) -> float:
    return SIMILAR[frozenset((x, y))]


SCORES = {"a": 0.9, "b": 0.85, "c": 0.6}


def test_mmr_picks_a_diverse_second_item():
    # b: 0.7·0.85 − 0.3·0.95 = 0.31; c: 0.7·0.6 − 0.3·0.1 = 0.39
    assert mmr(["a", "b", "c"], SCORES.__getitem__, sim) == ["a", "c", "b"]


def test_mmr_with_lambda_one_keeps_the_score_order():
    assert mmr(["a", "b", "c"], SCORES.__getitem__, sim, lambda_=1.0) == ["a", "b", "c"]


def test_mmr_limit():
    assert mmr(["a", "b", "c"], SCORES.__getitem__, sim, limit=2) == ["a", "c"]
    assert mmr(["a", "b", "c"], SCORES.__getitem__, sim, limit=0) == []
    assert mmr(["a", "b", "c"], SCORES.__getitem__, sim, limit=10) == ["a", "c", "b"]
    assert mmr([], SCORES.__getitem__, sim) == []


def test_mmr_ties_go_to_the_item_given_first():
    assert mmr(["y", "x", "z"], lambda _: 0.5, lambda _a, _b: 0.0) == ["y", "x", "z"]


@pytest.mark.parametrize("bad", [-0.1, 1.1])
def test_mmr_lambda_must_lie_in_zero_to_one(bad):
    with pytest.raises(Invalid):
        mmr(["a"], SCORES.__getitem__, sim, lambda_=bad)


def test_cosine():
    assert cosine([1.0, 0.0], [0.0, 1.0]) == 0.0
    assert cosine([1.0, 1.0], [2.0, 2.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [-1.0, 0.0]) == -1.0
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0
    with pytest.raises(Invalid):
        cosine([1.0], [1.0, 0.0])


def test_token_jaccard():
    assert tokens("The cat, the CAT!") == frozenset({"the", "cat"})
    assert jaccard(tokens("the cat sat"), tokens("The cat ran")) == 0.5
    assert jaccard(tokens(""), tokens("")) == 0.0
    assert jaccard(tokens("a b"), tokens("c d")) == 0.0


def test_similarity_uses_cosine_when_both_have_vectors_else_jaccard():
    similar = similarity_by_id(
        {"v1": [1.0, 0.0], "v2": [0.0, 1.0]},
        {"v1": "same words", "v2": "same words", "t": "same words here"},
    )
    assert similar("v1", "v2") == 0.0  # vectors win over identical text
    assert similar("v1", "t") == pytest.approx(2 / 3)  # one side has no vector
    assert similar("t", "missing") == 0.0


def test_diversify_breaks_up_paraphrases_without_vectors():
    ranked = [
        Scored(rec("p1", title="deploy", body="we deploy on friday"), 0.90, 1.0, {}, {}),
        Scored(rec("p2", title="deploy", body="we deploy on fridays"), 0.88, 1.0, {}, {}),
        Scored(rec("d", title="tests", body="run the unit tests first"), 0.70, 1.0, {}, {}),
    ]
    assert [s.record.id for s in diversify(ranked)] == ["p1", "d", "p2"]
    assert [s.record.id for s in diversify(ranked, lambda_=1.0)] == ["p1", "p2", "d"]


# ---- budget -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "n"), [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("é" * 8, 2)]
)
def test_estimate_tokens_is_chars_over_four_rounded_up(text, n):
    assert estimate_tokens(text) == n


ITEM_COST = {"A": 80, "B": 30, "C": 10, "D": 50, "E": 50}


def cost(item: str) -> int:
    return ITEM_COST[item]


def test_no_budget_keeps_everything():
    assert pack(["A", "B"], None, cost) == (("A", "B"), (), 110)


def test_a_zero_budget_keeps_nothing():
    assert pack(["A", "B"], 0, cost) == ((), ("A", "B"), 0)
    assert pack([], 0, cost) == ((), (), 0)


def test_packing_keeps_whole_items_best_first_and_fills_the_gaps():
    kept, omitted, used = pack(["A", "B", "C"], 100, cost)
    assert (kept, omitted, used) == (("A", "C"), ("B",), 90)


def test_everything_that_fits_is_kept():
    assert pack(["A", "B", "C"], 120, cost) == (("A", "B", "C"), (), 120)


def test_a_decision_is_not_the_first_dropped():
    protected = {"D"}.__contains__
    # A fact ranked above the decision is dropped first; the decision keeps its place.
    kept, omitted, used = pack(["A", "D"], 90, cost, priority=lambda i: int(protected(i)))
    assert (kept, omitted, used) == (("D",), ("A",), 50)


def test_protected_items_are_dropped_lowest_ranked_first_when_only_they_remain():
    kept, omitted, used = pack(["D", "E"], 60, cost, priority=lambda _: 1)
    assert (kept, omitted, used) == (("D",), ("E",), 50)


def test_negative_budgets_and_costs_are_refused():
    with pytest.raises(Invalid):
        pack(["A"], -1, cost)
    with pytest.raises(Invalid):
        pack(["A"], 10, lambda _: -1)


def test_kind_priority_protects_decisions_and_constraints():
    assert {k for k in Kind if kind_priority(k)} == {Kind.DECISION, Kind.CONSTRAINT}


def test_pack_results_keeps_the_decision_over_a_higher_scored_fact():
    def scored(memory_id: str, kind: Kind, score: float) -> Scored:
        return Scored(rec(memory_id, kind=kind, title="t" * 3, body="b" * 36), score, 1.0, {}, {})

    results = [
        scored("fact", Kind.FACT, 0.9),
        scored("constraint", Kind.CONSTRAINT, 0.5),
        scored("lesson", Kind.LESSON, 0.4),
        scored("decision", Kind.DECISION, 0.3),
    ]
    kept, omitted, used = pack_results(results, 25)  # each costs ceil(40 / 4) = 10
    assert [s.record.id for s in kept] == ["constraint", "decision"]
    assert [s.record.id for s in omitted] == ["fact", "lesson"]
    assert used == 20
    kept, _, used = pack_results(results, 3, count_tokens=lambda _: 1)
    assert [s.record.id for s in kept] == ["fact", "constraint", "decision"]
    assert used == 3


# ---- time cues ----------------------------------------------------------------------

WEDNESDAY = datetime(2023, 6, 14, 15, 30, tzinfo=UTC)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("what did we ship yesterday", day(2023, 6, 13), day(2023, 6, 14)),
        ("today's standup", day(2023, 6, 14), day(2023, 6, 15)),
        ("the day before yesterday", day(2023, 6, 12), day(2023, 6, 13)),
        ("decisions from last week", day(2023, 6, 5), day(2023, 6, 12)),
        ("this week", day(2023, 6, 12), day(2023, 6, 19)),
        ("last month", day(2023, 5, 1), day(2023, 6, 1)),
        ("last year", day(2022, 1, 1), day(2023, 1, 1)),
        ("in May 2023", day(2023, 5, 1), day(2023, 6, 1)),
        ("during May, 2021", day(2021, 5, 1), day(2021, 6, 1)),
        ("in May", day(2023, 5, 1), day(2023, 6, 1)),
        ("in December", day(2022, 12, 1), day(2023, 1, 1)),
        ("on 8 May 2023", day(2023, 5, 8), day(2023, 5, 9)),
        ("May 8th, 2023", day(2023, 5, 8), day(2023, 5, 9)),
        ("the 8th of May", day(2023, 5, 8), day(2023, 5, 9)),
        ("on 20 Dec", day(2022, 12, 20), day(2022, 12, 21)),
        ("2023-05-08", day(2023, 5, 8), day(2023, 5, 9)),
        ("notes 2023-05", day(2023, 5, 1), day(2023, 6, 1)),
        ("two weeks ago", day(2023, 5, 29), day(2023, 6, 5)),
        ("3 days ago", day(2023, 6, 11), day(2023, 6, 12)),
        ("a couple of months ago", day(2023, 4, 1), day(2023, 5, 1)),
        ("in 2022", day(2022, 1, 1), day(2023, 1, 1)),
        ("last Friday", day(2023, 6, 9), day(2023, 6, 10)),
        ("last Wednesday", day(2023, 6, 7), day(2023, 6, 8)),
        ("on Wednesday", day(2023, 6, 14), day(2023, 6, 15)),
        ("what changed in the last 7 days", day(2023, 6, 7), day(2023, 6, 15)),
        ("over the past two weeks", day(2023, 5, 31), day(2023, 6, 15)),
        ("the previous 3 months", day(2023, 3, 14), day(2023, 6, 15)),
        ("anything from the past month", day(2023, 5, 14), day(2023, 6, 15)),
        ("past year", day(2022, 6, 14), day(2023, 6, 15)),
        ("the last couple of days", day(2023, 6, 12), day(2023, 6, 15)),
    ],
)
def test_time_cues_become_windows(query, start, end):
    cue = time_cue(query, WEDNESDAY)
    assert cue.window == (start, end)
    assert cue.asks_when is False


@pytest.mark.parametrize(
    "query",
    [
        "When did Caroline go to the LGBTQ support group?",
        "when was the schema migrated",
        "What date is the release?",
        "how long ago did we switch to uv",
    ],
)
def test_questions_about_time_are_flagged(query):
    assert time_cue(query, WEDNESDAY) == TimeCue(asks_when=True)


def test_a_when_question_with_a_window_keeps_both():
    cue = time_cue("When did Melanie paint in May 2023?", WEDNESDAY)
    assert cue == TimeCue((day(2023, 5, 1), day(2023, 6, 1)), True, "in May 2023")


@pytest.mark.parametrize(
    "query", ["", "use uv for installs", "may I ask", "2023-02-30", "when I run tests", "port 2023"]
)
def test_no_cue(query):
    assert time_cue(query, WEDNESDAY) == NO_CUE


def test_the_first_cue_wins():
    assert time_cue("yesterday, not in May 2023", WEDNESDAY).phrase == "yesterday"


def test_a_trailing_month_ends_on_the_last_day_of_a_shorter_month():
    now = datetime(2023, 3, 31, 12, 0, tzinfo=UTC)
    assert time_cue("the past month", now).window == (day(2023, 2, 28), day(2023, 4, 1))
    assert time_cue("the last 1 year", datetime(2024, 2, 29, tzinfo=UTC)).window == (
        day(2023, 2, 28),
        day(2024, 3, 1),
    )


def test_windows_follow_the_time_zone_of_now():
    tokyo = timezone(timedelta(hours=9))
    now = datetime(2023, 6, 15, 1, 0, tzinfo=tokyo)  # still the 14th in UTC
    start, end = time_cue("yesterday", now).window or (None, None)
    assert (start, end) == (
        datetime(2023, 6, 14, tzinfo=tokyo),
        datetime(2023, 6, 15, tzinfo=tokyo),
    )


def test_time_fit():
    dated = rec("a", occurred_at=day(2023, 6, 13) + timedelta(hours=9))
    undated = rec("b", created_at=day(2023, 1, 1))
    yesterday = time_cue("yesterday", WEDNESDAY)
    when = time_cue("when did it happen", WEDNESDAY)
    assert time_fit(dated, yesterday) == 1.0
    assert time_fit(undated, yesterday) == 0.5
    assert time_fit(dated, when) == 1.0
    assert time_fit(undated, when) == 0.8
    assert time_fit(undated, NO_CUE) == 1.0


# ---- named speakers ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "said_by"),
    [
        ("Maria: I just started aerial yoga.", "Maria"),
        ("Dr. Chen: take two a day.", "Dr. Chen"),
        ("Jean-Luc Picard: engage.", "Jean-Luc Picard"),
        ("maria: lower case is no speaker", None),
        ("Use uv: it is faster.", None),  # four words before the colon
        ("Deploys freeze at 3:00 on Fridays.", None),
        ("Note:the colon needs a space after it", None),
    ],
)
def test_speaker(text, said_by):
    assert speaker(text) == said_by


def test_named_speakers_are_whole_words_written_as_the_speaker_is():
    speakers = frozenset({"Maria", "John", "Al", "Decision"})
    assert named("What yoga has Maria practised?", speakers) == {"Maria"}
    assert named("Did Maria and John meet?", speakers) == {"Maria", "John"}
    assert named("Which algorithm did we pick?", speakers) == frozenset()
    # A note headed "Decision:" is not said by anyone a question about a decision names.
    assert named("Which decision did we make on caching?", speakers) == frozenset()


def test_a_named_speakers_lines_pass_the_others_lines():
    records = {
        "ask": rec("ask", body="John: What kind of yoga do you practise, Maria?"),
        "answer": rec("answer", body="Maria: Aerial yoga, mostly."),
        "note": rec("note", body="Yoga studio opens at nine."),
    }
    fused = [
        Fused("ask", 0.9, {BM25: 1}, {BM25: 0.6, VECTOR: 0.3}),
        Fused("note", 0.7, {BM25: 2}, {BM25: 0.7}),
        Fused("answer", 0.5, {BM25: 3}, {BM25: 0.5}),
    ]
    out = weigh_lines(fused, records, "What yoga does Maria practise?", 0.3, 1.0)
    assert [f.id for f in out] == ["note", "answer", "ask"]
    ask = out[2]
    assert ask.score == pytest.approx(0.27)
    assert ask.contributions == pytest.approx({BM25: 0.18, VECTOR: 0.09})
    assert ask.ranks == {BM25: 1}
    # Off at 1, and nothing moves when the query names no speaker.
    assert weigh_lines(fused, records, "What yoga does Maria practise?", 1.0, 1.0) == fused
    assert weigh_lines(fused, records, "Which yoga classes are there?", 0.3, 1.0) == fused


@pytest.mark.parametrize(
    ("text", "asking"),
    [
        ("Maria: What kind of yoga is it?", True),
        ('He asked "which region?"', True),
        ("Which region (staging?) ", True),
        ("Wow, what a view! I went hiking there.", False),
        ("Is it ready? It is now.", False),
    ],
)
def test_asks(text, asking):
    assert asks(text) == asking


def test_a_memory_that_asks_falls_behind_one_that_states():
    records = {
        "ask": rec("ask", body="Which region should the staging cluster run in?"),
        "tell": rec("tell", body="The staging cluster runs in Frankfurt."),
    }
    fused = [
        Fused("ask", 1.0, {BM25: 1}, {BM25: 0.6, VECTOR: 0.4}),
        Fused("tell", 0.7, {BM25: 2}, {BM25: 0.7}),
    ]
    out = weigh_lines(fused, records, "", 1.0, 0.6)
    assert [f.id for f in out] == ["tell", "ask"]
    assert out[1].score == pytest.approx(0.6)
    assert out[1].contributions == pytest.approx({BM25: 0.36, VECTOR: 0.24})
    assert weigh_lines(fused, records, "", 1.0, 1.0) == fused
