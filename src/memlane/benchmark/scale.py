"""Recall at scale: synthetic stores of 10^4..10^6 memories with vectors, and their costs.

For each size the benchmark builds (or reuses) a store in a working directory, then
measures in-process recall (hybrid and keyword-only), the vector lane alone, a cold
`memlane recall` process, add-batch throughput with and without embeddings, and the
size of the store and of its derived vector index on disk.

Vectors: embedding 10^6 texts with MiniLM takes about an hour on a laptop-class CPU, so
the default profile is `hash` (memlane's deterministic feature-hashing embedder: real
vectors from the real write path, lexical rather than semantic). The result names the
profile and how the vectors were written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from memlane.benchmark import floor
from memlane.benchmark.corpus import Generator
from memlane.benchmark.ingest import FLOORS, ingest_at_scale
from memlane.benchmark.machine import calibrate, machine_info, with_speed
from memlane.benchmark.timing import Latency, time_each
from memlane.benchmark.writes import store_bytes, timed_add_batch
from memlane.memory import Memory
from memlane.model import Filters, Record, as_dict
from memlane.scope import Context
from memlane.write.normalize import document_text

if TYPE_CHECKING:
    from memlane.embed import Embedded, Embedder
    from memlane.retrieve.vectors import VectorIndex

# The latency targets, printed beside the numbers (nothing asserts them).
GOALS = {
    "build_minutes": {1_000_000: 30.0},
    "recall_hybrid_p50_ms": {100_000: 15.0, 1_000_000: 60.0},
    "recall_floor_ratio_p50": {100_000: 1.2},
    "cold_recall_p50_ms": {100_000: 400.0},
}
# The floor is measured in stores up to the size its goal is set at: building its HNSW
# index over 10^6 vectors takes longer than the rest of that size's run.
FLOOR_MAX_SIZE = 100_000
# Bump when the generator or the build changes what a store holds: a store built by
# another version is rebuilt, never reused.
BUILD_VERSION = 2
PROJECT = "alpha"  # the context of every read: project alpha, no branch
WARMUP_QUERIES = 10
# Records embedded per transaction while building, and texts per worker task.
EMBED_CHUNK = 2_000
POOL_MIN_SIZE = 5_000  # smaller stores are embedded in this process


class Progress(Protocol):
    """A run's progress: the step it is on, in words, and how far into it when the step
    is counted (DONE of TOTAL)."""

    def __call__(self, words: str, done: int | None = None, total: int | None = None) -> None: ...


def _unwatched(words: str, done: int | None = None, total: int | None = None) -> None:
    """The progress of a run nobody watches."""


class Plan(msgspec.Struct, frozen=True):
    """What to run: sizes, the embedding profile, and how much to measure."""

    sizes: tuple[int, ...]
    directory: Path
    profile: str = "hash"
    queries: int = 200
    # A new process's wall time swings by tens of ms from run to run on a 2-core machine;
    # the p50 of 15 moves less than that of 7 (for a few seconds more a size).
    cold_runs: int = 15
    write_sample: int = 2_000
    seed: int = 42
    rebuild: bool = False
    # Build with every line marked allow_duplicate: capture screens each memory, the
    # exact-duplicate gate and the near-duplicate and contradiction checks stay out.
    trusted: bool = False


class Build(msgspec.Struct):
    """How a store was made (kept beside it, so a reused store still reports it)."""

    memories: int
    profile: str
    seed: int
    version: int
    add_batch_seconds: float
    add_batch_per_second: float
    embed_seconds: float
    embed_per_second: float
    vectors: str  # how the vectors were written
    built_at: float = msgspec.field(default_factory=time.time)
    trusted: bool = False  # built without the near-duplicate checks (Plan.trusted)


def _manifest(db: Path) -> Path:
    return db.with_name(db.name + ".build.json")


def store_path(plan: Plan, size: int) -> Path:
    trusted = "-trusted" if plan.trusted else ""
    return plan.directory / f"bench-{size}-{plan.profile}-s{plan.seed}{trusted}.db"


def _reusable(db: Path, plan: Plan, size: int) -> Build | None:
    """The recorded build of a complete store made with the same parameters, if any."""
    try:
        data = json.loads(_manifest(db).read_text(encoding="utf-8"))
        build = Build(**data)
    except (OSError, ValueError, TypeError):
        return None
    same = (build.memories, build.profile, build.seed, build.version, build.trusted)
    wanted = (size, plan.profile, plan.seed, BUILD_VERSION, plan.trusted)
    return build if db.exists() and same == wanted else None


def _open(db: Path, embedder: Embedder | None, **options: Any) -> Memory:
    return Memory.open(
        db, agent="bench", context=Context(project=PROJECT), embedder=embedder, **options
    )


# ---- building a store ------------------------------------------------------

_worker_embedder: Embedder | None = None


def _start_worker(profile: str) -> None:
    global _worker_embedder
    from memlane.embed import get_embedder

    _worker_embedder = get_embedder(profile)


def _embed_texts(texts: list[str]) -> list[Embedded]:
    from memlane.write.embedding import embed_documents

    assert _worker_embedder is not None
    return embed_documents(_worker_embedder, texts)


def embed_store(
    mem: Memory,
    embedder: Embedder,
    ids: Sequence[str],
    workers: int,
    counted: Callable[[int], None] = lambda done: None,
) -> int:
    """Embed the memories `ids` of a freshly written store; returns how many, having
    told `counted` how many so far after each chunk.

    Trigger: a store of 10^5..10^6 memories. Why: the hash embedder is pure Python,
    so one process embeds ~1,000 texts a second. Outcome: texts are embedded by
    `workers` processes and written here, one transaction per chunk, by the functions
    the write path uses (`document_text`, `embed_documents`, `put_documents`), inside
    `bulk_vectors` as `embed --all` writes them.
    """
    from memlane.write import embedding

    store = mem.store
    with store.write() as w:
        w.set_meta(embedding.PROFILE_KEY, embedder.profile.signature)

    def records(start: int) -> list[Record]:
        wanted = Filters(
            ids=tuple(ids[start : start + EMBED_CHUNK]), limit=None, any_visibility=True
        )
        return store.query(wanted)

    stored = [0]

    def put(chunk: list[Record], documents: Sequence[Embedded]) -> int:
        with store.write() as w:
            embedding.put_documents(w, embedder, chunk, documents)
        stored[0] += len(chunk)
        counted(stored[0])
        return len(chunk)

    with store.bulk_vectors(embedder.dimension, len(ids)):
        starts = range(0, len(ids), EMBED_CHUNK)
        if workers <= 1:
            text = document_text
            return sum(
                put(chunk, embedding.embed_documents(embedder, [text(r) for r in chunk]))
                for chunk in map(records, starts)
            )
        done = 0
        pending: deque[tuple[list[Record], Future[list[Embedded]]]] = deque()
        with ProcessPoolExecutor(
            workers, initializer=_start_worker, initargs=(embedder.profile.name,)
        ) as pool:
            for start in starts:
                chunk = records(start)
                texts = [document_text(r) for r in chunk]
                pending.append((chunk, pool.submit(_embed_texts, texts)))
                if len(pending) > 2 * workers:  # bounded: a million records never sit in memory
                    chunk, future = pending.popleft()
                    done += put(chunk, future.result())
            while pending:
                chunk, future = pending.popleft()
                done += put(chunk, future.result())
        return done


def build_store(db: Path, plan: Plan, size: int, embedder: Embedder, progress: Progress) -> Build:
    """Write `size` generated memories through add-batch, then embed them all."""
    for stale in db.parent.glob(db.name + "*"):
        stale.unlink()
    db.parent.mkdir(parents=True, exist_ok=True)
    items = Generator(plan.seed).memories(size)
    if plan.trusted:
        items = [dict(item, allow_duplicate=True) for item in items]
    with _open(db, embedder, embed_on_write=False) as mem:
        adding = f"{size:,}: add-batch of {size:,} memories (no embeddings)"
        progress(adding)
        added, ids = timed_add_batch(mem, items, "add-batch", lambda n: progress(adding, n, size))
        # Trigger: minilm runs its own threads; a small store is done before a pool
        # starts. Outcome: one process for those, one per core otherwise.
        alone = embedder.profile.name == "minilm" or size < POOL_MIN_SIZE
        workers = 1 if alone else (os.cpu_count() or 1)
        vectors = f"{size:,}: embedding with {embedder.profile.signature} ({workers} processes)"
        progress(vectors)
        start = time.perf_counter()
        embedded = embed_store(
            mem, embedder, ids, workers, lambda n: progress(vectors, n, len(ids))
        )
        embed_seconds = time.perf_counter() - start
    build = Build(
        memories=size,
        profile=plan.profile,
        seed=plan.seed,
        version=BUILD_VERSION,
        add_batch_seconds=added.seconds,
        add_batch_per_second=added.per_second,
        embed_seconds=embed_seconds,
        embed_per_second=embedded / embed_seconds if embed_seconds else float("nan"),
        vectors=(
            f"profile {embedder.profile.signature}: every memory embedded by the write "
            f"path's embed_documents/put_documents, {workers} process(es)"
        ),
        trusted=plan.trusted,
    )
    _manifest(db).write_text(json.dumps(as_dict(build), indent=2) + "\n", encoding="utf-8")
    return build


# ---- measuring -------------------------------------------------------------


def _recall(mem: Memory) -> Callable[[str], object]:
    return lambda q: mem.recall(q, count=False)


def _catch_up_seconds(mem: Memory, index: VectorIndex, embedder: Embedder) -> float | None:
    """What the first vector read after a write pays: one memory's vectors written again
    (the same vectors, so the corpus stays as built), then the index catches up."""
    signature = embedder.profile.signature
    first = next(iter(mem.store.vectors(signature)), None)
    record = mem.store.get(first[0]) if first else None
    if first is None or record is None:
        return None
    rows = [(chunk, blob) for _, chunk, blob in mem.store.vectors(signature, [record.id])]
    with mem.store.write() as w:
        w.put_vectors(record.id, signature, rows, embedder.dimension, record.dedup_hash)
    start = time.perf_counter()
    len(index)
    return time.perf_counter() - start


def index_measures(mem: Memory, embedder: Embedder, queries: Sequence[str]) -> dict[str, Any]:
    """Load (or build) the vector index, then time it against an exact scan of every row,
    and how many of the exact top 10 it finds."""
    from memlane.retrieve.lanes import pool_size
    from memlane.retrieve.vectors import VectorIndex

    index = VectorIndex(mem.store, embedder.profile.signature, embedder.dimension)
    start = time.perf_counter()
    len(index)  # maps the persisted index, or builds and saves it
    loaded = time.perf_counter() - start
    start = time.perf_counter()
    index.rebuild()  # reading every vector again: what too many changes at once cost
    rebuilt = time.perf_counter() - start
    caught_up = _catch_up_seconds(mem, index, embedder)
    vectors = [embedder.embed(q) for q in queries]
    k = pool_size(10)  # what recall --limit 10 asks of the vector lane
    found = [len(index.search(v, k)) for v in vectors[:WARMUP_QUERIES]]
    agreement = [
        len({h.memory_id for h in index.search(v, 10)} & {h.memory_id for h in exact}) / len(exact)
        for v in vectors
        if (exact := index.search(v, 10, exact=True))
    ]
    return {
        **index.describe(),
        "load_seconds": loaded,
        "rebuild_seconds": rebuilt,
        "catch_up_seconds": caught_up,
        "k": k,
        "warm_hits": sum(found),
        "search": as_dict(Latency.of(time_each(lambda v: index.search(v, k), vectors))),
        "exact_search": as_dict(
            Latency.of(time_each(lambda v: index.search(v, k, exact=True), vectors))
        ),
        "agreement_at_10": sum(agreement) / len(agreement) if agreement else float("nan"),
    }


def warm_os_cache(paths: Sequence[Path]) -> int:
    """Read each file once, so the operating system holds it in its page cache; the
    bytes read.

    Trigger: timing reads on a store of 10^6 memories (3-4 GB with its index). Why:
    ten warm-up queries touch a sliver of it, so the first hundred timed queries would
    read from disk and measure the disk: a long-running process (the MCP server, a hook's
    host) serves from the cache. Outcome: every in-process measure starts from a warm
    cache; nothing is loaded into the process itself, and cold-process runs still pay
    their own start-up.
    """
    total = 0
    for path in paths:
        if path.exists():
            with path.open("rb", buffering=0) as f:
                while chunk := f.read(1 << 24):
                    total += len(chunk)
    return total


def in_process(
    db: Path, embedder: Embedder, queries: Sequence[str], size: int = 0
) -> dict[str, Any]:
    """Latency of hybrid recall, keyword-only recall and the vector lane alone, and of
    hybrid recall beside the floor (benchmark.floor) in a store of up to FLOOR_MAX_SIZE
    memories."""
    from memlane.retrieve.vectors import index_files

    out: dict[str, Any] = {"os_cache_warmed_bytes": warm_os_cache([db, *index_files(db)])}
    with _open(db, embedder) as mem:
        out["index"] = index_measures(mem, embedder, queries)
        for q in queries[:WARMUP_QUERIES]:
            mem.recall(q, count=False)
        out["recall_hybrid"] = as_dict(Latency.of(time_each(_recall(mem), queries)))
        out["floor"] = (
            floor.compare(mem, embedder, queries, WARMUP_QUERIES)
            if size <= FLOOR_MAX_SIZE
            else {"skipped": f"measured in stores of up to {FLOOR_MAX_SIZE:,} memories"}
        )
        vector = Filters(limit=10)
        out["vector_search"] = as_dict(
            Latency.of(time_each(lambda q: mem.search(q, vector, mode="vector"), queries))
        )
    with _open(db, None) as mem:
        for q in queries[:WARMUP_QUERIES]:
            mem.recall(q, count=False)
        out["recall_keyword"] = as_dict(Latency.of(time_each(_recall(mem), queries)))
    return out


def memlane_command() -> list[str]:
    """How a user starts memlane here: the installed `memlane` script beside this
    Python (`python -m memlane` imports runpy first, which no user pays), else the
    module."""
    script = Path(sys.executable).with_name("memlane")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "memlane"]


def cold_recall(db: Path, profile: str, queries: Sequence[str], runs: int) -> dict[str, Any]:
    """Wall time of `memlane recall QUERY --json` as a new process (after one warm-up run).

    Trigger: PYTHONDONTWRITEBYTECODE in the environment. Why: every module would be
    compiled from source in every process (most of a second), which no installed memlane
    does. Outcome: the processes keep their bytecode under the bench directory.
    """
    if runs <= 0:
        return {"runs": 0}
    with tempfile.TemporaryDirectory(prefix="memlane-bench-") as tmp:
        cwd = Path(tmp) / PROJECT  # the project the in-process reads use
        cwd.mkdir()
        env = {
            **os.environ,
            "MEMLANE_DB": str(db),
            "MEMLANE_EMBED_PROFILE": profile,
            "PYTHONPYCACHEPREFIX": str(db.parent / "pycache"),
        }
        for name in ("MEMLANE_SKIP_WRITE_EMBED", "PYTHONDONTWRITEBYTECODE"):
            env.pop(name, None)
        seconds: list[float] = []
        command = memlane_command()
        for i in range(runs + 1):
            query = queries[i % len(queries)]
            start = time.perf_counter()
            subprocess.run(
                [*command, "recall", query, "--json"],
                cwd=cwd,
                env=env,
                check=True,
                capture_output=True,
            )
            if i:  # the first run warms the OS file cache
                seconds.append(time.perf_counter() - start)
    started = Path(command[0]).name if len(command) == 1 else " ".join(["python", *command[1:]])
    return {"profile": profile, "command": started, **as_dict(Latency.of(seconds))}


def write_throughput(plan: Plan, size: int, embedder: Embedder) -> dict[str, Any]:
    """add-batch into fresh stores: a sample without and with embeddings (the profile's)."""
    sample = min(size, plan.write_sample)
    items = Generator(plan.seed + 1).memories(sample)
    out: dict[str, Any] = {"sample": sample}
    with tempfile.TemporaryDirectory(prefix="memlane-bench-", dir=plan.directory) as tmp:
        for label, with_vectors in (("without_embeddings", False), ("with_embeddings", True)):
            db = Path(tmp) / f"{label}.db"
            with _open(db, embedder, embed_on_write=with_vectors) as mem:
                result, _ = timed_add_batch(mem, items, label)
            out[label] = {
                "seconds": result.seconds,
                "per_second": result.per_second,
                "failed": result.failed,
            }
    return out


def index_bytes(db: Path) -> int:
    from memlane.retrieve.vectors import index_files

    return sum(p.stat().st_size for p in index_files(db) if p.exists())


def measure(plan: Plan, size: int, embedder: Embedder, progress: Progress) -> dict[str, Any]:
    db = store_path(plan, size)
    build = None if plan.rebuild else _reusable(db, plan, size)
    reused = build is not None
    if build is None:
        build = build_store(db, plan, size, embedder, progress)
    queries = [q for _, q in Generator(plan.seed).queries(plan.queries)][: plan.queries]
    progress(f"{size:,}: in-process recall, {len(queries)} queries, and beside the floor")
    timings = in_process(db, embedder, queries, size)
    progress(f"{size:,}: cold recall processes")
    cold = {
        "hybrid": cold_recall(db, plan.profile, queries, plan.cold_runs),
        "keyword": cold_recall(db, "none", queries, plan.cold_runs),
    }
    writes: dict[str, Any] = {}
    ingested: dict[str, Any] = {}
    if plan.write_sample > 0:
        progress(f"{size:,}: add-batch throughput on a sample")
        writes = write_throughput(plan, size, embedder)
        progress(f"{size:,}: add-batch of {plan.write_sample:,} memories into the store")
        ingested = {
            "ingest": ingest_at_scale(
                db, embedder, plan.write_sample, plan.seed, PROJECT, plan.directory
            )
        }
    return {
        "memories": size,
        "store": str(db),
        "reused_store": reused,
        "build": as_dict(build),
        "store_bytes": store_bytes(db),
        "index_bytes": index_bytes(db),
        **timings,
        "cold_recall": cold,
        "write": {"at_scale_without_embeddings_per_second": build.add_batch_per_second, **writes},
        **ingested,
    }


def run(plan: Plan, progress: Progress = _unwatched) -> dict[str, Any]:
    """Every size of `plan`, smallest first; the machine, the parameters and the results."""
    from memlane.embed import get_embedder

    embedder = get_embedder(plan.profile)
    plan.directory.mkdir(parents=True, exist_ok=True)
    speed_before = calibrate()
    results = [measure(plan, size, embedder, progress) for size in sorted(plan.sizes)]
    return {
        "machine": with_speed(machine_info(("memlane", "numpy", "onnxruntime")), speed_before),
        "parameters": {
            **as_dict(plan),
            "directory": str(plan.directory),
            "embedder": embedder.profile.signature,
            "warmup_queries": WARMUP_QUERIES,
        },
        "goals": {k: {str(n): v for n, v in goals.items()} for k, goals in GOALS.items()},
        "floors": {
            k: {str(n): v for n, v in floors.items()}
            for k, floors in FLOORS.items()
            if plan.profile == "hash" or k != "ingest_hash_per_second"
        },
        "results": results,
    }
