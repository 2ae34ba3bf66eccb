"""Export and import: the store as plain records, written once for both stores (see
memlane.store.dialect and memlane.store.sqlite.dump).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from memlane.errors import Invalid, shown
from memlane.store.base import Selection
from memlane.store.dialect import Connection, Dialect, Params

# kind -> (table, ORDER BY); columns are read from the table itself.
TABLES: dict[str, tuple[str, str]] = {
    "registry": ("registry", "registry, key"),
    "session": ("session", "id"),
    "memory": ("memory", "seq"),
    "version": ("memory_version", "memory_id, number"),
    "link": ("link", "source, target, type"),
    "entity": ("entity", "id"),
    "alias": ("entity_alias", "entity_id, alias"),
    "mention": ("mention", "memory_id, entity_id"),
    "sighting": ("sighting", "memory_id, session_id"),
    "relation": ("relation", "id"),
    "reminder": ("reminder", "id"),
}
KINDS = tuple(TABLES)  # also the order an import applies them in
_KEYS = {  # what identifies a row, to tell "already here" from "different"
    "registry": ("registry", "key"),
    "session": ("id",),
    "memory": ("id",),
    "version": ("memory_id", "number"),
    "link": ("source", "target", "type"),
    "entity": ("id",),
    "alias": ("alias", "entity_id"),
    "mention": ("memory_id", "entity_id"),
    "sighting": ("memory_id", "session_id"),
    "relation": ("id",),
    "reminder": ("id",),
}
# Columns an older export lacks, and what they hold then.
_ADDED = {("entity", "entity_type"): "unknown"}
# A memory's own `kind` column travels as `memory_kind`: `kind` names the record.
_OUTER = {("memory", "kind"): "memory_kind", ("version", "kind"): "memory_kind"}
_INNER = {(kind, outer): column for (kind, column), outer in _OUTER.items()}
_TOMBSTONE = ("superseded_by", "superseded_at", "supersede_reason", "valid_until", "updated_at")
# The temporary tables an export fills first: the ids of the memories and entities it
# carries (see export_where, export_entities). Unqualified, as SQLite looks a name up
# among its temporary tables first.
_IDS = "(SELECT id FROM export_ids)"
_ENTITIES = "(SELECT entity_id FROM export_entities)"


def export_where(d: Dialect, s: Selection) -> tuple[str, list[Any]]:
    """The memories a selection carries: a condition on table memory, and its values."""
    where, params = [d.true], []
    if s.scope is not None:
        branch, prefix = d.starts_with("scope", s.scope + "@")
        where.append(f"(scope = {d.mark} OR {branch})")
        params += [s.scope, prefix]
    if not s.include_superseded:
        where.append("superseded_at IS NULL AND valid_until IS NULL")
    if s.include_private and s.viewer is not None:
        where.append(f"(visibility = 'public' OR owner = {d.mark})")
        params.append(s.viewer)
    else:
        where.append("visibility = 'public'")
    return " AND ".join(where), params


def export_entities(s: Selection) -> str:
    """The entities a selection carries: those the carried memories name; with no
    scope, also those no memory names (made by hand or by the MCP memory-server tools),
    never one only a memory left behind names."""
    unnamed = (
        ""
        if s.scope is not None
        else (
            " UNION SELECT id FROM entity WHERE NOT EXISTS "
            "(SELECT 1 FROM mention WHERE entity_id = entity.id)"
        )
    )
    return f"SELECT entity_id FROM mention WHERE memory_id IN {_IDS}{unnamed}"


def exported_kinds(s: Selection) -> tuple[str, ...]:
    """The kinds a selection carries, in order: an agent's own reminders go only with
    its private memories."""
    return tuple(k for k in KINDS if k != "reminder" or s.include_private)


def export_rows(
    d: Dialect, kind: str, names: Sequence[str], viewer: str | None
) -> tuple[str, Params, tuple[str, ...]]:
    """The statement reading the carried rows of a kind (columns `names`, in their
    fixed order), its parameters, and the names its columns travel under."""
    table, order = TABLES[kind]
    where = {
        "memory": f"id IN {_IDS}",
        "version": f"memory_id IN {_IDS}",
        "link": f"source IN {_IDS} AND target IN {_IDS}",
        "mention": f"memory_id IN {_IDS}",
        "sighting": f"memory_id IN {_IDS}",
        "entity": f"id IN {_ENTITIES}",
        "alias": f"entity_id IN {_ENTITIES}",
        # A relation travels with both its ends, and with its memory if it has one.
        "relation": f"subject_id IN {_ENTITIES} AND object_id IN {_ENTITIES} "
        f"AND (memory_id IS NULL OR memory_id IN {_IDS})",
        "reminder": f"agent {d.same} {d.text('viewer')}",
    }.get(kind, d.true)
    query = f"SELECT {', '.join(names)} FROM {table} WHERE {where} ORDER BY {order}"
    params = {"viewer": viewer} if d.param("viewer") in where else {}
    return query, params, tuple(_OUTER.get((kind, n), n) for n in names)


def missing_ref(kind: str) -> str:
    """What a record naming a memory that is neither stored nor in the file is told;
    the same words as one naming a memory the importing agent may not see, so an
    import cannot tell another owner's private id from no id at all."""
    return f"{kind}: names a memory not in the store or the file"


def check_record(
    d: Dialect,
    kind: str,
    record: Mapping[str, Any],
    columns: Callable[[str], tuple[str, ...]],
    decode: Callable[[str, Any], Any],
) -> dict[str, Any]:
    """A record fit to load: a known kind with exactly the `columns` of its table, each
    value of the right shape (a memory's as `decode` reads it into a Record). Invalid
    (with what is wrong) otherwise; nothing is written."""
    if kind not in TABLES:
        raise Invalid(f"unknown record kind {kind!r}")
    row = {_INNER.get((kind, k), k): v for k, v in record.items() if k != "kind"}
    expected = columns(kind)
    row |= {c: v for (k, c), v in _ADDED.items() if k == kind and c not in row}
    missing = [c for c in expected if c not in row]
    extra = [c for c in row if c not in expected]
    if missing or extra:
        raise Invalid(f"{kind}: missing {missing or 'nothing'}, unknown {extra or 'nothing'}")
    values = {c: row[c] for c in expected}
    for column, value in values.items():
        if value is not None and not isinstance(value, (str, int, float)):
            raise Invalid(f"{kind}.{column}: {type(value).__name__} is not a column value")
        if not d.stores_nul and isinstance(value, str) and "\x00" in value:
            raise Invalid(f"{kind}.{column}: NUL characters cannot be stored")
    if kind == "memory":
        _check_memory(values, decode)
    return values


def _check_memory(values: Mapping[str, Any], decode: Callable[[str, Any], Any]) -> None:
    for column, value in values.items():
        if value is None:
            continue
        try:
            decode(column, value)
        except (ValueError, KeyError, TypeError, RecursionError) as exc:  # `[[[[...` in a list
            raise Invalid(f"memory.{column}: {shown(value)} is not valid ({exc})") from None
    for required in ("id", "scope", "title", "body", "dedup_hash", "created_at"):
        if not values.get(required):
            raise Invalid(f"memory.{required} is empty")


def stored_record(d: Dialect, conn: Connection, kind: str, row: Mapping[str, Any]) -> Any:
    """The stored row with a record's key, in the record's columns (None: none is)."""
    keys = _KEYS[kind]
    return conn.execute(
        f"SELECT {', '.join(row)} FROM {TABLES[kind][0]} "
        f"WHERE {' AND '.join(f'{k} = {d.mark}' for k in keys)}{d.row_lock}",
        [row[k] for k in keys],
    ).fetchone()


def stored_keys(
    d: Dialect, conn: Connection, kind: str, rows: Sequence[Mapping[str, Any]]
) -> set[tuple[Any, ...]]:
    """The keys among these records' that are stored already (locked as stored_record
    locks them)."""
    keys = _KEYS[kind]
    tuples = ", ".join(f"({d.marks(len(keys))})" for _ in rows)
    found = conn.execute(
        f"SELECT {', '.join(keys)} FROM {TABLES[kind][0]} "
        f"WHERE ({', '.join(keys)}) IN (VALUES {tuples}){d.row_lock}",
        [row[k] for row in rows for k in keys],
    ).fetchall()
    return {tuple(r) for r in found}


def record_key(kind: str, row: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(row[k] for k in _KEYS[kind])


def insert_record(d: Dialect, kind: str, row: Mapping[str, Any]) -> str:
    """The INSERT of a record (its values: the row's, in order)."""
    return f"INSERT INTO {TABLES[kind][0]}({', '.join(row)}) VALUES ({d.marks(len(row))})"


def load_over(
    d: Dialect,
    conn: Connection,
    kind: str,
    row: Mapping[str, Any],
    found: Sequence[Any],
    allow_tombstones: bool,
) -> str:
    """Load a record whose key is stored already (`found`, see stored_record):
    "unchanged" (here as is), "updated" (a registry entry: the file's wins),
    "tombstoned" (a live local memory ended as the record says; only with
    `allow_tombstones`) or "conflict" (here, but different: left as it is)."""
    if tuple(found) == tuple(row.values()):
        return "unchanged"
    m = d.mark
    if kind == "registry":  # settings, not memories: the file's entry wins
        conn.execute(
            f"UPDATE registry SET data = {m}, created_at = {m} WHERE registry = {m} AND key = {m}",
            (row["data"], row["created_at"], row["registry"], row["key"]),
        )
        return "updated"
    local = dict(zip(row, found, strict=True))
    ends = kind == "memory" and local["superseded_at"] is None and local["valid_until"] is None
    if allow_tombstones and ends and (row["superseded_at"] or row["valid_until"]):
        conn.execute(
            f"UPDATE memory SET {', '.join(f'{c} = {m}' for c in _TOMBSTONE)} WHERE id = {m}",
            [*(row[c] for c in _TOMBSTONE), row["id"]],
        )
        return "tombstoned"
    return "conflict"
