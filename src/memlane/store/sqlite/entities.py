"""Entities, their aliases and the memories that mention them, in SQLite.

An alias belongs to one entity (a unique index); an entity has one or more aliases.
Counts are of live memories the viewer may see, so a name that only private
memories mention is not shown to anyone else.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from memlane.model import Entity, EntityKind, EntityMatch, Mention
from memlane.timeutil import from_text, to_text, utcnow

# Ids per IN (...) list: well under SQLite's bound-variable limit.
_CHUNK = 500
_VISIBLE_LIVE = (
    "m.superseded_at IS NULL AND m.valid_until IS NULL "
    "AND (m.visibility = 'public' OR m.owner IS :viewer)"
)


def _chunks(values: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(values), _CHUNK):
        yield values[start : start + _CHUNK]


def _marks(values: Sequence[str]) -> str:
    return ", ".join("?" for _ in values)


def set_mentions(conn: sqlite3.Connection, mentions: Mapping[str, Sequence[Mention]]) -> None:
    """Make each memory's mentions exactly the given ones, creating unknown entities."""
    memory_ids = list(mentions)
    for part in _chunks(memory_ids):
        conn.execute(f"DELETE FROM mention WHERE memory_id IN ({_marks(part)})", part)
    first: dict[str, Mention] = {}
    for found in mentions.values():
        for mention in found:
            first.setdefault(mention.alias, mention)
    if not first:
        return
    owner = _owners(conn, list(first))
    created = [(uuid.uuid4().hex[:16], m) for alias, m in first.items() if alias not in owner]
    at = to_text(utcnow())
    conn.executemany(
        "INSERT INTO entity(id, name, type, created_at) VALUES (?, ?, ?, ?)",
        [(entity_id, m.name, m.kind.value, at) for entity_id, m in created],
    )
    conn.executemany(
        "INSERT INTO entity_alias(alias, entity_id) VALUES (?, ?)",
        [(m.alias, entity_id) for entity_id, m in created],
    )
    owner.update((m.alias, entity_id) for entity_id, m in created)
    conn.executemany(
        "INSERT OR IGNORE INTO mention(memory_id, entity_id) VALUES (?, ?)",
        [(memory_id, owner[m.alias]) for memory_id, found in mentions.items() for m in found],
    )


def _owners(conn: sqlite3.Connection, aliases: Sequence[str]) -> dict[str, str]:
    """alias -> entity id, for the aliases that are known."""
    out: dict[str, str] = {}
    for part in _chunks(aliases):
        rows = conn.execute(
            f"SELECT alias, entity_id FROM entity_alias WHERE alias IN ({_marks(part)})", part
        )
        out.update((str(a), str(e)) for a, e in rows)
    return out


def merge(conn: sqlite3.Connection, source: str, target: str) -> None:
    """Move every alias and mention of `source` to `target`, then drop `source`."""
    conn.execute("UPDATE entity_alias SET entity_id = ? WHERE entity_id = ?", (target, source))
    conn.execute(
        "INSERT OR IGNORE INTO mention(memory_id, entity_id) "
        "SELECT memory_id, ? FROM mention WHERE entity_id = ?",
        (target, source),
    )
    conn.execute("DELETE FROM entity WHERE id = ?", (source,))  # its mentions cascade


def listing(
    conn: sqlite3.Connection, viewer: str | None, kind: str | None, limit: int | None
) -> list[Entity]:
    """Entities named by visible live memories, most mentioned first."""
    params: dict[str, Any] = {"viewer": viewer, "kind": kind, "limit": limit or -1}
    rows = conn.execute(
        "SELECT e.id, e.name, e.type, e.created_at, COUNT(*) AS n FROM entity e "
        "JOIN mention n ON n.entity_id = e.id JOIN memory m ON m.id = n.memory_id "
        f"WHERE {_VISIBLE_LIVE} AND (:kind IS NULL OR e.type = :kind) "
        "GROUP BY e.id ORDER BY n DESC, e.name LIMIT :limit",
        params,
    ).fetchall()
    return _with_aliases(conn, rows)


def find(conn: sqlite3.Connection, alias: str, viewer: str | None) -> Entity | None:
    """The entity with this alias, if any visible live memory names it."""
    rows = conn.execute(
        "SELECT e.id, e.name, e.type, e.created_at, COUNT(*) AS n FROM entity_alias a "
        "JOIN entity e ON e.id = a.entity_id JOIN mention n ON n.entity_id = e.id "
        f"JOIN memory m ON m.id = n.memory_id WHERE a.alias = :alias AND {_VISIBLE_LIVE} "
        "GROUP BY e.id",
        {"alias": alias, "viewer": viewer},
    ).fetchall()
    found = _with_aliases(conn, rows)
    return found[0] if found else None


def _with_aliases(conn: sqlite3.Connection, rows: list[sqlite3.Row]) -> list[Entity]:
    ids = [str(row[0]) for row in rows]
    aliases: dict[str, list[str]] = {}
    for part in _chunks(ids):
        found = conn.execute(
            f"SELECT entity_id, alias FROM entity_alias WHERE entity_id IN ({_marks(part)}) "
            "ORDER BY alias",
            part,
        )
        for entity_id, alias in found:
            aliases.setdefault(str(entity_id), []).append(str(alias))
    return [
        Entity(
            id=str(row[0]),
            name=str(row[1]),
            kind=EntityKind(row[2]),
            aliases=tuple(aliases.get(str(row[0]), ())),
            mentions=int(row[4]),
            created_at=from_text(row[3]),
        )
        for row in rows
    ]


def mentioned(conn: sqlite3.Connection, aliases: Sequence[str], cap: int) -> list[EntityMatch]:
    """For each known alias, its entity and the memories naming it (at most `cap`;
    `common` when there are more). Reads at most cap + 1 rows per entity."""
    out: list[EntityMatch] = []
    seen: set[str] = set()
    for part in _chunks(aliases):
        found = conn.execute(
            "SELECT a.alias, e.id, e.type FROM entity_alias a JOIN entity e ON e.id = a.entity_id "
            f"WHERE a.alias IN ({_marks(part)})",
            part,
        ).fetchall()
        for alias, entity_id, kind in found:
            if entity_id in seen:
                continue
            seen.add(entity_id)
            rows = conn.execute(
                "SELECT memory_id FROM mention WHERE entity_id = ? LIMIT ?", (entity_id, cap + 1)
            ).fetchall()
            ids = tuple(str(r[0]) for r in rows[:cap])
            match = EntityMatch(str(entity_id), EntityKind(kind), str(alias), ids, len(rows) > cap)
            out.append(match)
    return out
