"""tune-weights: the climb and the cross-validation pure, the repository's gold set
(tests/gold_cases.py) on its pinned clock, and the command on a small store."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

import test_gold_recall
from conftest import CliResult
from gold_cases import CASES, Case
from memlane import Invalid, Memory, settings_file
from memlane.evaluation import climb, tuning
from memlane.evaluation.climb import Mix
from memlane.retrieve.fuse import LANE_WEIGHTS
from memlane.retrieve.score import DEFAULT_WEIGHTS, Weights
from test_gold_recall import Gold

# The gold store, built on its pinned clock (fixtures of test_gold_recall, used here too).
clock = test_gold_recall.clock
gold = test_gold_recall.gold

Run = Callable[..., CliResult]

# ---- pure -------------------------------------------------------------------------------

CURRENT = Mix.of(DEFAULT_WEIGHTS, LANE_WEIGHTS)


def test_every_step_moves_one_weight_step_and_keeps_the_score_weights_summing_to_1() -> None:
    found = climb.steps(CURRENT)
    moves = [m for m in found if m.lanes == CURRENT.lanes]
    assert len(moves) == 20  # every term has weight to give to each of the four others
    for mix in moves:
        values = [getattr(mix.weights, t) for t in Weights.__struct_fields__]
        assert math.isclose(math.fsum(values), 1.0)
        old = [getattr(DEFAULT_WEIGHTS, t) for t in Weights.__struct_fields__]
        moved = [round(v - o, 6) for v, o in zip(values, old, strict=True) if abs(v - o) > 1e-9]
        assert sorted(moved) == [-climb.STEP, climb.STEP]
    lanes = [m.lanes for m in found if m.weights == DEFAULT_WEIGHTS]
    assert len(lanes) == 6 and (0.7, 0.4, 0.2) in lanes and (0.6, 0.4, 0.1) in lanes
    no_entity = Mix(Weights(0.6, 0.2, 0.1, 0.1, 0.0), (0.6, 0.4, 0.0))
    assert all(m.weights.popularity >= 0 for m in climb.steps(no_entity))
    assert len(climb.steps(no_entity)) == 16 + 4  # nothing to give; a lane that never ran


def _probe(others: list[list[float]], expected: int, bm25: list[float]) -> climb.Probe:
    """Candidates found by the keyword lane alone, with these other terms."""
    n = len(others)
    lanes = np.array([[b, 0, 0, 0] for b in bm25], dtype=np.float64)
    factor = np.ones(n)
    return climb.Probe(
        lanes, np.array(others, dtype=np.float64), factor, (0.6, 0.4, 0.2), (expected,)
    )


def test_the_climb_moves_weight_to_the_term_that_ranks_the_expected_first() -> None:
    # Row 0 is more relevant; row 1, expected, far more important.
    probes = [_probe([[0.1, 0, 0, 0], [1.0, 0, 0, 0]], 1, [0.6, 0.2])] * 3
    assert climb.objective(probes, CURRENT, 5)[0] == 0.5
    climbed = climb.climb(probes, CURRENT, 5)
    assert climb.objective(probes, climbed, 5)[0] == 1.0
    assert climbed.weights.importance > DEFAULT_WEIGHTS.importance
    assert climb.climb([], CURRENT, 5) == CURRENT


def test_a_lane_weight_rescales_that_lanes_share_and_relevance_is_relative() -> None:
    lanes = np.array([[0.6, 0.0, 0, 0], [0.0, 0.4, 0, 0]], dtype=np.float64)
    p = climb.Probe(lanes, np.zeros((2, 4)), np.ones(2), (0.6, 0.4, 0.2), (1,))
    relevance_only = Weights(1.0, 0.0, 0.0, 0.0, 0.0)
    assert list(climb.scores(p, Mix(relevance_only, (0.6, 0.4, 0.2)))) == [
        1.0,
        pytest.approx(2 / 3),
    ]
    assert list(climb.scores(p, Mix(relevance_only, (0.3, 0.4, 0.2)))) == [pytest.approx(0.75), 1.0]


def test_a_rank_past_k_scores_nothing() -> None:
    assert climb.reciprocal_rank(["a", "b", "c"], ["c"], 3) == pytest.approx(1 / 3)
    assert climb.reciprocal_rank(["a", "b", "c"], ["c"], 2) == 0.0
    assert climb.reciprocal_rank(["a", "b"], ["b", "a"], 2) == 1.0
    p = _probe([[0, 0, 0, 0], [0, 0, 0, 0]], 1, [0.6, 0.3])
    assert climb.rank_score(p, climb.scores(p, CURRENT), 1) == 0.0


def test_gold_lines_are_checked_line_by_line() -> None:
    good = '{"id": "a", "query": "q", "expect": ["m-1"], "project": "p"}'
    [case] = tuning.load_cases([good, "  "], "gold.jsonl")
    assert (case.expect, case.project, case.source) == (("m-1",), "p", "gold")
    for bad, why in (
        ('{"id": "a", "query": "q"}', "line 2: Object missing required field `expect`"),
        ('{"id": "a", "query": "q", "expect": [], "x": 1}', "line 2: Object contains unknown"),
        ('{"id": "a", "query": " ", "expect": ["m-1"]}', "line 2: a case needs a query"),
        ("not json", "line 2: not a JSON object"),
    ):
        with pytest.raises(Invalid, match=f"gold.jsonl {why}"):
            tuning.load_cases([good, bad], "gold.jsonl")


def test_a_proposed_setting_is_checked_as_the_setting_parses_it() -> None:
    setting = settings_file.check_known("recall_weights")
    assert settings_file.check_value(setting, "0.6,0.1,0.1,0.1,0.1")
    with pytest.raises(Invalid, match=r"recall_weights = '0\.6,0\.4' is not valid"):
        settings_file.check_value(setting, "0.6,0.4")


# ---- the repository's gold set ------------------------------------------------------------


def _gold_cases(gold: Gold) -> list[tuning.GoldCase]:
    """The gold cases that name what should rank first or near it, read by the agent
    that wrote the store (the cases of another agent's private memories are not it)."""
    found = []
    for case in CASES:
        expect = [case.expect_top] if case.expect_top else list(case.expect_in_top_k)
        if not expect or case.passive or case.max_tokens or case.include_private:
            continue
        found.append(_converted(case, [gold.ids[k] for k in expect if k]))
    return found


def _converted(case: Case, expect: list[str]) -> tuning.GoldCase:
    project, branch = case.context
    return tuning.GoldCase(
        id=case.id,
        query=case.query,
        expect=tuple(expect),
        scope=case.scope,
        as_of=case.as_of.isoformat() if case.as_of else None,
        kind=case.kind,
        project=project,
        branch=branch,
    )


def test_candidates_rescored_under_the_current_mix_score_as_recall_scored_them(
    gold: Gold,
) -> None:
    mem = gold.reader("coder", ("alpha", "main"))
    for query in ("invoice PDF rendering", "who approves schema migrations", "RetryPolicy"):
        result = mem.recall(query, count=False, limit=10)
        p = climb.probe(result.candidates, CURRENT, [])
        by_tie = sorted(
            result.candidates, key=lambda s: (-s.relevance, s.record.dedup_hash, s.record.id)
        )
        assert len(by_tie) > 3
        assert climb.scores(p, CURRENT) == pytest.approx([s.score for s in by_tie])


def test_tuning_on_the_gold_set_reports_held_out_folds_never_fitted_on_their_cases(
    gold: Gold, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = gold.reader("coder", ("alpha", "main"))
    cases = _gold_cases(gold)
    assert len(cases) >= 30
    climbs: list[int] = []
    real_climb = tuning.climb

    def counting(probes: Sequence[climb.Probe], start: Mix, k: int) -> Mix:
        climbs.append(len(probes))
        return real_climb(probes, start, k)

    monkeypatch.setattr(tuning, "climb", counting)
    result = tuning.tune(mem, cases, k=5, folds=5)
    # One climb on every case (the proposal), then one per fold on the other folds.
    sizes = [sum(1 for i in range(len(cases)) if i % 5 != f) for f in range(5)]
    assert climbs == [len(cases), *sizes]
    direct = [
        climb.reciprocal_rank(
            [h.record.id for h in _read(gold, c).recall(c.query, limit=5, count=False,
                                                         **c.options()).hits],
            c.expect, 5,
        )
        for c in cases
    ]  # fmt: skip
    assert result.current_score == pytest.approx(math.fsum(direct) / len(direct))
    assert result.current == CURRENT and result.cases == len(cases)
    assert 0.0 <= result.held_out_score <= 1.0
    assert mem.context.project == "alpha" and mem.recall_settings.weights == DEFAULT_WEIGHTS


def _read(gold: Gold, case: tuning.GoldCase) -> Memory:
    return gold.reader("coder", (case.project or "alpha", case.branch or "main"))


# ---- the command --------------------------------------------------------------------------


@pytest.fixture
def misranked(mem: Memory) -> list[str]:
    """Cases the default weights rank second: a less relevant but important, grounded
    memory is the one wanted."""
    lines = []
    for n in range(6):
        decoy = f"alpha{n} beta{n} gamma{n} delta{n} notes from a chat"
        mem.add(decoy, importance=1, signal="none", session_id=f"d{n}")
        wanted = mem.add(
            f"alpha{n} gamma{n}: the decision", importance=10, signal="test", session_id=f"w{n}"
        ).id
        query = f"alpha{n} beta{n} gamma{n} delta{n}"
        case = {"id": f"c{n}", "query": query, "expect": [wanted], "project": "proj"}
        lines.append(json.dumps({**case, "branch": "main"}))
    return lines


def test_tune_weights_proposes_and_applies_what_beats_the_current_weights(
    run: Run, misranked: list[str], tmp_path: Path
) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text("\n".join(misranked) + "\n", encoding="utf-8")
    shown = run("tune-weights", "--gold", str(path), "--no-feedback")
    assert shown.exit_code == 0, shown.stderr
    assert "held out" in shown.stdout and "to use it: MEMLANE_RECALL_WEIGHTS=" in shown.stdout
    report = run("tune-weights", "--gold", str(path), "--json", "--apply").json()
    assert isinstance(report, dict)
    assert report["current_score"] == 0.5 and report["held_out_score"] == 1.0
    proposed = report["proposed"]
    assert isinstance(proposed, dict) and report["improves"]
    [applied] = report["applied"]  # the lane weights are unchanged: not applied
    assert applied["name"] == "recall_weights" and not applied["overridden"]
    assert applied["value"] == proposed["recall_weights"]
    assert proposed["recall_lane_weights"] == "0.6,0.4,0.2"
    # Written to the settings file, which every later command reads.
    kept = run("settings", "get", "recall_weights", "--json").json()
    assert isinstance(kept, dict) and kept["source"] == "file", kept
    assert Weights(*(float(v) for v in proposed["recall_weights"].split(","))).importance > 0.15


def test_tune_weights_refuses_too_few_cases_and_bad_gold(run: Run, tmp_path: Path) -> None:
    few = run("tune-weights")
    assert few.exit_code == 2 and "needs at least 5 cases, found 0" in few.stderr
    elsewhere = tmp_path / "elsewhere.jsonl"
    line = {"id": "c", "query": "q", "expect": ["m-nothere"]}
    elsewhere.write_text(json.dumps(line) + "\n", encoding="utf-8")
    few = run("tune-weights", *["--gold", str(elsewhere)] * 5)
    assert few.exit_code == 2 and "gold case c: no memory with id 'm-nothere'" in few.stderr
    assert run("tune-weights", "--folds", "1").stderr.endswith("--folds must be at least 2\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    result = run("tune-weights", "--gold", str(bad))
    assert result.exit_code == 2 and f"{bad} line 1:" in result.stderr and result.stdout == ""


def test_feedback_makes_cases_of_applied_memories(mem: Memory) -> None:
    kept = mem.add("Run the linters before pushing.", title="Lint first").id
    broken = mem.add("Skip the tests on Fridays.", title="Friday tests").id
    for memory_id, applied in ((kept, True), (kept, True), (broken, True), (broken, False)):
        mem.feedback(memory_id, applied=applied)
    [case] = tuning.feedback_cases(tuning.live_records(mem))
    assert (case.query, case.expect, case.source) == ("Lint first", (kept,), "feedback")
    assert (case.project, case.branch) == ("proj", "main")
