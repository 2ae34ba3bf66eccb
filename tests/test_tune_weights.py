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
from memlane import Invalid, Memory, config
from memlane.evaluation import tuning
from memlane.retrieve.score import DEFAULT_WEIGHTS, Weights, terms
from test_gold_recall import Gold

# The gold store, built on its pinned clock (fixtures of test_gold_recall, used here too).
clock = test_gold_recall.clock
gold = test_gold_recall.gold

Run = Callable[..., CliResult]

# ---- pure -------------------------------------------------------------------------------


def test_every_step_moves_one_step_of_weight_and_keeps_the_sum() -> None:
    found = tuning.steps(DEFAULT_WEIGHTS)
    assert len(found) == 20  # every term has weight to give to each of the four others
    for weights in found:
        values = [getattr(weights, t) for t in Weights.__struct_fields__]
        assert math.isclose(math.fsum(values), 1.0)
        moved = [
            v - getattr(DEFAULT_WEIGHTS, t)
            for t, v in zip(Weights.__struct_fields__, values, strict=True)
        ]
        assert sorted(round(m, 6) for m in moved if abs(m) > 1e-9) == [-tuning.STEP, tuning.STEP]
    no_popularity = Weights(0.6, 0.2, 0.1, 0.1, 0.0)
    assert all(w.popularity >= 0 for w in tuning.steps(no_popularity))
    assert len(tuning.steps(no_popularity)) == 16  # popularity has nothing to give


def _probe(rows: Sequence[Sequence[float]], expected: int) -> tuning.Probe:
    return tuning.Probe(np.array(rows, dtype=np.float64), (expected,))


def test_the_climb_moves_weight_to_the_term_that_ranks_the_expected_first() -> None:
    # Row 0 is more relevant; row 1, expected, more important.
    probes = [_probe([[1.0, 0.1, 0, 0, 0], [0.7, 1.0, 0, 0, 0]], 1)] * 3
    assert tuning.mean_score(probes, DEFAULT_WEIGHTS, 5) == 0.5
    climbed = tuning.climb(probes, DEFAULT_WEIGHTS, 5)
    assert tuning.mean_score(probes, climbed, 5) == 1.0
    assert climbed.importance > DEFAULT_WEIGHTS.importance
    assert tuning.climb(probes[:0], DEFAULT_WEIGHTS, 5) == DEFAULT_WEIGHTS


def test_a_rank_past_k_scores_nothing() -> None:
    assert tuning.reciprocal_rank(["a", "b", "c"], ["c"], 3) == pytest.approx(1 / 3)
    assert tuning.reciprocal_rank(["a", "b", "c"], ["c"], 2) == 0.0
    assert tuning.reciprocal_rank(["a", "b"], ["b", "a"], 2) == 1.0
    probe = _probe([[1, 0, 0, 0, 0], [0.5, 0, 0, 0, 0]], 1)
    assert tuning.probe_score(probe, np.array([1.0, 0, 0, 0, 0]), 1) == 0.0


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


def test_the_setting_line_is_checked_as_the_setting_parses_it() -> None:
    assert config.save_setting("recall_weights", "0.6,0.1,0.1,0.1,0.1") == (
        "MEMLANE_RECALL_WEIGHTS=0.6,0.1,0.1,0.1,0.1"
    )
    with pytest.raises(Invalid, match="MEMLANE_RECALL_WEIGHTS"):
        config.save_setting("recall_weights", "0.6,0.4")


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


def test_candidates_rescored_under_the_current_weights_rank_as_recall(gold: Gold) -> None:
    mem = gold.reader("coder", ("alpha", "main"))
    result = mem.recall("invoice PDF rendering", count=False, limit=10)
    for scored in result.candidates:
        assert math.isclose(
            math.fsum(
                t * w for t, w in zip(terms(scored), [0.5, 0.15, 0.15, 0.1, 0.1], strict=True)
            ),
            scored.score,
        )


def test_tuning_on_the_gold_set_reports_held_out_folds_never_fitted_on_their_cases(
    gold: Gold, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = gold.reader("coder", ("alpha", "main"))
    cases = _gold_cases(gold)
    assert len(cases) >= 30
    climbs: list[int] = []
    real_climb = tuning.climb

    def counting(probes: Sequence[tuning.Probe], start: Weights, k: int) -> Weights:
        climbs.append(len(probes))
        return real_climb(probes, start, k)

    monkeypatch.setattr(tuning, "climb", counting)
    result = tuning.tune(mem, cases, k=5, folds=5)
    # One climb on every case (the proposal), then one per fold on the other folds.
    sizes = [sum(1 for i in range(len(cases)) if i % 5 != f) for f in range(5)]
    assert climbs == [len(cases), *sizes]
    direct = [
        tuning.reciprocal_rank(
            [h.record.id for h in _read(gold, c).recall(c.query, limit=5, count=False,
                                                         **c.options()).hits],
            c.expect, 5,
        )
        for c in cases
    ]  # fmt: skip
    assert result.current_score == pytest.approx(math.fsum(direct) / len(direct))
    assert result.current == DEFAULT_WEIGHTS and result.cases == len(cases)
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
    assert (
        report["improves"] and report["applied"] == f"MEMLANE_RECALL_WEIGHTS={report['proposed']}"
    )
    assert Weights(*(float(v) for v in str(report["proposed"]).split(","))).importance > 0.15


def test_tune_weights_refuses_too_few_cases_and_bad_gold(run: Run, tmp_path: Path) -> None:
    few = run("tune-weights")
    assert few.exit_code == 2 and "needs at least 5 cases, found 0" in few.stderr
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
