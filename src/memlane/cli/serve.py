"""`serve` (the MCP server) and `import mcp-memory` (the official memory server's file,
attached to the `import` group of cli/transfer.py)."""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

import click

from memlane import config
from memlane.cli.capture import CAPTURE_MODE
from memlane.cli.common import (
    emit_json,
    fail,
    in_section,
    json_option,
    memory,
    note,
    read_text,
    state,
)
from memlane.model import Taint
from memlane.scope import GLOBAL, parse_scope
from memlane.write import inputs

if TYPE_CHECKING:  # the SDK loads only when a server or an import runs
    from memlane.memory import Memory
    from memlane.server.auth import Grant

LOOPBACK = "127.0.0.1"


@in_section("server")
@click.command("serve")
@click.option(
    "--http",
    "address",
    metavar="HOST:PORT",
    help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST defaults "
    "to 127.0.0.1); needs MEMLANE_MCP_TOKEN or MEMLANE_MCP_TOKEN_FILE.",
)
@json_option
def serve_cmd(address: str | None, as_json: bool) -> None:
    """Run the MCP server on stdio, or HTTP with --http: memlane's tools and the memory server's."""
    from memlane.server import app

    s, db = state().settings, state().db

    def opener() -> Memory:
        return config.open_memory(s, db)

    if address is None:  # stdout carries the protocol: nothing else is printed there
        app.serve_stdio(opener, inject_budget=s["inject_budget"])
        return
    host, port = _address(address)
    tokens = _tokens(s)
    url = app.endpoint(host, port)
    if not loopback(host):
        note(f"{host} is not a loopback address: anyone who can reach it needs only a token")
    if as_json:
        scoped = sum(1 for grant in tokens.values() if grant.scopes is not None)
        reading = sum(1 for grant in tokens.values() if grant.access == "read")
        emit_json({"transport": "streamable-http", "url": url, "tokens": len(tokens),
                   "scoped_tokens": scoped, "read_only_tokens": reading})  # fmt: skip
    else:
        note(f"serving MCP at {url} (bearer token required)")
    app.serve_http(opener, host, port, tokens=tokens, inject_budget=s["inject_budget"])


def _address(text: str) -> tuple[str, int]:
    """HOST:PORT, :PORT or PORT (the host defaults to loopback); [::1]:PORT for IPv6."""
    host, sep, port = text.strip().rpartition(":")
    host = host.strip().removeprefix("[").removesuffix("]") if sep else ""
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise click.BadParameter(f"{text!r}: give HOST:PORT with a port from 1 to 65535")
    return host or LOOPBACK, int(port)


def loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _tokens(s: dict[str, Any]) -> dict[str, Grant]:
    """The accepted tokens; a malformed token file or no token at all refuses to start."""
    from memlane.server.auth import load_tokens

    tokens = load_tokens(s["mcp_token"], s["mcp_token_file"])
    if not tokens:
        fail("serving HTTP needs a bearer token: set MEMLANE_MCP_TOKEN or MEMLANE_MCP_TOKEN_FILE")
    return tokens


# A subcommand of `memlane import` (cli/transfer.py attaches it).
@click.command("mcp-memory")
@click.argument("file")
@click.option(
    "--scope",
    default=GLOBAL,
    show_default=True,
    help="Scope to keep the graph in (the MCP server's graph tools read and write global).",
)
@CAPTURE_MODE
@json_option
def import_mcp_memory_cmd(file: str, scope: str, capture_mode: str | None, as_json: bool) -> None:
    """Load FILE (- for stdin), the official MCP memory server's memory.jsonl: each
    entity with its observations, and the relations between them."""
    from memlane.server.graph import KnowledgeGraph, parse_jsonl

    entities, relations = parse_jsonl(read_text(file, "memory", inputs.FILE_CAP))
    where = parse_scope(scope)
    mem = memory()
    # The file's text was written by agents through that server: it is tool output.
    mem.default_taint = Taint.UNTRUSTED_TOOL
    if capture_mode is not None:
        mem.capture_mode = capture_mode
    loaded = KnowledgeGraph(mem, where, [where]).load(entities, relations)
    if as_json:
        emit_json({"scope": where, **loaded})
        return
    click.echo(
        f"imported {loaded['entities']} entities, {loaded['observations']} observations "
        f"and {loaded['relations']} relations into {where}"
    )
