"""What the browser shows, as plain data and text: groups of memories, a memory's
card as Markdown, the diff between its versions, its neighbourhood as rows, and the
grouped summary printed when there is no terminal. No Textual; one read (`newest`),
the rest pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

import msgspec

from memlane.memory import Memory
from memlane.model import Record, Version
from memlane.retrieve.present import changes, facts, interval, stamp, titled
from memlane.retrieve.score import Scored
from memlane.services.graph import Neighbourhood, Relationships

GROUPINGS = ("kind", "scope", "tag", "session")
NO_TAG = "(no tag)"
NO_SESSION = "(no session)"
# Memories a group lists in the piped summary (the browser's tree lists them all).
SUMMARY_PER_GROUP = 5


class Group(msgspec.Struct, frozen=True):
    label: str
    records: tuple[Record, ...]  # newest first


def _keys(by: str) -> Callable[[Record], tuple[str, ...]]:
    if by == "kind":
        return lambda r: (r.kind.value,)
    if by == "scope":
        return lambda r: (r.scope,)
    if by == "tag":
        return lambda r: r.tags or (NO_TAG,)
    if by == "session":
        return lambda r: (r.session_id or NO_SESSION,)
    raise ValueError(f"group by one of {', '.join(GROUPINGS)}, not {by!r}")


def narrowed(memory: Memory, scope: str | None) -> str | list[str] | None:
    """The scope option a narrowing to `scope` reads with: a project's scope with its
    branch scopes, `all` for every scope, None for the default (this project and global)."""
    if scope is None:
        return None
    covered = memory.scopes.covering(scope)
    return "all" if covered is None else list(covered)


def newest_live(memory: Memory, scope: str | None, limit: int) -> tuple[list[Record], bool]:
    """The newest `limit` live memories of `scope` (a project's with its branches) the
    agent may see (its own private ones too), and whether there are more."""
    mine = memory.agent is not None
    found = memory.list(
        memory.filters(scope=narrowed(memory, scope), limit=limit + 1, include_private=mine)
    )
    return found[:limit], len(found) > limit


def newest(record: Record) -> datetime:
    return record.occurred_at or record.created_at


def group(records: Iterable[Record], by: str) -> list[Group]:
    """Memories grouped by kind, scope, tag (a memory under each of its tags) or
    session; the largest group first, each newest first."""
    keys = _keys(by)
    groups: dict[str, list[Record]] = {}
    for record in records:
        for key in keys(record):
            groups.setdefault(key, []).append(record)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [
        Group(label, tuple(sorted(members, key=lambda r: (newest(r), r.id), reverse=True)))
        for label, members in ordered
    ]


def matches(record: Record, needle: str) -> bool:
    """The live filter: `needle` (any case) in the id, title, body or a tag."""
    if not needle:
        return True
    low = needle.casefold()
    haystack = (record.id, record.title, record.body, *record.tags)
    return any(low in text.casefold() for text in haystack)


label = titled  # a memory's line in the tree and in tables


def _inline(text: str) -> str:
    """Text safe on one Markdown list line (no line breaks, no emphasis markers)."""
    return " ".join(text.split()).replace("*", "\\*").replace("_", "\\_")


def card(hood: Neighbourhood, versions: int, now: datetime) -> str:
    """A memory as Markdown: title, body, then its metadata, links and entities."""
    r = hood.record
    lines = [f"# {r.title}", "", r.body, "", "---", ""]
    lines += [f"- **{name}**: {_inline(value)}" for name, value in facts(r, versions, now)]
    lines += ["", f"## Links ({len(hood.links)})", ""]
    for n in hood.links:
        way = n.arrow
        mark = "" if n.other.live else f" ({n.other.tombstone_text})"
        lines.append(
            f"- {n.link.type.value} {way} **{_inline(label(n.other))}** `{n.other.id}`{_inline(mark)}"
        )
    lines += ["", f"## Entities ({len(hood.entities)})", ""]
    lines += [
        f"- **{_inline(e.name)}** {e.kind.value}, {_named_by(e.mentions)}" for e in hood.entities
    ]
    return "\n".join(lines) + "\n"


def _named_by(count: int) -> str:
    return f"named by {count} memor{'y' if count == 1 else 'ies'}"


def neighbourhood_rows(hood: Neighbourhood) -> list[tuple[str, str, str, str]]:
    """One hop out as table rows: (what, relation, id or kind, title or name)."""
    rows = []
    for n in hood.links:
        rows.append(("memory", f"{n.arrow} {n.link.type.value}", n.other.id, label(n.other)))
    for e in hood.entities:
        rows.append(("entity", "names", e.kind.value, f"{e.name} ({_named_by(e.mentions)})"))
    return rows


def relation_rows(found: Relationships) -> list[tuple[str, str, str, str, str]]:
    """An entity's relations as table rows: (way, predicate as written, the entity at
    the other end, context, the memory it came from)."""
    rows = []
    for r in found.relations:
        outgoing = r.subject_id == found.entity.id
        said = (
            r.predicate.value
            if r.label.casefold() == r.predicate.value
            else (f"{r.predicate.value} ({r.label})")
        )
        ended = "" if r.current else " [ended]"
        rows.append(
            (
                "->" if outgoing else "<-",
                said + ended,
                r.object if outgoing else r.subject,
                r.context or "",
                r.memory_id or "",
            )
        )
    return rows


def history_text(versions: Sequence[Version]) -> str:
    """Every version, oldest first, each with a unified diff from the one before."""
    out: list[str] = []
    for version, lines in changes(versions):
        span = interval(version.valid_from, version.valid_until)
        out.append(f"v{version.number}  {span}  ({version.reason})")
        out += [f"  {line}" for line in lines] or ["  (no change in title, body or tags)"]
        out.append("")
    return "\n".join(out)


def score_rows(hits: Sequence[Scored]) -> list[tuple[str, ...]]:
    """Recall results as table rows: score, id, title and the score's parts."""
    rows: list[tuple[str, ...]] = []
    for s in hits:
        parts = "  ".join(f"{k} {v:.2f}" for k, v in s.parts.items() if v)
        rows.append((f"{s.score:.3f}", s.record.id, label(s.record), parts))
    return rows


def summary(groups: Sequence[Group], by: str, shown: int, *, more: bool = False) -> str:
    """The read-only summary printed instead of the browser when there is no terminal;
    `more`: the store holds more than the `shown` newest."""
    head = f"{shown} live memories by {by}"
    if more:
        head += " (the newest only: narrow with --scope or raise --limit)"
    lines = [head, ""]
    for g in groups:
        lines.append(f"{g.label} ({len(g.records)})")
        for r in g.records[:SUMMARY_PER_GROUP]:
            lines.append(f"  {r.id}  {stamp(newest(r))}  {label(r)}")
        if len(g.records) > SUMMARY_PER_GROUP:
            lines.append(f"  ... {len(g.records) - SUMMARY_PER_GROUP} more")
    return "\n".join(lines) + "\n"
