"""`memlane reflect`: insights from new memories through a model command (a fake one,
tests/fakes/reflect_llm.py, with fixed, malformed, strange and slow answers), the
watermark and the novelty gate, pack operations held for approval with their diff,
and the deterministic part without a model."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import AGENT, CliResult
from memlane import Context, Memory, NotFound
from memlane.errors import Malformed
from memlane.lifecycle import reflect as policy
from memlane.model import Kind, LinkType

FAKE = Path(__file__).parent / "fakes" / "reflect_llm.py"
NOTES = [
    ("We deploy only after CI is green on main.", "decision"),
    ("Deploys wait for one reviewer's approval.", "convention"),
    ("The staging database is reset every night at 02:00.", "fact"),
    ("Ada prefers small pull requests with one concern each.", "preference"),
    ("Hotfixes still need a green CI run before deploy.", "lesson"),
]


def use_model(cli_env: dict[str, str], mode: str) -> None:
    cli_env["MEMLANE_LLM_CMD"] = f"{sys.executable} {FAKE} {mode}"


def add_notes(run: Callable[..., CliResult], notes: list[tuple[str, str]] = NOTES) -> list[str]:
    ids = []
    for text, kind in notes:
        out = run("add", text, "--kind", kind, "--importance", "7", "--json")
        assert out.exit_code == 0, out.stderr
        ids.append(out.json()["id"])
    return ids


def reflect(run: Callable[..., CliResult], *args: str) -> dict:
    out = run("reflect", *args, "--json")
    assert out.exit_code == 0, out.stderr
    return out.json()


def opened(db_path: Path) -> Memory:
    return Memory.open(db_path, agent=AGENT, context=Context("proj"))


def test_insights_are_stored_linked_to_their_sources_and_each_memory_reflected_once(
    run: Callable[..., CliResult], cli_env: dict[str, str], db_path: Path
) -> None:
    ids = add_notes(run)
    use_model(cli_env, "good")
    done = reflect(run)
    assert done["new"] == 5 and done["reflected"] == 5 and done["calls"] == 1
    assert len(done["insights"]) == 3 and done["breach"] is None and not done["malformed"]
    with opened(db_path) as mem:
        insight = mem.get(done["insights"][0])
        assert insight.kind is Kind.INSIGHT and policy.REFLECTION_TAG in insight.tags
        derives = {link.target for link in mem.graph.links(insight.id) if link.type is LinkType.DERIVES
                   and link.source == insight.id}  # fmt: skip
        assert derives == set(ids[:2])
    again = reflect(run)  # the watermark: nothing is new, insights are never re-read
    assert again["new"] == 0 and again["skipped"] == "no new memories to reflect on"
    add_notes(run, [("Rollbacks use the previous release's image tag.", "procedure")])
    assert reflect(run)["new"] == 1  # only what came since


def test_the_novelty_gate_waits_for_enough_new_memories(
    run: Callable[..., CliResult], cli_env: dict[str, str]
) -> None:
    add_notes(run, NOTES[:2])
    use_model(cli_env, "good")
    gated = reflect(run)
    assert gated["skipped"] == "2 new memories; the novelty gate wants 3" and gated["calls"] == 0
    assert reflect(run, "--min-new", "0")["reflected"] == 2


def test_drain_takes_every_batch_oldest_first(
    run: Callable[..., CliResult], cli_env: dict[str, str]
) -> None:
    add_notes(run)
    use_model(cli_env, "good")
    one = reflect(run, "--batch-size", "2", "--min-new", "1")
    assert one["reflected"] == 2 and one["calls"] == 1  # one batch without --drain
    rest = reflect(run, "--batch-size", "2", "--min-new", "1", "--drain")
    assert rest["new"] == 3 and rest["reflected"] == 3 and rest["calls"] == 2


def test_pack_operations_wait_for_approval_with_the_pack_diff(
    run: Callable[..., CliResult], cli_env: dict[str, str], db_path: Path
) -> None:
    ids = add_notes(run)
    use_model(cli_env, "good")
    done = reflect(run)
    ops = {p["op"]: p for p in done["proposals"]}
    assert set(ops) == {"add", "merge", "retire"}
    assert ops["add"]["diff"].startswith("--- pack before\n+++ pack after")
    lines = ops["add"]["diff"].splitlines()
    added = {line[1:] for line in lines if line.startswith("+- ")}
    removed = {line[1:] for line in lines if line.startswith("-- ")}
    [new] = added - removed  # the rest only moved
    assert new.startswith("- **Deploy gate**: Deploys need a green CI run and a reviewer. ((new)")
    assert f"-- We deploy only after CI is green on main. ({ids[0]}" in ops["merge"]["diff"]
    with opened(db_path) as mem:  # nothing applied yet
        assert all(mem.get(i).live for i in ids)
    waiting = run("reflect", "--list", "--json").json()["proposals"]
    assert [p["id"] for p in waiting] == [p["id"] for p in done["proposals"]]
    retired = ops["retire"]["ids"][0]
    applied = run("reflect", "--apply", ops["retire"]["id"], "--apply", ops["merge"]["id"],
                  "--json").json()["applied"]  # fmt: skip
    assert [a["error"] for a in applied] == [None, None]
    with opened(db_path) as mem:
        assert not mem.get(retired).live
        assert mem.get(retired).supersede_reason == "reflection: no longer true"
        merged = mem.get(applied[1]["result"][0])
        assert merged.body.startswith("Merged: ") and not mem.get(ids[0]).live
    left = run("reflect", "--list", "--json").json()["proposals"]
    assert [p["op"] for p in left] == ["add"]
    unknown = run("reflect", "--apply", "p-nothere")
    assert unknown.exit_code == 1 and unknown.stderr.count("\n") == 1  # not found, one line
    assert "p-nothere" in unknown.stderr


def test_what_an_agent_reflected_on_with_its_private_memories_stays_its_own(
    run: Callable[..., CliResult], cli_env: dict[str, str], db_path: Path
) -> None:
    """Alice reflects with a private memory in the prompt: her insights land private,
    her proposals (whose diffs quote it) are hers to list and apply, and what applying
    them writes is private too. Bob sees, lists and applies none of it."""
    cli_env["MEMLANE_AGENT"] = "alice"
    secret = run("add", "The quokka vault passphrase rotates on the first Monday.",
                 "--private", "--importance", "9", "--json").json()["id"]  # fmt: skip
    add_notes(run)
    use_model(cli_env, "good")
    done = reflect(run)
    assert done["insights"] and all(p["private"] for p in done["proposals"])
    assert any("quokka" in p["diff"] for p in done["proposals"])
    alice = Memory.open(db_path, agent="alice", context=Context("proj"))
    bob = Memory.open(db_path, agent="bob", context=Context("proj"))
    with alice, bob:
        for insight in done["insights"]:
            assert alice.get(insight).owner == "alice"
            with pytest.raises(NotFound):
                bob.get(insight)
        cli_env["MEMLANE_AGENT"] = "bob"
        assert run("reflect", "--list", "--json").json()["proposals"] == []
        add = next(p for p in done["proposals"] if p["op"] == "add")
        taken = run("reflect", "--apply", add["id"])
        assert taken.exit_code == 1 and "no pending proposal" in taken.stderr
        cli_env["MEMLANE_AGENT"] = "alice"
        waiting = run("reflect", "--list", "--json").json()["proposals"]
        assert [p["id"] for p in waiting] == [p["id"] for p in done["proposals"]]
        [applied] = run("reflect", "--apply", add["id"], "--json").json()["applied"]
        assert applied["error"] is None
        [added] = applied["result"]
        assert alice.get(added).owner == "alice"
        with pytest.raises(NotFound):
            bob.get(added)
        assert alice.get(secret).live


@pytest.mark.parametrize("private", [False, True])
def test_a_rewrite_written_from_private_memories_never_lands_in_a_public_one(
    run: Callable[..., CliResult], cli_env: dict[str, str], db_path: Path, private: bool
) -> None:
    if private:
        run("add", "The quokka vault passphrase rotates monthly.", "--private")
    ids = add_notes(run)
    use_model(cli_env, "rewrite")
    [proposal] = reflect(run)["proposals"]
    assert (proposal["op"], proposal["ids"], proposal["private"]) == ("rewrite", ids[-1:], private)
    [applied] = run("reflect", "--apply", proposal["id"], "--json").json()["applied"]
    with opened(db_path) as mem:
        if private:
            assert "written from private memories" in applied["error"]
            assert mem.get(ids[-1]).body == NOTES[-1][0]
        else:
            assert applied["error"] is None and mem.get(ids[-1]).body == "Rewritten."


def test_on_a_terminal_each_proposal_is_asked_about_and_only_a_yes_is_applied(
    run: Callable[..., CliResult], cli_env: dict[str, str], db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    import memlane.cli.reflect

    monkeypatch.setattr(memlane.cli.reflect, "on_terminal", lambda: True)
    add_notes(run)
    use_model(cli_env, "good")
    out = run("reflect", input="n\nn\ny\n")  # add: no, merge: no, retire: yes
    assert out.exit_code == 0, out.stderr
    assert out.stdout.count("Apply p-") == 3 and "applied p-" in out.stdout
    waiting = run("reflect", "--list", "--json").json()["proposals"]
    assert [p["op"] for p in waiting] == ["add", "merge"]
    retired = out.stdout.split("applied p-")[1].split(": ")[1].strip()
    with opened(db_path) as mem:
        assert not mem.get(retired).live


def test_a_malformed_batch_is_asked_again_once_then_waits_for_the_next_run(
    run: Callable[..., CliResult], cli_env: dict[str, str], db_path: Path
) -> None:
    add_notes(run)
    use_model(cli_env, "fixes")
    fixed = reflect(run)
    assert fixed["calls"] == 2 and len(fixed["insights"]) == 3 and not fixed["malformed"]
    add_notes(run, [(f"Note {i} about the release train cadence and its owners.", "fact")
                    for i in range(3)])  # fmt: skip
    for mode in ("malformed", "stranger"):
        use_model(cli_env, mode)
        skipped = reflect(run)
        assert skipped["calls"] == 2 and skipped["reflected"] == 0 and skipped["insights"] == []
        [why] = skipped["malformed"]
        assert ("JSON is malformed" if mode == "malformed" else "m-notshown") in why
    with opened(db_path) as mem:  # the batch was not marked reflected: it waits
        assert reflect(run)["new"] == 3
        assert len([r for r in mem.list(scope="all", limit=0) if r.kind is Kind.INSIGHT]) == 3


def test_one_reflection_at_a_time_and_not_during_a_consolidation(
    run: Callable[..., CliResult], cli_env: dict[str, str], db_path: Path
) -> None:
    add_notes(run)
    use_model(cli_env, "good")
    with opened(db_path) as other, other.maintenance.lock("consolidate"):
        busy = run("reflect")
        assert busy.exit_code == 2 and busy.stderr.count("\n") == 1
        assert "consolidate" in busy.stderr
        cli_env.pop("MEMLANE_LLM_CMD")
        assert reflect(run)["findings"] is not None  # reading needs no lock
    use_model(cli_env, "good")
    assert reflect(run)["reflected"] == 5  # the lock is free again


def test_a_slow_model_stops_the_run_on_its_budget(
    run: Callable[..., CliResult], cli_env: dict[str, str]
) -> None:
    add_notes(run)
    use_model(cli_env, "slow")
    cli_env["MEMLANE_LLM_TIMEOUT"] = "1"
    done = reflect(run)
    assert done["breach"].startswith("timeout") and done["reflected"] == 0
    assert done["insights"] == [] and reflect(run, "--min-new", "0")["new"] == 5
    text = run("reflect")
    assert "stopped early: timeout" in text.stderr and "5 memories wait" in text.stderr


def test_without_a_model_reflect_reports_the_deterministic_part_and_says_so(
    run: Callable[..., CliResult], cli_env: dict[str, str], mem: Memory, db_path: Path
) -> None:
    ids = add_notes(run, [
        *NOTES,
        ("We deploy only after the CI run is green on main.", "decision"),  # alike the first
        ("The staging database is reset every night at 03:00.", "fact"),
    ])  # fmt: skip
    with opened(db_path) as writer:
        writer.graph.contradict(ids[2], ids[6], "which hour?")
        old = export_dated(writer, "An old procedure nobody reviewed.", "2025-01-01T00:00:00Z")
    done = reflect(run)
    assert done["skipped"].startswith("no model") and done["calls"] == 0
    findings = done["findings"]
    assert any({ids[0], ids[5]} <= set(cluster) for cluster in findings["clusters"])
    assert findings["contradictions"] == [sorted([ids[2], ids[6]])]
    assert old in {s["id"] for s in findings["stale"]}
    assert done["batch"] == [old, *ids]  # what it would reflect on, oldest first
    assert reflect(run)["new"] == done["new"]  # nothing was marked reflected
    assert f"would reflect on: {old}, {ids[0]}," in run("reflect").stdout


def export_dated(mem: Memory, text: str, when: str) -> str:
    """A memory written `when` (through an export line, as an import from elsewhere)."""
    added = mem.add(text, kind="procedure", importance=7).id
    rows = [json.loads(line) for line in mem.transfer.export_jsonl()]
    row = next(r for r in rows if r.get("kind") == "memory" and r["id"] == added)
    mem.delete(added)
    row.update(id="m-old00001", created_at=when, updated_at=when, valid_from=when,
               version_from=when)  # fmt: skip
    report = mem.transfer.import_jsonl([json.dumps(row)])
    assert not report.errors, report.errors
    return "m-old00001"


# ---- the pure policy -------------------------------------------------------


def op(name: str, ids: list[str], content: str | None) -> dict:
    return {"insights": [], "ops": [{"op": name, "ids": ids, "content": content, "reason": "r"}]}


def test_answers_are_checked_against_the_schema_and_the_ids_shown() -> None:
    good = op("retire", ["m-p1"], None)
    good["insights"] = [{"content": "c", "sources": ["m-a1"]}]
    answer = policy.parse(json.dumps(good), ["m-a1"], ["m-p1"])
    assert answer.ops[0].op == "retire"
    bad = [
        ({"insights": [{"content": "c", "sources": ["m-p1"]}]}, "not among the new"),
        (op("merge", ["m-a1"], "x"), "at least 2"),
        (op("retire", ["m-a1"], "x"), "takes no content"),
        (op("rewrite", ["m-a1"], None), "needs content"),
        ({"insights": [{"content": "c", "sources": ["m-a1"]}] * 6}, "length <= 5"),
        (op("explode", [], None), "`$.ops[0].op`"),
    ]
    for data, why in bad:
        with pytest.raises(Malformed, match=re.escape(why)):
            policy.parse(json.dumps(data), ["m-a1"], ["m-p1"])
    with pytest.raises(Malformed):
        policy.parse("I think these memories are about deploys.", ["m-a1"], [])


def test_the_reflection_methods_old_names_still_work_with_a_warning(mem):
    with pytest.warns(DeprecationWarning, match=r"Memory\.proposals is now Memory\.reflection\."):
        assert mem.proposals() == []
    with pytest.warns(DeprecationWarning, match=r"Memory\.reflect is now Memory\.reflection\."):
        report = mem.reflect(None)
    assert report.calls == 0  # no model: the deterministic findings only
