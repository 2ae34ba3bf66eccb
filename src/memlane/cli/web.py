"""`memlane web`: the local, read-only web view (search, memory pages, the graph)."""

from __future__ import annotations

import click

from memlane import config
from memlane.cli.common import emit_json, fail, in_section, json_option, note, state
from memlane.cli.serve import LOOPBACK, loopback

DEFAULT_PORT = 8765


@in_section("server")
@click.command("web")
@click.option("--host", default=LOOPBACK, show_default=True,
              help="Address to bind; anything but loopback needs MEMLANE_WEB_TOKEN.")  # fmt: skip
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True,
              help="Port to listen on.")  # fmt: skip
@json_option
def web_cmd(host: str, port: int, as_json: bool) -> None:
    """Serve a local web view of the store: recall with score parts, each memory with
    its history, and an interactive graph of memories, entities and typed links."""
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
