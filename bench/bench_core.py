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
import itertools
import json
import random
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from _machine import machine_info
from memlane import Context, Memory
from memlane.memory import BATCH_CHUNK
from memlane.store.sqlite.sql import fts_query

GOAL_ADD_PER_S = 5_000.0
GOAL_SEARCH_P50_MS = 5.0
WARMUP_QUERIES = 20

# ---- vocabulary ------------------------------------------------------------


def _words(text: str) -> list[str]:
    return text.split()


STOPWORDS = _words("""
the to and of a in is for on that with we it this be as by not when from are or at
use if an all should after before but into only so must no
""")

NOUNS = _words("""
cache queue worker service server client request response timeout retry backoff token
session user account login password secret key certificate config setting flag feature
release deploy deployment build pipeline job runner artifact image container cluster node
pod namespace volume disk memory cpu thread process lock mutex deadlock race condition
transaction commit rollback migration schema table column index query database replica
shard partition backup snapshot restore log logger metric dashboard alert alarm incident
outage latency throughput error exception stacktrace crash panic bug fix patch hotfix
regression test suite fixture mock stub assertion coverage benchmark profile trace span
endpoint route handler middleware proxy gateway balancer dns domain host port socket
connection pool limit quota rate budget cost invoice payment billing customer tenant
organization team owner reviewer review branch merge rebase conflict tag version semver
dependency package library module function method class interface type struct field
parameter argument return value variable constant enum string integer float boolean list
map array buffer stream file directory path folder bucket object blob upload download
storage network bandwidth packet protocol http grpc websocket json yaml toml csv parser
serializer encoder decoder schema validator validation permission role policy scope
audit compliance encryption signature hash checksum nonce salt vault credential oauth
jwt cookie header payload body message event topic subscriber publisher consumer producer
broker kafka redis postgres sqlite mysql mongo elasticsearch nginx docker kubernetes helm
terraform ansible jenkins github gitlab actions workflow cron scheduler timer interval
window batch chunk page cursor offset pagination filter sort order ranking score search
embedding vector model prompt agent tool memory context note reminder document readme
changelog spec design proposal decision tradeoff constraint requirement goal milestone
sprint ticket issue backlog estimate deadline priority severity oncall rotation handoff
runbook playbook procedure checklist template convention guideline standard lint
formatter linter compiler interpreter runtime sdk cli terminal shell script command
option default environment staging production sandbox preview canary rollout rollback
traffic region zone datacenter cloud instance vm machine laptop repo monorepo workspace
frontend backend api ui ux component widget form button modal layout theme font color
icon accessibility locale translation timezone date timestamp clock calendar schedule
notification email sms webhook callback integration plugin extension hook adapter
driver connector client library framework react vue django flask fastapi rails spring
""")

VERBS = _words("""
add remove update delete create read write load save parse render fetch send receive
retry cache flush evict expire refresh rotate revoke grant deny allow block skip ignore
validate verify check test mock stub measure profile trace log alert page notify escalate
deploy release ship build compile bundle package publish install upgrade downgrade pin
migrate backfill replay rebuild reindex compact vacuum prune archive restore backup
merge rebase revert squash cherry pick review approve reject comment document rename
refactor extract inline split join move copy clone fork sync mirror replicate shard
scale throttle limit queue schedule batch stream buffer encode decode serialize hash sign
encrypt decrypt authenticate authorize login logout register configure enable disable
toggle monitor debug reproduce investigate diagnose fix patch workaround handle catch
raise throw return yield await spawn kill restart reload drain cordon upgrade provision
""")

ADJECTIVES = _words("""
slow fast flaky stable broken stale fresh cold warm hot idle busy empty full large small
huge tiny old new legacy deprecated experimental internal external public private shared
global local remote primary secondary readonly writable async sync blocking concurrent
parallel sequential idempotent atomic durable transient persistent ephemeral critical
minor major breaking optional required default custom manual automatic nightly weekly
daily hourly noisy quiet verbose strict lenient safe unsafe secure insecure valid invalid
missing duplicate orphaned dangling pending failed succeeded partial complete
""")

KINDS: tuple[tuple[str, int], ...] = (
    ("fact", 28), ("decision", 12), ("lesson", 10), ("procedure", 8), ("preference", 6),
    ("event", 12), ("convention", 5), ("constraint", 3), ("task", 6), ("insight", 5),
    ("summary", 3), ("person", 1), ("thread", 1),
)  # fmt: skip
SCOPES: tuple[tuple[str, int], ...] = (
    ("global", 25), ("project:alpha", 30), ("project:alpha@main", 30), ("project:beta", 15),
)  # fmt: skip
TAG_POOL = _words("""
auth ci cd perf db frontend backend infra release security testing docs oncall migration
api billing search ux flaky outage postmortem tooling deps config observability logging
metrics alerting cache queue storage network k8s docker terraform python rust go typescript
sql schema data ml agent memory review style onboarding hiring planning roadmap cost
compliance privacy incident hotfix refactor tech-debt upgrade
""")
TICKET_PREFIXES = ("ALPHA", "BETA", "OPS", "SEC", "PR")


@dataclass(frozen=True)
class Vocabulary:
    """Word classes, each ranked; content words are sampled with Zipf-like weights."""

    stopwords: list[str]
    content: list[str]  # ranked, most frequent first
    nouns: list[str]
    verbs: list[str]
    stop_weights: list[float]
    content_weights: list[float]


def _zipf_cumulative(n: int, exponent: float, shift: float = 2.7) -> list[float]:
    """Cumulative Zipf-Mandelbrot weights 1 / (rank + shift) ** exponent."""
    total, out = 0.0, []
    for rank in range(1, n + 1):
        total += 1.0 / (rank + shift) ** exponent
        out.append(total)
    return out


def build_vocabulary(rng: random.Random) -> Vocabulary:
    nouns = list(dict.fromkeys(NOUNS))
    verbs = list(dict.fromkeys(VERBS))
    adjectives = list(dict.fromkeys(ADJECTIVES))
    words = list(dict.fromkeys([*nouns, *verbs, *adjectives]))
    rng.shuffle(words)
    # The long tail: code identifiers (one token each for FTS5) and error codes.
    combos = [v + n.capitalize() for v in verbs[:70] for n in nouns[:90]]
    identifiers = rng.sample(combos, 2000) + [f"E{rng.randrange(1000, 9999)}" for _ in range(250)]
    content = list(dict.fromkeys([*words, *identifiers]))
    stopwords = list(dict.fromkeys(STOPWORDS))
    return Vocabulary(
        stopwords=stopwords,
        content=content,
        nouns=nouns,
        verbs=verbs,
        stop_weights=_zipf_cumulative(len(stopwords), 1.0, shift=0.5),
        content_weights=_zipf_cumulative(len(content), 1.0),
    )


# ---- synthetic memories ----------------------------------------------------


class Generator:
    """Deterministic synthetic memories and queries from one seeded RNG."""

    def __init__(self, seed: int) -> None:
        # Separate streams: the queries do not change with --n, nor the corpus with --queries.
        self.vocab = build_vocabulary(random.Random(f"{seed}:vocabulary"))
        self.rng = random.Random(f"{seed}:memories")
        self.qrng = random.Random(f"{seed}:queries")
        self._kinds = [k for k, _ in KINDS]
        self._kind_w = [w for _, w in KINDS]
        self._scopes = [s for s, _ in SCOPES]
        self._scope_w = [w for _, w in SCOPES]

    def words(self, k: int, rng: random.Random | None = None) -> list[str]:
        v = self.vocab
        return (rng or self.rng).choices(v.content, cum_weights=v.content_weights, k=k)

    def stopword(self) -> str:
        v = self.vocab
        return self.rng.choices(v.stopwords, cum_weights=v.stop_weights, k=1)[0]

    def sentence(self) -> str:
        parts: list[str] = []
        for _ in range(self.rng.randint(2, 5)):
            if self.rng.random() < 0.7:
                parts.append(self.stopword())
            parts.extend(self.words(self.rng.randint(1, 2)))
        text = " ".join(parts)
        return text[0].upper() + text[1:] + "."

    def title(self) -> str:
        parts = self.words(self.rng.randint(2, 5))
        if self.rng.random() < 0.4:
            parts.insert(self.rng.randint(1, len(parts) - 1), self.stopword())
        text = " ".join(parts)
        return text[0].upper() + text[1:]

    def ticket(self) -> str:
        prefix = self.rng.choice(TICKET_PREFIXES)
        number = self.rng.randrange(1000, 100_000)
        return f"See {prefix}-{number}." if prefix != "PR" else f"Fixed in PR #{number}."

    def memory(self, sessions: int) -> dict[str, Any]:
        rng = self.rng
        body = " ".join(self.sentence() for _ in range(rng.randint(1, 4)))
        if rng.random() < 0.15:
            body += " " + self.ticket()
        item: dict[str, Any] = {
            "title": self.title(),
            "content": body,
            "kind": rng.choices(self._kinds, weights=self._kind_w, k=1)[0],
            "importance": rng.randint(1, 10),
            "scope": rng.choices(self._scopes, weights=self._scope_w, k=1)[0],
        }
        tags = rng.sample(TAG_POOL, rng.choices((0, 1, 2, 3, 4), weights=(20, 30, 25, 15, 10))[0])
        if tags:
            item["tags"] = tags
        if rng.random() < 0.4:
            item["session_id"] = f"sess-{rng.randrange(sessions):05d}"
        return item

    def memories(self, n: int) -> list[dict[str, Any]]:
        sessions = max(1, n // 40)
        return [self.memory(sessions) for _ in range(n)]

    def queries(self, n: int) -> list[tuple[str, str]]:
        """(shape, query) pairs: single/multi-word, common/rare, natural language, misses."""
        rng, content = self.qrng, self.vocab.content
        common = content[:60]
        mid = content[60:600]
        rare = content[1500:]
        nouns, verbs = self.vocab.nouns[:150], self.vocab.verbs[:80]
        natural = (
            "how do we {v} the {n}",
            "why did the {n} {v} after the {n2} change",
            "what is our {n} policy for {n2}",
            "when should we {v} {n}",
            "{n} {n2} not working",
            "where is the {n} {n2} configured",
        )
        shapes: list[tuple[str, float, Callable[[], str]]] = [
            ("1 common word", 0.12, lambda: rng.choice(common)),
            ("1 mid word", 0.10, lambda: rng.choice(mid)),
            ("1 rare word", 0.10, lambda: rng.choice(rare)),
            ("2 common words", 0.10, lambda: " ".join(rng.sample(common, 2))),
            ("common + rare", 0.10, lambda: f"{rng.choice(common)} {rng.choice(rare)}"),
            ("3 mixed words", 0.10, lambda: " ".join(self.words(3, rng))),
            ("prefix (word*)", 0.05, lambda: rng.choice(mid)[:4] + "*"),
            ("ticket number", 0.05, lambda: str(rng.randrange(1000, 100_000))),
            ("no match", 0.05, lambda: f"zq{rng.randrange(10**6)}x"),
            (
                "natural language",
                0.23,
                lambda: rng.choice(natural).format(
                    v=rng.choice(verbs), n=rng.choice(nouns), n2=rng.choice(nouns)
                ),
            ),
        ]
        counts = [max(1, round(n * share)) for _, share, _ in shapes]
        counts[-1] = max(1, counts[-1] + n - sum(counts))  # exactly n (rounding)
        out: list[tuple[str, str]] = []
        for (name, _, make), count in zip(shapes, counts, strict=True):
            out.extend((name, make()) for _ in range(count))
        rng.shuffle(out)
        return out


# ---- timing helpers --------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100]."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass
class Latency:
    count: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    mean_ms: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Latency:
        ms = [s * 1000.0 for s in seconds]
        return cls(
            count=len(ms),
            p50_ms=percentile(ms, 50),
            p95_ms=percentile(ms, 95),
            p99_ms=percentile(ms, 99),
            max_ms=max(ms) if ms else float("nan"),
            mean_ms=sum(ms) / len(ms) if ms else float("nan"),
        )


def time_each(fn: Callable[[Any], object], args: Iterable[Any]) -> list[float]:
    """Seconds taken by fn(arg) for each arg."""
    out = []
    for arg in args:
        start = time.perf_counter()
        fn(arg)
        out.append(time.perf_counter() - start)
    return out


def _marked(items: Iterable[Any], every: int, marks: list[tuple[int, float]]) -> Iterator[Any]:
    """Yield items, noting the time whenever `every` more have been handed out.

    With `every` a multiple of BATCH_CHUNK, add_batch has committed all items handed out
    before it asks for the next one, so each mark is a commit boundary.
    """
    for i, item in enumerate(items):
        if i and i % every == 0:
            marks.append((i, time.perf_counter()))
        yield item


# ---- benchmark steps -------------------------------------------------------


@dataclass
class AddResult:
    path: str
    count: int
    added: int
    failed: int
    seconds: float
    per_second: float
    first_tenth_per_second: float | None = None
    last_tenth_per_second: float | None = None
    db_bytes: int | None = None


def open_memory(path: Path, synchronous: str) -> Memory:
    ctx = Context(project="alpha", branch="main")
    return Memory.open(path, context=ctx, agent="bench", synchronous=synchronous)


def _db_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def add_batch(
    path: Path, items: Sequence[dict[str, Any]] | Sequence[str], synchronous: str, label: str
) -> tuple[AddResult, list[str]]:
    """Write items into a fresh store at `path`; the store is closed afterwards."""
    every = max(BATCH_CHUNK, len(items) // 10 // BATCH_CHUNK * BATCH_CHUNK)
    marks: list[tuple[int, float]] = []
    with open_memory(path, synchronous) as mem:
        start = time.perf_counter()
        result = mem.add_batch(_marked(items, every, marks))
        seconds = time.perf_counter() - start
    ids = [i for i in result.ids if i is not None]
    if result.failed or result.added != len(items):
        first = result.failed[0].error if result.failed else "-"
        print(
            f"warning: {label}: {result.added:,} of {len(items):,} added, "
            f"{len(result.failed):,} failed (first error: {first})"
        )
    points = [(0, start), *marks, (len(items), start + seconds)]
    rates = [(b[0] - a[0]) / (b[1] - a[1]) for a, b in itertools.pairwise(points)]
    return (
        AddResult(
            path=label,
            count=len(items),
            added=result.added,
            failed=len(result.failed),
            seconds=seconds,
            per_second=len(items) / seconds,
            first_tenth_per_second=rates[0] if len(rates) > 1 else None,
            last_tenth_per_second=rates[-1] if len(rates) > 1 else None,
            db_bytes=_db_bytes(path),
        ),
        ids,
    )


@dataclass
class ShapeResult:
    shape: str
    latency: Latency
    mean_results: float
    mean_and_matches: float  # rows matching every word (before scope/visibility filters)
    mean_or_matches: float  # rows matching any word: what the last fallback ranks
    fallback_share: float  # share of queries whose all-words match found nothing
    examples: list[str] = field(default_factory=list)


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
            a["path"], f"{a['count']:,}", f"{a['seconds']:.2f}", f"{a['per_second']:,.0f}",
            f"{first:,.0f}" if first else "-", f"{last:,.0f}" if last else "-",
            f"{a['db_bytes'] / 1e6:.1f}", _goal(a["per_second"] >= GOAL_ADD_PER_S),
        )  # fmt: skip
    console.print(adds)

    lat = Table(
        box=box.SIMPLE_HEAD, title=f"read latency at {p['n']:,} memories (ms)", title_justify="left"
    )
    for col in ("operation", "n", "p50", "p95", "p99", "max", "goal"):
        lat.add_column(col, justify="left" if col in ("operation", "goal") else "right")
    s = data["search"]["overall"]
    lat.add_row(
        "search(q, limit=10, scope=all)", str(s["count"]), f"{s['p50_ms']:.2f}",
        f"{s['p95_ms']:.2f}", f"{s['p99_ms']:.2f}", f"{s['max_ms']:.2f}",
        f"p50 <= 5 ms: {_goal(s['p50_ms'] <= GOAL_SEARCH_P50_MS)}",
    )  # fmt: skip
    for name, r in data["reads"].items():
        lat.add_row(
            name, str(r["count"]), f"{r['p50_ms']:.2f}", f"{r['p95_ms']:.2f}",
            f"{r['p99_ms']:.2f}", f"{r['max_ms']:.2f}", "",
        )  # fmt: skip
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
            r["shape"], str(la["count"]), f"{la['p50_ms']:.2f}", f"{la['p95_ms']:.2f}",
            f"{la['max_ms']:.2f}", f"{r['mean_results']:.1f}", f"{r['mean_and_matches']:,.0f}",
            f"{r['mean_or_matches']:,.0f}", f"{r['fallback_share']:.0%}", r["examples"][0],
        )  # fmt: skip
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
        "add_batch": [asdict(a) for a in adds],
        "search": {
            "overall": asdict(overall),
            "by_shape": [asdict(s) for s in shapes],
            "slowest": slowest,
        },
        "reads": {name: asdict(r) for name, r in reads.items()},
        "plans": plans,
    }
    print_report(data)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
