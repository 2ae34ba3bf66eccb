"""Shared fixtures: real SQLite stores in temporary directories, and the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlane import Context, Memory
from memlane.cli.main import cli

AGENT = "tester"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memlane.db"


@pytest.fixture
def mem(db_path: Path) -> Iterator[Memory]:
    """A Memory on a fresh file, writing from project `proj` on branch `main`."""
    with Memory.open(db_path, agent=AGENT, context=Context("proj", "main")) as memory:
        yield memory


@pytest.fixture
def vmem(db_path: Path) -> Iterator[Memory]:
    """`mem` with the deterministic hash embedder: vectors on write, a vector lane."""
    from memlane.embed import get_embedder

    with Memory.open(
        db_path, agent=AGENT, context=Context("proj", "main"), embedder=get_embedder("hash")
    ) as memory:
        yield memory


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> object:
        return json.loads(self.stdout)


@pytest.fixture
def cli_env(tmp_path: Path, db_path: Path) -> dict[str, str]:
    """Environment for CLI runs: the test store, an agent, an isolated alias map."""
    return {
        "MEMLANE_DB": str(db_path),
        "MEMLANE_AGENT": AGENT,
        "MEMLANE_PROJECT_ALIASES": str(tmp_path / "aliases.json"),
        # The deterministic offline embedder keeps CLI tests fast; the real model has
        # its own integration tests.
        "MEMLANE_EMBED_PROFILE": "hash",
    }


@pytest.fixture
def run(
    cli_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., CliResult]:
    """Run `memlane ARGS...` in-process (click's runner) from a project dir named `proj`."""
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    monkeypatch.chdir(project)

    def invoke(*args: str, input: str | bytes | None = None) -> CliResult:
        runner = CliRunner()
        result = runner.invoke(cli, list(args), input=input, env=cli_env, catch_exceptions=False)
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return invoke


@pytest.fixture
def run_process(
    cli_env: dict[str, str], tmp_path: Path
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run `memlane ARGS...` as a real process (python -m memlane)."""
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)

    def invoke(
        *args: str, input: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **cli_env}
        return subprocess.run(
            [sys.executable, "-m", "memlane", *args],
            input=input,
            capture_output=True,
            text=True,
            env=env,
            cwd=project,
            timeout=timeout,
        )

    return invoke
