"""The LoCoMo evaluation: evidence normalisation, metrics on hand-made rankings, and a
real run over one conversation of the development split."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from memlane import Memory
from memlane.errors import Invalid
from memlane.evaluation.locomo import (
    Question,
    Scores,
    cross_validate,
    fold_mean,
    off_topic,
    parse_date,
    questions_of,
    score,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
NO_DATA = f"needs the LoCoMo development split at {DATA} (../shared is not in a clone)"


def test_evidence_ids_are_normalised_and_unknown_ones_dropped():
    sample = {
        "sample_id": "c1",
        "qa": [
            {"question": "q1", "category": 1, "evidence": ["D8:6; D9:17"]},
            {"question": "q2", "category": 2, "evidence": ["D:1:3", "D30:05"]},
            {"question": "q3", "category": 4, "evidence": ["D99:1"]},
        ],
    }
    known = {"D8:6", "D9:17", "D1:3", "D30:5"}
    questions = questions_of(sample, known)
    assert [(q.text, q.evidence) for q in questions] == [
        ("q1", ("D8:6", "D9:17")),
        ("q2", ("D1:3", "D30:5")),
    ]


def test_session_dates_are_read():
    assert parse_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56)
    with pytest.raises(Invalid):
        parse_date("sometime in May")


def test_metrics_on_a_hand_made_ranking():
    question = Question("c1", "q", 1, ("D1:1", "D1:2"))
    row = score(question, ["D9:9", "D1:2", "D8:8", "D1:1"], k=10)
    assert row["r@5"] == 1.0 and row["hit@10"] == 1.0
    assert row["mrr"] == 0.5
    ideal = 1 + 1 / 1.584962500721156
    assert row["ndcg@10"] == pytest.approx((1 / 1.584962500721156 + 1 / 2.321928094887362) / ideal)
    missed = score(question, ["D9:9"], k=10)
    assert (missed["r@10"], missed["mrr"], missed["hit@10"]) == (0.0, 0.0, 0.0)
    scores = Scores([row, missed])
    assert scores.summary((1,))["mrr"] == 0.25


def test_folds_are_the_conversations_and_their_mean_counts_each_once():
    question = Question("c1", "q", 1, ("D1:1",))
    hit, miss = score(question, ["D1:1"], k=10), score(question, ["D9:9"], k=10)
    other = score(Question("c2", "q", 1, ("D1:1",)), ["D9:9", "D1:1"], k=10)
    folds = Scores([hit, miss, other]).folds((1,))
    assert list(folds) == ["c1", "c2"]
    assert (folds["c1"]["mrr"], folds["c2"]["mrr"]) == (0.5, 0.5)
    mean = fold_mean(folds)
    assert mean["mrr"] == 0.5 and mean["folds"] == 2.0  # pooled it would be 1.5 / 3
    assert (mean["r@10 min"], mean["r@10 max"]) == (0.5, 1.0)
    assert fold_mean({}) == {}


def test_cross_validation_chooses_each_fold_on_the_others():
    def rows(conversation: str, hit: bool) -> list[dict]:
        question = Question(conversation, "q", 1, ("D1:1",))
        return [score(question, ["D1:1"] if hit else ["D9:9"], k=10)]

    # "a" finds c1 and c2, "b" only c3. Held out c3, "a" wins the others and scores 0
    # on c3; held out c1 (or c2), the two tie on the others and the first is chosen.
    a = Scores([*rows("c1", True), *rows("c2", True), *rows("c3", False)])
    b = Scores([*rows("c1", False), *rows("c2", False), *rows("c3", True)])
    held = {h.conversation: h for h in cross_validate({"a": a, "b": b})}
    assert {c: h.chosen for c, h in held.items()} == {"c1": "a", "c2": "a", "c3": "a"}
    assert held["c3"].figures["r@10"] == 0.0 and held["c1"].figures["r@10"] == 1.0
    assert cross_validate({}) == []


def test_off_topic_questions_count_as_silence_not_as_recall():
    own = score(Question("c1", "q", 1, ("D1:1",)), ["D1:1"], k=10)
    asked = Question("c2", "other", 1, ("D1:1",))
    quiet, noisy = off_topic(asked, "c1", []), off_topic(asked, "c1", ["D3:4"])
    summary = Scores([own, quiet, noisy, noisy]).summary((1,))
    assert summary["r@10"] == 1.0 and summary["questions"] == 1.0
    assert (summary["silent"], summary["off-topic"]) == (pytest.approx(1 / 3), 3.0)
    assert "silent" not in Scores([own]).summary((1,))
    assert fold_mean(Scores([own, quiet]).folds((1,)))["silent"] == 1.0


def test_tuning_for_silence_takes_the_quietest_settings_within_the_cost_of_the_best():
    def rows(conversation: str, hit: float, silent: int) -> list[dict]:
        question = Question(conversation, "q", 1, ("D1:1", "D1:2"))
        found = ["D1:1", "D1:2"][: int(hit * 2)]
        asked = Question("other", "q", 1, ("D1:1",))
        return [score(question, found, k=10)] + [
            off_topic(asked, conversation, [] if i < silent else ["D1:1"]) for i in range(4)
        ]

    # "loud" finds everything and says nothing is off; "quiet" silences most off-topic
    # questions and loses half a fold's recall; "floor" silences half and loses nothing.
    loud = Scores([r for c in ("c1", "c2", "c3") for r in rows(c, 1.0, 0)])
    quiet = Scores([r for c in ("c1", "c2", "c3") for r in rows(c, 0.5, 4)])
    floor = Scores([r for c in ("c1", "c2", "c3") for r in rows(c, 1.0, 2)])
    results = {"loud": loud, "quiet": quiet, "floor": floor}
    chosen = {h.chosen for h in cross_validate(results, objective="silence")}
    assert chosen == {"floor"}
    assert {h.chosen for h in cross_validate(results)} == {"loud"}  # quality: the first best
    with pytest.raises(Invalid, match="objective"):
        cross_validate(results, objective="loudness")


@pytest.mark.skipif(not DATA.exists(), reason=NO_DATA)
def test_each_store_is_asked_the_other_conversations_questions(run, tmp_path):
    out = tmp_path / "rows.jsonl"
    result = run("eval", "locomo", "--data", str(DATA), "--conversations", "2",
                 "--mode", "keyword", "--folds", "--out", str(out), "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    first, second = (v for name, v in report.items() if name.startswith("fold conv"))
    assert (first["off-topic"], second["off-topic"]) == (second["questions"], first["questions"])
    # Keyword search is silent only when no word of the question matches.
    asked = [json.loads(line) for line in out.read_text().splitlines()]
    asked = [r for r in asked if r.get("off_topic") and r["category"] in (1, 2, 3, 4)]
    assert {r["asked_of"] != r["conversation"] for r in asked} == {True}
    silent = sum(r["silent"] for r in asked) / len(asked)
    assert report["headline (1-4)"]["silent"] == pytest.approx(silent)
    assert silent < 0.2
    quiet = run("eval", "locomo", "--data", str(DATA), "--conversations", "2",
                "--mode", "keyword", "--no-off-topic", "--json")  # fmt: skip
    assert "silent" not in json.loads(quiet.stdout)["headline (1-4)"]


def test_a_grid_may_name_one_lanes_fusion_weight():
    from memlane.cli.evaluate import _grid_settings
    from memlane.retrieve.recall import RecallOptions

    base = RecallOptions()
    settings = _grid_settings(base, ["lane_weights.bm25=0.5,0.7", "mmr_lambda=none"])
    assert list(settings) == [
        "lane_weights.bm25=0.5 mmr_lambda=None",
        "lane_weights.bm25=0.7 mmr_lambda=None",
    ]
    chosen = settings["lane_weights.bm25=0.7 mmr_lambda=None"]
    assert chosen.lane_weights == {**base.lane_weights, "bm25": 0.7}
    assert chosen.mmr_lambda is None and base.lane_weights["bm25"] == 0.6


def test_a_bad_grid_is_refused_in_one_line(run, tmp_path):
    data = tmp_path / "tiny.json"
    data.write_text("[]")
    for spec in ("mmr_lambda", "nonsense=1,2", "lane_weights=1", "mmr_lambda=high",
                 "lane_weights.nope=1", "lane_weights.bm25"):  # fmt: skip
        result = run("eval", "locomo", "--data", str(data), "--grid", spec)
        assert result.exit_code == 2 and "--grid" in result.stderr, (spec, result.stderr)
    result = run(
        "eval", "locomo", "--data", str(data), "--grid", "mmr_lambda=1", "--mode", "keyword"
    )
    assert result.exit_code == 2


@pytest.mark.skipif(not DATA.exists(), reason=NO_DATA)
def test_a_real_run_over_one_conversation(run, tmp_path):
    out = tmp_path / "rows.jsonl"
    result = run(
        "eval",
        "locomo",
        "--data",
        str(DATA),
        "--mode",
        "keyword",
        "--conversations",
        "1",
        "--out",
        str(out),
        "--folds",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    headline = report["headline (1-4)"]
    assert headline["questions"] == sum(1 for r in rows if r["category"] in (1, 2, 3, 4)) > 100
    # Keyword search alone must beat chance by far on its own conversation.
    assert headline["r@10"] > 0.4
    [fold] = [v for name, v in report.items() if name.startswith("fold conv")]
    assert fold == headline and report["fold mean"]["r@10"] == headline["r@10"]


def _up_to_ties(ranked: list[tuple[str, float]]) -> dict[float, frozenset[str]]:
    """A ranking as the memories of each score (to 1e-6, as far as scores of equal
    parts agree); of the lowest score, which the cut may split, only how many."""
    groups: dict[float, set[str]] = {}
    for turn, value in ranked:
        groups.setdefault(round(value, 6), set()).add(turn)
    lowest = min(groups, default=0.0)
    return {v: frozenset(ids) if v != lowest else frozenset({str(len(ids))})
            for v, ids in groups.items()}  # fmt: skip


@pytest.mark.skipif(not DATA.exists(), reason=NO_DATA)
def test_keyword_search_and_recall_rank_a_conversation_alike_on_both_backends(
    pg_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LoCoMo's first conversation (419 turns, no embedder): the keyword lane's 50 per
    question are the same list with the same BM25 on PostgreSQL as on SQLite (FTS5's
    terms and formula, see store.terms), and recall's ten are the same up to ties.
    Before, PostgreSQL's stemmer and ts_rank_cd gave the same ten for 21 of 786."""
    from memlane.evaluation.locomo import postgres_stores, run
    from memlane.retrieve import lanes
    from memlane.timeutil import utcnow

    now = utcnow()  # one instant for both runs: recency must not drift between them
    monkeypatch.setattr("memlane.services.recall.utcnow", lambda: now)
    seen: list[tuple[list[tuple[str, float]], list[tuple[str, float]]]] = []

    def both(mem: Memory, query: str, limit: int) -> list[str]:
        pool = mem.filters(limit=50, scope="all")
        keyword = [(h.record.source_ref or "", h.score)
                   for h in lanes.keyword(mem.store, query, pool, fill=True)]  # fmt: skip
        hits = mem.recall(query, limit=limit, scope="all", count=False).hits
        seen.append((keyword, [(h.record.source_ref or "", h.score) for h in hits]))
        return [h.record.id for h in hits]

    list(run(DATA, both, None, conversations=1))
    on_sqlite = list(seen)
    seen.clear()
    list(run(DATA, both, None, conversations=1, stores=postgres_stores(pg_server)))
    assert len(on_sqlite) == len(seen) > 100
    for (keyword, recalled), (pg_keyword, pg_recalled) in zip(on_sqlite, seen, strict=True):
        assert [t for t, _ in keyword] == [t for t, _ in pg_keyword]
        assert [s for _, s in keyword] == pytest.approx([s for _, s in pg_keyword], rel=1e-9)
        assert _up_to_ties(recalled) == _up_to_ties(pg_recalled)


@pytest.mark.skipif(not DATA.exists(), reason=NO_DATA)
def test_the_vector_lane_ranks_a_conversation_alike_on_both_backends(pg_server: str) -> None:
    """LoCoMo's first conversation (419 turns) with MiniLM: the vector lane's ten per
    question are the same list on PostgreSQL as on SQLite, since both scan every row of
    a store this small (through HNSW, PostgreSQL left out the fifth nearest turn of
    "What fields would Caroline be likely to pursue in her educaton?")."""
    from memlane.embed import get_embedder
    from memlane.evaluation.locomo import postgres_stores, run

    def vector(mem: Memory, query: str, limit: int) -> list[str]:
        return [h.record.id for h in mem.search(query, mode="vector", limit=limit, scope="all")]

    minilm = get_embedder("minilm")
    on_sqlite = list(run(DATA, vector, minilm, conversations=1))
    on_postgres = list(
        run(DATA, vector, minilm, conversations=1, stores=postgres_stores(pg_server))
    )
    assert len(on_sqlite) == len(on_postgres) > 100
    differ = [a["question"] for a, b in zip(on_sqlite, on_postgres, strict=True)
              if a["retrieved"] != b["retrieved"]]  # fmt: skip
    assert differ == []


@pytest.mark.skipif(not DATA.exists(), reason=NO_DATA)
def test_a_grid_over_one_conversation_reports_its_settings_and_the_held_out_fold(run):
    grid = ("--grid", "mmr_lambda=0.9,none")
    result = run("eval", "locomo", "--data", str(DATA), "--conversations", "1", *grid, "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert list(report["settings"]) == ["mmr_lambda=0.9", "mmr_lambda=None"]
    [held] = report["held out"]
    assert held["chosen"] == "mmr_lambda=0.9"  # no other fold to choose on: the first
    chosen = report["settings"][held["chosen"]]
    assert held["figures"]["r@10"] == chosen["r@10"] == report["held-out mean"]["r@10"]
