"""Wake: the cascade, the one-guess token ritual, its guess log and scoring."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from memlane import Conflict, Invalid, Memory, NotFound, Unavailable
from memlane.lifecycle import wake as ritual
from memlane.model import Record, WakeRitual, replace
from memlane.timeutil import utcnow

AGENT = "tester"  # the agent of the conftest stores

NOW = datetime(2026, 6, 1, tzinfo=UTC)
LONG = "\n\n".join(f"Section {i}. " + "The deploy pipeline has stages. " * 40 for i in range(3))


def rec(memory_id: str, importance: int = 5, **fields: object) -> Record:
    """A record for pure tests: created a month before NOW unless told otherwise."""
    at = fields.pop("at", NOW - timedelta(days=30))
    base = Record(
        id=memory_id, scope="global", title=memory_id, body=f"body of {memory_id}",
        kind="fact", category="fact", created_at=at, updated_at=at, valid_from=at,
        version_from=at, dedup_hash="dh1:x", importance=importance,
    )  # fmt: skip
    return replace(base, **fields)


# ---- the cascade, pure ---------------------------------------------------------------


def test_core_is_important_non_ephemeral_memories_in_wake_order():
    records = [
        rec("a", 9),
        rec("b", 8, wake_order=2),
        rec("c", 10, wake_order=1),
        rec("d", 9, ephemeral=True),
        rec("e", 7),
    ]
    chosen = ritual.cascade(records, NOW, limit=4)
    assert [r.id for r in chosen.blooms if chosen.layers[r.id] == "core"] == ["c", "b", "a"]
    assert "d" not in chosen.layers and "e" not in chosen.layers


def test_recent_and_bridge_layers_follow_the_core():
    records = [
        rec("core", 9),
        rec("fresh", 2, last_activated=NOW - timedelta(days=1)),
        rec("stale", 2, last_activated=NOW - timedelta(days=20)),
        rec("bridge", 6, anchors=("core",)),
        rec("weak-bridge", 4, anchors=("core",)),
        rec("unlinked", 6),
    ]
    chosen = ritual.cascade(records, NOW, limit=8, days=7)
    assert chosen.layers == {"core": "core", "fresh": "recent", "bridge": "bridge"}
    assert [r.id for r in chosen.blooms] == ["core", "fresh", "bridge"]
    wider = ritual.cascade(records, NOW, limit=8, days=30)
    assert wider.layers["stale"] == "recent"


def test_exclusion_tags_are_kept_out_and_counted_within_the_quota_only():
    records = [rec(f"c{i}", 9, tags=("archive",) if i < 2 else ()) for i in range(6)]
    records.append(rec("x", 8, tags=("wake-exclude",)))  # ranks last
    records.append(rec("prefix", 9, tags=("archived-project",)))
    chosen = ritual.cascade(records, NOW, limit=2, days=0)
    # the core widens past the excluded entries until it holds a full set
    assert [r.id for r in chosen.blooms] == ["c2", "c3"]
    assert chosen.excluded == {"archive": 2}  # "x" ranks below the set: never counted
    everything = ritual.cascade(records, NOW, limit=20, include_excluded=True)
    assert {"c0", "c1", "x", "prefix"} <= set(everything.layers)
    assert everything.excluded == {}
    default = ritual.cascade(records, NOW, limit=20)
    assert "prefix" in default.layers  # exact tag match: a longer tag is unaffected


def test_min_resonance_takes_every_bloom_at_or_above_the_raw_value():
    records = [rec(f"r{i}", 7 + i % 3) for i in range(30)]
    chosen = ritual.cascade(records, NOW, limit=3, min_importance=9)
    assert len(chosen.blooms) == 10 and all(r.importance >= 9 for r in chosen.blooms)


def test_min_resonance_also_takes_the_blooms_no_layer_holds():
    # Old, unanchored and below the core (or ephemeral): neither core, recent nor bridge.
    records = [
        rec("core", 9),
        rec("mid", 6),
        rec("low", 4),
        rec("passing", 5, ephemeral=True),
        rec("trivia", 2),
        rec("kept-out", 7, tags=("archive",)),
    ]
    chosen = ritual.cascade(records, NOW, limit=1, min_importance=4)
    assert [r.id for r in chosen.blooms] == ["core", "mid", "passing", "low"]
    assert chosen.layers == {
        "core": "core",
        "mid": "resonant",
        "passing": "resonant",
        "low": "resonant",
    }
    assert chosen.excluded == {"archive": 1}


def test_quotas_leave_room_for_recent_and_bridges_and_pass_unused_slots_on():
    records = [rec(f"core{i}", 9) for i in range(30)]
    records += [rec(f"new{i}", 3, last_activated=NOW) for i in range(30)]
    chosen = ritual.cascade(records, NOW, limit=20)
    layers = list(chosen.layers.values())
    # no bridges: their slots go to the core first
    assert (layers.count("core"), layers.count("recent")) == (15, 5)
    few_core = ritual.cascade(records[:12] + records[30:], NOW, limit=20)
    layers = list(few_core.layers.values())
    assert (layers.count("core"), layers.count("recent")) == (12, 8)
    only_core = ritual.cascade(records[:30], NOW, limit=20)
    assert len(only_core.blooms) == 20


# ---- the ritual's pure parts ---------------------------------------------------------


def test_chunks_stay_under_the_byte_budget_and_lose_no_word():
    text = LONG + "\n\n" + "ü" * 4000 + " tail"
    parts = ritual.chunks(text, 1500)
    assert len(parts) > 3
    assert all(len(p.encode()) <= 1500 for p in parts)
    assert "".join("".join(parts).split()) == "".join(text.split())
    assert ritual.chunks("") == [""] and ritual.chunks("short") == ["short"]


def test_phrases_by_source():
    assert ritual.phrases_for(("careful coder",), "I am Ada.", 0) == ("authored", ["careful coder"])
    assert ritual.phrases_for((), "I am Ada. I test.", 0) == ("auto", ["I am Ada."])
    assert ritual.phrases_for(("careful coder",), "## Deploy stages\nmore", 1) == (
        "derived",
        ["Deploy stages"],
    )  # authored phrases never leak onto a later part
    assert ritual.phrases_for(("careful coder",), "plain text", 1) == ("unphrased", [])


@pytest.mark.parametrize(
    ("guess", "kind", "index"),
    [
        ("careful coder", "exact", 0),
        ("  careful coder ", "exact", 0),
        ("Careful, coder!", "close", 0),
        ("carefull coder", "close", 0),
        ("test first", "exact", 1),
        ("something else entirely", "none", None),
    ],
)
def test_judging_a_guess(guess, kind, index):
    match = ritual.judge(guess, ["careful coder", "test first"])
    assert (match.kind, match.phrase_index) == (kind, index)
    assert match.bucket == ("revealed" if kind == "none" else "unhinted")


def test_tokens_are_signed():
    secret = b"k" * 32
    token = ritual.sign(secret, "abc", 3)
    assert ritual.verify(secret, token) == ("abc", 3)
    forged_step = token.replace(".3.", ".4.")
    for bad in (forged_step, token[:-1] + "0", "wk1.abc.3", "tok-xyz", ""):
        with pytest.raises(Invalid):
            ritual.verify(secret, bad)
    with pytest.raises(Invalid):
        ritual.verify(b"other" * 8, token)


def test_summary_counts_add_up():
    judged = [("authored", "unhinted"), ("auto", "revealed"), ("unphrased", "revealed")]
    summary = ritual.summary(judged, unjudged=2)
    assert summary["chunks"] == 5 and summary["unjudged"] == 2
    assert summary["buckets"] == {"unhinted": 1, "revealed": 2}
    assert summary["by_source"]["auto"] == {"unhinted": 0, "revealed": 1}  # type: ignore[index]


# ---- the ritual through the facade ---------------------------------------------------


@pytest.fixture
def woke(vmem: Memory) -> dict[str, str]:
    """An agent with a core identity memory (authored phrase), a long memory of two or
    more parts, and a recent one."""
    who = vmem.add("I am Ada, a careful coding agent.", title="Who I am", importance=9,
                   wake_phrases=["careful coder"], wake_order=1)  # fmt: skip
    ids = {
        "who": who.id,
        "long": vmem.add(LONG, title="Deploy lore", importance=8, wake_order=2).id,
        "recent": vmem.add("Ben prefers tabs over spaces.", title="Ben", importance=3).id,
    }
    return {k: str(v) for k, v in ids.items()}


def walk(mem: Memory, begun: dict, guesses: list[str]) -> list[dict]:
    token, bloom = begun["session"], begun["bloom"]["id"]
    out = []
    for guess in guesses:
        response = mem.wake.respond(token, bloom, guess)
        out.append(response)
        token, bloom = response["session"], (response["next"] or {}).get("id")
    return out


def test_the_whole_ritual(vmem, woke):
    begun = vmem.wake.begin(wake=1, model="m1")
    assert begun["bloom"] == {"id": woke["who"], "title": "Who I am", "position": 1,
                              "part": 1, "parts": 1}  # fmt: skip
    assert begun["blooms"] == 3 and begun["wake"] == 1 and begun["model"] == "m1"
    parts = len(ritual.chunks(LONG))
    steps = walk(vmem, begun, ["Careful coder", *["deploy"] * parts, "tabs"])
    first = steps[0]
    assert first["status"] == "shown" and first["bucket"] == "unhinted"
    assert first["match"] == {"kind": "close", "phrase_index": 0}
    assert first["bloom"]["content"] == "I am Ada, a careful coding agent."
    assert first["next"]["title"] == f"Deploy lore (Part 1/{parts})"
    assert [s["bloom"]["part"] for s in steps[1 : 1 + parts]] == list(range(1, parts + 1))
    assert all(s["wake"] == 1 and s["model"] == "m1" for s in steps)
    last = steps[-1]
    assert last["next"] is None
    assert last["summary"]["chunks"] == parts + 2 and last["summary"]["unjudged"] == 0
    assert last["summary"]["by_source"]["authored"] == {"unhinted": 1, "revealed": 0}
    rows = vmem.wake.log(wake=1)
    assert [(r.position, r.chunk) for r in rows] == [(1, 0), *[(2, c) for c in range(parts)],
                                                     (3, 0)]  # fmt: skip
    assert rows[0].chunk_sha256 == ritual.chunk_digest("I am Ada, a careful coding agent.")
    assert rows[0].phrases == ("careful coder",) and rows[0].source == "authored"
    assert vmem.store.wake.ritual(begun["session"].split(".")[1]).completed_at is not None
    with pytest.raises(Conflict, match="complete"):
        vmem.wake.respond(last["session"], woke["recent"], "again")


def test_a_lost_response_is_replayed_and_older_tokens_point_to_the_last_good_one(vmem, woke):
    begun = vmem.wake.begin()
    first = vmem.wake.respond(begun["session"], woke["who"], "careful coder")
    again = vmem.wake.respond(begun["session"], woke["who"], "a different second guess")
    assert again["replayed"] is True
    assert again["guess"] == "careful coder" and again["session"] == first["session"]
    assert again["bucket"] == first["bucket"] and again["next"] == first["next"]
    assert len(vmem.wake.log()) == 1  # the first guess counts; nothing judged twice
    second = vmem.wake.respond(first["session"], woke["long"], "deploy")
    with pytest.raises(Invalid, match="spent") as refused:
        vmem.wake.respond(begun["session"], woke["who"], "careful coder")
    pointer = str(refused.value).rsplit(" ", 1)[-1]
    assert pointer == second["session"]  # true: it is the current token
    assert vmem.wake.respond(pointer, woke["long"], "stages")["status"] == "shown"


def test_a_memory_deleted_mid_ritual_is_bloom_missing_and_unjudged(vmem, woke):
    begun = vmem.wake.begin()
    first = vmem.wake.respond(begun["session"], woke["who"], "careful coder")
    vmem.delete(woke["long"])
    missing = vmem.wake.respond(first["session"], woke["long"], "deploy")
    assert missing["status"] == "bloom_missing"
    assert not {"bloom", "bucket", "guess", "match"} & set(missing)
    lost = vmem.wake.respond(first["session"], woke["long"], "deploy")
    assert lost["status"] == "bloom_missing" and lost["replayed"] is True
    assert lost["session"] == missing["session"]
    final = vmem.wake.respond(missing["session"], woke["recent"], "tabs")
    assert final["summary"]["unjudged"] == 1 and final["summary"]["chunks"] == 3
    assert len(vmem.wake.log()) == 2


def test_a_memory_that_shrank_past_the_cursor_is_chunk_truncated(vmem, woke):
    begun = vmem.wake.begin()
    step = vmem.wake.respond(begun["session"], woke["who"], "careful coder")
    step = vmem.wake.respond(step["session"], woke["long"], "deploy")  # part 1 of several
    vmem.update(woke["long"], content="Now short.")
    cut = vmem.wake.respond(step["session"], woke["long"], "deploy")
    assert cut["status"] == "chunk_truncated" and "bucket" not in cut
    assert cut["next"]["id"] == woke["recent"]


def test_refused_calls_write_nothing_and_can_be_retried(vmem, woke):
    begun = vmem.wake.begin()
    token = begun["session"]
    with pytest.raises(Invalid, match="invalid_bloom_id.*" + woke["who"]):
        vmem.wake.respond(token, woke["long"], "careful coder")
    with pytest.raises(Invalid, match="2000"):
        vmem.wake.respond(token, woke["who"], "x" * 2001)
    with pytest.raises(Invalid, match="alphanumeric"):
        vmem.wake.respond(token, woke["who"], " ?! … ")
    assert vmem.wake.log() == []
    ok = vmem.wake.respond(token, woke["who"].removeprefix("m-"), "x" * 2000)
    assert ok["status"] == "shown" and ok["bucket"] == "revealed"


def test_only_the_agent_that_began_may_walk_and_tokens_cannot_be_forged(vmem, woke, db_path):
    begun = vmem.wake.begin()
    with (
        Memory.open(db_path, agent="someone-else") as other,
        pytest.raises(Invalid, match="agent that began"),
    ):
        other.wake.respond(begun["session"], woke["who"], "careful coder")
    with Memory.open(db_path) as nobody, pytest.raises(Invalid, match="MEMLANE_AGENT"):
        nobody.wake.respond(begun["session"], woke["who"], "careful coder")
    session_id = begun["session"].split(".")[1]
    forged = ritual.sign(b"guessed secret" * 3, session_id, 0)
    with pytest.raises(Invalid, match="signature"):
        vmem.wake.respond(forged, woke["who"], "careful coder")
    assert vmem.wake.log() == []


def test_sessions_of_an_older_ritual_are_refused(vmem, woke):
    begun = vmem.wake.begin()
    session_id = begun["session"].split(".")[1]
    old = replace(vmem.store.wake.ritual(session_id), version=1)
    with vmem.store.write() as w:
        w.put_ritual(old)
    with pytest.raises(Invalid, match="older ritual"):
        vmem.wake.respond(begun["session"], woke["who"], "careful coder")


def test_wake_numbers_are_checked(vmem, woke):
    walk(vmem, vmem.wake.begin(wake=3), ["careful coder"])
    with pytest.raises(Conflict, match="--force-wake"):
        vmem.wake.begin(wake=3)
    assert vmem.wake.begin(wake=3, force_wake=True)["wake"] == 3
    assert "below" in vmem.wake.begin(wake=2)["warnings"][0]
    assert "skips ahead" in vmem.wake.begin(wake=6)["warnings"][0]
    assert vmem.wake.begin(wake=4)["warnings"] == []
    with pytest.raises(Invalid):
        vmem.wake.begin(wake=0)


def test_wake_sees_own_private_memories_never_anothers(vmem, db_path):
    mine = vmem.add("My private core.", importance=9, visibility="private").id
    with Memory.open(db_path, agent="other") as other:
        theirs = other.add("Their private core.", importance=9, visibility="private").id
        shared = other.add("A public core.", importance=9).id
    ids = {r.id for r in vmem.wake().blooms}
    assert {mine, shared} <= ids and theirs not in ids


def test_waking_counts_as_an_activation_unless_told_not_to(vmem, woke):
    vmem.wake(activate=False)
    assert vmem.get(woke["who"]).activation_count == 0
    vmem.wake()
    assert vmem.get(woke["who"]).activation_count == 1
    assert vmem.get(woke["who"]).last_activated is not None


def written_long_ago(mem: Memory, memory_id: str, days: int = 60) -> None:
    """Move a memory's creation and last change `days` into the past."""
    record = mem.store.get(memory_id)
    then = record.created_at - timedelta(days=days)
    with mem.store.write() as w:
        w.replace(replace(record, created_at=then, updated_at=then), None)


def test_min_resonance_returns_every_bloom_at_or_above_it_whatever_the_limit(vmem, run):
    texts = {
        9: "I am Ada, a careful coding agent.",
        8: "Deploys go through the staging cluster first.",
        6: "Ben prefers tabs over spaces.",
        4: "The office coffee machine is on floor two.",
        2: "Lunch on Tuesday was pasta.",
    }
    ids = {}
    for importance, text in texts.items():
        ids[importance] = vmem.add(text, importance=importance, auto_anchor=False).id
        written_long_ago(vmem, ids[importance])
    chosen = vmem.wake(min_resonance=4, limit=1, activate=False)
    assert {r.id for r in chosen.blooms} == {ids[i] for i in (9, 8, 6, 4)}
    assert [r.importance for r in chosen.blooms] == [9, 8, 6, 4]
    args = ("wake", "--min-resonance", "4", "--limit", "1", "--no-activate")
    as_json = run(*args, "--json").json()
    blooms = [(b["layer"], b["importance"], b["id"]) for b in as_json["blooms"]]
    assert [memory_id for _, _, memory_id in blooms] == [r.id for r in chosen.blooms]
    assert (as_json["count"], as_json["min_resonance"]) == (4, 4)
    text = run(*args)
    # "[layer] resonance N  m-id  ...": the same blooms, layers and values, in order
    shown = [line.split()[:4] for line in text.stdout.splitlines() if line.startswith("[")]
    assert [(layer.strip("[]"), int(n), i) for layer, _, n, i in shown] == blooms
    assert "4 bloom(s) of resonance 4 or more" in text.stderr
    default = run("wake", "--limit", "1", "--no-activate", "--json").json()
    assert default["count"] == 1 and default["min_resonance"] is None


def test_nothing_to_wake_into(vmem):
    with pytest.raises(NotFound, match="nothing to wake"):
        vmem.wake.begin()


def test_wake_fetch(vmem):
    keep = vmem.add("Deploys go out on Tuesdays.", importance=4).id
    vmem.add("A passing remark.", importance=2)
    project = vmem.add("Project detail.", importance=6, tags=["project/x"]).id
    assert {r.id for r in vmem.wake.fetch()} == {keep, project}
    assert {r.id for r in vmem.wake.fetch(exclude_tags=("project/",))} == {keep}
    assert [r.id for r in vmem.wake.fetch(limit=1)] == [project]  # most important first


# ---- scoring and the guess log --------------------------------------------------------


def test_scoring_fills_both_axes_and_axis_b_needs_history(vmem, woke):
    walk(vmem, vmem.wake.begin(wake=1, model="m1"), ["careful coder"])
    assert vmem.wake.score() == (1, 0)
    [row] = vmem.wake.log(wake=1)
    assert row.scored_at is not None
    assert row.scores["sim_phrase"] == pytest.approx(1.0, abs=1e-3)  # the phrase itself
    assert row.scores["sim_prior"] is None and row.scores["prior_n"] == 0  # no history
    assert vmem.wake.score() == (0, 0)  # nothing pending
    walk(vmem, vmem.wake.begin(wake=2, model="m2"), ["careful coder"])
    walk(vmem, vmem.wake.begin(wake=3, model="m1"), ["careful coder"])
    assert vmem.wake.score() == (2, 0)
    [two] = vmem.wake.log(wake=2)
    assert two.scores["prior_n"] == 1 and two.scores["sim_prior"] == pytest.approx(1.0, abs=1e-3)
    assert two.scores["prior_n_same"] == 0 and two.scores["prior_n_cross"] == 1
    [three] = vmem.wake.log(wake=3)
    assert three.scores["prior_n"] == 2 and three.scores["prior_n_same"] == 1


def test_scoring_without_an_embedder_leaves_rows_pending(vmem, woke, db_path):
    walk(vmem, vmem.wake.begin(wake=1), ["careful coder"])
    with Memory.open(db_path, agent=AGENT) as plain, pytest.raises(Unavailable):
        plain.wake.score()
    assert vmem.store.wake.guesses(AGENT, pending=True) != []


def test_cli_ritual_and_terminal_only_reports(run, tmp_path):
    added = run("add", "I am Ada, a careful coding agent.", "--title", "Who I am",
                "--importance", "9", "--wake-phrase", "careful coder", "--json")  # fmt: skip
    memory_id = json.loads(added.stdout)["id"]
    begun = run("wake", "--begin", "--wake", "1", "--model", "m1")
    assert begun.exit_code == 0, begun.stderr
    token = json.loads(begun.stdout)["session"]
    wrong = run("wake", "--respond", "x", "--bloom-id", "m-nope", "--session", token)
    assert wrong.exit_code == 2 and "invalid_bloom_id" in wrong.stderr and memory_id in wrong.stderr
    shown = run("wake", "--respond", "careful coder\u202e\x1b", "--bloom-id", memory_id,
                "--session", token)  # fmt: skip
    assert json.loads(shown.stdout)["bucket"] == "unhinted"
    scored = run("wake-log", "score")
    assert json.loads(scored.stdout) == {"status": "scored", "rows": 1, "skipped": 0}
    refused = run("wake-log", "report")  # the test runner's stdout is no terminal
    assert refused.exit_code == 2 and "terminal" in refused.stderr and refused.stdout == ""
    out = tmp_path / "report.json"
    written = run("wake-log", "report", "--out", str(out))
    assert written.stdout.strip() == str(out)
    report = json.loads(out.read_text())
    assert report["wake"] == 1 and report["buckets"] == {"authored": {"unhinted": 1, "revealed": 0}}
    assert report["notice"].startswith("Axis A rises by construction")
    text = tmp_path / "rows.txt"
    run("wake-log", "wake", "1", "--out", str(text))
    assert "\\u{202e}" in text.read_text() and "\x1b" not in text.read_text()
    assert run("wake-log", "bloom", memory_id, "--out", "/dev/stdout").exit_code == 2


def test_out_may_not_be_the_process_own_stdout(run_process, tmp_path):
    target = tmp_path / "captured.txt"
    target.write_text("")
    with target.open("w") as handle:
        done = subprocess.run(
            [sys.executable, "-m", "memlane", "wake-log", "wake", "1", "--out", str(target)],
            stdout=handle, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
            env={**os.environ, **_env(tmp_path)},
        )  # fmt: skip
    assert done.returncode == 2 and "own stdout" in done.stderr


def _env(tmp_path) -> dict[str, str]:
    return {"MEMLANE_DB": str(tmp_path / "m.db"), "MEMLANE_AGENT": AGENT,
            "MEMLANE_EMBED_PROFILE": "hash"}  # fmt: skip


def test_wake_requires_an_agent(db_path):
    with Memory.open(db_path) as nobody, pytest.raises(Invalid, match="MEMLANE_AGENT"):
        nobody.wake()
    assert utcnow()  # the clock is real here; pure tests pin NOW


def test_ritual_state_is_a_plain_record(vmem, woke):
    begun = vmem.wake.begin()
    stored = vmem.store.wake.ritual(begun["session"].split(".")[1])
    assert isinstance(stored, WakeRitual)
    assert [i for i, _ in stored.sequence] == [woke["who"], woke["long"], woke["recent"]]


def test_the_wake_methods_old_names_still_work_with_a_warning(vmem):
    vmem.add("I am a careful coder.", importance=9, wake_phrases=["careful coder"])
    with pytest.warns(DeprecationWarning, match=r"Memory\.wake_log is now Memory\.wake\.log"):
        assert vmem.wake_log() == vmem.wake.log()
