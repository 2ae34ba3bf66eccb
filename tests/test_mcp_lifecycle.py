"""The MCP tools reflect and reminders through the SDK's own client, in process: what
they answer, what they write, their bad input, and the grants that may not call them.
The model reflect asks is the fake command of test_reflect.py."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from memlane import Context, Memory
from memlane.lifecycle.llm import Budget, Model
from memlane.model import Kind, LinkType
from memlane.server.app import build_server
from memlane.server.auth import Grant
from memlane.server.backend import Backend
from test_mcp import call, opener, refused
from test_reflect import FAKE, NOTES

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def fake_model(mode: str) -> Model:
    return Model(f"{sys.executable} {FAKE} {mode}", Budget(calls=4, tokens=100_000, seconds=60))


@pytest.fixture
def noted(db_path: Path) -> list[str]:
    """The reflection notes, written at the CLI's default scope (this branch)."""
    with Memory.open(db_path, context=Context("proj", "main")) as mem:
        return [mem.add(text, kind=kind, importance=7).id for text, kind in NOTES]


@pytest.fixture
def served(db_path: Path) -> Iterator[Backend]:
    """A server whose reflect asks the fake model's `good` answers."""
    with Backend(opener(db_path), model=lambda: fake_model("good")) as backend:
        yield backend


@pytest.fixture
async def client(served: Backend) -> AsyncIterator[Client]:
    async with Client(build_server(served, tool_set="all")) as connected:
        yield connected


async def test_reflect_without_a_model_says_what_it_would_reflect_on(
    db_path: Path, noted: list[str]
) -> None:
    with Backend(opener(db_path)) as backend:
        async with Client(build_server(backend, tool_set="all")) as client:
            first = await call(client, "reflect", batch_size=3)
            again = await call(client, "reflect")
    assert first["skipped"] == "no model (MEMLANE_LLM_CMD): the deterministic findings only"
    assert first["new"] == 5 and first["reflected"] == 0
    assert first["batch"] == [
        {"id": noted[0], "title": "We deploy only after CI is green on main"},
        {"id": noted[1], "title": "Deploys wait for one reviewer's approval"},
        {"id": noted[2], "title": "The staging database is reset every night at 02:00"},
    ]
    assert "insights" not in first and "proposals" not in first
    assert again["new"] == 5 and len(again["batch"]) == 5  # the watermark did not move


async def test_reflect_with_a_model_stores_insights_and_applies_only_what_is_approved(
    client: Client, db_path: Path, noted: list[str]
) -> None:
    done = await call(client, "reflect")
    assert (done["new"], done["reflected"], done["calls"]) == (5, 5, 1)
    assert [i["title"] for i in done["insights"]] == ["Pattern 0", "Pattern 1", "Pattern 2"]
    ops = {p["op"]: p for p in done["proposals"]}
    assert set(ops) >= {"add", "merge"} and ops["add"]["diff"].count("+") >= 1
    assert "batch" not in done
    waiting = await call(client, "reflect", list=True)
    assert waiting["proposals"] == done["proposals"]  # nothing applied yet
    with Memory.open(db_path, context=Context("proj", "main")) as mem:
        insight = mem.get(done["insights"][0]["id"])
        assert insight.kind is Kind.INSIGHT
        assert {link.target for link in mem.graph.links(insight.id)
                if link.type is LinkType.DERIVES} == set(noted[:2])  # fmt: skip
        assert all(mem.get(i).live for i in noted)
    applied = await call(client, "reflect", apply=[ops["merge"]["id"]])
    assert applied["applied"][0]["op"] == "merge" and len(applied["applied"][0]["result"]) == 1
    with Memory.open(db_path, context=Context("proj", "main")) as mem:
        merged = mem.get(applied["applied"][0]["result"][0])
        assert merged.body == f"Merged: {noted[0]} / {noted[1]}"
    left = (await call(client, "reflect", list=True))["proposals"]
    assert ops["merge"]["id"] not in [p["id"] for p in left] and len(left) == len(ops) - 1
    unknown = await refused(client, "reflect", apply=["p-nothere"])
    assert unknown.startswith("not_found: no pending proposal p-nothere")


async def test_reminders_are_added_listed_checked_and_dismissed(
    client: Client, db_path: Path
) -> None:
    later = await call(client, "reminders", action="add", when="in 3 days", text="Renew the cert")
    past = await call(client, "reminders", action="add", when="2020-01-02 09:00", text="Old one")
    assert past["due_at"] == "2020-01-02T09:00:00Z" and past["project"] == "proj"
    zoned = await call(client, "reminders", action="add", when="2030-06-01 09:00",
                       text="Standup", tz="Europe/Paris")  # fmt: skip
    assert zoned["due_at"] == "2030-06-01T07:00:00Z"
    listed = await call(client, "reminders")
    assert [r["id"] for r in listed["reminders"]] == [past["id"], later["id"], zoned["id"]]
    due = await call(client, "reminders", action="check")
    assert [r["id"] for r in due["reminders"]] == [past["id"]]
    assert await call(client, "reminders", action="dismiss", id=past["id"]) == {
        "dismissed": past["id"]}  # fmt: skip
    assert await call(client, "reminders", action="check") == {
        "reminders": [], "count": 0, "note": "no reminders are due"}  # fmt: skip
    everything = await call(client, "reminders", include_dismissed=True)
    assert everything["count"] == 3 and everything["reminders"][0]["dismissed_at"]
    with Memory.open(db_path, context=Context("proj", "main")) as mem:
        assert [r.text for r in mem.lifecycle.reminders()] == ["Renew the cert", "Standup"]


async def test_bad_reminder_input_is_a_tool_error_and_writes_nothing(
    client: Client, db_path: Path
) -> None:
    errors = [
        await refused(client, "reminders", action="add", text="no time given"),
        await refused(client, "reminders", action="add", when="whenever pigs fly", text="x"),
        await refused(
            client, "reminders", action="add", when="in 1 hour", text="x", tz="Mars/Base"
        ),
        await refused(client, "reminders", action="list", when="in 1 hour"),
        await refused(client, "reminders", action="dismiss"),
        await refused(client, "reminders", action="snooze"),
    ]
    assert errors[:5] == [
        "invalid: add needs when and text",
        "invalid: cannot read 'whenever pigs fly' as a time; try 'in 2 hours', 'tomorrow 9am'",
        "invalid: unknown time zone 'Mars/Base'",
        "invalid: when: not read by action list",
        "invalid: dismiss needs id",
    ]
    assert errors[5].startswith("invalid: action:")
    missing = await refused(client, "reminders", action="dismiss", id="r-nothere")
    assert missing == "not_found: no pending reminder 'r-nothere'"
    with Memory.open(db_path, context=Context("proj", "main")) as mem:
        assert mem.lifecycle.reminders(include_dismissed=True) == []


async def test_a_confined_token_reflects_on_its_scopes_and_gets_no_reminders(
    db_path: Path,
) -> None:
    with Memory.open(db_path, context=Context("proj", "main")) as mem:
        mem.add("The global on-call phone is in the drawer.", scope="global")
        inside = mem.add("Alpha deploys from the release branch.", scope="project:alpha").id
    with Backend(opener(db_path), grant=Grant(("project:alpha",))) as confined:
        async with Client(build_server(confined, tool_set="all")) as client:
            reflected = await call(client, "reflect", min_new=0)
            outside = await refused(client, "reflect", scope="global")
            denied = [
                await refused(client, "reminders"),
                await refused(client, "reminders", action="add", when="in 1 hour", text="x"),
            ]
    assert [m["id"] for m in reflected["batch"]] == [inside]
    assert reflected["scope"] == "project:alpha"
    assert outside.startswith("scope_not_allowed: this token may not use scope 'global'")
    assert denied == ["scope_not_allowed: reminders span every scope; this token is confined "
                      "to some"] * 2  # fmt: skip


async def test_the_tools_describe_what_the_commands_do(client: Client) -> None:
    """Each description names what its command does, in a sentence or two."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    reflect, reminders = tools["reflect"], tools["reminders"]
    assert {"scope", "days", "min_new", "batch_size", "drain", "list", "apply"} == set(
        reflect.input_schema["properties"])  # fmt: skip
    assert reflect.input_schema["properties"]["min_new"]["default"] == 3
    assert reminders.input_schema["properties"]["action"]["enum"] == [
        "list", "add", "dismiss", "check"]  # fmt: skip
    for tool in (reflect, reminders):
        assert tool.annotations.read_only_hint is False and not tool.annotations.destructive_hint
    assert "approval" in reflect.description and "check" in reminders.description


async def test_serve_asks_the_configured_model(tmp_path: Path) -> None:
    """`memlane serve` hands reflect MEMLANE_LLM_CMD under its budget settings."""
    db = tmp_path / "served.db"
    with Memory.open(db, context=Context(None)) as mem:
        for text, kind in NOTES:
            mem.add(text, kind=kind, importance=7, scope="global")
    env = {**os.environ, "MEMLANE_DB": str(db), "MEMLANE_EMBED_PROFILE": "hash",
           "MEMLANE_LLM_CMD": f"{sys.executable} {FAKE} good", "MEMLANE_LLM_MAX_CALLS": "1"}  # fmt: skip
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memlane", "serve", "--tools", "all"], env=env,
        cwd=str(tmp_path),
    )  # fmt: skip
    async with Client(params) as client:
        done = await call(client, "reflect", scope="global", batch_size=2, drain=True)
    assert (done["new"], done["reflected"], done["calls"]) == (5, 2, 1)
    assert done["breach"].startswith("calls") and len(done["insights"]) == 3
