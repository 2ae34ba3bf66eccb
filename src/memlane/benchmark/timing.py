"""Latency summaries: linear-interpolated percentiles in milliseconds."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import msgspec


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100]."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


class Latency(msgspec.Struct):
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
