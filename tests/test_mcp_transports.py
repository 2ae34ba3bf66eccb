"""`memlane serve` as a real process, driven by the SDK's client: with every tool
(`--tools all`) over stdio, and over streamable HTTP on a loopback port with bearer
tokens (an operator token, a token confined to one scope, a read-only token), several
clients at once; and, with the default tools, raw lines and bodies no client would
send (a lone surrogate, a request over the cap)."""

from __future__ import annotations

import http.client
import json
import os
import re
import select
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from memlane import Context, Memory
from test_mcp import (
    CORE_TOOLS,
    GRAPH_TOOLS,
    MEMORY_TOOLS,
    call,
    everything,
    exercise_every_tool,
    refused,
)

pytestmark = pytest.mark.anyio

OPERATOR = "operator-token-7d1e"
SCOPED = "scoped-token-52af"
READER = "reader-token-90c3"
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
        command=sys.executable, args=["-m", "memlane", "serve", "--tools", "all"], env=server_env(db),
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


@contextmanager
def running_server(
    home: Path, token_file: dict[str, Any], announced: dict[str, int]
) -> Iterator[HttpServer]:
    """`memlane serve --http` with the operator token in the environment and
    `token_file` in MEMLANE_MCP_TOKEN_FILE; it announces `announced` token counts."""
    path = home / "token.json"
    path.write_text(json.dumps(token_file))
    env = {**server_env(home / "http.db"), "MEMLANE_MCP_TOKEN": OPERATOR,
           "MEMLANE_MCP_TOKEN_FILE": str(path)}  # fmt: skip
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "memlane", "serve", "--tools", "all", "--http", f"127.0.0.1:{port}",
         "--json"],
        env=env, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_listening(process, port)
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", home / "http.db")
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
    assert json.loads(out) == {"transport": "streamable-http",
                               "url": f"http://127.0.0.1:{port}/mcp", **announced}  # fmt: skip
    assert OPERATOR not in out + err and token_file["token"] not in out + err


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One server for the module: an operator token, and a token confined to
    project:alpha in the token file."""
    scoped = {"token": SCOPED, "namespaces": ["project:alpha"]}
    counts = {"tokens": 2, "scoped_tokens": 1, "read_only_tokens": 0}
    with running_server(tmp_path_factory.mktemp("http"), scoped, counts) as server:
        yield server


@pytest.fixture(scope="module")
def read_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """A server with an operator token, and a read-only token in the token file."""
    reader = {"token": READER, "access": "read"}
    counts = {"tokens": 2, "scoped_tokens": 0, "read_only_tokens": 1}
    with running_server(tmp_path_factory.mktemp("read"), reader, counts) as server:
        yield server


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
        assert [r["id"] for r in found["results"]] == [made["id"]]
        assert (await call(client, "get", id=made["id"]))["scope"] == "project:alpha"
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


# ---- what no client would send ---------------------------------------------------------

# The cap on one request at the default content limit (memlane.server.admit).
REQUEST_CAP = 4 * 1024 * 1024
SURROGATE_CALL = ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
                  '"remember", "arguments": {"content": "half a pair: \\ud800"}}}')  # fmt: skip


class RawStdio:
    """`memlane serve` on stdio, written to and read from line by line."""

    def __init__(self, db: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memlane", "serve"], env=server_env(db), cwd=db.parent,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip

    def send(self, line: str | bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")
        self.process.stdin.flush()

    def reply(self) -> Any:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], STARTUP_S)
        assert ready, "no reply"
        return json.loads(self.process.stdout.readline())

    def call(self, request_id: int, method: str, params: dict[str, Any]) -> Any:
        self.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                              "params": params}))  # fmt: skip
        return self.reply()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def test_stdio_answers_lines_it_cannot_read_and_serves_on(tmp_path: Path) -> None:
    server = RawStdio(tmp_path / "raw.db")
    try:
        server.call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "raw", "version": "1"}})  # fmt: skip
        server.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        listed = server.call(2, "tools/list", {})["result"]["tools"]
        assert {tool["name"] for tool in listed} == CORE_TOOLS  # `serve` offers the core
        server.send(SURROGATE_CALL)
        assert server.reply() == {"jsonrpc": "2.0", "id": 7, "error": {
            "code": -32602, "message": "invalid: params.arguments.content: holds a lone surrogate "
            "('\\ud800' at character 13), half of a UTF-16 pair and not text"}}  # fmt: skip
        huge = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
            "name": "recall", "arguments": {"query": "x" * REQUEST_CAP}}})  # fmt: skip
        server.send(huge)
        assert server.reply() == {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32700, "message": f"invalid: a message over {REQUEST_CAP} bytes was skipped"}}  # fmt: skip
        server.send(b"{not json")
        assert server.reply()["error"]["message"] == "invalid: a line that is not JSON was skipped"
        made = server.call(9, "tools/call", {"name": "remember", "arguments": {
            "content": "The raw client's note landed."}})  # fmt: skip
        assert made["id"] == 9 and made["result"]["isError"] is False
    finally:
        server.close()
    with Memory.open(tmp_path / "raw.db", context=Context()) as mem:
        assert [r.body for r in everything(mem)] == ["The raw client's note landed."]


def post(server: HttpServer, body: bytes, token: str = OPERATOR) -> tuple[int, str]:
    request = urllib.request.Request(server.url, data=body, method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refusal:
        return refusal.code, refusal.read().decode()


def declared_over_the_cap(server: HttpServer) -> int:
    """The status answering a request that declares a body one byte over the cap."""
    where = urllib.parse.urlsplit(server.url)
    connection = http.client.HTTPConnection(where.netloc, timeout=30)
    try:
        connection.putrequest("POST", where.path)
        for name, value in (("Authorization", f"Bearer {OPERATOR}"),
                            ("Content-Type", "application/json"),
                            ("Content-Length", str(REQUEST_CAP + 1))):  # fmt: skip
            connection.putheader(name, value)
        connection.endheaders()
        return connection.getresponse().status
    finally:
        connection.close()


async def test_http_refuses_a_lone_surrogate_and_a_body_over_the_cap(
    http_server: HttpServer,
) -> None:
    status, text = post(http_server, SURROGATE_CALL.encode())
    assert status == 400 and json.loads(text)["error"]["code"] == -32700
    assert declared_over_the_cap(http_server) == 413  # answered before a byte of it is read
    async with connect(http_server, OPERATOR) as client:
        assert "results" in await call(client, "recall", query="anything")
        text = await refused(client, "recall", query="q" * 70_000)
        assert text == ("invalid: query: 70000 bytes, over the 65536-byte limit on any text "
                        "(MEMLANE_MAX_BODY_BYTES)")  # fmt: skip


async def test_a_confined_token_never_sees_ids_of_other_scopes(http_server: HttpServer) -> None:
    async with connect(http_server, OPERATOR) as client:
        outside = (await call(client, "remember", content="Operator-only: the vault code moved.",
                              scope="global"))["id"]  # fmt: skip
    async with connect(http_server, SCOPED) as client:
        await call(client, "remember", content="Alpha's vault holds the release keys.")
        result = await client.call_tool("get", {"id": "m-"})
        text = result.content[0].text
        assert outside not in text
        if result.is_error:  # several memories in project:alpha: named, and only those
            assert text.startswith("ambiguous_id: id prefix 'm-' is ambiguous: matches ")
        with Memory.open(http_server.db, context=Context()) as mem:
            scopes = {mem.get(i).scope for i in re.findall(r"m-[0-9a-z]+", text)}
        assert scopes == {"project:alpha"}
        assert await refused(client, "forget", id=outside) == (
            f"not_found: no memory with id {outside!r}")  # fmt: skip
    assert "Operator-only: the vault code moved." in stored(http_server)


async def test_a_read_only_token_reads_and_never_writes(read_server: HttpServer) -> None:
    async with connect(read_server, OPERATOR) as client:
        made = await call(client, "remember", content="Readers may see the on-call rota.",
                          scope="global")  # fmt: skip
    before = stored(read_server)
    async with connect(read_server, READER) as client:
        for tool, arguments in (("remember", {"content": "A reader's note."}),
                                ("forget", {"id": made["id"]}),
                                ("update", {"id": made["id"], "content": "Changed."}),
                                ("create_entities", {"entities": []})):  # fmt: skip
            assert await refused(client, tool, **arguments) == (
                f"read_only: this token may only read; {tool} writes")  # fmt: skip
        assert (await call(client, "get", id=made["id"]))["content"] == before[0]
        found = await call(client, "search", query="on-call rota", scope="all")
        assert [r["id"] for r in found["results"]] == [made["id"]]
        assert (await call(client, "read_graph"))["entities"] == []
    assert stored(read_server) == before
