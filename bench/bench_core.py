"""Core benchmark of memlane: add-batch throughput and read latency at N memories.

Run from the repository root:

    .venv/bin/python bench/bench_core.py                      # N=100,000, 200 queries
    .venv/bin/python bench/bench_core.py --n 20000 --queries 100 --synchronous normal
    .venv/bin/python bench/bench_core.py --explain            # also print query plans

What it does:

1. Generates N synthetic memories, deterministically from --seed: varied kinds,
   titles and 1-4 sentence bodies drawn from a vocabulary of ~3,000 software and
   project words with Zipf-like frequencies (plus rare ticket numbers), 0-4 tags,
   some session ids, importance 1-10, and four scopes.
2. Writes them into a fresh store in a temporary directory through
   `Memory.add_batch` (the real code path, committing in chunks) and reports
   memories/second overall and for the first and last tenth of the load. A smaller
   slice is also written from JSONL strings (the CLI path) and, for comparison, from
   dicts, each into its own fresh store.
3. Times keyword search (`Memory.search(q, limit=10, scope="all")`) over a mix of
   query shapes, after a warm-up, and `Memory.list` / `Memory.get`; reports
   p50/p95/p99 in milliseconds.
4. Prints a table and writes the machine, the parameters and the results as JSON to
   --out (default bench/results/core.json).

This is a script, not a test: it asserts nothing about timings; the goals are printed
next to the numbers (add-batch >= 5,000/s, search p50 <= 5 ms).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from memlane import Context, Memory
from memlane.benchmark.corpus import Generator
from memlane.benchmark.machine import machine_info
from memlane.benchmark.timing import Latency, time_each
from memlane.benchmark.writes import AddResult, store_bytes, timed_add_batch
from memlane.memory import BATCH_CHUNK
from memlane.model import as_dict
from memlane.store.sqlite.sql import fts_query

GOAL_ADD_PER_S = 5_000.0
GOAL_SEARCH_P50_MS = 5.0
WARMUP_QUERIES = 20

# ---- benchmark steps -------------------------------------------------------


def open_memory(path: Path, synchronous: str) -> Memory:
    ctx = Context(project="alpha", branch="main")
    return Memory.open(path, context=ctx, agent="bench", synchronous=synchronous)


def add_batch(
    path: Path, items: Sequence[dict[str, Any]] | Sequence[str], synchronous: str, label: str
) -> tuple[AddResult, list[str]]:
    """Write items into a fresh store at `path`; the store is closed afterwards."""
    with open_memory(path, synchronous) as mem:
        result, ids = timed_add_batch(mem, items, label)
    if result.failed or result.added != len(items):
        print(
            f"warning: {label}: {result.added:,} of {len(items):,} added, "
            f"{result.failed:,} failed (first error: {result.first_error or '-'})"
        )
    result.db_bytes = store_bytes(path)
    return result, ids


class ShapeResult(msgspec.Struct):
    shape: str
    latency: Latency
    mean_results: float
    mean_and_matches: float  # rows matching every word (before scope/visibility filters)
    mean_or_matches: float  # rows matching any word: what the last fallback ranks
    fallback_share: float  # share of queries whose all-words match found nothing
    examples: list[str] = msgspec.field(default_factory=list)


def fts_count(conn: sqlite3.Connection, text: str, mode: str) -> int:
    """FTS rows matching `text` in a search mode ("any" of one word counts as "all")."""
    match = fts_query(text, mode) or (fts_query(text, "all") if mode == "any" else None)
    if match is None:
        return 0
    row = conn.execute("SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?", (match,))
    return int(row.fetchone()[0])


def bench_search(
    mem: Memory, queries: list[tuple[str, str]]
) -> tuple[Latency, list[ShapeResult], list[tuple[str, str, float]]]:
    for _, q in queries[:WARMUP_QUERIES]:
        mem.search(q, limit=10, scope="all")
    timed: list[tuple[str, str, float, int]] = []
    for shape, q in queries:
        start = time.perf_counter()
        hits = mem.search(q, limit=10, scope="all")
        timed.append((shape, q, time.perf_counter() - start, len(hits)))
    conn: sqlite3.Connection = mem.store.conn  # type: ignore[attr-defined]
    shapes: list[ShapeResult] = []
    for shape in dict.fromkeys(s for s, _ in queries):
        rows = [t for t in timed if t[0] == shape]
        ands = [fts_count(conn, q, "all") for _, q, _, _ in rows]
        ors = [fts_count(conn, q, "any") for _, q, _, _ in rows]
        shapes.append(
            ShapeResult(
                shape=shape,
                latency=Latency.of([t[2] for t in rows]),
                mean_results=sum(t[3] for t in rows) / len(rows),
                mean_and_matches=sum(ands) / len(rows),
                mean_or_matches=sum(ors) / len(rows),
                fallback_share=sum(1 for a in ands if a == 0) / len(rows),
                examples=[t[1] for t in rows[:3]],
            )
        )
    slowest = sorted(((s, q, t * 1000.0) for s, q, t, _ in timed), key=lambda x: -x[2])[:5]
    return Latency.of([t[2] for t in timed]), shapes, slowest


def bench_reads(mem: Memory, ids: list[str], rng: random.Random, n: int) -> dict[str, Latency]:
    sample = [rng.choice(ids) for _ in range(n)]
    for memory_id in sample[:WARMUP_QUERIES]:
        mem.get(memory_id)
    mem.list(limit=50, scope="all")
    return {
        "list(limit=50, scope=all)": Latency.of(
            time_each(lambda _: mem.list(limit=50, scope="all"), range(n))
        ),
        "list(limit=50) default scopes": Latency.of(
            time_each(lambda _: mem.list(limit=50), range(n))
        ),
        "get(id)": Latency.of(time_each(mem.get, sample)),
    }


def query_plans(mem: Memory, query: str, memory_id: str) -> dict[str, list[str]]:
    """EXPLAIN QUERY PLAN of the SELECTs one search, list and get run."""
    conn: sqlite3.Connection = mem.store.conn  # type: ignore[attr-defined]
    calls: dict[str, Callable[[], object]] = {
        f"search({query!r}, scope=all)": lambda: mem.search(query, limit=10, scope="all"),
        "list(limit=50, scope=all)": lambda: mem.list(limit=50, scope="all"),
        "list(limit=50) default scopes": lambda: mem.list(limit=50),
        "get(id)": lambda: mem.get(memory_id),
    }
    plans: dict[str, list[str]] = {}
    for name, call in calls.items():
        seen: list[str] = []
        conn.set_trace_callback(seen.append)
        try:
            call()
        finally:
            conn.set_trace_callback(None)
        lines: list[str] = []
        for statement in seen:
            text = statement.lstrip()
            if not text.upper().startswith(("SELECT", "WITH")):
                continue
            lines.append(f"-- {' '.join(text.split())[:160]}")
            for row in conn.execute("EXPLAIN QUERY PLAN " + text):
                lines.append(f"{row[0]:>4} {row[1]:>4}  {row[3]}")
        plans[name] = lines
    return plans


# ---- report ----------------------------------------------------------------


def _goal(ok: bool) -> str:
    return "[green]meets goal[/]" if ok else "[red]misses goal[/]"


def print_report(data: dict[str, Any]) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(shutil.get_terminal_size().columns, 150))
    m, p = data["machine"], data["parameters"]
    console.print(
        f"[bold]memlane core bench[/]  n={p['n']:,} queries={p['queries']} seed={p['seed']} "
        f"synchronous={p['synchronous']}  |  {m['cpu_count']} cpu, python {m['python']}, "
        f"sqlite {m['sqlite']}"
    )

    adds = Table(box=box.SIMPLE_HEAD, title="add-batch (fresh store each)", title_justify="left")
    for col in ("path", "memories", "seconds", "memories/s", "first 10%/s", "last 10%/s",
                "db MB", "goal >= 5,000/s"):  # fmt: skip
        adds.add_column(col, justify="left" if col == "path" else "right")
    for a in data["add_batch"]:
        first, last = a["first_tenth_per_second"], a["last_tenth_per_second"]
        adds.add_row(
            a["path"],
            f"{a['count']:,}",
            f"{a['seconds']:.2f}",
            f"{a['per_second']:,.0f}",
            f"{first:,.0f}" if first else "-",
            f"{last:,.0f}" if last else "-",
            f"{a['db_bytes'] / 1e6:.1f}",
            _goal(a["per_second"] >= GOAL_ADD_PER_S),
        )
    console.print(adds)

    lat = Table(
        box=box.SIMPLE_HEAD, title=f"read latency at {p['n']:,} memories (ms)", title_justify="left"
    )
    for col in ("operation", "n", "p50", "p95", "p99", "max", "goal"):
        lat.add_column(col, justify="left" if col in ("operation", "goal") else "right")
    s = data["search"]["overall"]
    lat.add_row(
        "search(q, limit=10, scope=all)",
        str(s["count"]),
        f"{s['p50_ms']:.2f}",
        f"{s['p95_ms']:.2f}",
        f"{s['p99_ms']:.2f}",
        f"{s['max_ms']:.2f}",
        f"p50 <= 5 ms: {_goal(s['p50_ms'] <= GOAL_SEARCH_P50_MS)}",
    )
    for name, r in data["reads"].items():
        lat.add_row(
            name,
            str(r["count"]),
            f"{r['p50_ms']:.2f}",
            f"{r['p95_ms']:.2f}",
            f"{r['p99_ms']:.2f}",
            f"{r['max_ms']:.2f}",
            "",
        )
    console.print(lat)

    shapes = Table(
        box=box.SIMPLE_HEAD,
        title="search by query shape (ms; matches = FTS rows)",
        title_justify="left",
    )
    for col in ("shape", "n", "p50", "p95", "max", "results", "AND matches", "OR matches",
                "relaxed", "example"):  # fmt: skip
        shapes.add_column(col, justify="left" if col in ("shape", "example") else "right")
    for r in data["search"]["by_shape"]:
        la = r["latency"]
        shapes.add_row(
            r["shape"],
            str(la["count"]),
            f"{la['p50_ms']:.2f}",
            f"{la['p95_ms']:.2f}",
            f"{la['max_ms']:.2f}",
            f"{r['mean_results']:.1f}",
            f"{r['mean_and_matches']:,.0f}",
            f"{r['mean_or_matches']:,.0f}",
            f"{r['fallback_share']:.0%}",
            r["examples"][0],
        )
    console.print(shapes)
    console.print("slowest searches:")
    for shape, q, ms in data["search"]["slowest"]:
        console.print(f"  {ms:8.2f} ms  {shape:<18} {q!r}")
    if data.get("plans"):
        for name, lines in data["plans"].items():
            console.print(f"\n[bold]plan: {name}[/]")
            for line in lines:
                console.print(line, markup=False, highlight=False)


# ---- main ------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--n", type=int, default=100_000, help="memories to write")
    parser.add_argument("--queries", type=int, default=200, help="search queries to time")
    parser.add_argument("--reads", type=int, default=200, help="list/get calls to time")
    parser.add_argument("--jsonl", type=int, default=10_000, help="slice for the JSONL path")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--synchronous", choices=("full", "normal"), default="full")
    parser.add_argument("--out", type=Path, default=Path("bench/results/core.json"))
    parser.add_argument("--tmpdir", type=Path, default=None, help="where the stores go")
    parser.add_argument("--explain", action="store_true", help="print EXPLAIN QUERY PLAN")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    gen = Generator(args.seed)
    t0 = time.perf_counter()
    items = gen.memories(args.n)
    queries = gen.queries(args.queries)
    gen_seconds = time.perf_counter() - t0
    print(f"generated {len(items):,} memories and {len(queries)} queries in {gen_seconds:.1f}s")

    if args.tmpdir is not None:
        args.tmpdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memlane-bench-", dir=args.tmpdir) as tmp:
        root = Path(tmp)
        sync = args.synchronous
        adds: list[AddResult] = []
        main_add, ids = add_batch(root / "main.db", items, sync, "dicts")
        adds.append(main_add)
        print(f"add-batch: {main_add.per_second:,.0f} memories/s")
        if 0 < args.jsonl < args.n:
            part = items[: args.jsonl]
            lines = [json.dumps(item) for item in part]
            adds.append(add_batch(root / "slice_dicts.db", part, sync, "dicts (slice)")[0])
            adds.append(add_batch(root / "slice_jsonl.db", lines, sync, "JSONL (slice)")[0])

        with open_memory(root / "main.db", sync) as mem:
            overall, shapes, slowest = bench_search(mem, queries)
            reads = bench_reads(mem, ids, random.Random(args.seed + 1), args.reads)
            slow_query = slowest[0][1] if slowest else "cache"
            plans = query_plans(mem, slow_query, ids[0]) if args.explain else {}

    data: dict[str, Any] = {
        "machine": machine_info(("memlane",)),
        "parameters": {
            "n": args.n,
            "queries": len(queries),
            "reads": args.reads,
            "jsonl": args.jsonl,
            "seed": args.seed,
            "synchronous": sync,
            "batch_chunk": BATCH_CHUNK,
            "warmup_queries": WARMUP_QUERIES,
            "vocabulary": len(gen.vocab.content),
            "generate_seconds": gen_seconds,
        },
        "goals": {"add_batch_per_second": GOAL_ADD_PER_S, "search_p50_ms": GOAL_SEARCH_P50_MS},
        "add_batch": [as_dict(a) for a in adds],
        "search": {
            "overall": as_dict(overall),
            "by_shape": [as_dict(s) for s in shapes],
            "slowest": slowest,
        },
        "reads": {name: as_dict(r) for name, r in reads.items()},
        "plans": plans,
    }
    print_report(data)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
