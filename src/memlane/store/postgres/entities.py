"""Entities, their aliases and the memories that mention them, on PostgreSQL.

The port of `memlane.store.sqlite.entities`: an alias belongs to one entity (its
primary key); counts are of live memories the viewer may see.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg

from memlane.model import Entity, EntityKind, EntityMatch, Mention
from memlane.timeutil import from_text, to_text, utcnow

Conn = psycopg.Connection[tuple[Any, ...]]
_VISIBLE_LIVE = (
    "m.superseded_at IS NULL AND m.valid_until IS NULL "
    "AND (m.visibility = 'public' OR m.owner IS NOT DISTINCT FROM %(viewer)s::text)"
)


def set_mentions(conn: Conn, mentions: Mapping[str, Sequence[Mention]]) -> None:
    """Make each memory's mentions exactly the given ones, creating unknown entities.

    Trigger: two writers naming the same new alias at once. Why: both would create an
    entity and one insert would fail on the alias key. Outcome: aliases are claimed
    with ON CONFLICT DO NOTHING and the owners read back after, so the loser uses the
    winner's entity (its own spare entity row is dropped).
    """
    conn.execute("DELETE FROM mention WHERE memory_id = ANY(%s::text[])", (list(mentions),))
    first: dict[str, Mention] = {}
    for found in mentions.values():
        for mention in found:
            first.setdefault(mention.alias, mention)
    if not first:
        return
    owner = _owners(conn, list(first))
    created = [(uuid.uuid4().hex[:16], m) for alias, m in first.items() if alias not in owner]
    if created:
        at = to_text(utcnow())
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO entity(id, name, type, created_at) VALUES (%s, %s, %s, %s)",
                [(entity_id, m.name, m.kind.value, at) for entity_id, m in created],
            )
            cur.executemany(
                "INSERT INTO entity_alias(alias, entity_id) VALUES (%s, %s) "
                "ON CONFLICT (alias) DO NOTHING",
                [(m.alias, entity_id) for entity_id, m in created],
            )
        owner = _owners(conn, list(first))
        spare = [entity_id for entity_id, _ in created if entity_id not in owner.values()]
        conn.execute("DELETE FROM entity WHERE id = ANY(%s::text[])", (spare,))
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO mention(memory_id, entity_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            [(mid, owner[m.alias]) for mid, found in mentions.items() for m in found],
        )


def _owners(conn: Conn, aliases: Sequence[str]) -> dict[str, str]:
    rows = conn.execute(
        "SELECT alias, entity_id FROM entity_alias WHERE alias = ANY(%s::text[])",
        (list(aliases),),
    )
    return {str(a): str(e) for a, e in rows}


def merge(conn: Conn, source: str, target: str) -> None:
    """Move every alias and mention of `source` to `target`, then drop `source`."""
    conn.execute("UPDATE entity_alias SET entity_id = %s WHERE entity_id = %s", (target, source))
    conn.execute(
        "INSERT INTO mention(memory_id, entity_id) SELECT memory_id, %s FROM mention "
        "WHERE entity_id = %s ON CONFLICT DO NOTHING",
        (target, source),
    )
    conn.execute("DELETE FROM entity WHERE id = %s", (source,))


def listing(conn: Conn, viewer: str | None, kind: str | None, limit: int | None) -> list[Entity]:
    rows = conn.execute(
        "SELECT e.id, e.name, e.type, e.created_at, COUNT(*) AS n FROM entity e "
        "JOIN mention n ON n.entity_id = e.id JOIN memory m ON m.id = n.memory_id "
        f"WHERE {_VISIBLE_LIVE} AND (%(kind)s::text IS NULL OR e.type = %(kind)s::text) "
        "GROUP BY e.id ORDER BY n DESC, e.name LIMIT %(limit)s",
        {"viewer": viewer, "kind": kind, "limit": limit},
    ).fetchall()
    return _with_aliases(conn, rows)


def find(conn: Conn, alias: str, viewer: str | None) -> Entity | None:
    rows = conn.execute(
        "SELECT e.id, e.name, e.type, e.created_at, COUNT(*) AS n FROM entity_alias a "
        "JOIN entity e ON e.id = a.entity_id JOIN mention n ON n.entity_id = e.id "
        f"JOIN memory m ON m.id = n.memory_id WHERE a.alias = %(alias)s AND {_VISIBLE_LIVE} "
        "GROUP BY e.id",
        {"alias": alias, "viewer": viewer},
    ).fetchall()
    found = _with_aliases(conn, rows)
    return found[0] if found else None


def _with_aliases(conn: Conn, rows: list[tuple[Any, ...]]) -> list[Entity]:
    ids = [str(row[0]) for row in rows]
    aliases: dict[str, list[str]] = {}
    found = conn.execute(
        "SELECT entity_id, alias FROM entity_alias WHERE entity_id = ANY(%s::text[]) "
        "ORDER BY alias",
        (ids,),
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


def mentioned(conn: Conn, aliases: Sequence[str], cap: int) -> list[EntityMatch]:
    """For each known alias, its entity and the memories naming it (at most `cap`;
    `common` when there are more)."""
    out: list[EntityMatch] = []
    seen: set[str] = set()
    found = conn.execute(
        "SELECT a.alias, e.id, e.type FROM entity_alias a JOIN entity e ON e.id = a.entity_id "
        "WHERE a.alias = ANY(%s::text[]) ORDER BY array_position(%s::text[], a.alias::text)",
        (list(aliases), list(aliases)),
    ).fetchall()
    for alias, entity_id, kind in found:
        if entity_id in seen:
            continue
        seen.add(entity_id)
        rows = conn.execute(
            "SELECT memory_id FROM mention WHERE entity_id = %s LIMIT %s", (entity_id, cap + 1)
        ).fetchall()
        ids = tuple(str(r[0]) for r in rows[:cap])
        out.append(EntityMatch(str(entity_id), EntityKind(kind), str(alias), ids, len(rows) > cap))
    return out
