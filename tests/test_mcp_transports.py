"""`memlane serve` as a real process, driven by the SDK's client: over stdio, and over
streamable HTTP on a loopback port with bearer tokens (an operator token and a token
confined to one scope), several clients at once."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from memlane import Context, Memory
from test_mcp import GRAPH_TOOLS, MEMORY_TOOLS, call, everything, exercise_every_tool, refused

pytestmark = pytest.mark.anyio

OPERATOR = "operator-token-7d1e"
SCOPED = "scoped-token-52af"
# Seconds a server process may take to listen: importing the SDK alone takes ~3 s here.
STARTUP_S = 30


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def server_env(db: Path) -> dict[str, str]:
    return {**os.environ, "MEMLANE_DB": str(db), "MEMLANE_EMBED_PROFILE": "hash",
            "MEMLANE_PROJECT_ALIASES": str(db.parent / "aliases.json")}  # fmt: skip


async def test_every_tool_over_stdio(tmp_path: Path) -> None:
    db = tmp_path / "stdio.db"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memlane", "serve"], env=server_env(db),
        cwd=str(tmp_path),
    )  # fmt: skip
    async with Client(params) as client:
        assert await exercise_every_tool(client, "stdio") == MEMORY_TOOLS | GRAPH_TOOLS
        made = await call(client, "remember", content="Stdio writes land in the store.")
    with Memory.open(db, context=Context()) as mem:
        assert mem.get(made["id"]).taint.value == "untrusted_tool"


@dataclass
class HttpServer:
    url: str
    db: Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def wait_listening(process: subprocess.Popen[str], port: int) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {process.communicate()[1]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("the server did not start listening")


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One server for the module: an operator token in the environment, a token
    confined to project:alpha in the token file."""
    home = tmp_path_factory.mktemp("http")
    token_file = home / "token.json"
    token_file.write_text(json.dumps({"token": SCOPED, "namespaces": ["project:alpha"]}))
    env = {**server_env(home / "http.db"), "MEMLANE_MCP_TOKEN": OPERATOR,
           "MEMLANE_MCP_TOKEN_FILE": str(token_file)}  # fmt: skip
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "memlane", "serve", "--http", f"127.0.0.1:{port}", "--json"],
        env=env, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_listening(process, port)
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", home / "http.db")
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
    announced = json.loads(out)
    assert announced == {"transport": "streamable-http", "url": f"http://127.0.0.1:{port}/mcp",
                         "tokens": 2, "scoped_tokens": 1}  # fmt: skip
    assert OPERATOR not in out + err and SCOPED not in out + err


def connect(server: HttpServer, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = create_mcp_http_client(headers=headers)
    return Client(streamable_http_client(server.url, http_client=http))


def stored(server: HttpServer) -> list[str]:
    with Memory.open(server.db, context=Context()) as mem:
        return [r.body for r in everything(mem)]


async def test_every_tool_over_http(http_server: HttpServer) -> None:
    async with connect(http_server, OPERATOR) as client:
        assert await exercise_every_tool(client, "http") == MEMORY_TOOLS | GRAPH_TOOLS


async def test_a_wrong_or_missing_token_is_turned_away(http_server: HttpServer) -> None:
    before = stored(http_server)
    for token in ("not-the-token", None, OPERATOR + "x"):
        with pytest.raises(Exception) as refusal:
            async with connect(http_server, token) as client:
                await client.call_tool("remember", {"content": "An intruder's note."})
        assert "401" in repr(refusal.value) or "Server returned an error" in repr(refusal.value)
    assert stored(http_server) == before


async def test_a_confined_token_stays_in_its_scope(http_server: HttpServer) -> None:
    async with connect(http_server, SCOPED) as client:
        text = await refused(client, "remember", content="Out of scope.", scope="global")
        assert "scope_not_allowed: this token may not use scope 'global'" in text
        assert "scope_not_allowed" in await refused(client, "recall", query="scope", scope="all")
        made = await call(client, "remember", content="Alpha keeps its runbooks in the wiki.")
        found = await call(client, "search", query="runbooks")
        assert [(r["id"], r["scope"]) for r in found["results"]] == [(made["id"], "project:alpha")]
    assert "Out of scope." not in stored(http_server)


async def test_several_clients_writing_at_once_all_land(http_server: HttpServer) -> None:
    async def writer(n: int) -> None:
        async with connect(http_server, OPERATOR) as client:
            for i in range(5):
                await call(client, "remember", content=f"Concurrent note {n}-{i}: shard {n * 7 + i}.",
                           scope="global")  # fmt: skip

    async with anyio.create_task_group() as group:
        for n in range(4):
            group.start_soon(writer, n)
    bodies = stored(http_server)
    assert {f"Concurrent note {n}-{i}: shard {n * 7 + i}." for n in range(4) for i in range(5)} <= (
        set(bodies)
    )
