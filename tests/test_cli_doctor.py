"""`memlane doctor`: the store and the recall lanes, and what to do when one is absent."""

from __future__ import annotations


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
    assert "warn  vector lane  absent: no embedding profile" in result.stdout


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
