"""What a benchmark ran on: CPU, platform, Python, SQLite and package versions."""

from __future__ import annotations

import os
import platform
import sqlite3
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any


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
