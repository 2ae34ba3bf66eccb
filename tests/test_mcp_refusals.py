"""What the MCP server refuses, through the SDK's own client, in process: every
refusal one line `<code>: <message>` (arguments the SDK validates too), text that is
not Unicode or is over the content limit, ids outside a confined token's scopes, and
every tool that writes for a read-only token. test_mcp_transports.py repeats the
ones a transport decides over stdio and HTTP."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memlane import Context, Memory
from memlane.embed import get_embedder
from memlane.server.app import build_server
from memlane.server.auth import Grant
from memlane.server.backend import Backend
from memlane.server.tool_errors import CODES
from memlane.write.settings import Limits
from test_mcp import anyio_backend as anyio_backend  # the shared fixtures
from test_mcp import backend as backend
from test_mcp import call, everything, opener, refused
from test_mcp import client as client

pytestmark = pytest.mark.anyio

ONE_CODED_LINE = re.compile(rf"({'|'.join(code for _, code in CODES)}): [^\n]+")
SECRET = "sk-not-to-be-echoed-4417"


def assert_one_coded_line(text: str) -> None:
    assert ONE_CODED_LINE.fullmatch(text), text
    for noise in ("Error executing", "validation error", "input_value", "pydantic.dev"):
        assert noise not in text, text


# ---- one line, a documented code -------------------------------------------------------

REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    ("recall", {"query": "x", "limit": SECRET}, "invalid: limit: expected an integer"),
    ("recall", {}, "invalid: query: required, but not given"),
    ("recall", {"query": "x", "bogus": 1},
     "invalid: bogus: not an argument of this tool (it takes: query, scope, limit, max_tokens, "
     "min_score, include_global, global_limit, link_budget, link_hops, mmr)"),
    ("recall", {"query": "x", "link_hops": 3}, "invalid: link_hops: must be at most 2"),
    ("recall", {"query": "x", "global_limit": -1}, "invalid: global_limit: must be at least 0"),
    ("read_graph", {"depth": 2}, "invalid: depth: not an argument of this tool "
     "(it takes: no arguments)"),
    ("remember", {"content": 5}, "invalid: content: expected a string"),
    ("remember", {"content": "x", "tags": 7}, "invalid: tags: expected a list"),
    ("remember", {"content": "x", "importance": 0}, "invalid: importance: must be at least 1"),
    ("search", {"query": "x", "mode": "fuzzy"},
     "invalid: mode: expected one of 'keyword', 'vector' or 'hybrid'"),
    ("session_end", {"note": ["a"]}, "invalid: note: expected a string"),
    ("create_entities", {"entities": [{"name": 1}]},
     "invalid: entities[0].name: expected a string; entities[0].entityType: required, but not "
     "given; entities[0].observations: required, but not given"),
    ("create_entities", {"entities": [{"name": SECRET}] * 2},
     "invalid: entities[0].entityType: required, but not given; entities[0].observations: "
     "required, but not given; entities[1].entityType: required, but not given (and 1 more)"),
    ("delete_entities", {"entityNames": "Alice"}, "invalid: entityNames: expected a list"),
    ("search_nodes", {"query": "x" * 3000}, "invalid: query: at most 2048 characters"),
    ("no_such_tool", {}, "not_found: no tool named 'no_such_tool'"),
    ("get", {"id": "m-zzzzzzzz"}, "not_found: no memory with id 'm-zzzzzzzz'"),
    ("remember", {"content": "x", "scope": "globl"},
     "invalid: invalid scope 'globl': did you mean 'global'?"),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "arguments", "expected"), REFUSALS,
                         ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(REFUSALS)])  # fmt: skip
async def test_every_refusal_is_one_line_with_a_documented_code(
    client: Client, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    text = await refused(client, tool, **arguments)
    assert text == expected
    assert_one_coded_line(text)
    assert SECRET not in text  # a value given is never echoed


async def test_a_crash_in_a_tool_is_unavailable_and_says_no_more(db_path: Path) -> None:
    def broken() -> Memory:
        memory = Memory.open(db_path, context=Context("proj", "main"))
        memory.recall = None  # type: ignore[method-assign,assignment]  # calling it raises TypeError
        return memory

    with Backend(broken) as served:
        async with Client(build_server(served)) as connected:
            text = await refused(connected, "recall", query="anything")
    assert text == "unavailable: the tool failed unexpectedly; the server's log has the details"


# ---- text that is not Unicode, or over the content limit ------------------------------

LIMIT = 1000


@pytest.fixture
def small(db_path: Path) -> Iterator[Backend]:
    """A server whose store takes bodies of at most LIMIT bytes (MEMLANE_MAX_BODY_BYTES)."""

    def open_small() -> Memory:
        return Memory.open(db_path, context=Context("proj", "main"), embedder=get_embedder("hash"),
                           limits=Limits(body_bytes=LIMIT))  # fmt: skip

    with Backend(open_small) as served:
        yield served


@pytest.fixture
async def small_client(small: Backend) -> AsyncIterator[Client]:
    async with Client(build_server(small, tool_set="all")) as connected:
        yield connected


async def test_text_not_unicode_or_over_the_limit_is_refused_before_the_tool_runs(
    small_client: Client, db_path: Path
) -> None:
    client = small_client
    surrogate = "invalid: {}: holds a lone surrogate ('\\ud800' at character {}), half of a UTF-16 pair and not text"
    assert await refused(client, "remember", content="x\ud800y") == surrogate.format("content", 1)
    assert await refused(client, "recall", query="\ud800") == surrogate.format("query", 0)
    assert await refused(client, "create_entities", entities=[
        {"name": "A", "entityType": "t", "observations": ["fine", "bad \ud800"]}
    ]) == surrogate.format("entities[0].observations[1]", 4)  # fmt: skip
    over = "invalid: {}: {} bytes, over the 1000-byte limit on any text (MEMLANE_MAX_BODY_BYTES)"
    assert await refused(client, "remember", content="é" * 501) == over.format("content", 1002)
    # Any argument, not only a memory's body: a query is never longer than a memory.
    assert await refused(client, "recall", query="deploy " * 10_000) == over.format("query", 70000)
    assert await refused(client, "open_nodes", names=["a", "b" * 1001]) == (
        over.format("names[1]", 1001))  # fmt: skip
    with Memory.open(db_path, context=Context("proj", "main")) as store:
        assert everything(store) == []
    # At the limit, the call goes on to the tool; and the server serves on.
    made = await call(client, "remember", content="Deploys need a green build. " + "x" * 972)
    assert made["status"] == "added"


# ---- a confined token sees nothing of other scopes ------------------------------------


async def test_a_confined_token_resolves_ids_only_among_its_scopes(db_path: Path) -> None:
    with Memory.open(db_path, context=Context("proj", "main")) as mem:
        outside = [mem.add(f"Global fact number {n} about the build farm.", scope="global").id
                   for n in range(3)]  # fmt: skip
        first = mem.add("Alpha ships from the release branch.", scope="project:alpha").id
    with Backend(opener(db_path), grant=Grant(("project:alpha",))) as served:
        async with Client(build_server(served, tool_set="all")) as client:
            # "m-" is every id in the store, but only one in the token's scopes.
            assert (await call(client, "get", id="m-"))["id"] == first
            second = (await call(client, "remember", content="Alpha tags releases by date."))["id"]
            texts = [await refused(client, tool, id="m-") for tool in ("get", "forget")]
            both = ", ".join(sorted([first, second]))
            assert texts == [f"ambiguous_id: id prefix 'm-' is ambiguous: matches {both}"] * 2
            for other in outside:
                for tool, extra in (("get", {}), ("forget", {}), ("update", {"content": "y"})):
                    text = await refused(client, tool, id=other[:-1], **extra)
                    assert text == f"not_found: no memory with id {other[:-1]!r}"
            listed = await call(client, "search", query="fact build farm", scope="project:alpha")
            assert listed["results"] == []
    with Memory.open(db_path, context=Context("proj", "main")) as mem:
        assert all(mem.get(i).live for i in outside)


async def test_a_confined_token_is_not_told_of_memories_it_cannot_see(db_path: Path) -> None:
    alpha = "Alpha deploys from the release branch every Tuesday."
    with Memory.open(db_path, context=Context("proj", "main")) as mem:
        hidden = mem.add("Global runbook: who approves releases.", scope="global").id
        mine = mem.add(alpha, scope="project:alpha", anchors=[hidden]).id
        # A global summary made from the alpha memory: forgetting it scrubs the summary.
        summary = mem.add(f"Summary. {alpha} Approvals follow the runbook.", scope="global").id
        mem.graph.link(summary, mine, "derives")
        assert mem.get(mine).anchors == (hidden,)
    with Backend(opener(db_path), grant=Grant(("project:alpha",))) as served:
        async with Client(build_server(served, tool_set="all")) as client:
            shown = await call(client, "get", id=mine)
            found = await call(client, "search", query="release branch")
            recalled = await call(client, "recall", query="release branch Tuesday")
            assert shown["anchors"] == []  # a search or recall shows no anchors at all
            assert found["results"][0]["id"] == recalled["results"][0]["id"] == mine
            forgotten = await call(client, "forget", id=mine)
            assert (forgotten["scrubbed"], forgotten["removed"]) == ([], [])
            told = repr([shown, found, recalled, forgotten])
            assert hidden not in told and summary not in told
    with Memory.open(db_path, context=Context("proj", "main")) as mem:
        assert alpha not in mem.get(summary).body  # scrubbed all the same


# ---- a read-only token ----------------------------------------------------------------

# One valid call of every tool that writes.
WRITES: dict[str, dict[str, Any]] = {
    "remember": {"content": "A read token must not write this."},
    "update": {"id": "{id}", "content": "Changed by a read token."},
    "invalidate": {"id": "{id}", "reason": "a read token said so"},
    "link": {"source": "{id}", "target": "{other}"},
    "forget": {"id": "{id}"},
    "session_end": {"note": "A read token's note."},
    "reflect": {"min_new": 0},
    "reminders": {"action": "add", "when": "in 1 hour", "text": "A read token's reminder."},
    "create_entities": {"entities": [{"name": "Eve", "entityType": "person", "observations": []}]},
    "create_relations": {"relations": [{"from": "Ada", "to": "Eve", "relationType": "knows"}]},
    "add_observations": {"observations": [{"entityName": "Ada", "contents": ["Wrote notes"]}]},
    "delete_entities": {"entityNames": ["Ada"]},
    "delete_observations": {"deletions": [{"entityName": "Ada", "observations": ["Counted"]}]},
    "delete_relations": {"relations": [{"from": "Ada", "to": "Bob", "relationType": "knows"}]},
}
READS: dict[str, dict[str, Any]] = {
    "recall": {"query": "build"},
    "search": {"query": "build"},
    "get": {"id": "{id}"},
    "session_start": {"query": "build"},
    "read_graph": {},
    "search_nodes": {"query": "Ada"},
    "open_nodes": {"names": ["Ada"]},
}


def _filled(arguments: dict[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    return {k: v.format(**ids) if isinstance(v, str) else v for k, v in arguments.items()}


@pytest.mark.parametrize("scopes", [None, ("global",)], ids=["every-scope", "confined"])
async def test_a_read_token_reads_with_every_read_tool_and_writes_with_none(
    db_path: Path, scopes: tuple[str, ...] | None
) -> None:
    with Backend(opener(db_path)) as writer:
        async with Client(build_server(writer, tool_set="all")) as client:
            ids = {"id": (await call(client, "remember", content="The build farm has 8 nodes.",
                                     scope="global"))["id"],
                   "other": (await call(client, "remember", content="Builds are cached.",
                                        scope="global"))["id"]}  # fmt: skip
            await call(client, "create_entities", entities=[
                {"name": "Ada", "entityType": "person", "observations": ["Counted"]},
                {"name": "Bob", "entityType": "person", "observations": []}])  # fmt: skip
            await call(client, "create_relations", relations=[
                {"from": "Ada", "to": "Bob", "relationType": "knows"}])  # fmt: skip
    with Memory.open(db_path, context=Context("proj", "main")) as mem:
        before = sorted((r.id, r.version, r.body, r.live) for r in everything(mem))
    with Backend(opener(db_path), grant=Grant(scopes, "read")) as reader:
        async with Client(build_server(reader, tool_set="all")) as client:
            tools = {t.name: t.annotations for t in (await client.list_tools()).tools}
            assert {n for n, a in tools.items() if a.read_only_hint} == set(READS)
            assert set(tools) - set(READS) == set(WRITES)  # every tool that writes is tried
            for tool, arguments in WRITES.items():
                text = await refused(client, tool, **_filled(arguments, ids))
                assert text == f"read_only: this token may only read; {tool} writes"
            for tool, arguments in READS.items():
                await call(client, tool, **_filled(arguments, ids))
            shown = await call(client, "get", id=ids["id"])
            assert shown["content"] == "The build farm has 8 nodes."
    with Memory.open(db_path, context=Context("proj", "main")) as mem:
        assert sorted((r.id, r.version, r.body, r.live) for r in everything(mem)) == before
