"""Relations between entities, and entities made by hand, written once for both stores
(see memlane.store.dialect).

A relation is visible to a viewer when it came from no memory (said by hand or by
the MCP tools) or from a memory the viewer may see (live or not: the relation has
its own validity). An entity is visible when a visible live memory names it, a
visible relation touches it, or no memory names it at all (made by hand).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memlane.model import Entity, EntityType, Predicate, Relation
from memlane.store.dialect import Connection, Dialect
from memlane.store.dialect.entities import with_aliases
from memlane.timeutil import from_text, to_text

# Keeps an entity a forgotten memory last named: a relation still has it at one end.
KEPT_BY_RELATION = (
    "SELECT 1 FROM relation r WHERE r.subject_id = entity.id OR r.object_id = entity.id"
)
_COLUMNS = (
    "r.id, r.subject_id, s.name, r.predicate, r.label, r.object_id, o.name, r.valid_from, "
    "r.context, r.memory_id, r.valid_to"
)
_FROM = "FROM relation r JOIN entity s ON s.id = r.subject_id JOIN entity o ON o.id = r.object_id"


def _visible(d: Dialect, everyone: bool) -> str:
    """A test of relation r for the viewer (one positional mark)."""
    if everyone:
        return f"{d.mark}{d.text_cast} IS NULL OR {d.true}"
    return (
        "(r.memory_id IS NULL OR EXISTS (SELECT 1 FROM memory v WHERE v.id = r.memory_id "
        f"AND (v.visibility = 'public' OR v.owner = {d.mark})))"
    )


def _relation(row: Sequence[Any]) -> Relation:
    return Relation(
        id=str(row[0]),
        subject_id=str(row[1]),
        subject=str(row[2]),
        predicate=Predicate(row[3]),
        label=str(row[4]),
        object_id=str(row[5]),
        object=str(row[6]),
        valid_from=from_text(row[7]),
        context=row[8],
        memory_id=row[9],
        valid_to=from_text(row[10]) if row[10] is not None else None,
    )


def relations_of(
    d: Dialect,
    conn: Connection,
    entity_ids: Sequence[str],
    viewer: str | None,
    current: bool,
    everyone: bool = False,
) -> list[Relation]:
    """The relations touching any of these entities (either end) the viewer may see
    (`everyone`: any), oldest first; only the current ones when `current`."""
    found: dict[str, Relation] = {}
    ended = " AND r.valid_to IS NULL" if current else ""
    for end in ("r.subject_id", "r.object_id"):
        for test, part in d.among(end, entity_ids):
            rows = conn.execute(
                f"SELECT {_COLUMNS} {_FROM} WHERE {test}{ended} AND ({_visible(d, everyone)})",
                (*part, viewer),
            )
            found.update((str(row[0]), _relation(row)) for row in rows)
    return sorted(found.values(), key=lambda r: (r.valid_from, r.id))


def relation(d: Dialect, conn: Connection, relation_id: str) -> Relation | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} {_FROM} WHERE r.id = {d.mark}", (relation_id,)
    ).fetchone()
    return _relation(row) if row else None


def known_entity(d: Dialect, conn: Connection, alias: str, viewer: str | None) -> Entity | None:
    """The entity with this alias if the viewer may see it (see the module docstring),
    counted over the visible live memories naming it (perhaps none)."""
    m = d.mark
    live = (
        "m.superseded_at IS NULL AND m.valid_until IS NULL "
        f"AND (m.visibility = 'public' OR m.owner = {m})"
    )
    rows = conn.execute(
        "SELECT e.id, e.name, e.type, e.created_at, "
        f"(SELECT COUNT(*) FROM mention n JOIN memory m ON m.id = n.memory_id "
        f"WHERE n.entity_id = e.id AND {live}) AS n, e.entity_type "
        f"FROM entity_alias a JOIN entity e ON e.id = a.entity_id WHERE a.alias = {m}",
        (viewer, alias),
    ).fetchall()
    found = with_aliases(d, conn, rows)
    if not found:
        return None
    entity = found[0]
    # Trigger: memories name it, none of them live and the viewer's. Why: a name only
    # another's private memories (or ended ones) hold is not the viewer's to see.
    # Outcome: seen only through a relation the viewer may see.
    if entity.mentions or not _named_by_a_memory(d, conn, entity.id):
        return entity
    return entity if relations_of(d, conn, [entity.id], viewer, current=False) else None


def _named_by_a_memory(d: Dialect, conn: Connection, entity_id: str) -> bool:
    row = conn.execute(f"SELECT 1 FROM mention WHERE entity_id = {d.mark} LIMIT 1", (entity_id,))
    return row.fetchone() is not None


def made_by_hand(d: Dialect, conn: Connection) -> list[Entity]:
    """The entities no memory names (made by `relate` or the MCP tools)."""
    rows = conn.execute(
        "SELECT e.id, e.name, e.type, e.created_at, 0, e.entity_type FROM entity e "
        "WHERE NOT EXISTS (SELECT 1 FROM mention n WHERE n.entity_id = e.id) ORDER BY e.name"
    ).fetchall()
    return with_aliases(d, conn, rows)


# ---- writes ----------------------------------------------------------------------


def add_relation(d: Dialect, conn: Connection, r: Relation) -> None:
    conn.execute(
        "INSERT INTO relation(id, subject_id, predicate, label, object_id, context, memory_id, "
        f"valid_from, valid_to) VALUES ({d.marks(9)})",
        (
            r.id,
            r.subject_id,
            r.predicate.value,
            r.label,
            r.object_id,
            r.context,
            r.memory_id,
            to_text(r.valid_from),
            to_text(r.valid_to) if r.valid_to else None,
        ),
    )


def end_relation(d: Dialect, conn: Connection, relation_id: str, at: datetime) -> bool:
    """End a current relation; False when there is none of that id."""
    m = d.mark
    done = conn.execute(
        f"UPDATE relation SET valid_to = {m} WHERE id = {m} AND valid_to IS NULL",
        (to_text(at), relation_id),
    )
    return done.rowcount == 1


def set_entity_type(d: Dialect, conn: Connection, entity_id: str, kind: EntityType) -> None:
    conn.execute(
        f"UPDATE entity SET entity_type = {d.mark} WHERE id = {d.mark}", (kind.value, entity_id)
    )


def put_entity(d: Dialect, conn: Connection, entity: Entity, alias: str) -> str:
    """Make an entity no memory names, keyed by `alias`; the id of the entity that owns
    the alias after (another writer's, if it claimed the alias first)."""
    m = d.mark
    conn.execute(
        f"INSERT INTO entity(id, name, type, created_at, entity_type) VALUES ({d.marks(5)})",
        (entity.id, entity.name, entity.kind.value, to_text(entity.created_at), entity.type.value),
    )
    conn.execute(
        d.insert_ignoring(f"entity_alias(alias, entity_id) VALUES ({m}, {m})"), (alias, entity.id)
    )
    row = conn.execute(f"SELECT entity_id FROM entity_alias WHERE alias = {m}", (alias,)).fetchone()
    owner = str(row[0])
    if owner != entity.id:
        conn.execute(f"DELETE FROM entity WHERE id = {m}", (entity.id,))
    return owner


def repoint_relations(d: Dialect, conn: Connection, source: str, target: str, at: datetime) -> None:
    """Move `source`'s relations to `target`. Trigger: a current relation that would
    repeat one `target` has, or join `target` to itself. Why: merging says two names
    are one thing, not that anything new was learned. Outcome: it is ended, and moved."""
    m = d.mark
    mine = relations_of(d, conn, [source], None, current=True, everyone=True)
    theirs = relations_of(d, conn, [target], None, current=True, everyone=True)
    held = {(r.subject_id, r.predicate, _wording(r), r.object_id) for r in theirs}
    for r in mine:
        subject = target if r.subject_id == source else r.subject_id
        obj = target if r.object_id == source else r.object_id
        key = (subject, r.predicate, _wording(r), obj)
        if subject == obj or key in held:
            end_relation(d, conn, r.id, at)
        held.add(key)
    conn.execute(f"UPDATE relation SET subject_id = {m} WHERE subject_id = {m}", (target, source))
    conn.execute(f"UPDATE relation SET object_id = {m} WHERE object_id = {m}", (target, source))


def _wording(r: Relation) -> str:
    """What tells two relations of one predicate apart: nothing, but for related_to
    its words (as memlane.graph.relations.same_relation reads them)."""
    if r.predicate is not Predicate.RELATED_TO:
        return ""
    return " ".join(r.label.casefold().replace("_", " ").replace("-", " ").split())
