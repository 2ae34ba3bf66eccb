"""The graph view: memories and entities as nodes, typed links and mentions as edges,
laid out in rings around the memory it starts from and drawn as SVG on the server.

Trigger: an interactive graph in a page that must work offline, with nothing fetched
from a CDN and no build step. Why: a JavaScript graph library would have to be copied
into the package; a server-drawn SVG needs none. Outcome: every node is a link that
opens its neighbourhood (the page is drawn again with it expanded), so exploring is a
click away and the whole view is plain, testable text.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from html import escape

import msgspec

# Node fill by memory kind (entities have their own).
KIND_COLOURS: Mapping[str, str] = {
    "fact": "#4e79a7",
    "preference": "#f28e2b",
    "decision": "#e15759",
    "procedure": "#76b7b2",
    "lesson": "#59a14f",
    "convention": "#edc948",
    "constraint": "#b07aa1",
    "event": "#ff9da7",
    "task": "#9c755f",
    "insight": "#bab0ac",
    "person": "#86bcb6",
}
OTHER_KIND = "#8c8c8c"
ENTITY_COLOUR = "#ffffff"
# Edge stroke by link type: (colour, dash pattern, width).
EDGE_STYLES: Mapping[str, tuple[str, str, float]] = {
    "related": ("#7f7f7f", "", 1.5),
    "supports": ("#59a14f", "", 2.0),
    "supersedes": ("#4e79a7", "6 4", 2.0),
    "contradicts": ("#d62728", "", 3.0),
    "derives": ("#9467bd", "2 3", 1.5),
    "anchor": ("#bcbd22", "1 3", 1.5),
    "names": ("#c7c7c7", "3 3", 1.0),
}
DEFAULT_EDGE = ("#7f7f7f", "4 2", 1.5)
RING = 170.0  # px between rings
MARGIN = 130.0
LABEL_CHARS = 28


class Node(msgspec.Struct, frozen=True):
    key: str  # "m:<id>" or "e:<entity name>"
    label: str
    kind: str  # a memory kind, or "entity"
    live: bool = True
    contradicted: bool = False

    @property
    def is_entity(self) -> bool:
        return self.key.startswith("e:")


class Edge(msgspec.Struct, frozen=True):
    source: str
    target: str
    type: str  # a link type, or "names" (a memory naming an entity)


class Graph(msgspec.Struct):
    """Nodes in the order they were reached (the first is the centre), with each one's
    parent, and the edges between them."""

    nodes: dict[str, Node] = msgspec.field(default_factory=dict)
    parents: dict[str, str | None] = msgspec.field(default_factory=dict)
    edges: list[Edge] = msgspec.field(default_factory=list)

    def add(self, node: Node, parent: str | None) -> None:
        if node.key not in self.nodes:
            self.nodes[node.key] = node
            self.parents[node.key] = parent

    def connect(self, edge: Edge) -> None:
        ends = {edge.source, edge.target}
        if all(e.type != edge.type or {e.source, e.target} != ends for e in self.edges):
            self.edges.append(edge)


def depths(graph: Graph) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, parent in graph.parents.items():  # parents come before their children
        out[key] = 0 if parent is None else out[parent] + 1
    return out


def layout(graph: Graph) -> dict[str, tuple[float, float]]:
    """Ring d holds the nodes d hops out; each ring is ordered by its nodes' parents'
    angles, so a node sits near the one it was reached from. Deterministic."""
    level = depths(graph)
    angle: dict[str, float] = {}
    rings: dict[int, list[str]] = {}
    for key in graph.nodes:
        rings.setdefault(level[key], []).append(key)
    for d in sorted(rings):
        members = rings[d]
        if d == 0:
            angle.update((key, 0.0) for key in members)
            continue
        members.sort(key=lambda k: angle[graph.parents[k] or k])  # stable: reach order
        start = angle[graph.parents[members[0]] or members[0]]
        step = 2 * math.pi / len(members)
        angle.update((key, start + i * step) for i, key in enumerate(members))
    radius = max(level.values(), default=0) * RING + MARGIN
    return {
        key: (radius + level[key] * RING * math.cos(a), radius + level[key] * RING * math.sin(a))
        for key, a in angle.items()
    }


def _short(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def svg(graph: Graph, href: Mapping[str, str]) -> str:
    """The graph as an SVG element: edges styled by type, nodes coloured by kind, each
    node a link to `href[key]`, contradicted memories ringed in red."""
    at = layout(graph)
    size = 2 * (max(depths(graph).values(), default=0) * RING + MARGIN)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" viewBox="0 0 {size:.0f} '
        f'{size:.0f}" width="{size:.0f}" height="{size:.0f}" role="img" '
        'aria-label="memory graph">'
    ]
    for edge in graph.edges:
        (x1, y1), (x2, y2) = at[edge.source], at[edge.target]
        colour, dash, width = EDGE_STYLES.get(edge.type, DEFAULT_EDGE)
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<line class="edge edge-{escape(edge.type)}" x1="{x1:.1f}" y1="{y1:.1f}" '
            f'x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}" stroke-width="{width}"{dashed}>'
            f"<title>{escape(edge.type)}</title></line>"
        )
        if edge.type != "names":
            mx, my = (x1 + x2) / 2, (y1 + y2) / 2
            parts.append(
                f'<text class="edge-label" x="{mx:.1f}" y="{my:.1f}">{escape(edge.type)}</text>'
            )
    for key, node in graph.nodes.items():
        x, y = at[key]
        parts.append(_node(node, x, y, href.get(key, "#"), centre=graph.parents[key] is None))
    parts.append("</svg>")
    return "".join(parts)


def _node(node: Node, x: float, y: float, href: str, centre: bool) -> str:
    fill = ENTITY_COLOUR if node.is_entity else KIND_COLOURS.get(node.kind, OTHER_KIND)
    stroke = "#d62728" if node.contradicted else "#333333"
    classes = ["node", "entity" if node.is_entity else "memory"]
    classes += [
        c
        for c, on in (
            ("ended", not node.live),
            ("contradicted", node.contradicted),
            ("centre", centre),
        )
        if on
    ]
    shape = (
        f'<rect x="{x - 11:.1f}" y="{y - 11:.1f}" width="22" height="22" rx="4" '
        f'fill="{fill}" stroke="{stroke}" stroke-width="2"/>'
        if node.is_entity
        else f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{16 if centre else 12}" fill="{fill}" '
        f'stroke="{stroke}" stroke-width="{4 if node.contradicted else 2}"/>'
    )
    mark = "⚠ " if node.contradicted else ""
    text = escape(mark + _short(node.label))
    return (
        f'<a href="{escape(href)}" class="{" ".join(classes)}" data-key="{escape(node.key)}">'
        f"<title>{escape(node.label)} ({escape(node.kind)})</title>{shape}"
        f'<text class="label" x="{x:.1f}" y="{y + 30:.1f}" text-anchor="middle">{text}</text></a>'
    )


def legend(kinds: Iterable[str], types: Iterable[str]) -> str:
    """HTML keys for the node colours and edge styles this graph uses, each drawn as a
    small SVG with presentation attributes (the page's CSP allows no inline style)."""
    items = []
    for kind in sorted(set(kinds)):
        colour = ENTITY_COLOUR if kind == "entity" else KIND_COLOURS.get(kind, OTHER_KIND)
        shape = (
            f'<rect x="1" y="1" width="10" height="10" rx="2" fill="{colour}"/>'
            if kind == "entity"
            else f'<circle cx="6" cy="6" r="5" fill="{colour}"/>'
        )
        items.append(
            '<li><svg class="swatch" width="12" height="12" stroke="#333333" '
            f'aria-hidden="true">{shape}</svg>{escape(kind)}</li>'
        )
    for kind in sorted(set(types)):
        colour, dash, width = EDGE_STYLES.get(kind, DEFAULT_EDGE)
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        items.append(
            '<li><svg class="stroke" width="26" height="8" aria-hidden="true">'
            f'<line x1="0" y1="4" x2="26" y2="4" stroke="{colour}" stroke-width="{width}"'
            f"{dashed}/></svg>{escape(kind)}</li>"
        )
    return '<ul class="legend">' + "".join(items) + "</ul>"
