"""Entities, their aliases and the memories that mention them, written once for both
stores (see memlane.store.dialect).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memlane.model import Entity, EntityKind, EntityMatch, EntityType, Mention
from memlane.store.dialect import Connection, Dialect
from memlane.timeutil import from_text

# Counts are of live memories the viewer may see, so a name that only private memories
# mention is not shown to anyone else.

# Known aliases with their entity and its kind (the rows of entity_matches); a test of
# a.alias ends the statement.
NAMED_ENTITIES = (
    "SELECT a.alias, e.id, e.type FROM entity_alias a JOIN entity e ON e.id = a.entity_id WHERE "
)


def _visible_live(d: Dialect) -> str:
    return (
        "m.superseded_at IS NULL AND m.valid_until IS NULL "
        f"AND (m.visibility = 'public' OR m.owner = {d.text('viewer')})"
    )


def clear_mentions(
    d: Dialect, conn: Connection, mentions: Mapping[str, Sequence[Mention]]
) -> dict[str, Mention]:
    """Delete these memories' mentions, and return each alias they now name with its
    first mention (whose name and kind a new entity takes)."""
    for test, part in d.among("memory_id", list(mentions)):
        conn.execute(f"DELETE FROM mention WHERE {test}", part)
    first: dict[str, Mention] = {}
    for found in mentions.values():
        for mention in found:
            first.setdefault(mention.alias, mention)
    return first


def entity_owners(d: Dialect, conn: Connection, aliases: Sequence[str]) -> dict[str, str]:
    """alias -> entity id, for the aliases that are known."""
    out: dict[str, str] = {}
    for test, part in d.among("alias", aliases):
        rows = conn.execute(f"SELECT alias, entity_id FROM entity_alias WHERE {test}", part)
        out.update((str(a), str(e)) for a, e in rows)
    return out


def merge_entities(d: Dialect, conn: Connection, source: str, target: str) -> None:
    """Move every alias and mention of `source` to `target`, then drop `source`."""
    m = d.mark
    conn.execute(f"UPDATE entity_alias SET entity_id = {m} WHERE entity_id = {m}", (target, source))
    conn.execute(
        d.insert_ignoring(
            f"mention(memory_id, entity_id) SELECT memory_id, {m} FROM mention WHERE entity_id = {m}"
        ),
        (target, source),
    )
    conn.execute(f"DELETE FROM entity WHERE id = {m}", (source,))  # its mentions cascade


def entity_listing(
    d: Dialect,
    conn: Connection,
    viewer: str | None,
    kind: str | None,
    limit: int | None,
    type: str | None = None,
) -> list[Entity]:
    """Entities named by visible live memories (of a kind, of a type), most mentioned
    first."""
    of_kind, of_type = d.text("kind"), d.text("type")
    rows = conn.execute(
        "SELECT e.id, e.name, e.type, e.created_at, COUNT(*) AS n, e.entity_type FROM entity e "
        "JOIN mention n ON n.entity_id = e.id JOIN memory m ON m.id = n.memory_id "
        f"WHERE {_visible_live(d)} AND ({of_kind} IS NULL OR e.type = {of_kind}) "
        f"AND ({of_type} IS NULL OR e.entity_type = {of_type}) "
        f"GROUP BY e.id ORDER BY n DESC, e.name LIMIT {d.param('limit')}",
        {"viewer": viewer, "kind": kind, "type": type, "limit": limit or d.unlimited},
    ).fetchall()
    return with_aliases(d, conn, rows)


def find_entity(d: Dialect, conn: Connection, alias: str, viewer: str | None) -> Entity | None:
    """The entity with this alias, if any visible live memory names it."""
    rows = conn.execute(
        "SELECT e.id, e.name, e.type, e.created_at, COUNT(*) AS n, e.entity_type "
        "FROM entity_alias a "
        "JOIN entity e ON e.id = a.entity_id JOIN mention n ON n.entity_id = e.id "
        f"JOIN memory m ON m.id = n.memory_id WHERE a.alias = {d.param('alias')} "
        f"AND {_visible_live(d)} GROUP BY e.id",
        {"alias": alias, "viewer": viewer},
    ).fetchall()
    found = with_aliases(d, conn, rows)
    return found[0] if found else None


def entities_of(d: Dialect, conn: Connection, memory_id: str, viewer: str | None) -> list[Entity]:
    """The entities one memory names, each counted over the visible live memories that
    name it (0 when only this one does and it is no longer live), most named first."""
    rows = conn.execute(
        "SELECT e.id, e.name, e.type, e.created_at, COUNT(m.id) AS n, e.entity_type "
        "FROM mention x "
        "JOIN entity e ON e.id = x.entity_id JOIN mention n ON n.entity_id = e.id "
        f"LEFT JOIN memory m ON m.id = n.memory_id AND {_visible_live(d)} "
        f"WHERE x.memory_id = {d.param('memory')} GROUP BY e.id ORDER BY n DESC, e.name",
        {"memory": memory_id, "viewer": viewer},
    ).fetchall()
    return with_aliases(d, conn, rows)


def with_aliases(d: Dialect, conn: Connection, rows: list[Any]) -> list[Entity]:
    ids = [str(row[0]) for row in rows]
    aliases: dict[str, list[str]] = {}
    for test, part in d.among("entity_id", ids):
        found = conn.execute(
            f"SELECT entity_id, alias FROM entity_alias WHERE {test} ORDER BY alias", part
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
            type=EntityType(row[5]),
        )
        for row in rows
    ]


def entity_matches(
    d: Dialect, conn: Connection, named: Iterable[Sequence[Any]], cap: int
) -> list[EntityMatch]:
    """Each entity of `named` (rows of NAMED_ENTITIES) once, with the memories naming it
    (at most `cap`; `common` when there are more). Reads at most cap + 1 rows each."""
    out: list[EntityMatch] = []
    seen: set[str] = set()
    for alias, entity_id, kind in named:
        if entity_id in seen:
            continue
        seen.add(entity_id)
        rows = conn.execute(
            f"SELECT memory_id FROM mention WHERE entity_id = {d.mark} LIMIT {d.mark}",
            (entity_id, cap + 1),
        ).fetchall()
        ids = tuple(str(r[0]) for r in rows[:cap])
        out.append(EntityMatch(str(entity_id), EntityKind(kind), str(alias), ids, len(rows) > cap))
    return out
