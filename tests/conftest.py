"""Shared fixtures: real stores (SQLite files, or PostgreSQL databases), and the real CLI.

`MEMLANE_TEST_BACKEND=postgres` runs the store-backed tests on PostgreSQL: `db_path`
then names a fresh database on a real server instead of a file, so `mem`, `vmem` and
every test opening `db_path` through `Memory.open` use it. The server is
`MEMLANE_TEST_PG_URL`, or one the `pgserver` package starts (PostgreSQL 16 with
pgvector) once per session and xdist worker. Tests marked `sqlite_only` (they read the
file, talk to sqlite3, use WAL or snapshots) are skipped there.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from click.testing import CliRunner
from hypothesis import settings

from memlane import Context, Memory
from memlane.cli.main import cli

# Properties are checked, not timed: speed is measured by `memlane bench`, and a shared
# machine's load must not fail an example.
settings.register_profile("memlane", deadline=None)
settings.load_profile("memlane")

AGENT = "tester"
BACKEND = os.environ.get("MEMLANE_TEST_BACKEND", "sqlite")
if BACKEND not in ("sqlite", "postgres"):
    raise pytest.UsageError(f"MEMLANE_TEST_BACKEND={BACKEND!r}: sqlite or postgres")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if BACKEND != "postgres":
        return
    skip = pytest.mark.skip(reason="SQLite specific (MEMLANE_TEST_BACKEND=postgres)")
    for item in items:
        if item.get_closest_marker("sqlite_only"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The URL of a PostgreSQL server with pgvector (its maintenance database)."""
    given = os.environ.get("MEMLANE_TEST_PG_URL")
    if given:
        yield given
        return
    pgserver = pytest.importorskip("pgserver")
    import psycopg

    # Not under pytest's basetemp: another pytest run on the machine may rotate that away
    # (with the server's socket and data) while this session still runs.
    home = Path(tempfile.mkdtemp(prefix="memlane-test-pg-"))
    server = pgserver.get_server(home / "data", cleanup_mode="stop")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            # A throwaway server: durability only costs time here.
            for setting in ("fsync", "synchronous_commit", "full_page_writes"):
                conn.execute(f"ALTER SYSTEM SET {setting} = off")
            conn.execute("SELECT pg_reload_conf()")
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)


def with_database(url: str, name: str) -> str:
    """`url` naming database `name` instead."""
    return urlunsplit(urlsplit(url)._replace(path="/" + name))


def create_database(server: str, tag: str = "memlane", template: str | None = None) -> str:
    """A fresh database on `server` (empty, or a copy of `template`): its URL."""
    import psycopg

    name = f"{tag}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        copy = ""
        if template:
            # FILE_COPY (PostgreSQL 15+) copies a small database faster than WAL_LOG.
            strategy = " STRATEGY FILE_COPY" if conn.info.server_version >= 150000 else ""
            copy = f" TEMPLATE {template}{strategy}"
        conn.execute(f"CREATE DATABASE {name}{copy}")
    return with_database(server, name)


def drop_database(server: str, url: str) -> None:
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A fresh, empty database on the test server, dropped after the test."""
    url = create_database(pg_server)
    yield url
    drop_database(pg_server, url)


@pytest.fixture(scope="session")
def pg_template(pg_server: str) -> Iterator[str]:
    """A database with memlane's schema applied, which `pg_store` copies."""
    from memlane.store.postgres import PostgresStore

    url = create_database(pg_server, "memlane_template")
    PostgresStore(url).close()
    yield urlsplit(url).path.lstrip("/")
    drop_database(pg_server, url)


@pytest.fixture
def pg_store(pg_server: str, pg_template: str) -> Iterator[str]:
    """A fresh memlane store on the test server (its schema already applied): its URL.

    Trigger: every store-backed test under postgres. Why: creating a database and
    migrating it takes ~0.5 s, copying a migrated template ~0.1 s. Outcome: only the
    migration tests (`pg_url`) start from an empty database.
    """
    url = create_database(pg_server, template=pg_template)
    yield url
    drop_database(pg_server, url)


@pytest.fixture
def db_path(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """The test store's location: a file, or (on PostgreSQL) a fresh database's URL.

    Typed Path as most tests treat it; under postgres it is a `str` URL, which
    `Memory.open`, `open_store` and MEMLANE_DB all take.
    """
    if BACKEND == "postgres":
        return request.getfixturevalue("pg_store")  # type: ignore[no-any-return]
    return tmp_path / "memlane.db"


def store_schema() -> Any:
    """The schema module of the backend under test (its LATEST and MIGRATIONS)."""
    if BACKEND == "postgres":
        from memlane.store.postgres import schema
    else:
        from memlane.store.sqlite import schema  # type: ignore[no-redef]
    return schema


def raw_sql(location: str | Path, query: str, *params: Any) -> list[tuple[Any, ...]]:
    """Run one statement on the store at `location` outside memlane (`?` placeholders),
    committed; its rows."""
    if str(location).startswith("postgresql://"):
        import psycopg

        with psycopg.connect(str(location)) as conn:
            cursor = conn.execute(query.replace("?", "%s"), params)
            return cursor.fetchall() if cursor.description else []
    conn = sqlite3.connect(location)
    try:
        with conn:
            return conn.execute(query, params).fetchall()
    finally:
        conn.close()


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
        # A settings file of the test's own (none until a test writes it), never the user's.
        "MEMLANE_CONFIG": str(tmp_path / "settings.toml"),
        # The deterministic offline embedder keeps CLI tests fast; the real model has
        # its own integration tests.
        "MEMLANE_EMBED_PROFILE": "hash",
        # No background upkeep from a session-start hook: a test that wants it says so.
        "MEMLANE_HOOK_UPKEEP": "0",
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
