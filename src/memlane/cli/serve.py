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
from memlane.cli.progress import progress_bar
from memlane.cli.reflect import llm_model
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
@click.option(
    "--tools",
    "tool_set",
    type=click.Choice(config.MCP_TOOL_SETS),
    help="Tools to offer: core, all or official (env MEMLANE_MCP_TOOLS; default core).",
)
@click.option(
    "--list-tools",
    is_flag=True,
    help="Print the bytes each tool adds to a model's context, and the total; then exit.",
)
@json_option
def serve_cmd(address: str | None, tool_set: str | None, list_tools: bool, as_json: bool) -> None:
    """Run the MCP server on stdio, or HTTP with --http: memlane's tools, the memory
    server's, or both.

    Built on the official Python SDK: on stdio by default (what `install` registers), or
    streamable HTTP at `http://HOST:PORT/mcp` (--json prints the URL as JSON once). Its
    tools are thin typed adapters over the same store. A client sends the model every
    tool it lists on every turn, so --tools chooses a set:

    \b
    - `core` (the default): `recall` (ranked, each result with why; counts as a use),
      `search` (a line per match: id, title, snippet, score), `get` (one memory in full),
      `remember`, `update`, `invalidate`;
    - `all`: those, `link`, `forget` (gone from every table and index), `session_start`
      and `session_end` (for a client without memlane's hooks), `reflect` (as `memlane
      reflect`: `list` and `apply` its proposals) and `reminders` (`action` list, add,
      dismiss or check, as `memlane remind` and `memlane reminders`), and the official
      nine;
    - `official`: the nine tools of the official MCP memory server (`create_entities`,
      `create_relations`, `add_observations`, `delete_entities`, `delete_observations`,
      `delete_relations`, `read_graph`, `search_nodes`, `open_nodes`) with its argument and
      result shapes, so a client configured for that server works unchanged. An entity is
      a memory titled with its name, each observation a memory anchored to it, each
      relation a memory `FROM RELATION TO` anchored to both; all are tagged `mcp-memory`
      and `entity:NAME` and live in `global`.

    `session_start` is a passive prefetch, fenced as `<memlane-context>`: a passive recall
    for the query, or without one the curated pack (see `pack`), within
    MEMLANE_INJECT_BUDGET tokens; it counts as surfaced, never as used, and never shows
    injection-risk or untrusted-web memories. `session_end` writes nothing unless given a
    note, then exactly one memory. The server's instructions never ask the model to do
    what the hooks do. `reflect` asks MEMLANE_LLM_CMD under its budget, as `memlane
    reflect` does; without it, it reports what it would reflect on. Reminders are the
    agent's across every scope: a confined token gets `scope_not_allowed`. --list-tools
    prints what the set's listing costs: the bytes of each tool's name, description and
    schemas as compact JSON.

    Everything an agent writes is `untrusted_tool` (or `untrusted_web` with `source: web`).
    Calls run one at a time on the store's thread, whatever the number of clients. An error
    is a tool result the model reads, one line `<code>: <message>`, with a stable code:
    `not_found`, `ambiguous_id`, `invalid`, `conflict`, `policy_refused`, `unavailable`,
    `schema_too_new`, `scope_not_allowed`, `read_only`; bad input writes nothing. Arguments
    the SDK refuses before a tool runs are `invalid` too, each named by its path and never
    echoed (`invalid: limit: expected an integer`), as is an argument a tool does not take,
    and any text over MEMLANE_MAX_BODY_BYTES or holding a lone surrogate (`\\ud800`); an
    unknown tool is `not_found`, a tool that crashed `unavailable` (the details stay in the
    server's log). A request is read only up to 4 MiB (or six times MEMLANE_MAX_BODY_BYTES
    and 4 KiB, if more): HTTP answers a longer body 413; on stdio a longer line is skipped,
    and a line that cannot be read gets a JSON-RPC error `invalid: ...` for its id, where
    one can be read.

    HTTP needs a bearer token: MEMLANE_MCP_TOKEN is an operator token for every scope;
    MEMLANE_MCP_TOKEN_FILE may hold a bare token (every scope too) or `{"token": "...",
    "namespaces": ["project:x", "global"], "access": "read"}`. `namespaces` confines that
    token to those scopes, exactly: its writes without a scope go to the first, its reads
    without one cover all of its own, a scope asked for outside them fails with
    `scope_not_allowed`, and a memory outside them (by id, or as a link end) is `not_found`,
    as one that does not exist. `access` is `write` (the default) or `read`: a read token
    may call the read-only tools (`recall`, `search`, `get`, `session_start`, `read_graph`,
    `search_nodes`, `open_nodes`) and gets `read_only` from every other. Either key may be
    left out. A malformed file, an empty list, a near-miss scope or another access level
    refuses to start (exit 2); no token at all refuses HTTP. No command prints a token.
    Binding to a non-loopback host warns."""
    from memlane.server import app

    s, db = state().settings, state().db
    chosen = tool_set or s["mcp_tools"]

    def opener() -> Memory:
        return config.open_memory(s, db)

    def model() -> Any:  # called on the store's thread, outside this command's context
        return llm_model(s)

    if list_tools:
        _print_sizes(chosen, app.tool_sizes(opener, chosen), as_json)
        return
    if address is None:  # stdout carries the protocol: nothing else is printed there
        app.serve_stdio(opener, tool_set=chosen, inject_budget=s["inject_budget"], model=model)
        return
    host, port = _address(address)
    tokens = _tokens(s)
    url = app.endpoint(host, port)
    if not loopback(host):
        note(f"{host} is not a loopback address: anyone who can reach it needs only a token")
    if as_json:
        scoped = sum(1 for grant in tokens.values() if grant.scopes is not None)
        reading = sum(1 for grant in tokens.values() if grant.access == "read")
        emit_json(
            {
                "transport": "streamable-http",
                "url": url,
                "tokens": len(tokens),
                "scoped_tokens": scoped,
                "read_only_tokens": reading,
            }
        )
    else:
        note(f"serving MCP at {url} (bearer token required)")
    app.serve_http(
        opener,
        host,
        port,
        tool_set=chosen,
        tokens=tokens,
        inject_budget=s["inject_budget"],
        model=model,
    )


def _print_sizes(tool_set: str, sizes: dict[str, int], as_json: bool) -> None:
    total = sum(sizes.values())
    if as_json:
        emit_json({"tools": tool_set, "bytes": sizes, "total": total})
        return
    width = max(map(len, sizes))
    for name, size in sizes.items():
        click.echo(f"{name:<{width}}  {size:>5}")
    click.echo(f"{len(sizes)} tools ({tool_set}): {total} bytes")


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
    """Load FILE (- for stdin), the official MCP memory server's memory.jsonl: each entity
    with its observations, and the relations between them.

    They are stored as the graph tools of `serve` store them, `untrusted_tool`, screened as
    `add` screens. Importing again adds only what is new. A line that is not an entity or
    relation, or a relation to an entity neither the file nor the store has, refuses the
    file (exit 2) and writes nothing. Prints (or with --json returns) how many entities,
    observations and relations were added."""
    from memlane.server.knowledge_graph import KnowledgeGraph, parse_jsonl

    entities, relations = parse_jsonl(read_text(file, "memory", inputs.FILE_CAP))
    where = parse_scope(scope)
    mem = memory()
    # The file's text was written by agents through that server: it is tool output.
    mem.default_taint = Taint.UNTRUSTED_TOOL
    if capture_mode is not None:
        mem.capture_mode = capture_mode
    with progress_bar("import", as_json) as tell:
        loaded = KnowledgeGraph(mem, where, [where]).load(entities, relations, tell)
    if as_json:
        emit_json({"scope": where, **loaded})
        return
    click.echo(
        f"imported {loaded['entities']} entities, {loaded['observations']} observations "
        f"and {loaded['relations']} relations into {where}"
    )
