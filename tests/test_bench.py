"""`memlane bench` end to end on a tiny store: the real build, timings and JSON report."""

from __future__ import annotations

import json


def test_bench_writes_the_report_as_json(run, tmp_path):
    out = tmp_path / "results" / "bench.json"
    stores = tmp_path / "stores"
    args = ("bench", "--sizes", "200", "--queries", "5", "--write-sample", "50",
            "--dir", str(stores))  # fmt: skip
    result = run(*args, "--cold-runs", "1", "--out", str(out))
    assert result.exit_code == 0, result.stderr
    assert "recall hybrid p50 ms" in result.stdout
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
    assert size["cold_recall"]["hybrid"]["count"] == 1
    assert size["cold_recall"]["hybrid"]["command"] == "memlane"  # the installed script
    assert size["write"]["sample"] == 50
    assert size["write"]["with_embeddings"]["per_second"] > 0
    assert size["store_bytes"] > 0 and "profile hash" in size["build"]["vectors"]

    again = run(*args, "--cold-runs", "0", "--json")  # the same parameters: reused
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["results"][0]["reused_store"]
    table = run(*args, "--cold-runs", "0")  # says whose build rates it repeats
    assert table.exit_code == 0, table.stderr
    assert "(reused: built 20" in table.stdout and "UTC" in table.stdout


def test_bench_refuses_bad_sizes(run):
    result = run("bench", "--sizes", "ten")
    assert result.exit_code == 2 and "--sizes" in result.stderr
