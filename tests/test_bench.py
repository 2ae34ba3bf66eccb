"""`memlane bench` end to end on a tiny store: the real build, timings and JSON report."""

from __future__ import annotations

import json

import pytest


def test_bench_writes_the_report_as_json(run, tmp_path, monkeypatch):
    out = tmp_path / "results" / "bench.json"
    stores = tmp_path / "stores"
    args = ("bench", "--sizes", "200", "--queries", "5", "--write-sample", "50",
            "--dir", str(stores))  # fmt: skip
    result = run(*args, "--cold-runs", "1", "--out", str(out))
    assert result.exit_code == 0, result.stderr
    assert "recall hybrid p50 ms" in result.stdout
    assert "recall / floor p50" in result.stdout and "floor: RRF (k=60)" in result.stdout
    data = json.loads(out.read_text(encoding="utf-8"))
    assert {"machine", "parameters", "goals", "results"} <= set(data)
    # how fast the machine was, at both ends of the run, so runs compare
    speed = data["machine"]["calibration_ms"]
    assert speed["start"] > 0 and speed["end"] > 0
    assert f"a fixed workload took {speed['start']} ms at the start" in result.stdout
    (size,) = data["results"]
    assert size["memories"] == 200 and not size["reused_store"]
    for key in ("recall_hybrid", "recall_keyword", "vector_search"):
        assert size[key]["count"] == 5 and size[key]["p50_ms"] > 0
    assert size["index"]["kind"] == "exact" and size["index"]["memories"] == 200
    beside = size["floor"]  # recall and the floor, timed in turn with the same queries
    assert beside["recall_hybrid"]["count"] == beside["floor"]["count"] == 5
    assert beside["ratio_p50"] == beside["recall_hybrid"]["p50_ms"] / beside["floor"]["p50_ms"]
    assert beside["recall_hybrid_cpu"]["count"] == beside["floor_cpu"]["count"] == 5
    assert size["cold_recall"]["hybrid"]["count"] == 1
    assert size["cold_recall"]["hybrid"]["command"] == "memlane"  # the installed script
    assert size["write"]["sample"] == 50
    assert size["write"]["with_embeddings"]["per_second"] > 0
    assert size["store_bytes"] > 0 and "profile hash" in size["build"]["vectors"]
    # ingest into a copy of the built store, and the embedder alone on the same texts
    ingest = size["ingest"]
    assert ingest["sample"] == 50 and ingest["profile"].startswith("hash")
    for label in ("keyword", "vectors"):
        assert ingest[label]["added"] + ingest[label]["failed"] <= 50
        assert ingest[label]["failed"] == 0 and ingest[label]["per_second"] > 0
    assert ingest["ratio"] == ingest["vectors"]["per_second"] / ingest["embedder_per_second"]
    assert "ingest with vectors / embedder" in result.stdout
    assert ">= 5000 @ 100,000" in result.stdout  # a goal of a size this run did not build

    again = run(*args, "--cold-runs", "0", "--json")  # the same parameters: reused
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["results"][0]["reused_store"]
    # --write-sample 0 times no writes: recall alone on the reused store
    unwritten = run(*args[:-4], "--write-sample", "0", "--dir", str(stores), "--cold-runs", "0")
    assert unwritten.exit_code == 0, unwritten.stderr
    assert "ingest/s into the store, keyword-only" in unwritten.stdout
    assert "(reused: built 20" in unwritten.stdout
    # without the bench extra the floor is skipped, and the bench says why
    monkeypatch.setattr("memlane.benchmark.floor.PACKAGES", {"memlane_absent": "chroma-hnswlib"})
    table = run(*args, "--cold-runs", "0")  # says whose build rates it repeats
    assert table.exit_code == 0, table.stderr
    assert "(reused: built 20" in table.stdout and "UTC" in table.stdout
    assert "floor: skipped: the floor needs chroma-hnswlib" in table.stdout
    name = "recall / floor p50"
    rows = [line[len(name) :].split() for line in table.stdout.splitlines()]
    assert [cells[0] for cells, line in zip(rows, table.stdout.splitlines(), strict=True)
            if line.startswith(name + "  ")] == ["-"]  # fmt: skip
    monkeypatch.undo()
    monkeypatch.setattr("memlane.benchmark.scale.FLOOR_MAX_SIZE", 100)  # 200 is larger
    large = run(*args[:-4], "--write-sample", "0", "--dir", str(stores), "--cold-runs", "0")
    assert "floor: skipped: measured in stores of up to 100 memories" in large.stdout


def test_a_trusted_build_is_a_store_of_its_own_and_says_so(run, tmp_path):
    """--trusted-build lands every line, duplicates unchecked, in a store apart from
    the checked build's, and the report names it."""
    args = ("bench", "--sizes", "100", "--queries", "3", "--write-sample", "0",
            "--cold-runs", "0", "--dir", str(tmp_path))  # fmt: skip
    trusted = run(*args, "--trusted-build", "--json")
    assert trusted.exit_code == 0, trusted.stderr
    (size,) = json.loads(trusted.stdout)["results"]
    assert size["build"]["trusted"] and size["store"].endswith("-s42-trusted.db")
    checked = run(*args, "--json")
    (size,) = json.loads(checked.stdout)["results"]
    assert not size["build"]["trusted"] and not size["reused_store"]
    table = run(*args, "--trusted-build")
    assert "-trusted.db (trusted build: no duplicate checks) (reused: built" in table.stdout


def test_the_ingest_goals_are_floors():
    from memlane.benchmark.report import goal_cell

    def result(memories, keyword, ratio):
        ingest = {"keyword": {"per_second": keyword}, "vectors": {"per_second": 1.0},
                  "ratio": ratio}  # fmt: skip
        return {"memories": memories, "ingest": ingest}

    floors = {"ingest_keyword_per_second": {"100000": 5000.0},
              "ingest_to_embedder_ratio": {"100000": 0.85}}  # fmt: skip
    data = {"goals": {}, "floors": floors, "results": [result(100_000, 5200.0, 0.5)]}
    assert goal_cell(data, "ingest_keyword_per_second") == ">= 5000 @ 100,000: met"
    assert goal_cell(data, "ingest_to_embedder_ratio") == ">= 0.85 @ 100,000: MISSED"
    assert goal_cell(data, "ingest_hash_per_second") == ""  # not a goal of this profile


def test_bench_refuses_bad_sizes(run):
    result = run("bench", "--sizes", "ten")
    assert result.exit_code == 2 and "--sizes" in result.stderr


def test_the_goal_column_says_whether_each_measured_goal_was_met():
    from memlane.benchmark.report import goal_cell

    def result(memories, hybrid, cold):
        return {"memories": memories, "recall_hybrid": {"p50_ms": hybrid},
                "cold_recall": {"hybrid": {"p50_ms": cold} if cold else {"runs": 0}}}  # fmt: skip

    goals = {"recall_hybrid_p50_ms": {"100000": 20.0, "1000000": 80.0},
             "cold_recall_p50_ms": {"100000": 400.0}}  # fmt: skip
    data = {"goals": goals, "results": [result(100_000, 21.5, 399.0)]}
    assert goal_cell(data, "recall_hybrid_p50_ms") == (
        "<= 20 @ 100,000: MISSED, <= 80 @ 1,000,000"  # 10^6 was not run
    )
    assert goal_cell(data, "cold_recall_p50_ms") == "<= 400 @ 100,000: met"
    data = {"goals": goals, "results": [result(100_000, 7.9, None), result(1_000_000, 80.0, None)]}
    assert goal_cell(data, "recall_hybrid_p50_ms") == "<= 20 @ 100,000: met, <= 80 @ 1,000,000: met"
    assert goal_cell(data, "cold_recall_p50_ms") == "<= 400 @ 100,000"  # no cold runs
    assert goal_cell(data, None) == ""


def test_the_build_goal_counts_add_batch_and_embedding():
    from memlane.benchmark.report import goal_cell

    def result(memories, add_batch, embed):
        return {
            "memories": memories,
            "build": {"add_batch_seconds": add_batch, "embed_seconds": embed},
        }

    goals = {"build_minutes": {"1000000": 30.0}}
    data = {"goals": goals, "results": [result(1_000_000, 1500.0, 400.0)]}
    assert goal_cell(data, "build_minutes") == "<= 30 @ 1,000,000: MISSED"  # 31.7 minutes
    data = {"goals": goals, "results": [result(1_000_000, 1500.0, 250.0)]}
    assert goal_cell(data, "build_minutes") == "<= 30 @ 1,000,000: met"


def test_bench_writers_reports_each_writes_wait_and_that_all_landed(run, tmp_path):
    """Two writer processes, three timed adds each: the report's fields, not its timings."""
    out = tmp_path / "writers.json"
    args = ("bench", "writers", "--writers", "2", "--writes", "3", "--dir", str(tmp_path))
    result = run(*args, "--out", str(out), "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data == json.loads(out.read_text(encoding="utf-8"))
    assert {"machine", "parameters", "result"} <= set(data)
    report = data["result"]
    assert (report["writers"], report["writes_per_writer"], report["writes"]) == (2, 3, 6)
    assert set(report["latency"]) == {"count", "p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms"}
    assert report["latency"]["count"] == 6 and report["writes_per_second"] > 0
    assert report["errors"] == [] and report["lost"] == 0
    assert sum(report["statuses"].values()) == 6
    assert report["stored"] == 2 + report["statuses"].get("added", 0)  # with the warm-ups
    assert isinstance(report["goal_met"], bool) and report["goal_p99_ms"] == 2000
    assert list(tmp_path.glob("memlane-writers-*")) == []  # the store is removed
    table = run(*args)
    assert table.exit_code == 0, table.stderr
    assert "latency ms  p50" in table.stdout and "acknowledged but missing 0" in table.stdout


def test_bench_writers_refuses_no_writers(run):
    result = run("bench", "writers", "--writers", "0")
    assert result.exit_code != 0 and "--writers" in result.stderr


def test_the_floor_fuses_its_lanes_by_reciprocal_rank():
    from memlane.benchmark.floor import fuse

    # 7: 1/61 + 1/62 (first in one lane, second in the other) beats 3: 1/61 + 1/63
    assert fuse([[7, 3, 5], [4, 7, 9, 3]], limit=3) == [7, 3, 4]
    assert fuse([[2, 1], []], limit=5) == [2, 1]  # an empty lane adds nothing
    assert fuse([[1, 2], [2, 1]], limit=2, k=0) == [1, 2]  # a tie keeps first appearance


def test_the_floor_finds_a_memory_by_its_words_and_by_its_vector(vmem):
    pytest.importorskip("hnswlib")
    pytest.importorskip("bm25s")
    from memlane.benchmark import floor

    texts = [f"note {i}: the {w} cache warms slowly after a deploy" for i, w in
             enumerate(("redis", "memcached", "varnish", "nginx", "squid"))]  # fmt: skip
    texts.append("Kubernetes pods restart when the liveness probe times out")
    ids = [vmem.add(text).id for text in texts]
    built = floor.build(vmem.store, vmem.embedder)
    assert sorted(built.ids) == sorted(ids)
    assert built.search("liveness probe restart", limit=3, pool=50)[0] == ids[-1]
    assert built.search("varnish", limit=1, pool=50) == [ids[2]]
    assert built.search("the a of", limit=3, pool=50) != []  # stopwords only: vectors answer
    assert len(built.search("cache", limit=10, pool=50)) == len(ids)


def test_the_floor_is_skipped_without_the_bench_extra():
    from memlane.benchmark.floor import missing

    assert missing() is None  # the dev install has the extra
    reason = missing({"memlane_no_such_module": "no-such-package", "json": "json"})
    assert reason == (
        "the floor needs no-such-package (the bench extra: pip install 'memlane[bench]')"
    )
