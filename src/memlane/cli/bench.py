"""`bench`: recall latency, write throughput and store size at 10^4..10^6 memories;
`bench writers`: concurrent writer processes on one store, each write timed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from memlane.cli.common import emit_json, fail, in_section, json_option
from memlane.cli.progress import progress_steps


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())
    except ValueError:
        fail(f"--sizes takes comma-separated counts such as 10000,100000, not {text!r}")
    if not sizes or min(sizes) < 1:
        fail("--sizes needs at least one count of 1 or more")
    return sizes


def _default_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("memlane")) / "bench"


F = TypeVar("F", bound=Callable[..., Any])


def _profile(help_text: str) -> Callable[[F], F]:
    """The --profile option both benchmarks take."""
    return click.option(
        "--profile",
        type=click.Choice(["hash", "minilm"]),
        default="hash",
        show_default=True,
        help=help_text,
    )


@in_section("admin")
@click.group("bench", invoke_without_command=True)
@click.option(
    "--sizes", default="10000,100000", show_default=True, help="Store sizes, comma-separated."
)
@_profile("Embedding profile of the stores (minilm: slow to build large ones).")
@click.option("--queries", type=int, default=200, show_default=True, help="Queries timed per size.")
@click.option(
    "--cold-runs", type=int, default=15, show_default=True, help="Cold `recall` processes per size."
)
@click.option(
    "--write-sample",
    type=int,
    default=2000,
    show_default=True,
    help="Memories written by each timed add-batch: into fresh stores, and into a copy of "
    "each built store (ingest at scale); 0 times no writes.",
)
@click.option("--seed", type=int, default=42, show_default=True, help="Seed of the corpus.")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False),
    help="Where stores are built and reused (default: the user cache dir, memlane/bench).",
)
@click.option("--rebuild", is_flag=True, help="Build the stores again even if reusable.")
@click.option(
    "--trusted-build",
    is_flag=True,
    help="Build stores from lines marked allow_duplicate: capture screens every memory, "
    "the duplicate, near-duplicate and contradiction checks are left out (a store "
    "apart from the checked one; the report says so).",
)
@click.option("--out", type=click.Path(dir_okay=False), help="Write the results as JSON.")
@click.option(
    "--backend",
    type=click.Choice(["sqlite", "postgres"]),
    default="sqlite",
    show_default=True,
    help="postgres: ingest and recall on PostgreSQL next to "
    "SQLite, same corpus, same run (needs --pg-url).",
)
@click.option(
    "--pg-url",
    metavar="URL",
    help="With --backend postgres: a server URL whose user may create databases.",
)
@json_option
@click.pass_context
def bench_cmd(
    ctx: click.Context,
    sizes: str,
    profile: str,
    queries: int,
    cold_runs: int,
    write_sample: int,
    seed: int,
    directory: str | None,
    rebuild: bool,
    trusted_build: bool,
    out: str | None,
    backend: str,
    pg_url: str | None,
    as_json: bool,
) -> None:
    """Build synthetic stores and time recall, cold starts, writes; report store sizes
    (--backend postgres: PostgreSQL next to SQLite). `bench writers` times concurrent
    writers instead.

    Each store of --sizes holds a seeded corpus (Zipf-distributed software vocabulary,
    titles and bodies of 1-4 sentences, tags, kinds, four scopes) with vectors of --profile
    (`hash` by default: with MiniLM, embedding the corpus is most of a large store's
    build). For each
    size it reports in-process recall p50/p95 (hybrid and keyword-only), hybrid recall
    beside the floor (a plain reciprocal-rank fusion of an HNSW index and BM25 over the
    same memories and vectors, timed in turn with the same queries; needs the bench
    extra, `pip install 'memlane[bench]'`, and is skipped without it and in stores
    of more than 100,000 memories, where building its index outlasts the rest) with recall's
    latency as a multiple of the floor's, the vector lane
    alone and the vector index against an exact scan (latency, top-10 agreement), a cold
    `memlane recall` process (--cold-runs, after one warm-up run), add-batch throughput at
    scale and on a --write-sample with and without embeddings, the store and index sizes on
    disk, and what the vector index pays to catch up after a write and to read every vector
    again.

    Ingest at scale: --write-sample new memories go through add-batch, write policy on,
    into a copy of each built store, once keyword-only and once with the --profile's
    vectors; the embedder alone embeds the same texts in the same run, and the report gives
    ingest with vectors over the embedder's own rate (goals at 10^5: at least 5,000/s
    keyword-only, 2,000/s with hash vectors, and 0.85 of the embedder).

    Stores live in --dir and are reused when built with the same size, profile and --seed
    (--rebuild forces a new build). Before the in-process measures, the store and index
    files are read once so the operating system caches them, as it would for a long-running
    process. The report opens with the machine's speed at the start and the end of the run
    (a fixed Python and SQLite workload, in ms): on a shared machine whose speed changes,
    compare latencies only between runs with like figures. The goal column gives the goals
    (hybrid recall p50 at most 15 ms at 10^5 and 60 ms at 10^6, at most 1.2 times the
    floor's at 10^5, a cold recall at most 400 ms at 10^5, a 10^6 store built in at most
    30 minutes), each marked `met` or `MISSED` when the run measured that size."""
    if ctx.invoked_subcommand is not None:
        return
    from memlane.benchmark import report, scale

    if queries < 1:
        fail("--queries must be at least 1")
    if backend == "postgres":
        if not pg_url:
            fail("--backend postgres needs --pg-url URL")
        from memlane.benchmark import backends

        with progress_steps("bench", as_json) as step:
            compared = backends.run(_sizes(sizes), pg_url, profile, queries, seed, progress=step)
        _finish(compared, backends.text, out, as_json)
        return
    plan = scale.Plan(
        sizes=_sizes(sizes),
        directory=Path(directory).expanduser() if directory else _default_dir(),
        profile=profile,
        queries=queries,
        cold_runs=cold_runs,
        write_sample=write_sample,
        seed=seed,
        rebuild=rebuild,
        trusted=trusted_build,
    )
    with progress_steps("bench", as_json) as step:
        data: dict[str, Any] = scale.run(plan, progress=step)
    _finish(data, report.text, out, as_json)


def _finish(
    data: dict[str, Any], table: Callable[[dict[str, Any]], str], out: str | None, as_json: bool
) -> None:
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if as_json:
        emit_json(data)
        return
    click.echo(table(data))
    if out:
        click.echo(f"wrote {out}")


@bench_cmd.command("writers")
@click.option(
    "--writers",
    type=int,
    default=8,
    show_default=True,
    help="Writer processes, each with its own Memory on the one store.",
)
@click.option(
    "--writes",
    type=int,
    default=50,
    show_default=True,
    help="Timed adds per writer (after one untimed warm-up add each).",
)
@_profile("Embedding profile the writers embed with.")
@click.option("--seed", type=int, default=42, show_default=True, help="Seed of the texts.")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False),
    help="Where the fresh store is made and removed (default: the temp dir).",
)
@click.option("--out", type=click.Path(dir_okay=False), help="Write the results as JSON.")
@json_option
def writers_cmd(
    writers: int,
    writes: int,
    profile: str,
    seed: int,
    directory: str | None,
    out: str | None,
    as_json: bool,
) -> None:
    """Start writer processes on one fresh store at the same moment and time each add:
    p50/p95/p99/max wait, writes per second, and that every acknowledged write landed.

    Each writer has its own `Memory` and the --profile embedder, lands one untimed warm-up
    memory, and then all are released together; each of their --writes adds (distinct texts
    of the seeded corpus) goes through the full write policy and auto-anchoring, as `memlane
    add` writes. It reports the outcome counts, how many memories the store holds, and how
    many acknowledged writes it lacks (0, or the run is broken), with the goal (a p99 of at
    most 2 s with 8 writers) marked `met` or `MISSED`. The store is made in --dir and
    removed after."""
    from memlane.benchmark import writers as bench_writers

    if writers < 1 or writes < 1:
        fail("--writers and --writes must be at least 1")
    where = Path(directory).expanduser() if directory else None
    if where is not None:
        where.mkdir(parents=True, exist_ok=True)
    plan = bench_writers.WritersPlan(writers, writes, profile, seed, where)
    with progress_steps("bench writers", as_json) as step:
        data = bench_writers.run(plan, progress=step)
    _finish(data, bench_writers.text, out, as_json)
