"""embed, reembed and search --mode through the CLI (the hash profile, see conftest)."""

from __future__ import annotations

import json


def add(run, text: str, *args: str) -> str:
    result = run("add", "--content", text, "--json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["id"]


def test_search_by_meaning_and_hybrid(run):
    target = add(run, "Kubernetes pods restart when the liveness probe fails.")
    add(run, "Invoices are due within thirty days.")
    for args in (["--mode", "vector"], ["--semantic"], ["--mode", "hybrid"]):
        result = run("search", "liveness probes restarting pods", *args, "--json", "--limit", "1")
        assert result.exit_code == 0, result.stderr
        assert [r["id"] for r in json.loads(result.stdout)["results"]] == [target]


def test_deferred_writes_are_embedded_later(run, cli_env):
    cli_env["MEMLANE_SKIP_WRITE_EMBED"] = "1"
    first = add(run, "Rotate the signing keys every quarter.")
    add(run, "Deploys freeze on Fridays.", "--no-embed")
    assert (
        json.loads(run("search", "signing keys rotation", "--mode", "vector", "--json").stdout)[
            "results"
        ]
        == []
    )
    del cli_env["MEMLANE_SKIP_WRITE_EMBED"]
    result = run("embed", "--pending", "--json")
    assert json.loads(result.stdout)["embedded"] == 2
    found = run("search", "signing keys rotation", "--mode", "vector", "--json", "--limit", "1")
    assert [r["id"] for r in json.loads(found.stdout)["results"]] == [first]
    assert json.loads(run("embed", "--pending", "--json").stdout)["embedded"] == 0


def test_embed_needs_exactly_one_target(run):
    result = run("embed")
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1


def test_reembed_dry_run_then_convert(run):
    add(run, "One memory.")
    add(run, "Another memory.")
    dry = run("reembed", "--all", "--profile", "hash", "--dry-run", "--json")
    assert json.loads(dry.stdout) == {
        "profile": "hash/fh1-blake2b/384",
        "memories": 2,
        "dry_run": True,
    }
    done = run("reembed", "--all", "--profile", "hash", "--json")
    assert json.loads(done.stdout)["memories"] == 2


def test_a_profile_other_than_the_stores_defers_the_write_with_the_command(run, cli_env):
    add(run, "Vectors made by the hash profile.")
    cli_env.update(
        MEMLANE_EMBED_PROFILE="http",
        MEMLANE_EMBED_URL="http://127.0.0.1:9",
        MEMLANE_EMBED_MODEL="m",
        MEMLANE_EMBED_DIM="8",
    )
    result = run("add", "--content", "Another one.")
    assert result.exit_code == 0
    assert "embedding deferred" in result.stderr
    assert "memlane reembed --all --profile http" in result.stderr
    listed = run("list", "--json")
    assert json.loads(listed.stdout)["count"] == 2
    recalled = run("recall", "another", "--json")
    assert recalled.exit_code == 0, recalled.stderr
    payload = json.loads(recalled.stdout)
    assert payload["count"] >= 1
    assert any("vector lane" in w and "reembed" in w for w in payload["warnings"])
    cli_env["MEMLANE_EMBED_PROFILE"] = "hash"
    caught_up = run("embed", "--pending", "--json")
    assert caught_up.exit_code == 0, caught_up.stderr
    assert json.loads(caught_up.stdout)["embedded"] == 1


def test_embed_draws_a_progress_bar_on_a_terminal_only(run, cli_env, tmp_path):
    import os
    import sys

    from terminal import on_terminal

    for i in range(3):
        run("add", f"Deferred note {i}.", "--no-embed")
    command = [sys.executable, "-m", "memlane", "embed", "--pending"]
    done, drawn = on_terminal(command, {**os.environ, **cli_env}, tmp_path)
    assert done.returncode == 0 and b"3 embedded" in done.stdout
    assert "embedding" in drawn and "100%" in drawn
    piped = run("embed", "--all")  # the test runner's stderr is not a terminal
    assert piped.exit_code == 0 and "embedding" not in piped.stderr


def test_long_only_embeds_again_only_texts_longer_than_n_tokens(run):
    short = add(run, "Hyperparameterisation notwithstanding, internationalisation.")  # 3 words
    long = add(run, "Runbook: " + " ".join(f"step{i}" for i in range(40)))  # hash: words
    alone = json.loads(run("embed", "--long-only", "30", "--json").stdout)
    assert alone["ids"] == [long]
    both = json.loads(run("embed", "--all", "--long-only", "2", "--json").stdout)
    assert sorted(both["ids"]) == sorted([short, long])
    bad = run("embed", "--long-only", "0")
    assert bad.exit_code == 2 and "--long-only" in bad.stderr
