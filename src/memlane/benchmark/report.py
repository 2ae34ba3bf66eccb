"""The scale benchmark's results as a plain-text table: one row per measure, one column
per store size, with the goal beside the measures that have one."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from memlane.benchmark.machine import speed_line

Row = tuple[str, Callable[[dict[str, Any]], float | str | None], str | None]


def _ms(value: float) -> str:
    return f"{value:,.1f}"


def _rate(value: float) -> str:
    return f"{value:,.0f}"


def _mb(value: float) -> str:
    return f"{value / 1e6:,.0f}" if value >= 1e7 else f"{value / 1e6:,.1f}"


ROWS: tuple[Row, ...] = (
    ("recall hybrid p50 ms", lambda r: _ms(r["recall_hybrid"]["p50_ms"]), "recall_hybrid_p50_ms"),
    ("recall hybrid p95 ms", lambda r: _ms(r["recall_hybrid"]["p95_ms"]), None),
    ("floor p50 ms (HNSW + bm25s, RRF)", lambda r: _floor(r, "floor", "p50_ms"), None),
    ("floor p95 ms", lambda r: _floor(r, "floor", "p95_ms"), None),
    ("recall hybrid p50 ms beside it", lambda r: _floor(r, "recall_hybrid", "p50_ms"), None),
    ("recall hybrid p95 ms beside it", lambda r: _floor(r, "recall_hybrid", "p95_ms"), None),
    ("recall / floor p50", lambda r: _ratio(r, "ratio_p50"), "recall_floor_ratio_p50"),
    ("recall / floor p95", lambda r: _ratio(r, "ratio_p95"), None),
    ("recall / floor p50, CPU time", lambda r: _ratio(r, "ratio_cpu_p50"), None),
    ("recall keyword-only p50 ms", lambda r: _ms(r["recall_keyword"]["p50_ms"]), None),
    ("recall keyword-only p95 ms", lambda r: _ms(r["recall_keyword"]["p95_ms"]), None),
    ("vector lane p50 ms", lambda r: _ms(r["vector_search"]["p50_ms"]), None),
    ("vector lane top-10 agreement", lambda r: f"{r['index']['agreement_at_10']:.2f}", None),
    ("cold recall hybrid p50 ms", lambda r: _cold(r, "hybrid"), "cold_recall_p50_ms"),
    ("cold recall keyword p50 ms", lambda r: _cold(r, "keyword"), None),
    ("build minutes (add-batch, embedding)", lambda r: f"{_build_minutes(r):.1f}", "build_minutes"),
    ("add-batch/s at scale, no vectors", lambda r: _rate(r["build"]["add_batch_per_second"]), None),
    ("add-batch/s sample, no vectors", lambda r: _write(r, "without_embeddings"), None),
    ("add-batch/s sample, embedded", lambda r: _write(r, "with_embeddings"), None),
    (
        "ingest/s into the store, keyword-only",
        lambda r: _ingest(r, "keyword"),
        "ingest_keyword_per_second",
    ),
    ("ingest/s into the store, vectors", lambda r: _ingest(r, "vectors"), "ingest_hash_per_second"),
    ("embedder alone/s, same texts", lambda r: _ingest(r, "embedder"), None),
    ("ingest with vectors / embedder", lambda r: _ingest(r, "ratio"), "ingest_to_embedder_ratio"),
    ("embedding/s at build", lambda r: _rate(r["build"]["embed_per_second"]), None),
    ("store MB (db+wal)", lambda r: _mb(r["store_bytes"]), None),
    ("vector index MB (file)", lambda r: _mb(r["index_bytes"]), None),
    ("vector index", lambda r: _index(r["index"]), None),
    ("index load s (file, or build)", lambda r: f"{r['index']['load_seconds']:.2f}", None),
    (
        "index catch-up s (after a write)",
        lambda r: _seconds(r["index"].get("catch_up_seconds")),
        None,
    ),
    (
        "index full rebuild s",
        lambda r: _seconds(r["index"].get("rebuild_seconds")),
        None,
    ),
)


def _floor(result: dict[str, Any], side: str, key: str) -> str:
    measured = result.get("floor", {})
    return _ms(measured[side][key]) if side in measured else "-"


def _ratio(result: dict[str, Any], key: str) -> str:
    measured = result.get("floor", {})
    return f"{measured[key]:.2f}" if key in measured else "-"


def _build_minutes(result: dict[str, Any]) -> float:
    build = result["build"]
    return float(build["add_batch_seconds"] + build["embed_seconds"]) / 60


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _cold(result: dict[str, Any], lane: str) -> str:
    cold = result["cold_recall"][lane]
    return _ms(cold["p50_ms"]) if cold.get("runs", 1) else "-"


def _write(result: dict[str, Any], label: str) -> str:
    written = result["write"].get(label)
    return "-" if written is None else _rate(written["per_second"])


def _ingest(result: dict[str, Any], key: str) -> str:
    ingest = result.get("ingest")
    if ingest is None:
        return "-"
    if key == "ratio":
        return f"{ingest['ratio']:.2f}"
    if key == "embedder":
        return _rate(ingest["embedder_per_second"])
    return _rate(ingest[key]["per_second"])


def _index(index: dict[str, Any]) -> str:
    if index["kind"] == "exact":
        return f"exact, {index['rows']:,} rows"
    return f"sign codes, {index['rows']:,} rows, {index['rescored']:,} re-scored"


# The measured value each goal is judged on, from one size's results (None: not measured).
GOAL_VALUES: dict[str, Callable[[dict[str, Any]], float | None]] = {
    "build_minutes": _build_minutes,
    "recall_hybrid_p50_ms": lambda r: r["recall_hybrid"]["p50_ms"],
    "cold_recall_p50_ms": lambda r: r["cold_recall"]["hybrid"].get("p50_ms"),
    "ingest_keyword_per_second": lambda r: _ingested(r, "keyword"),
    "ingest_hash_per_second": lambda r: _ingested(r, "vectors"),
    "ingest_to_embedder_ratio": lambda r: r["ingest"]["ratio"] if "ingest" in r else None,
    "recall_floor_ratio_p50": lambda r: r.get("floor", {}).get("ratio_p50"),
}


def _ingested(result: dict[str, Any], label: str) -> float | None:
    return result["ingest"][label]["per_second"] if "ingest" in result else None


def goal_cell(data: dict[str, Any], key: str | None) -> str:
    """The goal of a row at each size, and whether this run met it where it ran that size."""
    if key is None:
        return ""
    measured = {r["memories"]: GOAL_VALUES[key](r) for r in data["results"]}
    parts = []
    for size, limit in data["goals"].get(key, {}).items():
        part = f"<= {limit:g} @ {int(size):,}"
        value = measured.get(int(size))
        if value is not None:
            part += ": met" if value <= limit else ": MISSED"
        parts.append(part)
    for size, floor in data.get("floors", {}).get(key, {}).items():
        part = f">= {floor:g} @ {int(size):,}"
        value = measured.get(int(size))
        if value is not None:
            part += ": met" if value >= floor else ": MISSED"
        parts.append(part)
    return ", ".join(parts)


def _align(row: list[str], widths: list[int]) -> list[str]:
    """Names and goals to the left, numbers to the right."""
    last = len(row) - 1
    return [
        c.ljust(w) if i in (0, last) else c.rjust(w)
        for i, (c, w) in enumerate(zip(row, widths, strict=True))
    ]


def text(data: dict[str, Any]) -> str:
    """The table, a header naming machine and parameters, and how vectors were made."""
    m, p, results = data["machine"], data["parameters"], data["results"]
    head = [
        f"memlane bench  profile={p['embedder']} queries={p['queries']} "
        f"cold runs={p['cold_runs']} seed={p['seed']}",
        f"machine: {m['cpu_count']} cpu {m['cpu']}, python {m['python']}, sqlite {m['sqlite']}",
        *speed_line(m),
    ]
    cells = [
        [name, *(str(get(r)) for r in results), goal_cell(data, goal)] for name, get, goal in ROWS
    ]
    header = ["memories", *(f"{r['memories']:,}" for r in results), "goal"]
    widths = [max(len(row[i]) for row in [header, *cells]) for i in range(len(header))]
    lines = ["  ".join(_align(row, widths)) for row in [header, *cells]]
    notes = [f"vectors: {results[0]['build']['vectors']}"] if results else []
    cold = results[0]["cold_recall"]["hybrid"] if results else {}
    if cold.get("command"):
        notes.append(f"cold recall: `{cold['command']} recall QUERY --json`, a new process each")
    notes += _floor_notes(results)
    for r in results:
        trusted = " (trusted build: no duplicate checks)" if r["build"].get("trusted") else ""
        notes.append(f"store {r['memories']:,}: {r['store']}{trusted}" + _reused(r))
    return "\n".join([*head, "", *lines, "", *notes])


def _floor_notes(results: list[dict[str, Any]]) -> list[str]:
    """How the floor was made, or why it was skipped (once, not once per size)."""
    measured = [r["floor"] for r in results if "floor" in r]
    if not measured:
        return []
    if "skipped" in measured[0]:
        return [f"floor: skipped: {measured[0]['skipped']}"]
    return [
        f"floor: {measured[0]['method']}; timed in turn with recall, query by query "
        "(the 'beside it' rows)"
    ]


def _reused(result: dict[str, Any]) -> str:
    """Trigger: a store built by an earlier run. Why: its build's rates (add-batch at
    scale, embedding at build) are that run's, measured by the memlane of that day,
    and a build by today's code may differ tenfold. Outcome: the note says when they
    were measured."""
    if not result["reused_store"]:
        return ""
    built = datetime.fromtimestamp(result["build"]["built_at"], UTC).strftime("%Y-%m-%d %H:%M")
    return f" (reused: built {built} UTC; its 'at scale' and 'at build' rates are that build's)"
