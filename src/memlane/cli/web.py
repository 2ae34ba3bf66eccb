"""`memlane web`: the local, read-only web view (search, memory pages, the graph)."""

from __future__ import annotations

import click

from memlane import config
from memlane.cli.common import emit_json, fail, in_section, json_option, note, state
from memlane.cli.serve import LOOPBACK, loopback

DEFAULT_PORT = 8765


@in_section("server")
@click.command("web")
@click.option(
    "--host",
    default=LOOPBACK,
    show_default=True,
    help="Address to bind; anything but loopback needs MEMLANE_WEB_TOKEN.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port to listen on.",
)
@json_option
def web_cmd(host: str, port: int, as_json: bool) -> None:
    """Serve a local web view of the store: recall with score parts, each memory with its
    history, and an interactive graph of memories, entities and typed links.

    Read-only, with nothing fetched from a CDN and no build step: a search box running
    `recall`, each result with its score parts and why it was chosen; a page per memory with
    its metadata, links, entities and its history as a diff between versions; and a graph
    around a memory: memories (coloured by kind), entities and typed links (contradictions
    in red), drawn as SVG on the server. A click on a node opens its neighbourhood. Private
    memories show only to their owner (MEMLANE_AGENT). A search records no use of what it
    finds. `/claude` lists Claude Code's own memory files for this user and directory (as
    `browse` does with `n`), each shown as Markdown, never written.

    Bound to anything but loopback it needs MEMLANE_WEB_TOKEN (refused otherwise; once set,
    loopback asks for it too), given once as `?token=` and then kept in a cookie, or as a
    bearer header. A request must name a host the view serves (on loopback: localhost,
    127.0.0.1, [::1]; otherwise the bound address; bound to 0.0.0.0 or `::` with a token:
    any; plus MEMLANE_WEB_ALLOWED_HOSTS), else it is refused with 400, so a page elsewhere
    cannot read the view by pointing its own name at it; a body over 16 KiB is refused with
    413. Every response carries a Content-Security-Policy that loads nothing but the page's
    own style and forbids framing, with `X-Content-Type-Options: nosniff` and
    `Referrer-Policy: no-referrer`."""
    from memlane.server import web

    s, db = state().settings, state().db
    token = s["web_token"]
    if not loopback(host) and not token:
        fail(f"binding to {host} needs a token: set MEMLANE_WEB_TOKEN")
    netloc = f"[{host}]" if ":" in host else host
    url = f"http://{netloc}:{port}/"
    if as_json:
        emit_json({"url": url, "token_required": bool(token)})
    else:
        note(f"serving the web view at {url}" + (" (token required)" if token else ""))
    web.serve(lambda: config.open_memory(s, db), host, port, token, s["web_allowed_hosts"])
