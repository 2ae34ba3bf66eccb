"""recall's per-call controls (global memories, link budget and hops, MMR), `recent
--as-of`, and the unfold of a question about a change into [PREVIOUSLY] states: pure
policies, the library, the CLI, the MCP tool and the prompt hook."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from memlane import Context, Invalid, Memory
from memlane.embed import get_embedder
from memlane.hooks import context
from memlane.model import Filters, Kind, Link, LinkType, Record, replace
from memlane.retrieve.expand import neighbours
from memlane.retrieve.recall import RecallOptions, capped, controlled, with_global
from memlane.retrieve.result import Prior
from memlane.retrieve.score import Scored
from memlane.retrieve.unfold import asks_about_change
from memlane.server.app import build_server
from memlane.server.backend import Backend

MYSQL = "The orders service stores its data in MySQL."
POSTGRES = "The orders service stores its data in PostgreSQL."
WHY = "MySQL's JSON support was too weak"
SWITCH = "why did we switch the orders service from MySQL"


# ---- detecting a question about a change (pure) -----------------------------------------

CHANGE_QUESTIONS = [
    "why did we switch from MySQL",
    "Why did we switch from MySQL to Postgres?",
    "what did we use before Postgres",
    "which CI did we have before GitHub Actions?",
    "when did we change the deploy target",
    "did we ever move off Heroku",
    "what changed in the release process",
    "we switched databases last spring, why?",
    "when was the cache replaced",
    "what replaced Jenkins",
    "did we drop support for Python 3.8",
    "migrated off Jenkins when?",
    "what did we migrate from",
    "moving away from REST",
    "we used to deploy on Fridays",
    "previously the API was REST, what is it now",
    "what do we use instead of Redis",
    "the logger we had before the switch",
    "how did we do this before, I used to know",
]
OTHER_QUESTIONS = [
    "switch statement in Go",
    "how do I change the port",
    "how do I change the port to 8080",
    "how to move the file to src/",
    "can we switch to dark mode in the editor",
    "run the tests before you deploy",
    "what do we run before deploy",
    "what database do we use",
    "why did the build fail",
    "network switch configuration",
    "replace the tabs with spaces",
    "did we go to the offsite",
    "deploy checklist",
]


@pytest.mark.parametrize("query", CHANGE_QUESTIONS)
def test_a_question_about_a_change_is_recognised(query):
    assert asks_about_change(query)


@pytest.mark.parametrize("query", OTHER_QUESTIONS)
def test_a_how_to_or_an_order_of_steps_is_not_a_question_about_a_change(query):
    assert not asks_about_change(query)


# ---- the controls as values (pure) -------------------------------------------------------


def test_controls_replace_the_settings_and_refuse_what_is_out_of_range():
    base = RecallOptions()
    asked = controlled(base, link_budget=5, link_hops=2, global_limit=1, mmr=False)
    assert (asked.link_budget, asked.link_hops, asked.global_limit) == (5, 2, 1)
    assert asked.mmr_lambda is None
    assert controlled(base, link_budget=None, mmr=True) == base  # None keeps the setting
    assert controlled(base, include_global=False).include_global is False
    for bad in ({"link_hops": 3}, {"link_hops": -1}, {"link_budget": -1},
                {"global_limit": True}, {"link_budget": "2"}, {"colour": 1}):  # fmt: skip
        with pytest.raises(Invalid):
            controlled(base, **bad)


def test_the_global_control_adds_or_takes_global_out_of_the_scopes_read():
    read = Filters(scopes=("project:p@main", "project:p", "global"))
    assert with_global(read, False).scopes == ("project:p@main", "project:p")
    assert with_global(Filters(scopes=("project:p",)), True).scopes == ("project:p", "global")
    assert with_global(read, None) == read
    assert with_global(Filters(scopes=None), False).scopes is None  # the limit does it


NOW = datetime(2026, 1, 1, tzinfo=UTC)


def record(memory_id: str, scope: str, text: str, **fields: Any) -> Record:
    return Record(memory_id, scope, text, text, Kind.FACT, "fact", NOW, NOW, NOW, NOW, "dh1:x",
                  **fields)  # fmt: skip


def _scored(memory_id: str, scope: str, score: float) -> Scored:
    return Scored(record(memory_id, scope, memory_id), score, score, {}, {})


def test_the_global_limit_keeps_the_best_global_candidates_and_names_the_rest():
    found = [_scored("g1", "global", 0.9), _scored("p1", "project:p", 0.8),
             _scored("g2", "global", 0.7), _scored("g3", "global", 0.6)]  # fmt: skip
    kept, over = capped(found, 1)
    assert [s.record.id for s in kept] == ["g1", "p1"] and over == ["g2", "g3"]
    assert capped(found, None) == (found, [])
    assert [s.record.id for s in capped(found, 0)[0]] == ["p1"]


def test_a_second_hop_skips_what_is_already_shown():
    links = {"b": [Link("a", "b", LinkType.RELATED), Link("b", "c", LinkType.RELATED)]}
    [found] = neighbours(["b"], links, budget=5, shown=["a"], hop=2)
    assert (found.id, found.via, found.hop) == ("c", "b", 2)


# ---- the library ---------------------------------------------------------------------------


def test_no_global_leaves_global_memories_out_and_the_limit_caps_them(mem):
    here = mem.add("Release checklist for this project.").id
    shared = [mem.add(f"Release checklist, shared version {i}.", scope="global").id
              for i in range(3)]  # fmt: skip
    every = {h.record.id for h in mem.recall("release checklist").hits}
    assert every == {here, *shared}
    assert [h.record.id for h in mem.recall("release checklist", include_global=False).hits] == [
        here
    ]
    limited = mem.recall("release checklist", global_limit=1)
    assert sum(h.record.scope == "global" for h in limited.hits) == 1
    assert len(limited.global_dropped) == 2 and here in {h.record.id for h in limited.hits}
    everywhere = mem.recall("release checklist", scope="all", include_global=False)
    assert [h.record.id for h in everywhere.hits] == [here]
    named = mem.recall("release checklist", scope="project:proj@main", include_global=True)
    assert {h.record.id for h in named.hits} == {here, *shared}
    assert named.settings["scopes"] == ["project:proj@main", "global"]


def test_explain_says_a_global_memory_was_left_out_by_the_limit(mem):
    mem.add("Release checklist for this project.")
    first = mem.add("Release checklist, shared.", scope="global").id
    second = mem.add("Release checklist, shared too.", scope="global").id
    found = mem.explain("release checklist", global_limit=1)
    assert found.result.settings["global_limit"] == 1
    dropped = {first, second} - {h.record.id for h in found.result.hits}
    [verdict] = mem.explain("release checklist", dropped.pop(), global_limit=1).verdicts
    assert (verdict.reason, verdict.detail) == ("over_global_limit", "--global-limit 1")
    [out] = mem.explain("release checklist", first, include_global=False).verdicts
    assert out.reason == "out_of_scope"


def test_the_link_budget_is_overridden_per_call(mem):
    claim = mem.add("Staging deploys run every night at two.").id
    for i in range(4):
        mem.graph.link(claim, mem.add(f"Unrelated neighbour number {i}.").id, "related")
    assert len(mem.recall("staging deploys").extras) == 2  # the setting's default
    assert len(mem.recall("staging deploys", link_budget=3).extras) == 3
    assert mem.recall("staging deploys", link_budget=0).extras == ()
    assert mem.recall("staging deploys", link_hops=0).extras == ()


def test_two_hops_follow_links_of_links_with_a_decaying_score(mem):
    claim = mem.add("Staging deploys run every night at two.").id
    near = mem.add("The nightly job is owned by the platform team.").id
    far = mem.add("The platform team sits in Lisbon.").id
    mem.graph.link(claim, near, "related")
    mem.graph.link(near, far, "supports")
    one = mem.recall("staging deploys", link_budget=5)
    assert [e.record.id for e in one.extras] == [near]
    two = mem.recall("staging deploys", link_budget=5, link_hops=2)
    assert [(e.record.id, e.neighbour.via, e.neighbour.hop) for e in two.extras] == [
        (near, claim, 1), (far, near, 2),
    ]  # fmt: skip
    top = two.hits[0].score
    assert [e.score for e in two.extras] == pytest.approx([top * 0.5, top * 0.25])
    assert two.settings["link_hops"] == 2


DEPLOYS = ["Deploys go out on Tuesday mornings.", "Deploys go out on Tuesday mornings only.",
           "Deploys go out every Tuesday morning.",
           "Deploys need a green CI run and a Tuesday slot."]  # fmt: skip


def test_no_mmr_ranks_by_score_alone(mem):
    for text in DEPLOYS:
        mem.add(text, allow_duplicate=True)
    mem.recall_settings = replace(mem.recall_settings, mmr_lambda=0.3)  # strong diversity
    diverse = mem.recall("deploys tuesday", limit=3, count=False)
    plain = mem.recall("deploys tuesday", limit=3, count=False, mmr=False)
    scores = [h.score for h in plain.hits]
    assert scores == sorted(scores, reverse=True)
    assert [h.record.id for h in diverse.hits] != [h.record.id for h in plain.hits]
    assert (diverse.settings["mmr_lambda"], plain.settings["mmr_lambda"]) == (0.3, None)
    assert (diverse.settings["mmr"], plain.settings["mmr"]) == (True, False)


# ---- change-intent unfold --------------------------------------------------------------------


def switched(mem: Memory) -> tuple[str, str]:
    """MySQL, superseded by PostgreSQL with a reason: (old id, new id)."""
    old = mem.add(MYSQL).id
    new = mem.supersede(old, POSTGRES, reason=WHY).id
    return old or "", new or ""


def test_a_question_about_a_change_shows_what_the_answer_replaced(mem):
    old, new = switched(mem)
    result = mem.recall(SWITCH)
    assert [h.record.id for h in result.hits] == [new]
    [prior] = result.previously
    assert (prior.record.id, prior.of, prior.reason, prior.version) == (old, new, WHY, None)
    assert prior.valid_to == prior.record.superseded_at and not prior.record.live
    assert result.settings["unfold"] is True
    plain = mem.recall("orders service data store")
    assert plain.previously == () and plain.settings["unfold"] is False
    assert mem.recall(SWITCH, unfold=False).previously == ()


def test_a_change_question_naming_only_the_old_finds_what_replaced_it(mem):
    mem.add("Billing emails go out on the first of the month.")
    old = mem.add("We use MySQL").id
    new = mem.supersede(old, "We use PostgreSQL", reason=WHY).id
    result = mem.recall("why did we switch from MySQL")  # no vector lane: words alone
    assert [(h.record.id, set(h.ranks)) for h in result.hits] == [(new, {"bm25"})]
    assert [p.record.id for p in result.previously] == [old]
    assert mem.recall("MySQL").hits == ()  # not a change question: the present only


def test_the_unfold_walks_content_versions_and_chains_newest_first(mem):
    first = mem.add("The orders service stores its data in SQLite.").id
    mem.update(first, content=MYSQL, reason="SQLite could not take the writes")
    second = mem.supersede(first, "The orders service stores its data in MariaDB.",
                           reason="licence").id  # fmt: skip
    head = mem.supersede(second, POSTGRES, reason=WHY).id
    result = mem.recall("what did the orders service use before PostgreSQL?")
    assert result.hits[0].record.id == head
    told = [(p.record.id, p.version, p.record.body, p.reason) for p in result.priors_of(head)]
    assert told == [
        (second, None, "The orders service stores its data in MariaDB.", WHY),
        (first, None, MYSQL, "licence"),
        (first, 1, "The orders service stores its data in SQLite.",
         "SQLite could not take the writes"),
    ]  # fmt: skip


def test_an_unfold_fits_the_token_budget_before_linked_neighbours(mem):
    old, new = switched(mem)
    roomy = mem.recall(SWITCH, max_tokens=1000)
    tight = mem.recall(SWITCH, max_tokens=roomy.tokens_used - 1)
    assert [p.record.id for p in roomy.previously] == [old]
    assert tight.previously == () and [h.record.id for h in tight.hits] == [new]


def test_a_passive_read_holds_back_a_risky_prior_state(mem):
    old = mem.add(MYSQL, taint="untrusted_web").id
    mem.supersede(old, POSTGRES, reason=WHY, taint="trusted_internal")
    explicit = mem.recall(SWITCH, count=False)
    passive = mem.recall(SWITCH, passive=True, count=False)
    assert [p.record.id for p in explicit.previously] == [old]
    assert passive.previously == ()


def test_explain_names_a_prior_state(mem):
    old, new = switched(mem)
    verdicts = {v.id: v for v in mem.explain(SWITCH).verdicts}
    assert verdicts[new].reason == "found"
    assert (verdicts[old].reason, verdicts[old].detail) == ("previously", f"before {new}; {WHY}")


# ---- the CLI -------------------------------------------------------------------------------------


def added(run: Any, *args: str) -> str:
    done = run("add", *args, "--json")
    assert done.exit_code == 0, done.stderr
    return str(done.json()["id"])


USER_MYSQL = "We use MySQL for the orders database."
USER_POSTGRES = "We use PostgreSQL for the orders database."


@pytest.mark.integration
def test_cli_recall_unfolds_a_switch_in_text_and_json(run, cli_env):
    """A new user's path: a fresh store on the default profile (MiniLM, whose floor
    applies), where only the superseded memory names what the question asks about."""
    del cli_env["MEMLANE_EMBED_PROFILE"]
    assert run("settings", "get", "embed_profile").stdout.strip() == "minilm"
    old = added(run, "--content", USER_MYSQL)
    done = run("supersede", old, "--content", USER_POSTGRES, "--reason", WHY)
    assert done.exit_code == 0, done.stderr
    for asked in ("why did we switch from MySQL", "why did we switch from MySQL to PostgreSQL"):
        text = run("recall", asked)
        assert text.exit_code == 0, text.stderr
        lines = text.stdout.splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith("- [fact] We use Postg"))
        under = lines[head + 2]
        assert under.startswith("  - We use MySQL for the orders database [PREVIOUSLY]"), asked
        assert old in under and WHY in under
    data = run("recall", "why did we switch from MySQL", "--json").json()
    [result] = data["results"]
    [prior] = result["previously"]
    assert result["id"] != old and not data["abstained"]
    assert (prior["id"], prior["content"], prior["reason"]) == (old, USER_MYSQL, WHY)
    assert prior["valid_to"].endswith("Z") and prior["version"] is None
    assert run("recall", "MySQL", "--json").json()["abstained"]  # the present knows no MySQL
    assert (
        run("recall", "which database do we use", "--json").json()["results"][0]["previously"] == []
    )


@pytest.mark.integration
def test_mcp_recall_on_the_default_profile_answers_a_switch(db_path):
    opened = lambda: Memory.open(  # noqa: E731
        db_path, context=Context("proj", "main"), embedder=get_embedder("minilm")
    )
    with opened() as mem:
        old = mem.add(USER_MYSQL).id
        new = mem.supersede(old, USER_POSTGRES, reason=WHY).id

    async def asked() -> Any:
        with Backend(opened) as backend:
            async with Client(build_server(backend)) as client:
                result = await client.call_tool("recall", {"query": "why did we switch from MySQL"})
                return result.structured_content

    found = anyio.run(asked)
    [head] = found["results"]
    assert head["id"] == new and [p["id"] for p in head["previously"]] == [old]


def ids(answer: Any) -> set[str]:
    return {r["id"] for r in answer["results"]}


def test_cli_recall_controls_reach_the_pipeline_and_are_reported(run):
    here = added(run, "--content", "Release checklist for this project.")
    shared = added(run, "--content", "Release checklist, shared.", "--scope", "global")
    neighbour = added(run, "--content", "The office plants need water on Fridays.")
    assert run("links", "add", "--from", here, "--to", neighbour).exit_code == 0
    data = run("recall", "release checklist", "--limit", "2", "--json").json()
    assert {r["id"] for r in data["results"]} == {here, shared}
    assert [x["id"] for x in data["linked"]] == [neighbour] and data["linked"][0]["hop"] == 1
    alone = run("recall", "release checklist", "--no-global", "--link-budget", "0", "--no-mmr",
                "--link-hops", "2", "--json").json()  # fmt: skip
    assert here in ids(alone) and shared not in ids(alone) and alone["linked"] == []
    assert alone["settings"] == {
        "scopes": ["project:proj", "global"][:1], "include_global": False, "global_limit": None,
        "link_budget": 0, "link_hops": 2, "mmr": False, "mmr_lambda": None, "as_of": None,
        "unfold": False,
    }  # fmt: skip
    capped_ = run("recall", "release checklist", "--global-limit", "0", "--json").json()
    assert here in ids(capped_) and shared not in ids(capped_)
    named = run("recall", "release checklist", "--scope", "project:proj", "--include-global",
                "--json").json()  # fmt: skip
    assert {here, shared} <= ids(named)
    explained = run("recall", "release checklist", "--explain", "--link-hops", "0")
    assert "link_hops 0" in explained.stdout and "include_global -" in explained.stdout


@pytest.mark.parametrize(
    "flags",
    [("--link-hops", "3"), ("--link-budget", "-1"), ("--global-limit", "-2"),
     ("--link-hops", "two")],
)  # fmt: skip
def test_cli_refuses_a_bad_control_on_one_line(run, db_path, flags):
    refused = run("recall", "anything", *flags)
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and flags[0] in refused.stderr
    assert not Path(db_path).exists() or str(db_path).startswith("postgresql")


def test_a_scope_named_from_another_project_is_boosted_as_the_one_asked_for(run, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(plain)
        mine = added(run, "--content", "The deploy script runs on Fridays.")
    shared = added(run, "--content", "The deploy script needs a VPN.", "--scope", "global")
    asked = ("recall", "deploy script", "--scope", "project:plain", "--include-global")
    data = run(*asked, "--json").json()
    parts = {r["id"]: r["parts"]["scope"] for r in data["results"]}
    assert parts == {mine: 0.85, shared: 0.7}
    assert "x0.30" not in run(*asked).stdout
    every = run("recall", "deploy script", "--scope", "all", "--json").json()
    assert {r["id"]: r["parts"]["scope"] for r in every["results"]}[mine] == 0.3


def test_cli_recent_as_of_reads_what_was_recent_then(run):
    gone = added(run, "--content", "The build cache lives on the old NAS.")
    time.sleep(0.01)
    then = datetime.now(UTC).isoformat()
    time.sleep(0.01)
    later = added(run, "--content", "The build cache lives in S3.")
    assert run("invalidate", gone, "--reason", "the NAS was retired").exit_code == 0
    now = run("recent", "--all-types", "--json").json()
    assert [r["id"] for r in now["results"]] == [later]
    past = run("recent", "--all-types", "--as-of", then, "--json").json()
    assert [r["id"] for r in past["results"]] == [gone]
    none = run("recent", "--all-types", "--as-of", then, "--days", "0", "--json").json()
    assert none["results"] == []
    refused = run("recent", "--as-of", "not a time")
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1


def test_a_read_of_the_past_marks_memories_as_they_stood_then(run):
    """A memory superseded or invalidated later was current at the instant read."""
    old = added(run, "--content", USER_MYSQL)
    ended = added(run, "--content", "The build cache lives on the old NAS.")
    time.sleep(0.01)
    then = datetime.now(UTC).isoformat()
    time.sleep(0.01)
    new = run("supersede", old, "--content", USER_POSTGRES, "--reason", WHY, "--json").json()["id"]
    assert run("invalidate", ended, "--reason", "the NAS was retired").exit_code == 0
    for command, asked in (("recall", "orders database"), ("search", "MySQL"),
                           ("recall", "build cache"), ("search", "NAS")):  # fmt: skip
        text = run(command, asked, "--as-of", then).stdout
        assert "MySQL" in text or "NAS" in text, (command, asked)
        assert "[PREVIOUSLY]" not in text and "superseded by" not in text, (command, text)
        assert "invalidated" not in text, (command, text)
    [found] = run("search", "MySQL", "--as-of", then, "--json").json()["results"]
    assert found["id"] == old and found.get("superseded_by") is None
    assert found.get("superseded_at") is None and found.get("supersede_reason") is None
    now = run("search", "MySQL", "--include-superseded").stdout
    assert f"superseded by {new}" in now and "[PREVIOUSLY]" in now


# ---- the MCP tool ------------------------------------------------------------------------------


def _open(db_path: Path) -> Any:
    return lambda: Memory.open(
        db_path, context=Context("proj", "main"), embedder=get_embedder("hash")
    )


async def _recall(db_path: Path, **arguments: Any) -> Any:
    with Backend(_open(db_path)) as backend:
        async with Client(build_server(backend)) as client:
            result = await client.call_tool("recall", arguments)
            return result.is_error, result.structured_content or result.content[0].text


def test_mcp_recall_takes_the_controls_and_unfolds_a_change(db_path):
    with Memory.open(db_path, context=Context("proj", "main")) as mem:
        here = mem.add("Release checklist for this project.").id
        mem.add("Release checklist, shared.", scope="global")
        for i in range(3):
            mem.graph.link(here, mem.add(f"Unrelated neighbour {i}.").id, "related")
        old, new = switched(mem)
    error, found = anyio.run(lambda: _recall(db_path, query="release checklist"))
    assert not error and len(found["results"]) == 2 and len(found["linked"]) == 2
    error, found = anyio.run(lambda: _recall(db_path, query="release checklist",
                                             include_global=False, link_budget=3, mmr=False))  # fmt: skip
    assert [r["id"] for r in found["results"]] == [here] and len(found["linked"]) == 3
    error, found = anyio.run(lambda: _recall(db_path, query="release checklist",
                                             global_limit=0, link_hops=0))  # fmt: skip
    assert [r["id"] for r in found["results"]] == [here] and "linked" not in found
    error, found = anyio.run(lambda: _recall(db_path, query=SWITCH))
    head = next(r for r in found["results"] if r["id"] == new)
    [prior] = head["previously"]
    assert (prior["id"], prior["reason"], prior["marks"]) == (old, WHY, "[PREVIOUSLY]")
    error, text = anyio.run(lambda: _recall(db_path, query="x", link_hops=3))
    assert error and "link_hops" in text


# ---- the prompt hook -------------------------------------------------------------------------------


def test_the_hook_shows_a_prior_state_under_its_memory_only_within_the_budget():
    head = record("m-new", "global", POSTGRES)
    old = Prior(
        record("m-old", "global", MYSQL, superseded_at=NOW, superseded_by="m-new"),
        "m-new",
        WHY,
        NOW,
    )
    items = context.with_priors([context.memory_item(head)], {"m-new": [old]})
    roomy = context.block("recall", context.RECALL_HEADER, [(None, items)], 1000)
    assert roomy.text is not None and roomy.ids == ("m-new",)
    lines = roomy.text.splitlines()
    at = next(i for i, line in enumerate(lines) if POSTGRES in line)
    assert lines[at + 1] == f"  - {MYSQL} [PREVIOUSLY] (until 2026-01-01 00:00; {WHY})"
    alone = context.block("recall", context.RECALL_HEADER, [(None, items[:1])], 1000)
    tight = context.block("recall", context.RECALL_HEADER, [(None, items)], alone.tokens + 5)
    assert tight.text is not None and "[PREVIOUSLY]" not in tight.text and POSTGRES in tight.text


def test_a_prior_state_is_never_shown_without_its_memory():
    head = record("m-new", "global", "PostgreSQL. " + "A long explanation of the move. " * 30)
    old = Prior(
        record("m-old", "global", MYSQL, superseded_at=NOW, superseded_by="m-new"),
        "m-new",
        WHY,
        NOW,
    )
    items = context.with_priors([context.memory_item(head)], {"m-new": [old]})
    led = replace(items[1], follows=False)
    frame = context.block("recall", context.RECALL_HEADER, [(None, [led])], 1000)
    assert frame.text is not None  # the prior state's line alone fits this budget
    alone = context.block("recall", context.RECALL_HEADER, [(None, items)], frame.tokens + 5)
    assert alone.text is None and alone.omitted == 2


def test_a_prompt_about_a_switch_injects_the_prior_state(run, db_path, tmp_path, cli_env):
    cli_env["MEMLANE_HOOK_DIR"] = str(tmp_path / "hooks")
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    with Memory.open(db_path, agent="tester", context=Context("proj"),
                     embedder=get_embedder("hash")) as mem:  # fmt: skip
        old = mem.add(MYSQL, scope="project:proj", kind="decision").id
        mem.supersede(old, POSTGRES, reason=WHY)
    prompt = "why did we switch the orders service data from MySQL?"
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": str(project),
               "prompt": prompt}  # fmt: skip
    done = run("hook", "user-prompt", input=json.dumps(payload))
    assert done.exit_code == 0, done.stderr
    block = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert POSTGRES in block and "[PREVIOUSLY] (until" in block and WHY in block


def test_another_agents_private_prior_state_stays_hidden(db_path, mem):
    with Memory.open(db_path, agent="other", context=Context("proj", "main")) as theirs:
        old = theirs.add(MYSQL, visibility="private").id
        new = theirs.supersede(old, POSTGRES, reason=WHY, private=False, owner=None,
                              force=True).id  # fmt: skip
    result = mem.recall(SWITCH)
    assert [h.record.id for h in result.hits] == [new] and result.previously == ()
    with Memory.open(db_path, agent="other", context=Context("proj", "main")) as theirs:
        mine = theirs.recall(SWITCH, include_private=True)
        assert [p.record.id for p in mine.previously] == [old]
