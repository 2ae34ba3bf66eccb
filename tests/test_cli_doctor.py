"""`memlane doctor`: the store and the recall lanes, and what to do when one is absent."""

from __future__ import annotations

import pytest


def test_doctor_reports_every_lane(run):
    run("add", "Redis caches sessions.")
    checks = {c["name"]: c for c in run("doctor", "--json").json()}
    assert checks["store"]["status"] == "ok" and "1 live" in checks["store"]["detail"]
    assert checks["vector lane"]["status"] == "ok" and "fh1" in checks["vector lane"]["detail"]
    assert checks["vectors"]["status"] == "ok"
    assert checks["entity lane"]["status"] == "ok"


def test_doctor_says_when_the_vector_lane_is_absent(run, cli_env):
    cli_env["MEMLANE_EMBED_PROFILE"] = "none"
    run("add", "Redis caches sessions.")
    result = run("doctor")
    assert result.exit_code == 0
    assert "warn  vector lane      absent: no embedding profile" in result.stdout
    assert "fix: export MEMLANE_EMBED_PROFILE=minilm" in result.stdout


def test_doctor_reports_pending_vectors_and_a_profile_mismatch(run, cli_env):
    run("add", "Redis caches sessions.", "--no-embed")
    checks = {c["name"]: c for c in run("doctor", "--json").json()}
    assert (
        checks["vectors"]["status"] == "warn" and "embed --pending" in checks["vectors"]["detail"]
    )
    cli_env["MEMLANE_EMBED_PROFILE"] = "minilm"
    run("embed", "--all")
    cli_env["MEMLANE_EMBED_PROFILE"] = "hash"
    result = run("doctor")
    assert result.exit_code == 1 and "fail  vector lane" in result.stdout
    assert "memlane reembed --all --profile hash" in result.stdout


def _checks(run) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for check in run("doctor", "--json").json():
        out.setdefault(check["name"], []).append(check)
    return out


@pytest.mark.sqlite_only  # the checks of a SQLite file
def test_doctor_reads_sqlite_the_file_and_the_backups(run, db_path, tmp_path):
    run("add", "Redis caches sessions.")
    checks = _checks(run)
    [sqlite] = checks["sqlite"]
    assert sqlite["status"] == "ok" and "journal wal" in sqlite["detail"]
    assert "FTS5 present" in sqlite["detail"]
    [backup] = checks["backup"]
    assert backup["status"] == "warn" and backup["fix"] == "memlane backup"
    assert run("backup").exit_code == 0
    assert _checks(run)["backup"][0]["status"] == "ok"
    db_path.chmod(0o644)
    [perm] = _checks(run)["permissions"]
    assert perm["status"] == "warn" and perm["fix"] == f"chmod 600 {db_path}"
    assert _checks(run)["maintenance lock"][0]["status"] == "ok"


def test_doctor_reports_bad_settings_instead_of_refusing(run, cli_env):
    cli_env["MEMLANE_INJECT_BUDGET"] = "lots"
    cli_env["MEMLANE_RECALL_WEIGHTS"] = "0.9,0.9,0.1,0.1,0.1"
    result = run("doctor", "--json")
    assert result.exit_code == 1
    failed = [c for c in result.json() if c["name"] == "settings"]
    assert {c["status"] for c in failed} == {"fail"} and len(failed) == 2
    assert any("MEMLANE_INJECT_BUDGET" in c["fix"] for c in failed)
    assert any("MEMLANE_RECALL_WEIGHTS" in c["fix"] for c in failed)
    assert run("list").exit_code == 2  # every other command still refuses them


def test_doctor_names_the_token_reach_never_the_token(run, cli_env, tmp_path):
    cli_env["MEMLANE_MCP_TOKEN"] = "s3cr3t-operator-token"
    result = run("doctor")
    assert "s3cr3t" not in result.stdout + result.stderr
    assert "unscoped" in result.stdout
    scoped = tmp_path / "token.json"
    scoped.write_text('{"token": "s3cr3t-scoped", "namespaces": ["project:proj"]}')
    del cli_env["MEMLANE_MCP_TOKEN"]
    cli_env["MEMLANE_MCP_TOKEN_FILE"] = str(scoped)
    [token] = _checks(run)["mcp token"]
    assert token["status"] == "ok" and token["detail"] == "scoped to project:proj"
    scoped.write_text('{"token": "s3cr3t", "namespaces": []}')
    result = run("doctor")
    assert result.exit_code == 1 and "s3cr3t" not in result.stdout + result.stderr


def test_a_review_threshold_of_zero_is_a_settings_problem(run, cli_env):
    run("add", "Redis caches sessions.")
    cli_env["MEMLANE_REVIEW_THRESHOLD"] = "0"  # would make nothing due
    result = run("doctor", "--json")
    checks = {c["name"]: c for c in result.json()}
    assert checks["settings"]["status"] == "fail" and result.exit_code == 1
    assert "MEMLANE_REVIEW_THRESHOLD" in checks["settings"]["detail"]
    assert checks["review"]["status"] == "ok"  # doctor counted with the default instead
    stats = run("stats")
    assert stats.exit_code == 2 and "MEMLANE_REVIEW_THRESHOLD='0' is not valid" in stats.stderr
