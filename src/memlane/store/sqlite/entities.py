"""Entities, their aliases and the memories that mention them, in SQLite.

An alias belongs to one entity (a unique index); an entity has one or more aliases.
Counts are of live memories the viewer may see, so a name that only private
memories mention is not shown to anyone else. What PostgreSQL does alike is in
memlane.store.dialect.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from typing import Any

from memlane.model import EntityType, Mention
from memlane.store.dialect import entities as shared
from memlane.store.sqlite.sql import SQLITE
from memlane.timeutil import to_text, utcnow

merge = partial(shared.merge_entities, SQLITE)


def set_mentions(conn: sqlite3.Connection, mentions: Mapping[str, Sequence[Mention]]) -> None:
    """Make each memory's mentions exactly the given ones, creating unknown entities
    (no other writer can claim an alias meanwhile: this one holds the database)."""
    first = shared.clear_mentions(SQLITE, conn, mentions)
    if not first:
        return
    owner = shared.entity_owners(SQLITE, conn, list(first))
    created = [(secrets.token_hex(8), m) for alias, m in first.items() if alias not in owner]
    at = to_text(utcnow())
    conn.executemany(
        "INSERT INTO entity(id, name, type, created_at, entity_type) VALUES (?, ?, ?, ?, ?)",
        [(eid, m.name, m.kind.value, at, EntityType.of_kind(m.kind).value) for eid, m in created],
    )
    conn.executemany(
        "INSERT INTO entity_alias(alias, entity_id) VALUES (?, ?)",
        [(m.alias, entity_id) for entity_id, m in created],
    )
    owner.update((m.alias, entity_id) for entity_id, m in created)
    conn.executemany(
        SQLITE.insert_ignoring("mention(memory_id, entity_id) VALUES (?, ?)"),
        [(memory_id, owner[m.alias]) for memory_id, found in mentions.items() for m in found],
    )


def named(conn: sqlite3.Connection, aliases: Sequence[str]) -> Iterator[Any]:
    """The rows of NAMED_ENTITIES for these aliases."""
    for test, part in SQLITE.among("a.alias", aliases):
        yield from conn.execute(shared.NAMED_ENTITIES + test, part).fetchall()
