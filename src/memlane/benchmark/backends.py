"""SQLite next to PostgreSQL in one run: ingest throughput and recall latency.

For each size, the same generated corpus goes into a fresh SQLite file and a fresh
PostgreSQL database (created on the server the URL names, dropped afterwards):
add-batch without vectors, then every memory embedded by the write path, then the
same queries through hybrid and keyword-only recall.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlane.benchmark.corpus import Generator
from memlane.benchmark.machine import calibrate, machine_info, speed_line, with_speed
from memlane.benchmark.scale import PROJECT, WARMUP_QUERIES, embed_store
from memlane.benchmark.timing import Latency, time_each
from memlane.benchmark.writes import store_bytes, timed_add_batch
from memlane.memory import Memory
from memlane.model import as_dict
from memlane.scope import Context

if TYPE_CHECKING:
    from memlane.embed import Embedder

Progress = Callable[[str], None]
BACKENDS = ("sqlite", "postgres")


@contextmanager
def _location(backend: str, pg_url: str) -> Iterator[str]:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="memlane-bench-") as folder:
            yield str(Path(folder) / "bench.db")
        return
    from memlane.store.postgres.scratch import scratch_database

    with scratch_database(pg_url, "memlane_bench") as location:
        yield location


def _one(
    location: str, size: int, embedder: Embedder, queries: list[str], seed: int
) -> dict[str, Any]:
    """Ingest, embed and recall on one fresh store."""
    items = Generator(seed).memories(size)
    context = Context(project=PROJECT)
    with Memory.open(
        location, agent="bench", context=context, embedder=embedder, embed_on_write=False
    ) as mem:
        added, ids = timed_add_batch(mem, items, "add-batch")
        start = time.perf_counter()
        embedded = embed_store(mem, embedder, ids, 1)
        embed_seconds = time.perf_counter() - start
        for q in queries[:WARMUP_QUERIES]:
            mem.recall(q, count=False)
        hybrid = Latency.of(time_each(lambda q: mem.recall(q, count=False), queries))
    with Memory.open(location, agent="bench", context=context, embedder=None) as mem:
        for q in queries[:WARMUP_QUERIES]:
            mem.recall(q, count=False)
        keyword = Latency.of(time_each(lambda q: mem.recall(q, count=False), queries))
    return {
        "store_bytes": _bytes(location),
        "add_batch_per_second": added.per_second,
        "add_batch_seconds": added.seconds,
        "embed_per_second": embedded / embed_seconds if embed_seconds else float("nan"),
        "recall_hybrid": as_dict(hybrid),
        "recall_keyword": as_dict(keyword),
    }


def _bytes(location: str) -> int:
    """The store's size on disk: the SQLite file with its companions and vector index,
    or the PostgreSQL database."""
    if "://" not in location:
        from memlane.retrieve.vectors import index_files

        db = Path(location)
        return store_bytes(db) + sum(p.stat().st_size for p in index_files(db) if p.exists())
    from memlane.store.postgres.scratch import database_bytes

    return database_bytes(location)


def run(
    sizes: tuple[int, ...],
    pg_url: str,
    profile: str = "hash",
    queries: int = 200,
    seed: int = 42,
    progress: Progress = lambda _: None,
) -> dict[str, Any]:
    """Every size on both backends, smallest first."""
    from memlane.embed import get_embedder

    embedder = get_embedder(profile)
    texts = [q for _, q in Generator(seed).queries(queries)][:queries]
    speed_before = calibrate()
    results = []
    for size in sorted(sizes):
        row: dict[str, Any] = {"memories": size}
        for backend in BACKENDS:
            progress(f"{size:,}: {backend}: ingest, embed, {len(texts)} queries")
            with _location(backend, pg_url) as location:
                row[backend] = _one(location, size, embedder, texts, seed)
        results.append(row)
    return {
        "machine": with_speed(machine_info(("memlane", "numpy", "psycopg")), speed_before),
        "parameters": {
            "sizes": list(sizes),
            "profile": embedder.profile.signature,
            "queries": len(texts),
            "seed": seed,
            "backends": list(BACKENDS),
            "warmup_queries": WARMUP_QUERIES,
        },
        "results": results,
    }


_ROWS: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("store MB on disk", lambda r: f"{r.get('store_bytes', 0) / 1e6:,.0f}"),
    ("add-batch/s, no vectors", lambda r: f"{r['add_batch_per_second']:,.0f}"),
    ("embedding/s (write path)", lambda r: f"{r['embed_per_second']:,.0f}"),
    ("recall hybrid p50 ms", lambda r: f"{r['recall_hybrid']['p50_ms']:,.1f}"),
    ("recall hybrid p95 ms", lambda r: f"{r['recall_hybrid']['p95_ms']:,.1f}"),
    ("recall keyword p50 ms", lambda r: f"{r['recall_keyword']['p50_ms']:,.1f}"),
    ("recall keyword p95 ms", lambda r: f"{r['recall_keyword']['p95_ms']:,.1f}"),
)


def text(data: dict[str, Any]) -> str:
    """One row per measure, a column per size and backend."""
    heads = [f"{r['memories']:,} {b}" for r in data["results"] for b in BACKENDS]
    lines = [*speed_line(data["machine"]), f"{'measure':<26}" + "".join(f"{h:>18}" for h in heads)]
    for label, cell in _ROWS:
        cells = [cell(r[b]) for r in data["results"] for b in BACKENDS]
        lines.append(f"{label:<26}" + "".join(f"{c:>18}" for c in cells))
    return "\n".join(lines)
