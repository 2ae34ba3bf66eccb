"""What a benchmark ran on: CPU, platform, Python, SQLite and package versions."""

from __future__ import annotations

import os
import platform
import sqlite3
import statistics
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from memlane.benchmark.timing import time_each


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or ""


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def calibrate(rounds: int = 5) -> float:
    """Milliseconds a fixed workload takes (median of `rounds`): Python objects and an
    in-memory SQLite scan, the mix recall runs.

    Trigger: a shared virtual machine whose speed can change twofold within an hour
    (the same code timing twice as slow in one run as in the next). Why: a latency is
    only comparable with one measured at the same speed. Outcome: the report gives this
    figure at the start and the end of a run.
    """
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (n INTEGER, word TEXT)")
    conn.executemany(
        "INSERT INTO t VALUES (?, ?)", ((i, f"w{i * 7919 % 10007}") for i in range(5000))
    )

    def once(_: object) -> None:
        seen: dict[int, tuple[int, str]] = {}
        for i in range(50_000):
            seen[i % 1000] = (i, str(i))
        conn.execute("SELECT count(*), sum(length(word)) FROM t WHERE word LIKE '%77%'").fetchone()

    try:
        return round(statistics.median(time_each(once, range(rounds))) * 1000, 2)
    finally:
        conn.close()


def with_speed(info: dict[str, Any], start: float) -> dict[str, Any]:
    """`info` with the calibration taken at a run's start (`start`) and now, its end."""
    return {**info, "calibration_ms": {"start": start, "end": calibrate()}}


def speed_line(machine: dict[str, Any]) -> list[str]:
    """The calibration as a report line (a run from before it was measured has none)."""
    speed = machine.get("calibration_ms")
    if not speed:
        return []
    return [
        f"machine speed: a fixed workload took {speed['start']} ms at the start, "
        f"{speed['end']} ms at the end (compare latencies with runs of a like figure)"
    ]


def machine_info(packages: Sequence[str] = ("memlane",)) -> dict[str, Any]:
    """CPU, platform, Python and SQLite, and the versions of `packages`."""
    return {
        "cpu_count": os.cpu_count(),
        "cpu": _cpu(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "sqlite": sqlite3.sqlite_version,
        "packages": {p: _version(p) for p in packages},
    }
