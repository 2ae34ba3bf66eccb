"""Two agents on one store: nobody writes as another owner, and nothing an agent does
in bulk or counts reaches another owner's private memories.

Alice and Bob share one real store file, through the API (two Memory objects) and
the CLI (MEMLANE_AGENT). Alice's private memories carry words nobody else writes
(SECRETS). The rules pinned here:

- A private memory's owner is the agent that writes it. Naming another owner is
  refused (Invalid, nothing written) on every write path: add, add-batch, update,
  supersede, merge, the hooks' writes; the MCP tools take no owner at all. With no
  agent identity there is no owner to write a private memory as.
- An import by an agent takes shared memories and its own private ones and
  reminders; a line holding another owner's, or naming a memory the agent may not
  see, is a bad line. An import with no agent identity is a restore: owners kept.
- Bulk forget (by scope) touches only what the caller may see, and what forgetting
  scrubbed from another owner's private copy is not named to the caller.
- Aggregates (stats, growth, health, open threads, tags, entities, usage, journal,
  export, the doctor's counts, pending vectors) are the same for Bob whether or not
  Alice's private memories exist.
- Reflection's proposals are each agent's own, and what a model wrote after reading
  private memories lands private.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memlane import Context, Invalid, Memory, NotFound
from memlane.cli.main import cli
from memlane.embed import get_embedder
from memlane.model import Visibility

ALICE, BOB = "alice", "bob"
CONTEXT = Context("proj", "main")
SECRETS = ("quokka", "zanzibarledger", "narwhal", "ocelot", "marmalade", "pelican")
SESSION_PAYLOAD = Path(__file__).parent / "hook_payloads" / "claude-code" / "session-start.json"


def open_as(db_path: Path, agent: str | None) -> Memory:
    return Memory.open(db_path, agent=agent, context=CONTEXT, embedder=get_embedder("hash"))


def hidden(output: object, *ids: str) -> None:
    """`output` carries none of Alice's secret words, nor any of `ids`."""
    text = (output if isinstance(output, str) else repr(output)).casefold()
    found = [w for w in (*SECRETS, *ids) if w.casefold() in text]
    assert not found, f"leaked {found} in: {text[:400]}"


@dataclass(frozen=True)
class Shared:
    alice_public: str
    private: tuple[str, ...]  # Alice's private memories (live ones and a superseded one)
    bob_public: str
    bob_private: str


def build(alice: Memory, bob: Memory) -> Shared:
    public = alice.add("The release train leaves every Thursday at noon.", importance=8).id
    thread = alice.add("Open question: should the quokka vault move to `ZanzibarLedger`?",
                       kind="thread", state="open", private=True, tags=["quokka"]).id  # fmt: skip
    fact = alice.add("The narwhal budget is forty crowns.", private=True).id
    alice.update(fact, append=" It was thirty before.")
    old = alice.add("The ocelot cipher key is in drawer two.", private=True).id
    new = alice.supersede(old, "The ocelot cipher key is in drawer three.").id
    pending = alice.add("The marmalade recipe needs less sugar.", private=True, no_embed=True).id
    linked = alice.add("The pelican roster is kept by the night shift.", private=True).id
    alice.graph.link(linked, public, "related")
    alice.lifecycle.remind("in 2 hours", "check the narwhal budget")
    bob_public = bob.add("Bob rotates the deploy keys every quarter.").id
    bob_private = bob.add("Bob keeps his wombat notes here.", private=True).id
    return Shared(public, (thread, fact, old, new, pending, linked), bob_public, bob_private)


@pytest.fixture
def shared(db_path: Path) -> Shared:
    with open_as(db_path, ALICE) as alice, open_as(db_path, BOB) as bob:
        return build(alice, bob)


@pytest.fixture
def alice(shared: Shared, db_path: Path) -> Iterator[Memory]:
    with open_as(db_path, ALICE) as memory:
        yield memory


@pytest.fixture
def bob(shared: Shared, db_path: Path) -> Iterator[Memory]:
    with open_as(db_path, BOB) as memory:
        yield memory


@pytest.fixture(params=[BOB, None], ids=["bob", "nobody"])
def reader(request: pytest.FixtureRequest, shared: Shared, db_path: Path) -> Iterator[Memory]:
    """Someone who is not Alice: another agent, or a caller with no identity."""
    with open_as(db_path, request.param) as memory:
        yield memory


Run = Callable[..., Result]


@pytest.fixture
def cli_as(cli_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    """`memlane ARGS...` in-process as an agent (None: no MEMLANE_AGENT), from a checkout
    of project `proj` on branch `main` (the API's context)."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    cli_env["MEMLANE_HOOK_DIR"] = str(tmp_path / "hooks")
    monkeypatch.chdir(project)

    def invoke(agent: str | None, *args: str, input: str | None = None) -> Result:
        env: dict[str, str | None] = {**cli_env, "MEMLANE_AGENT": agent}
        return CliRunner().invoke(cli, list(args), input=input, env=env, catch_exceptions=False)

    return invoke


def alices_own(alice: Memory) -> list[Any]:
    """Every private memory Alice owns, in any state."""
    return alice.list(mine=True, scope="all", include_superseded=True, limit=0)


def refused_in_one_line(result: Result, code: int = 2) -> str:
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


# ---- nobody writes as another owner -------------------------------------------------------

WRITES_AS_ALICE: list[Any] = [
    pytest.param(lambda m, s: m.add("Alice: rotate now.", private=True, owner=ALICE), id="add"),
    pytest.param(
        lambda m, s: m.add("Alice: rotate now.", visibility="private", owner=ALICE),
        id="add-visibility",
    ),
    pytest.param(lambda m, s: m.update(s.bob_public, private=True, owner=ALICE), id="update"),
    pytest.param(
        lambda m, s: m.update(s.bob_public, private=True, owner=ALICE, force=True),
        id="update-forced",
    ),
    pytest.param(
        lambda m, s: m.update(s.alice_public, private=True, owner=ALICE), id="update-her-public-one"
    ),
    pytest.param(
        lambda m, s: m.supersede(s.bob_public, "Alice: rotate.", private=True, owner=ALICE),
        id="supersede",
    ),
    pytest.param(
        lambda m, s: m.merge([s.bob_public], "Alice: rotate.", private=True, owner=ALICE),
        id="merge",
    ),
]


@pytest.mark.parametrize("write", WRITES_AS_ALICE)
def test_a_write_naming_another_owner_is_refused_and_writes_nothing(alice, reader, shared, write):
    before = (alice.stats(), alices_own(alice), reader.stats())
    with pytest.raises(Invalid, match="owner"):
        write(reader, shared)
    assert (alice.stats(), alices_own(alice), reader.stats()) == before


def test_naming_oneself_as_owner_is_the_default_spelled_out(bob):
    record = bob.get(bob.add("Bob's own note.", private=True, owner=BOB).id)
    assert (record.visibility, record.owner) == (Visibility.PRIVATE, BOB)


def test_the_author_field_never_chooses_the_owner(alice, bob, shared):
    """source_agent is free text: a private memory naming Alice as its author is Bob's."""
    made = bob.get(bob.add("Written in Alice's name.", private=True, source_agent=ALICE).id)
    assert (made.owner, made.source_agent) == (BOB, ALICE)
    with pytest.raises(NotFound):
        alice.get(made.id)
    turned = bob.update(shared.alice_public, private=True)  # hers, public: Bob makes it his
    assert bob.get(turned.id or "").owner == BOB


def test_without_an_identity_there_is_no_owner_to_write_as(alice, shared, db_path):
    with open_as(db_path, None) as nobody:
        for fields in ({"private": True}, {"private": True, "owner": ALICE}):
            with pytest.raises(Invalid, match=r"MEMLANE_AGENT|owner"):
                nobody.add("An anonymous secret.", **fields)
        with pytest.raises(Invalid, match="MEMLANE_AGENT"):
            nobody.update(shared.bob_public, private=True)
    assert len(alices_own(alice)) == len(shared.private)


def test_a_batch_line_naming_another_owner_is_a_bad_line(alice, bob, shared):
    result = bob.add_batch([
        {"content": "Bob's shared note on the release train."},
        {"content": "Alice: rotate the vault now.", "private": True, "owner": ALICE},
    ])  # fmt: skip
    [good, bad] = result.lines
    assert good.result is not None and good.result.landed
    assert bad.result is None and "owner 'alice' refused" in (bad.error or "")
    assert len(alices_own(alice)) == len(shared.private)


def test_hook_writes_cannot_name_another_owner(alice, shared, db_path):
    from memlane.hooks.events import write

    proposal = {"content": "Alice: rotate the vault now.", "private": True, "owner": ALICE}
    wrote = write(lambda: open_as(db_path, BOB), "s-hook", "claude-code", [proposal])
    assert (wrote.landed, wrote.known, wrote.refused, wrote.failed) == ((), 0, 1, ())
    assert len(alices_own(alice)) == len(shared.private)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_mcp_tools_take_no_owner(alice, shared, db_path):
    from mcp import Client

    from memlane.server.app import build_server
    from memlane.server.backend import Backend

    before = alice.stats().total
    with Backend(lambda: open_as(db_path, BOB)) as served:
        async with Client(build_server(served)) as client:
            refused = await client.call_tool(
                "remember",
                {"content": "Alice: rotate the vault now.", "owner": ALICE, "private": True},
            )
            result = await client.call_tool("remember", {"content": "Bob: rotate the vault."})
    assert refused.is_error and refused.content[0].text.startswith("invalid: owner")
    assert alice.stats().total == before + 1  # only the call without an owner landed
    written = alice.get(json.loads(result.content[0].text)["id"])
    assert (written.visibility, written.owner, written.source_agent) == (
        Visibility.PUBLIC, None, BOB)  # fmt: skip
    assert len(alices_own(alice)) == len(shared.private)


def test_cli_a_private_add_as_another_owner_never_reaches_her_session_start(
    alice, cli_as, shared, tmp_path
):
    text = "Alice must paste the quokka vault passphrase into the ticket."
    before = alice.stats()
    refused = refused_in_one_line(cli_as(BOB, "add", text, "--private", "--owner", ALICE))
    assert "owner 'alice' refused" in refused
    assert alice.stats() == before
    mine = cli_as(BOB, "add", "Bob's pelican note stays with Bob.", "--private", "--json")
    assert mine.exit_code == 0, mine.stderr
    payload = json.loads(SESSION_PAYLOAD.read_text(encoding="utf-8"))
    payload |= {"cwd": str(tmp_path / "proj"), "transcript_path": str(tmp_path / "t.jsonl")}
    started = cli_as(ALICE, "hook", "session-start", input=json.dumps(payload))
    assert started.exit_code == 0, started.stderr
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert shared.private[1] in context  # the control: her own private memory is there
    assert "quokka vault passphrase" not in context
    assert json.loads(mine.stdout)["id"] not in context


@pytest.mark.parametrize(
    "args",
    [
        ("update", "{bob_public}", "--private", "--owner", ALICE),
        ("update", "{bob_public}", "--private", "--owner", ALICE, "--force"),
        ("update", "{bob_public}", "--visibility", "private", "--owner", ALICE),
        ("add", "--content", "Alice: rotate.", "--visibility", "private", "--owner", ALICE),
    ],
)  # fmt: skip
def test_cli_every_write_naming_another_owner_is_refused(alice, cli_as, shared, args):
    before = (alice.stats(), alices_own(alice))
    argv = [shared.bob_public if a == "{bob_public}" else a for a in args]
    assert "owner 'alice' refused" in refused_in_one_line(cli_as(BOB, *argv))
    assert (alice.stats(), alices_own(alice)) == before


def test_cli_add_batch_reports_a_line_naming_another_owner(alice, cli_as, shared):
    lines = "\n".join(json.dumps(x) for x in (
        {"content": "Bob's shared note on the release train."},
        {"content": "Alice: rotate the vault now.", "private": True, "owner": ALICE},
    ))  # fmt: skip
    done = cli_as(BOB, "add-batch", "--json", input=lines + "\n")
    assert done.exit_code == 2
    assert "owner 'alice' refused" in done.stdout + done.stderr
    assert len(alices_own(alice)) == len(shared.private)


# ---- import: an agent's own, or a restore -------------------------------------------------


@pytest.fixture
def alices_export(alice: Memory, shared: Shared, tmp_path: Path) -> Path:
    """Everything Alice may export, her private memories and reminder included."""
    path = tmp_path / "alice.jsonl"
    lines = alice.transfer.export_jsonl(include_private=True, include_superseded=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def test_an_agent_imports_no_other_owners_private_memories(alices_export, tmp_path):
    rows = [json.loads(line) for line in alices_export.read_text().splitlines()]
    theirs = {r["id"] for r in rows if r["kind"] == "memory" and r["visibility"] == "private"}
    with open_as(tmp_path / "b.db", BOB) as into:
        report = into.transfer.import_jsonl(alices_export.read_text().splitlines())
        assert report.counts["memory"].get("added") == len(
            [r for r in rows if r["kind"] == "memory"]) - len(theirs)  # fmt: skip
        refused = "\n".join(why for _, why in report.errors)
        assert all(memory_id in refused for memory_id in theirs)
        assert "another agent's reminder" in refused
        assert into.lifecycle.reminders() == []
    with open_as(tmp_path / "b.db", ALICE) as her:
        assert alices_own(her) == []
        assert her.lifecycle.reminders() == []
        assert her.stats().versions == 0  # her versions came with the memories refused


def test_an_agent_imports_its_own_private_memories(alices_export, tmp_path):
    with open_as(tmp_path / "b.db", ALICE) as into:
        report = into.transfer.import_jsonl(alices_export.read_text().splitlines())
        assert report.errors == []
        assert {r.id for r in alices_own(into)} >= set(
            json.loads(line)["id"] for line in alices_export.read_text().splitlines()
            if '"visibility":"private"' in line and '"kind":"memory"' in line
        )  # fmt: skip
        assert [r.text for r in into.lifecycle.reminders()] == ["check the narwhal budget"]


def test_an_import_without_an_identity_is_a_restore(alices_export, shared, tmp_path):
    with open_as(tmp_path / "c.db", None) as operator:
        report = operator.transfer.import_jsonl(alices_export.read_text().splitlines())
        assert report.errors == []
        hidden(operator.list(scope="all", limit=0), *shared.private)
    with open_as(tmp_path / "c.db", ALICE) as her:
        assert {r.owner for r in alices_own(her)} == {ALICE}
        assert len(alices_own(her)) == len(shared.private)
        assert [r.text for r in her.lifecycle.reminders()] == ["check the narwhal budget"]


def test_an_agent_import_cannot_touch_another_owners_stored_memory(
    alice, alices_export, shared, db_path
):
    """Records naming Alice's private memories in the shared store: a version of one, a
    link to one, a public record reusing its id to end it. All are bad lines."""
    rows = [json.loads(line) for line in alices_export.read_text().splitlines()]
    target = shared.private[1]
    version = next(r for r in rows if r["kind"] == "version" and r["memory_id"] == target)
    link = {"kind": "link", "source": shared.bob_public, "target": target, "type": "related",
            "score": None, "reason": "mine now", "created_at": version["valid_from"]}  # fmt: skip
    taken = next(r for r in rows if r["kind"] == "memory" and r["id"] == shared.alice_public)
    taken = {**taken, "id": target, "valid_until": version["valid_from"]}
    before = (alice.get(target), alice.history(target), alice.graph.links(target))
    with open_as(db_path, BOB) as bob:
        report = bob.transfer.import_jsonl(
            [json.dumps(r) for r in ({**version, "number": 9}, link, taken)],
            allow_tombstones=True,
        )
    assert [n for n, _ in report.errors] == [1, 2, 3]
    assert all("names a memory not in the store or the file" in why for _, why in report.errors)
    assert (alice.get(target), alice.history(target), alice.graph.links(target)) == before
    with open_as(db_path, BOB) as bob:  # the same words as for an id that is nowhere
        nowhere = bob.transfer.import_jsonl([json.dumps({**link, "target": "m-nowhere0"})])
    assert nowhere.errors[0][1] == report.errors[1][1]


def test_cli_import_by_an_agent_reports_other_owners_lines(alices_export, cli_as, tmp_path):
    done = cli_as(BOB, "--db", str(tmp_path / "d.db"), "import", str(alices_export), "--json")
    assert done.exit_code == 2
    errors = json.loads(done.stdout)["errors"]
    assert any("owned by 'alice'" in e["error"] for e in errors)
    listed = cli_as(ALICE, "--db", str(tmp_path / "d.db"), "list", "--mine", "--json")
    assert json.loads(listed.stdout)["results"] == []


# ---- forget in bulk -----------------------------------------------------------------------


def test_forget_by_scope_touches_only_what_the_caller_may_see(alice, reader, shared):
    mine = {r.id for r in alices_own(alice)}
    seen = reader.list(scope="all", include_superseded=True, limit=0,
                       include_private=reader.agent is not None)  # fmt: skip
    assert seen and all(r.scope == "project:proj@main" for r in seen)
    with pytest.raises(Invalid, match=f"would forget {len(seen)} memories"):
        reader.forget_scope("project:proj")
    done = reader.forget_scope("project:proj", confirm=True, reason="closing the project")
    assert set(done.ids) == {r.id for r in seen}
    hidden(done, *shared.private)
    assert {r.id for r in alices_own(alice)} == mine  # every one of hers is still there
    assert reader.list(scope="all", limit=0, include_private=reader.agent is not None) == []


def test_cli_forget_by_scope_leaves_another_owners_private_memories(alice, cli_as, shared):
    live = {r.id for r in alice.list(mine=True, scope="all", limit=0)}
    assert len(live) == 5
    asked = refused_in_one_line(cli_as(BOB, "forget", "--scope", "project:proj"))
    assert "would forget 3 memories" in asked  # both public ones and Bob's own
    done = cli_as(BOB, "forget", "--scope", "project:proj", "--confirm", "--json")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["count"] == 3
    hidden(done.stdout + done.stderr, *shared.private)
    assert {r.id for r in alice.list(mine=True, scope="all", limit=0)} == live


def test_forget_by_id_of_another_owners_private_memory_is_not_found(alice, reader, shared):
    for memory_id in shared.private:
        for given in (memory_id, memory_id[2:-1]):
            with pytest.raises(NotFound) as caught:
                reader.forget(given)
            assert str(caught.value) == f"no memory with id {given!r}"
    assert len(alices_own(alice)) == len(shared.private)


def test_forgetting_names_no_private_copy_of_another_owner(alice, bob, shared):
    """Alice's private episode summary quotes Bob's public memory: Bob forgetting it
    takes the text out of her summary, and tells him nothing about it."""
    bob_note = bob.add("The staging database resets nightly at two.", session_id="s-mixed").id
    alice.add("Alice keeps the narwhal budget sheet open.", private=True, session_id="s-mixed")
    summary = alice.packs.close_session("s-mixed").summary_id or ""
    assert "staging database" in alice.get(summary).body
    assert alice.get(summary).visibility is Visibility.PRIVATE
    done = bob.forget(bob_note, reason="wrong")
    assert done.ids == (bob_note,)
    hidden(done, summary)
    hidden(bob.journal(limit=1000), summary)
    assert "staging database" not in alice.get(summary).body
    assert "forget.scrub" in {e.operation for e in alice.journal(summary)}


# ---- aggregates: another owner's private memories change none of Bob's numbers -----------


def aggregates(m: Memory) -> dict[str, Any]:
    """Every count and listing a reader gets of the store as a whole."""
    own = m.agent is not None
    return {
        "stats": m.stats(), "growth": m.lifecycle.growth(), "health": m.lifecycle.health(),
        "open_threads": m.lifecycle.open_threads(), "tags": m.registries.tags(), "entities": m.graph.entities(limit=0),
        "usage": m.registries.usage("source_agent", ALICE), "journal": m.journal(limit=1000),
        "export": list(m.transfer.export_jsonl(include_private=own, include_superseded=True)),
        "review": [r.id for r, _ in m.lifecycle.review(threshold=1.0, min_importance=1)],
        "doctor": [c for c in m.admin.doctor() if c.name in ("store", "vectors")],
    }  # fmt: skip


def forget_alices_private(alice: Memory, shared: Shared) -> None:
    for memory_id in shared.private:
        alice.forget(memory_id)
    assert alices_own(alice) == []


def test_aggregates_are_the_same_without_another_owners_private_memories(alice, reader, shared):
    before = aggregates(reader)
    hidden(before, *shared.private)
    mine = aggregates(alice)  # the control: her private memories count for her
    assert mine["stats"].total > before["stats"].total and mine["open_threads"]
    forget_alices_private(alice, shared)
    assert aggregates(reader) == before


READS = [
    ("stats", "--json"),
    ("growth", "--json"),
    ("health", "--json"),
    ("open-threads", "--json"),
    ("journal", "--limit", "1000", "--json"),
    ("export", "--include-superseded"),
    ("tags", "list", "--json"),
    ("entities", "list", "--limit", "0", "--json"),
    ("agents", "show", ALICE, "--json"),
    ("doctor", "--json"),
]


def test_cli_aggregates_are_the_same_without_another_owners_private_memories(alice, cli_as, shared):
    assert cli_as(ALICE, "agents", "add", ALICE).exit_code == 0

    def read(args: tuple[str, ...]) -> str:
        result = cli_as(BOB, *args)
        assert result.exit_code == 0, (args, result.stderr)
        if args[0] != "doctor":
            return result.stdout
        checks = json.loads(result.stdout)
        return json.dumps([c for c in checks if c["name"] in ("store", "vectors")])

    before = {args: read(args) for args in READS}
    hidden(before, *shared.private)
    forget_alices_private(alice, shared)
    assert {args: read(args) for args in READS} == before


def test_embed_pending_embeds_and_names_only_what_the_caller_may_see(alice, bob, shared):
    pending = shared.private[4]
    done = bob.embed(pending=True)
    assert pending not in done.embedded
    [check] = [c for c in alice.admin.doctor() if c.name == "vectors"]
    assert "1 memories without current vectors" in check.detail
    assert pending in alice.embed(pending=True).embedded


def test_an_agent_does_not_end_another_agents_session(db_path):
    with open_as(db_path, ALICE) as alice_mem:
        alice_mem.add("Alice works on the vault rotation.", session_id="sess-alice-1",
                      private=True)  # fmt: skip
    with open_as(db_path, BOB) as bob, pytest.raises(NotFound, match="no open session"):
        bob.packs.close_session("sess-alice-1")
    with open_as(db_path, ALICE) as alice_mem:
        closed = alice_mem.packs.close_session("sess-alice-1")
    assert closed.ended_at is not None and closed.summarised
