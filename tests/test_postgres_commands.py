"""The commands on PostgreSQL: migrate-store both ways, backup's refusal,
doctor's server checks, and a CLI round trip with `--db postgresql://...`.

A real server: `MEMLANE_TEST_PG_URL`, else a pgserver started once per session (the
`pg_server`/`pg_url` fixtures of tests/conftest.py: a fresh database per test).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from memlane import Context, Memory
from memlane.embed import get_embedder

pytest.importorskip("psycopg", reason="the postgres extra is not installed")

EVERYTHING = {"include_superseded": True, "include_private": True}


def _open(location: str, agent: str = "ada") -> Memory:
    return Memory.open(location, agent=agent, context=Context("proj", "main"),
                       embedder=get_embedder("hash"))  # fmt: skip


def _cli(*args: str, db: str | None = None, agent: str = "ada") -> subprocess.CompletedProcess[str]:
    env = {"MEMLANE_EMBED_PROFILE": "hash", "MEMLANE_AGENT": agent, "PATH": "/usr/bin:/bin"}
    if db is not None:
        env["MEMLANE_DB"] = db
    return subprocess.run([sys.executable, "-m", "memlane", *args], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def _fill(location: str) -> None:
    """Public, superseded and two agents' private memories, a reminder, a link."""
    with _open(location) as ada:
        first = ada.add("Use uv for installs.", title="Installs", session_id="s1").id
        old = ada.add("The API lives at api.example.com.", title="API host").id
        ada.supersede(old, "The API lives at api2.example.com.")
        ada.add("Ada's own note about Kubernetes.", private=True)
        ada.lifecycle.remind("in 2 hours", "check the deploy")
        assert first is not None
        ada.update(first, append=" Never pip.")
    with _open(location, agent="bob") as bob:
        bob.add("Bob keeps the staging password rotation notes.", private=True)
        bob.lifecycle.remind("in 3 hours", "rotate staging keys")


def _exports(location: str) -> dict[str, list[str]]:
    out = {}
    for agent in ("ada", "bob"):
        with _open(location, agent) as mem:
            out[agent] = list(mem.transfer.export_jsonl(**EVERYTHING))
    return out


def test_migrate_store_both_directions_gives_identical_exports(pg_url: str, tmp_path: Path) -> None:
    source, back = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    _fill(source)
    there = _cli("migrate-store", "--from", source, "--to", pg_url, "--json")
    assert there.returncode == 0, there.stderr
    report = json.loads(there.stdout)
    assert report["sent"] == report["target"] and report["sent"]["memory"] == 5
    assert report["sent"]["reminder"] == 2 and report["embedded"] == 4  # live ones
    assert "***" not in report["to"] or ":" in report["to"]
    again = _cli("migrate-store", "--from", source, "--to", pg_url)
    assert again.returncode == 2 and "--force" in again.stderr
    assert _cli("migrate-store", "--from", source, "--to", pg_url, "--force").returncode == 0
    home = _cli("migrate-store", "--from", pg_url, "--to", back)
    assert home.returncode == 0, home.stderr
    original = _exports(source)
    assert _exports(pg_url) == original and _exports(back) == original
    assert any("staging password" in line for line in original["bob"])
    assert not any("staging password" in line for line in original["ada"])


def test_migrate_store_refuses_a_missing_source(tmp_path: Path, pg_url: str) -> None:
    result = _cli("migrate-store", "--from", str(tmp_path / "none.db"), "--to", pg_url)
    assert result.returncode == 2 and "no store at" in result.stderr
    assert not (tmp_path / "none.db").exists()


def test_backup_and_restore_refuse_politely_on_postgres(pg_url: str, tmp_path: Path) -> None:
    for args in (("backup",), ("backup", "--out-dir", str(tmp_path)),
                 ("restore", "--from", str(tmp_path / "x.db"))):  # fmt: skip
        result = _cli(*args, db=pg_url)
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
        assert "pg_dump" in result.stderr and "memlane export" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_doctor_checks_the_server(pg_url: str) -> None:
    with _open(pg_url) as mem:
        mem.add("Vectors make the HNSW index.", title="Index")
    result = _cli("doctor", "--json", db=pg_url)
    checks = {c["name"]: c for c in json.loads(result.stdout)}
    assert checks["server"]["status"] == "ok" and "PostgreSQL" in checks["server"]["detail"]
    assert checks["vector extension"]["status"] == "ok"
    assert checks["indexes"]["status"] == "ok" and "embedding_hnsw_" in checks["indexes"]["detail"]
    assert "memory_terms" in checks["indexes"]["detail"]
    assert checks["pool"]["status"] == "ok" and "max" in checks["pool"]["detail"]
    for name in ("permissions", "vector index", "backup"):
        assert "n/a on PostgreSQL" in checks[name]["detail"]
    assert "sqlite" not in checks
    assert result.returncode == 0, result.stdout


def test_doctor_names_the_fix_of_a_missing_index(pg_url: str) -> None:
    import psycopg

    with _open(pg_url) as mem:
        mem.add("Vectors make the HNSW index.", title="Index")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP INDEX embedding_hnsw_384")
    result = _cli("doctor", "--json", db=pg_url)
    check = {c["name"]: c for c in json.loads(result.stdout)}["indexes"]
    assert check["status"] == "fail" and check["fix"].startswith("CREATE INDEX embedding_hnsw_384")
    assert result.returncode == 1


def test_cli_round_trip_with_a_postgres_url(pg_url: str) -> None:
    added = _cli("add", "Deploys go through the blue-green pipeline.", "--title", "Deploys",
                 "--tags", "ops", "--json", db=pg_url)  # fmt: skip
    assert added.returncode == 0, added.stderr
    memory_id = json.loads(added.stdout)["id"]
    recalled = _cli("recall", "how do deploys work", "--json", db=pg_url)
    assert recalled.returncode == 0, recalled.stderr
    assert memory_id in recalled.stdout
    exported = _cli("export", db=pg_url)
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert lines[0]["kind"] == "memlane-export"
    assert [r["id"] for r in lines if r["kind"] == "memory"] == [memory_id]


def test_a_scratch_database_is_a_store_for_its_context_only(pg_url: str) -> None:
    """What `bench --backend postgres` and `eval locomo --backend postgres` run in."""
    import psycopg

    from memlane.store.postgres.scratch import scratch_database

    with scratch_database(pg_url, "memlane_Test-Run") as location:
        with Memory.open(location, agent="t", context=Context("proj", "main")) as memory:
            assert memory.add("A note in a scratch store.").landed
            assert [r.body for r in memory.list(limit=0)] == ["A note in a scratch store."]
        name = urlsplit(location).path.lstrip("/")
        assert name.startswith("memlane_test_run_")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchall()
    assert found == []


def test_bench_puts_postgresql_next_to_sqlite(pg_server: str, tmp_path: Path) -> None:
    """`bench --backend postgres` end to end on a tiny corpus: both backends ingest,
    embed and answer the same queries; the machine's speed at both ends of the run."""
    out = tmp_path / "bench.json"
    result = _cli(
        "bench", "--backend", "postgres", "--pg-url", pg_server, "--sizes", "100",
        "--queries", "3", "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    (row,) = data["results"]
    for backend in ("sqlite", "postgres"):
        assert row[backend]["recall_hybrid"]["count"] == 3, backend
        assert row[backend]["recall_hybrid"]["p50_ms"] > 0, backend
        assert row[backend]["store_bytes"] > 100_000, backend  # the schema alone is larger
    speed = data["machine"]["calibration_ms"]
    assert speed["start"] > 0 and speed["end"] > 0
    assert f"a fixed workload took {speed['start']} ms at the start" in result.stdout
