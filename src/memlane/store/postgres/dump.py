"""The whole store as plain records and back, on PostgreSQL (export and import).

The port of `memlane.store.sqlite.dump`, with the same kinds, column order and row
order, so the same store gives the same JSONL on either backend. A dump reads in one
REPEATABLE READ transaction: its records are of one instant.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import psycopg

from memlane.errors import Invalid
from memlane.store.base import Selection
from memlane.store.sqlite.dump import _INNER, _KEYS, _OUTER, _TOMBSTONE, KINDS, TABLES
from memlane.store.sqlite.dump import _check_memory as check_memory

Conn = psycopg.Connection[tuple[Any, ...]]
_LOCAL = frozenset({"seq", "fts"})  # store-local numbering and the derived index column
_SELECTED = {
    "memory": "id IN (SELECT id FROM export_ids)",
    "version": "memory_id IN (SELECT id FROM export_ids)",
    "link": "source IN (SELECT id FROM export_ids) AND target IN (SELECT id FROM export_ids)",
    "mention": "memory_id IN (SELECT id FROM export_ids)",
    "entity": "id IN (SELECT entity_id FROM export_entities)",
    "alias": "entity_id IN (SELECT entity_id FROM export_entities)",
    "reminder": "agent IS NOT DISTINCT FROM %(viewer)s::text",
}


# (location, kind) -> columns: the schema of a database changes only by migration.
_COLUMNS: dict[tuple[str, str], tuple[str, ...]] = {}


def columns(conn: Conn, location: str, kind: str) -> tuple[str, ...]:
    """A kind's carried columns, in table order (the same order as in SQLite)."""
    if (location, kind) in _COLUMNS:
        return _COLUMNS[location, kind]
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
        (TABLES[kind][0],),
    ).fetchall()
    found = tuple(str(r[0]) for r in rows if r[0] not in _LOCAL)
    _COLUMNS[location, kind] = found
    return found


def dump(conn: Conn, location: str, selection: Selection) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every record of the selection, kind by kind, in a fixed order, of one instant."""
    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    try:
        with conn.transaction():
            _select(conn, selection)
            for kind in KINDS:
                if kind == "reminder" and not selection.include_private:
                    continue
                yield from ((kind, row) for row in _rows(conn, location, kind, selection))
    finally:
        conn.isolation_level = None


def _select(conn: Conn, s: Selection) -> None:
    where, params = ["TRUE"], []
    if s.scope is not None:
        where.append("(scope = %s OR starts_with(scope, %s))")
        params += [s.scope, s.scope + "@"]
    if not s.include_superseded:
        where.append("superseded_at IS NULL AND valid_until IS NULL")
    if s.include_private and s.viewer is not None:
        where.append("(visibility = 'public' OR owner = %s)")
        params.append(s.viewer)
    else:
        where.append("visibility = 'public'")
    conn.execute(
        "CREATE TEMP TABLE export_ids ON COMMIT DROP AS "
        f"SELECT id FROM memory WHERE {' AND '.join(where)}",
        params,
    )
    unnamed = "" if s.scope is not None else (
        " UNION SELECT id FROM entity WHERE NOT EXISTS "
        "(SELECT 1 FROM mention WHERE entity_id = entity.id)")  # fmt: skip
    conn.execute(
        "CREATE TEMP TABLE export_entities ON COMMIT DROP AS SELECT entity_id FROM mention "
        f"WHERE memory_id IN (SELECT id FROM export_ids){unnamed}"
    )


def _rows(conn: Conn, location: str, kind: str, s: Selection) -> Iterator[dict[str, Any]]:
    table, order = TABLES[kind]
    names = columns(conn, location, kind)
    where = _SELECTED.get(kind, "TRUE")
    outer = tuple(_OUTER.get((kind, n), n) for n in names)
    with conn.cursor(name=f"dump_{kind}") as cursor:
        cursor.execute(
            f"SELECT {', '.join(names)} FROM {table} WHERE {where} ORDER BY {order}",
            {"viewer": s.viewer} if "%(viewer)s" in where else None,
        )
        for row in cursor:
            yield dict(zip(outer, row, strict=True))


def check(conn: Conn, location: str, kind: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """A record fit to load (Invalid saying what is wrong otherwise)."""
    if kind not in TABLES:
        raise Invalid(f"unknown record kind {kind!r}")
    row = {_INNER.get((kind, k), k): v for k, v in record.items() if k != "kind"}
    expected = columns(conn, location, kind)
    missing = [c for c in expected if c not in row]
    extra = [c for c in row if c not in expected]
    if missing or extra:
        raise Invalid(f"{kind}: missing {missing or 'nothing'}, unknown {extra or 'nothing'}")
    values = {c: row[c] for c in expected}
    for column, value in values.items():
        if value is not None and not isinstance(value, (str, int, float)):
            raise Invalid(f"{kind}.{column}: {type(value).__name__} is not a column value")
        if isinstance(value, str) and "\x00" in value:
            raise Invalid(f"{kind}.{column}: NUL characters cannot be stored")
    if kind == "memory":
        check_memory(values)
    return values


def load(conn: Conn, kind: str, row: Mapping[str, Any], allow_tombstones: bool) -> str:
    """Put one checked record in: added | unchanged | updated | tombstoned | conflict."""
    table = TABLES[kind][0]
    keys = _KEYS[kind]
    found = conn.execute(
        f"SELECT {', '.join(row)} FROM {table} "
        f"WHERE {' AND '.join(f'{k} = %s' for k in keys)} FOR UPDATE",
        [row[k] for k in keys],
    ).fetchone()
    if found is None:
        try:
            with conn.transaction():  # a savepoint: a refused row leaves the rest intact
                conn.execute(
                    f"INSERT INTO {table}({', '.join(row)}) VALUES ({', '.join(['%s'] * len(row))})",
                    list(row.values()),
                )
        except psycopg.errors.IntegrityError as exc:
            raise Invalid(f"{kind} refused by the store: {exc}") from None
        return "added"
    if tuple(found) == tuple(row.values()):
        return "unchanged"
    if kind == "registry":
        conn.execute(
            "UPDATE registry SET data = %s, created_at = %s WHERE registry = %s AND key = %s",
            (row["data"], row["created_at"], row["registry"], row["key"]),
        )
        return "updated"
    local = dict(zip(row, found, strict=True))
    ends = kind == "memory" and local["superseded_at"] is None and local["valid_until"] is None
    if allow_tombstones and ends and (row["superseded_at"] or row["valid_until"]):
        conn.execute(
            f"UPDATE memory SET {', '.join(f'{c} = %s' for c in _TOMBSTONE)} WHERE id = %s",
            [*(row[c] for c in _TOMBSTONE), row["id"]],
        )
        return "tombstoned"
    return "conflict"
