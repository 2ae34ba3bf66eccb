"""Entities, their aliases and the memories that mention them, on PostgreSQL.

An alias belongs to one entity (its primary key); counts are of live memories the
viewer may see. What SQLite does alike is in memlane.store.dialect.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import psycopg

from memlane.model import EntityType, Mention
from memlane.store.dialect import entities as shared
from memlane.store.postgres.sql import POSTGRES
from memlane.timeutil import to_text, utcnow

Conn = psycopg.Connection[tuple[Any, ...]]
merge = partial(shared.merge_entities, POSTGRES)


def set_mentions(conn: Conn, mentions: Mapping[str, Sequence[Mention]]) -> None:
    """Make each memory's mentions exactly the given ones, creating unknown entities.

    Trigger: two writers naming the same new alias at once. Why: both would create an
    entity and one insert would fail on the alias key. Outcome: aliases are claimed
    with ON CONFLICT DO NOTHING and the owners read back after, so the loser uses the
    winner's entity (its own spare entity row is dropped).
    """
    first = shared.clear_mentions(POSTGRES, conn, mentions)
    if not first:
        return
    owner = shared.entity_owners(POSTGRES, conn, list(first))
    created = [(secrets.token_hex(8), m) for alias, m in first.items() if alias not in owner]
    if created:
        at = to_text(utcnow())
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO entity(id, name, type, created_at, entity_type) "
                "VALUES (%s, %s, %s, %s, %s)",
                [
                    (eid, m.name, m.kind.value, at, EntityType.of_kind(m.kind).value)
                    for eid, m in created
                ],
            )
            cur.executemany(
                "INSERT INTO entity_alias(alias, entity_id) VALUES (%s, %s) "
                "ON CONFLICT (alias) DO NOTHING",
                [(m.alias, entity_id) for entity_id, m in created],
            )
        owner = shared.entity_owners(POSTGRES, conn, list(first))
        spare = [entity_id for entity_id, _ in created if entity_id not in owner.values()]
        conn.execute("DELETE FROM entity WHERE id = ANY(%s::text[])", (spare,))
    with conn.cursor() as cur:
        cur.executemany(
            POSTGRES.insert_ignoring("mention(memory_id, entity_id) VALUES (%s, %s)"),
            [(mid, owner[m.alias]) for mid, found in mentions.items() for m in found],
        )


def named(conn: Conn, aliases: Sequence[str]) -> list[Any]:
    """The rows of NAMED_ENTITIES for these aliases, in the order given."""
    return conn.execute(
        shared.NAMED_ENTITIES
        + "a.alias = ANY(%s::text[]) ORDER BY array_position(%s::text[], a.alias::text)",
        (list(aliases), list(aliases)),
    ).fetchall()
