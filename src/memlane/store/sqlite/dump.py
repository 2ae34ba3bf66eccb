"""The whole store as plain records and back: what `export` and `import` carry.

Each record is one table row as a dict of its columns (never a store-local rowid or
sequence number), under a kind: registry, session, memory, version, link, entity,
alias, mention, reminder. Rows come out in a fixed order (memories in the order they
were written), so exporting a store, importing it into an empty one and exporting
again gives the same bytes. Embeddings, the journal, the wake log and store settings
are store-local and stay behind.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from typing import Any

from memlane.errors import Invalid
from memlane.store.base import Selection
from memlane.store.sqlite.rows import decode

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
    "reminder": ("reminder", "id"),
}
KINDS = tuple(TABLES)  # also the order an import applies them in
_LOCAL = frozenset({"seq"})  # store-local numbering, never carried
# Which rows of a kind belong to the selected memories.
_SELECTED = {
    "memory": "id IN (SELECT id FROM temp.export_ids)",
    "version": "memory_id IN (SELECT id FROM temp.export_ids)",
    "link": "source IN (SELECT id FROM temp.export_ids) AND target IN (SELECT id FROM temp.export_ids)",
    "mention": "memory_id IN (SELECT id FROM temp.export_ids)",
    "entity": "id IN (SELECT entity_id FROM temp.export_entities)",
    "alias": "entity_id IN (SELECT entity_id FROM temp.export_entities)",
    "reminder": "agent IS :viewer",
}
_KEYS = {  # what identifies a row, to tell "already here" from "different"
    "registry": ("registry", "key"), "session": ("id",), "memory": ("id",),
    "version": ("memory_id", "number"), "link": ("source", "target", "type"),
    "entity": ("id",), "alias": ("alias", "entity_id"), "mention": ("memory_id", "entity_id"),
    "reminder": ("id",),
}  # fmt: skip
# A memory's own `kind` column travels as `memory_kind`: `kind` names the record.
_OUTER = {("memory", "kind"): "memory_kind", ("version", "kind"): "memory_kind"}
_INNER = {(kind, outer): column for (kind, column), outer in _OUTER.items()}
_TOMBSTONE = ("superseded_by", "superseded_at", "supersede_reason", "valid_until", "updated_at")


def columns(conn: sqlite3.Connection, kind: str) -> tuple[str, ...]:
    table = TABLES[kind][0]
    found = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({table})"))
    return tuple(c for c in found if c not in _LOCAL)


def dump(conn: sqlite3.Connection, selection: Selection) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every record of the selection, kind by kind, in a fixed order; one read
    transaction, so the records are of one instant."""
    conn.execute("BEGIN")
    try:
        _select(conn, selection)
        for kind in KINDS:
            if kind == "reminder" and not selection.include_private:
                continue  # an agent's own reminders go only with its private memories
            yield from ((kind, row) for row in _rows(conn, kind, selection))
    finally:
        conn.execute("COMMIT")


def _select(conn: sqlite3.Connection, s: Selection) -> None:
    where, params = ["1"], []
    if s.scope is not None:
        where.append("(scope = ? OR scope LIKE ? ESCAPE '\\')")
        params += [
            s.scope,
            s.scope.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "@%",
        ]
    if not s.include_superseded:
        where.append("superseded_at IS NULL AND valid_until IS NULL")
    if s.include_private and s.viewer is not None:
        where.append("(visibility = 'public' OR owner = ?)")
        params.append(s.viewer)
    else:
        where.append("visibility = 'public'")
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS export_ids (id TEXT PRIMARY KEY)")
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS export_entities (entity_id TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM temp.export_ids")
    conn.execute("DELETE FROM temp.export_entities")
    conn.execute(
        f"INSERT INTO temp.export_ids SELECT id FROM memory WHERE {' AND '.join(where)}", params
    )
    # Entities the carried memories name; with no scope, also those no memory names
    # (made by hand or by the MCP memory-server tools), never one only a memory left
    # behind names.
    unnamed = "" if s.scope is not None else (
        " UNION SELECT id FROM entity WHERE NOT EXISTS (SELECT 1 FROM mention WHERE entity_id = entity.id)")  # fmt: skip
    conn.execute(
        "INSERT OR IGNORE INTO temp.export_entities SELECT entity_id FROM mention "
        f"WHERE memory_id IN (SELECT id FROM temp.export_ids){unnamed}"
    )


def _rows(conn: sqlite3.Connection, kind: str, s: Selection) -> Iterator[dict[str, Any]]:
    table, order = TABLES[kind]
    names = columns(conn, kind)
    where = _SELECTED.get(kind, "1")
    cursor = conn.execute(
        f"SELECT {', '.join(names)} FROM {table} WHERE {where} ORDER BY {order}",
        {"viewer": s.viewer} if ":viewer" in where else {},
    )
    outer = tuple(_OUTER.get((kind, n), n) for n in names)
    for row in cursor:
        yield dict(zip(outer, row, strict=True))


def check(conn: sqlite3.Connection, kind: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """A record fit to load: a known kind with exactly its table's columns, each value
    of the right shape. Invalid (with what is wrong) otherwise; nothing is written."""
    if kind not in TABLES:
        raise Invalid(f"unknown record kind {kind!r}")
    row = {_INNER.get((kind, k), k): v for k, v in record.items() if k != "kind"}
    expected = columns(conn, kind)
    missing = [c for c in expected if c not in row]
    extra = [c for c in row if c not in expected]
    if missing or extra:
        raise Invalid(f"{kind}: missing {missing or 'nothing'}, unknown {extra or 'nothing'}")
    values = {c: row[c] for c in expected}
    for column, value in values.items():
        if value is not None and not isinstance(value, (str, int, float)):
            raise Invalid(f"{kind}.{column}: {type(value).__name__} is not a column value")
    if kind == "memory":
        _check_memory(values)
    return values


def _check_memory(values: Mapping[str, Any]) -> None:
    for column, value in values.items():
        if value is None:
            continue
        try:
            decode(column, value)
        except (ValueError, KeyError, TypeError) as exc:
            raise Invalid(f"memory.{column}: {value!r} is not valid ({exc})") from None
    for required in ("id", "scope", "title", "body", "dedup_hash", "created_at"):
        if not values.get(required):
            raise Invalid(f"memory.{required} is empty")


def load(
    conn: sqlite3.Connection, kind: str, row: Mapping[str, Any], allow_tombstones: bool
) -> str:
    """Put one checked record in: "added", "unchanged" (already here as is), "tombstoned"
    (a live local memory ended as the record says; only with `allow_tombstones`) or
    "conflict" (here, but different: left as it is)."""
    table = TABLES[kind][0]
    keys = _KEYS[kind]
    found = conn.execute(
        f"SELECT {', '.join(row)} FROM {table} WHERE {' AND '.join(f'{k} = ?' for k in keys)}",
        [row[k] for k in keys],
    ).fetchone()
    if found is None:
        try:
            conn.execute(f"INSERT INTO {table}({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                         list(row.values()))  # fmt: skip
        except sqlite3.IntegrityError as exc:  # e.g. a link to a memory not in the file
            raise Invalid(f"{kind} refused by the store: {exc}") from None
        return "added"
    if tuple(found) == tuple(row.values()):
        return "unchanged"
    if kind == "registry":  # settings, not memories: the file's entry wins
        conn.execute(
            "UPDATE registry SET data = ?, created_at = ? WHERE registry = ? AND key = ?",
            (row["data"], row["created_at"], row["registry"], row["key"]),
        )
        return "updated"
    local = dict(zip(row, found, strict=True))
    ends = kind == "memory" and local["superseded_at"] is None and local["valid_until"] is None
    if allow_tombstones and ends and (row["superseded_at"] or row["valid_until"]):
        conn.execute(
            f"UPDATE memory SET {', '.join(f'{c} = ?' for c in _TOMBSTONE)} WHERE id = ?",
            [*(row[c] for c in _TOMBSTONE), row["id"]],
        )
        return "tombstoned"
    return "conflict"
