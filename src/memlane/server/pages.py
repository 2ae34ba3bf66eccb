"""The web view's pages as HTML: search with score parts, a memory with its history,
the graph, Claude Code's memory files. Pure: every text from the store is escaped here, and a memory's body is
rendered from Markdown with raw HTML off (markdown-it also refuses javascript: links).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from html import escape
from pathlib import Path
from urllib.parse import urlencode

from markdown_it import MarkdownIt

from memlane.claude_files import GROUPS, MemoryFile
from memlane.model import Entity, Record, Relation, Version
from memlane.retrieve.present import changes, facts, interval, titled
from memlane.retrieve.recall import why
from memlane.retrieve.result import RecallResult
from memlane.services.graph import Neighbourhood

_MARKDOWN = MarkdownIt("commonmark", {"html": False})

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #222; background: #fafafa; }
header { background: #1f2d3d; color: #fff; padding: .6em 1.2em; display: flex; gap: 1.5em;
         align-items: center; }
header a { color: #fff; text-decoration: none; font-weight: 600; }
header form { flex: 1; display: flex; gap: .5em; }
header input[type=search] { flex: 1; padding: .35em .6em; font-size: 15px; }
main { padding: 1em 1.4em; max-width: 1100px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3em .5em; border-bottom: 1px solid #ddd; vertical-align: top; }
.parts span { display: inline-block; margin-right: .6em; font-size: 12px; color: #555; }
.why { font-size: 12px; color: #666; }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: .15em 1em; font-size: 14px; }
.meta dt { font-weight: 600; color: #555; }
.meta dd { margin: 0; }
pre.diff { background: #fff; border: 1px solid #ddd; padding: .5em; white-space: pre-wrap; }
pre.diff .add { background: #e6ffed; } pre.diff .del { background: #ffeef0; }
.ended { color: #888; text-decoration: line-through; }
.contradicts { color: #d62728; font-weight: 600; }
svg.graph { background: #fff; border: 1px solid #ddd; max-width: 100%; height: auto; }
svg.graph .label, svg.graph .edge-label { paint-order: stroke; stroke: #fff; stroke-width: 3px; }
svg.graph .label { font: 12px system-ui, sans-serif; fill: #222; }
svg.graph .edge-label { font: 10px system-ui, sans-serif; fill: #777; }
svg.graph a.ended .label { fill: #999; }
svg.graph a.contradicted .label { fill: #d62728; font-weight: 600; }
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .4em 1.2em;
          font-size: 13px; }
.swatch, .stroke { margin-right: .3em; vertical-align: middle; }
.nodes { columns: 2; font-size: 14px; }
"""


def layout(title: str, body: str, query: str = "") -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)} · memlane</title><style>{STYLE}</style></head><body>"
        '<header><a href="/">memlane</a><a href="/claude">Claude Code files</a>'
        '<form action="/" method="get">'
        f'<input type="search" name="q" value="{escape(query)}" placeholder="recall…" '
        'aria-label="query" autofocus><button type="submit">Recall</button></form></header>'
        f"<main>{body}</main></body></html>"
    )


def memory_href(memory_id: str) -> str:
    return f"/memory/{escape(memory_id)}"


def graph_href(start: str, opened: Sequence[str] = ()) -> str:
    return "/graph?" + urlencode([("id", start), *(("open", key) for key in opened)])


def search_page(query: str, result: RecallResult | None) -> str:
    if result is None:
        body = "<p>Recall memories: type what you want to know above.</p>"
        return layout("search", body, query)
    rows = []
    for hit in result.hits:
        r = hit.record
        parts = "".join(
            f"<span>{escape(name)} {value:.2f}</span>" for name, value in hit.parts.items() if value
        )
        rows.append(
            f'<tr><td>{hit.score:.3f}</td><td><a href="{memory_href(r.id)}">'
            f"{escape(titled(r))}</a><div class=why>{escape(why(hit))}</div></td>"
            f"<td>{escape(r.kind.value)}</td><td>{escape(r.scope)}</td>"
            f'<td class="parts">{parts}</td></tr>'
        )
    if result.abstained and result.evidence is not None:
        said = f"<p>Nothing relevant found for <b>{escape(query)}</b>: "
        return layout(f"recall {query}", said + f"{escape(result.evidence.reason())}.</p>", query)
    found = f"<p>{len(result.hits)} results for <b>{escape(query)}</b>"
    found += f" ({result.omitted} left out by the budget)</p>" if result.omitted else "</p>"
    table = (
        "<table class=results><thead><tr><th>score</th><th>memory</th><th>kind</th>"
        f"<th>scope</th><th>score parts</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    return layout(f"recall {query}", found + (table if rows else "<p>Nothing found.</p>"), query)


def _history(versions: Sequence[Version]) -> str:
    out = []
    for version, lines in changes(versions):
        spans = []
        for line in lines:
            cls = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
            spans.append(f'<span class="{cls}">{escape(line)}</span>' if cls else escape(line))
        out.append(
            f"<h3>v{version.number} <small>{interval(version.valid_from, version.valid_until)} · "
            f"{escape(version.reason)}</small></h3>"
            f'<pre class="diff">{chr(10).join(spans) or "(no change in title, body or tags)"}</pre>'
        )
    return "".join(out)


def memory_page(hood: Neighbourhood, versions: Sequence[Version], now: datetime) -> str:
    r = hood.record
    meta = facts(r, len(versions), now)
    links = "".join(
        f'<li class="{"contradicts" if n.link.type.value == "contradicts" else ""}">'
        f"{escape(n.link.type.value)} {escape(n.arrow)} "
        f'<a href="{memory_href(n.other.id)}" class="{"" if n.other.live else "ended"}">'
        f"{escape(titled(n.other))}</a></li>"
        for n in hood.links
    )
    entities = "".join(
        f'<li><a href="{escape(entity_graph_href(e.name))}">{escape(e.name)}</a> '
        f"<small>({escape(e.kind.value)}, {escape(e.type.value)}, {e.mentions})</small></li>"
        for e in hood.entities
    )
    body = (
        f"<h1>{escape(titled(r))}</h1>"
        f'<p><a href="{graph_href(r.id)}">graph view</a></p>'
        f'<div class="body">{_MARKDOWN.render(r.body)}</div>'
        '<dl class="meta">'
        + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in meta)
        + f"</dl><h2>Links ({len(hood.links)})</h2><ul>{links}</ul>"
        f"<h2>Entities ({len(hood.entities)})</h2><ul>{entities}</ul>"
        f"<h2>History</h2>{_history(versions)}"
    )
    return layout(r.title, body)


def graph_page(centre: Record, drawing: str, legend: str, nodes: str) -> str:
    body = (
        f'<h1>Graph around <a href="{memory_href(centre.id)}">{escape(centre.title)}</a></h1>'
        "<p>Click a node to open its neighbourhood (links and entities, one hop).</p>"
        f"{legend}{drawing}<h2>Nodes</h2>{nodes}"
    )
    return layout(f"graph {centre.title}", body)


def entity_graph_href(name: str) -> str:
    return "/graph?" + urlencode([("entity", name)])


def entity_graph_page(
    entity: Entity,
    drawing: str,
    legend: str,
    relations: Sequence[Relation],
    mentioning: Sequence[Record] = (),
) -> str:
    rows = []
    for r in relations:
        ends = [
            f'<a href="{escape(entity_graph_href(n))}">{escape(n)}</a>'
            for n in (r.subject, r.object)
        ]
        said = "" if r.label.casefold() == r.predicate.value else f" <q>{escape(r.label)}</q>"
        why = f" <small>({escape(r.context)})</small>" if r.context else ""
        source = f' <a href="{memory_href(r.memory_id)}">source</a>' if r.memory_id else ""
        rows.append(
            f"<li>{ends[0]} <b>{escape(r.predicate.value)}</b>{said} {ends[1]}{why}{source}</li>"
        )
    listed = f'<ul class="relations">{"".join(rows)}</ul>' if rows else "<p>No relations.</p>"
    body = (
        f"<h1>{escape(entity.name)} <small>({escape(entity.type.value)})</small></h1>"
        "<p>Its current relations; click an entity to centre it.</p>"
        f"{legend}{drawing}<h2>Relations</h2>{listed}"
        f"<h2>Memories naming it ({entity.mentions})</h2>{_memory_list(mentioning)}"
    )
    return layout(f"entity {entity.name}", body)


def _memory_list(records: Sequence[Record]) -> str:
    if not records:
        return "<p>No memory names it.</p>"
    items = "".join(
        f'<li><a href="{memory_href(r.id)}">{escape(titled(r))}</a></li>' for r in records
    )
    return f"<ul>{items}</ul>"


def message_page(title: str, text: str) -> str:
    return layout(title, f"<h1>{escape(title)}</h1><p>{escape(text)}</p>")


def claude_href(index: int) -> str:
    return f"/claude?file={index}"


def claude_page(
    files: Sequence[MemoryFile], home: Path, shown: int | None, text: str | None
) -> str:
    """Claude Code's memory files by group, each a link to its page; with `shown`
    (its index), that file's text as Markdown."""
    lists = []
    for group in GROUPS:
        items = [
            f'<li><a href="{claude_href(i)}">{"↳ " if f.imported_by else ""}'
            f"{escape(f.label(home))}</a></li>"
            for i, f in enumerate(files)
            if f.group == group
        ]
        if items:
            lists.append(f"<h2>{escape(group)} ({len(items)})</h2><ul>{''.join(items)}</ul>")
    listing = "".join(lists) or "<p>No Claude Code memory files for this user or project.</p>"
    if shown is None or text is None:
        intro = "<p>The files Claude Code keeps as memory here; read-only.</p>"
        return layout("Claude Code files", f"<h1>Claude Code files</h1>{intro}{listing}")
    found = files[shown]
    where = escape(found.label(home))
    if found.imported_by is not None:
        where += f" (imported by {escape(MemoryFile(found.imported_by, '').label(home))})"
    body = f"<h1>{where}</h1><article>{_MARKDOWN.render(text)}</article><hr>{listing}"
    return layout(found.path.name, body)
