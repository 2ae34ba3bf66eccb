"""`memlane web`: a small local web view, read-only: recall with score parts, a
memory with its history, the graph around it, and Claude Code's own memory files
(`memlane.claude_files`), served by Starlette and uvicorn (what the MCP SDK brings
already).

Private memories show only to their owner (the Memory is opened as MEMLANE_AGENT).
On loopback no token is asked; bound to anything else, every request needs the token,
given once as ?token= (kept in a cookie) or as a bearer header.

Reading is all it does: a search records no use (no retrieval counter, no
last-retrieved time), so browsing cannot shift what recall ranks. Every request must
name a host the view serves and carry at most a small body, and every response forbids
framing, sniffing and loading anything (webguard says which hosts and why).
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from memlane import claude_files
from memlane.errors import Invalid, MemlaneError, NotFound
from memlane.memory import Memory
from memlane.model import Entity, Predicate, Record
from memlane.server import graphview, pages, webguard
from memlane.server.backend import StoreThread
from memlane.timeutil import utcnow

COOKIE = "memlane_web"
LOOPBACK = "127.0.0.1"
# The memories naming it an entity's page lists (newest first): a few, the way in.
ENTITY_MEMORIES = 10
# Nodes a graph holds at most, and memories an opened entity adds.
MAX_NODES = 80
ENTITY_FANOUT = 12
RECALL_LIMIT = 20


def memory_key(memory_id: str) -> str:
    return f"m:{memory_id}"


def entity_key(name: str) -> str:
    return f"e:{name}"


def explore(memory: Memory, start: str, opened: Sequence[str]) -> tuple[Record, graphview.Graph]:
    """Memory `start` and the graph around it: its neighbourhood, and each opened
    node's (a memory's links and entities, an entity's memories), at most MAX_NODES
    nodes. Expanding a node marks it contradicted when one of its links is."""
    centre = memory.get(start)
    graph = graphview.Graph()
    graph.add(_memory_node(centre, False), None)
    for key in dict.fromkeys([memory_key(centre.id), *opened]):
        if key in graph.nodes and len(graph.nodes) < MAX_NODES:
            _expand(memory, graph, key)
    return centre, graph


def explore_entity(memory: Memory, name: str) -> tuple[Entity, graphview.Graph]:
    """Entity `name` and its current relations: the entities one hop out, each edge
    named by its predicate (a related_to by its own words), subject to object."""
    found = memory.graph.relationships(name)
    centre = found.entity
    graph = graphview.Graph()
    graph.add(graphview.Node(entity_key(centre.name), centre.name, "entity"), None)
    for relation in found.relations[: MAX_NODES - 1]:
        ends = (relation.subject, relation.object)
        other = ends[1] if relation.subject_id == centre.id else ends[0]
        graph.add(graphview.Node(entity_key(other), other, "entity"), entity_key(centre.name))
        said = relation.label if relation.predicate is Predicate.RELATED_TO else None
        source, target = entity_key(ends[0]), entity_key(ends[1])
        graph.connect(graphview.Edge(source, target, said or relation.predicate.value))
    return centre, graph


def _memory_node(record: Record, contradicted: bool) -> graphview.Node:
    return graphview.Node(
        memory_key(record.id), record.title, record.kind.value, record.live, contradicted
    )


def _expand(memory: Memory, graph: graphview.Graph, key: str) -> None:
    kind, _, name = key.partition(":")
    if kind == "m":
        hood = memory.graph.neighbourhood(name)
        for n in hood.links:
            other = memory_key(n.other.id)
            contradicted = n.link.type.value == "contradicts"
            graph.add(_memory_node(n.other, contradicted), key)
            if contradicted:  # both ends of a contradiction are marked
                graph.nodes[key] = msgspec.structs.replace(graph.nodes[key], contradicted=True)
            ends = (key, other) if n.outgoing else (other, key)
            graph.connect(graphview.Edge(*ends, n.link.type.value))
        for e in hood.entities:
            graph.add(graphview.Node(entity_key(e.name), e.name, "entity"), key)
            graph.connect(graphview.Edge(key, entity_key(e.name), "names"))
    elif kind == "e":
        _, records = memory.graph.mentioning(name, ENTITY_FANOUT)
        for record in records:
            graph.add(_memory_node(record, False), key)
            graph.connect(graphview.Edge(memory_key(record.id), key, "names"))


def _expand_href(start: str, opened: Sequence[str], key: str) -> str | None:
    """The graph with `key` opened too; None when it is open already (or the centre)."""
    if key == memory_key(start) or key in opened:
        return None
    return pages.graph_href(start, [*opened, key])


def _node_list(graph: graphview.Graph, start: str, opened: Sequence[str]) -> str:
    items = []
    for key, node in graph.nodes.items():
        expand = _expand_href(start, opened, key)
        page = (pages.entity_graph_href if node.is_entity else pages.memory_href)(key[2:])
        links = [
            f'<a href="{escape(h)}">{t}</a>' for h, t in ((page, "page"), (expand, "expand")) if h
        ]
        items.append(
            f"<li>{escape(node.label)} <small>({escape(node.kind)})</small> "
            f"{' · '.join(links)}</li>"
        )
    return f'<ul class="nodes">{"".join(items)}</ul>'


class Views:
    """The pages: the store's, each read on its thread; Claude Code's memory files, for
    the user at `home` working in `cwd`."""

    def __init__(
        self, store: StoreThread, now: Callable[[], datetime], home: Path, cwd: Path
    ) -> None:
        self.store, self.now = store, now
        self.home, self.cwd = home, cwd

    async def search(self, request: Request) -> Response:
        query = request.query_params.get("q", "").strip()
        if not query:
            return HTMLResponse(pages.search_page("", None))
        found = await self.store.run(
            lambda m: m.recall(query, limit=RECALL_LIMIT, scope="all", count=False)
        )
        return HTMLResponse(pages.search_page(query, found))

    async def memory(self, request: Request) -> Response:
        memory_id = request.path_params["memory_id"]

        def read(m: Memory) -> str:
            hood = m.graph.neighbourhood(memory_id)
            return pages.memory_page(hood, m.history(hood.record.id), self.now())

        return HTMLResponse(await self.store.run(read))

    async def graph(self, request: Request) -> Response:
        start = request.query_params.get("id", "")
        opened = request.query_params.getlist("open")
        entity = request.query_params.get("entity", "").strip()
        if entity:
            return HTMLResponse(await self.store.run(lambda m: _entity_graph(m, entity)))
        if not start:
            raise Invalid("the graph needs ?id=MEMORY or ?entity=NAME")

        def read(m: Memory) -> str:
            centre, graph = explore(m, start, opened)
            # A click opens a node's neighbourhood; on an open one, its page.
            hrefs = {
                key: _expand_href(centre.id, opened, key)
                or (pages.memory_href(key[2:]) if key.startswith("m:") else "#")
                for key in graph.nodes
            }
            drawing = graphview.svg(graph, hrefs)
            legend = graphview.legend(
                (n.kind for n in graph.nodes.values()), (e.type for e in graph.edges)
            )
            return pages.graph_page(centre, drawing, legend, _node_list(graph, centre.id, opened))

        return HTMLResponse(await self.store.run(read))

    async def claude(self, request: Request) -> Response:
        """Claude Code's memory files for the view's user and directory; ?file=N shows
        the Nth. Only a listed file is ever read."""
        files = claude_files.located(self.home, self.cwd)
        given = request.query_params.get("file")
        if given is None:
            return HTMLResponse(pages.claude_page(files, self.home, None, None))
        if not given.isdigit():
            raise Invalid("?file= takes the number of a listed file")
        if int(given) >= len(files):
            raise NotFound(f"no Claude Code memory file {given}")
        text = claude_files.read(files[int(given)].path)
        return HTMLResponse(pages.claude_page(files, self.home, int(given), text))


def _entity_graph(memory: Memory, name: str) -> str:
    """The page of an entity's relations: a click on a neighbour centres it."""
    centre, graph = explore_entity(memory, name)
    hrefs = {key: pages.entity_graph_href(key[2:]) for key in graph.nodes}
    drawing = graphview.svg(graph, hrefs)
    legend = graphview.legend((n.kind for n in graph.nodes.values()), (e.type for e in graph.edges))
    found = memory.graph.relationships(centre.name)
    _, mentioning = memory.graph.mentioning(centre.name, ENTITY_MEMORIES)
    return pages.entity_graph_page(centre, drawing, legend, found.relations, mentioning)


async def _errors(request: Request, exc: Exception) -> Response:
    status = 404 if isinstance(exc, NotFound) else 400
    return HTMLResponse(
        pages.message_page("Not found" if status == 404 else "Bad request", str(exc)), status
    )


class TokenGate:
    """Every request carries the token: a bearer header, the cookie, or ?token= (which
    sets the cookie and redirects to the same page without it)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.token = app, token

    def _matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        header = request.headers.get("authorization", "")
        bearer = header[7:] if header.lower().startswith("bearer ") else None
        if self._matches(bearer) or self._matches(request.cookies.get(COOKIE)):
            await self.app(scope, receive, send)
            return
        response: Response
        if self._matches(request.query_params.get("token")):
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            target = request.url.replace(query=urlencode(rest))
            response = RedirectResponse(str(target), 303)
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict")
        else:
            response = HTMLResponse(
                pages.message_page(
                    "Token required", "This view needs its token: open it with ?token=..."
                ),
                401,
            )
        await response(scope, receive, send)


def build_app(
    opener: Callable[[], Memory],
    *,
    host: str = LOOPBACK,
    token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    now: Callable[[], datetime] = utcnow,
    home: Path | None = None,
    cwd: Path | None = None,
) -> ASGIApp:
    """The web view over the Memory `opener` makes (on its own thread), bound to `host`:
    it answers the names webguard.allowed_hosts gives for it and `allowed_hosts`; with
    `token`, every request must carry it. `home` and `cwd` (default: the user's and
    this process's) are where Claude Code's memory files are looked for."""
    store = StoreThread(opener)
    views = Views(store, now, home or Path.home(), cwd or Path.cwd())

    @asynccontextmanager
    async def lifespan(_: Starlette) -> Any:
        with store:
            yield

    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        MemlaneError: _errors
    }
    app = Starlette(
        routes=[
            Route("/", views.search),
            Route("/memory/{memory_id}", views.memory),
            Route("/graph", views.graph),
            Route("/claude", views.claude),
        ],
        exception_handlers=handlers,
        lifespan=lifespan,
    )
    hosts = webguard.allowed_hosts(host, token_required=bool(token), extra=allowed_hosts)
    return webguard.harden(TokenGate(app, token) if token else app, hosts, [pages.STYLE])


def serve(
    opener: Callable[[], Memory],
    host: str,
    port: int,
    token: str | None,
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Serve the web view on host:port until interrupted."""
    import uvicorn

    app = build_app(opener, host=host, token=token, allowed_hosts=allowed_hosts)
    uvicorn.run(app, host=host, port=port, log_level="warning")
