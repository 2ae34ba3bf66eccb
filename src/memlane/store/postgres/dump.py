"""The whole store as plain records and back, on PostgreSQL (export and import).

The kinds, column order and row order are SQLite's (memlane.store.sqlite.dump), so the
same store gives the same JSONL on either backend; the statements are shared
(memlane.store.dialect). A dump reads in one REPEATABLE READ transaction: its records
are of one instant.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from typing import Any

import psycopg

from memlane.errors import Invalid
from memlane.store.base import Selection
from memlane.store.dialect import transfer as shared
from memlane.store.dialect.transfer import TABLES
from memlane.store.postgres.sql import POSTGRES
from memlane.store.sqlite.rows import decode

Conn = psycopg.Connection[tuple[Any, ...]]
_LOCAL = frozenset({"seq", "terms", "term_count"})  # local numbering, derived keyword terms
LOAD_CHUNK = 1000  # records an import puts in per statement batch


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
            for kind in shared.exported_kinds(selection):
                yield from ((kind, row) for row in _rows(conn, location, kind, selection))
    finally:
        conn.isolation_level = None


def _select(conn: Conn, s: Selection) -> None:
    """Make the temporary tables export_ids and export_entities (dropped at commit)."""
    where, params = shared.export_where(POSTGRES, s)
    conn.execute(
        f"CREATE TEMP TABLE export_ids ON COMMIT DROP AS SELECT id FROM memory WHERE {where}",
        params,
    )
    conn.execute("CREATE TEMP TABLE export_entities ON COMMIT DROP AS " + shared.export_entities(s))


def _rows(conn: Conn, location: str, kind: str, s: Selection) -> Iterator[dict[str, Any]]:
    names = columns(conn, location, kind)
    query, params, outer = shared.export_rows(POSTGRES, kind, names, s.viewer)
    with conn.cursor(name=f"dump_{kind}") as cursor:
        cursor.execute(query, params or None)
        for row in cursor:
            yield dict(zip(outer, row, strict=True))


def check(conn: Conn, location: str, kind: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """A record fit to load (Invalid saying what is wrong otherwise; see check_record)."""
    return shared.check_record(POSTGRES, kind, record, partial(columns, conn, location), decode)


def load_many(
    conn: Conn, kind: str, rows: Sequence[Mapping[str, Any]], allow_tombstones: bool
) -> list[str | Invalid]:
    """`load` for many records of one kind: those whose key is new go in together.

    Trigger: `import`, the way a store moves to a server. Why: a record at a time is
    four round trips (look up, savepoint, insert, release), which makes an import of
    thousands of memories and their mentions take minutes. Outcome: per chunk, one
    look-up of the stored keys and one savepoint around the new records' INSERTs (a
    pipeline); a chunk the store refuses (say a link to a memory not there) is loaded
    a record at a time to say which.
    """
    out: list[str | Invalid] = []
    for start in range(0, len(rows), LOAD_CHUNK):
        chunk = rows[start : start + LOAD_CHUNK]
        stored = shared.stored_keys(POSTGRES, conn, kind, chunk)
        keys = [shared.record_key(kind, row) for row in chunk]
        new = [row for row, key in zip(chunk, keys, strict=True) if key not in stored]
        try:
            with conn.transaction(), conn.cursor() as cur:
                if new:  # psycopg sends them in one pipeline
                    cur.executemany(
                        shared.insert_record(POSTGRES, kind, new[0]),
                        [list(row.values()) for row in new],
                    )
        except psycopg.errors.IntegrityError:
            out.extend(_one_by_one(conn, kind, chunk, allow_tombstones))
            continue
        for row, key in zip(chunk, keys, strict=True):
            out.extend(
                _one_by_one(conn, kind, [row], allow_tombstones) if key in stored else ["added"]
            )
    return out


def _one_by_one(
    conn: Conn, kind: str, rows: Sequence[Mapping[str, Any]], allow_tombstones: bool
) -> list[str | Invalid]:
    out: list[str | Invalid] = []
    for row in rows:
        try:
            out.append(load(conn, kind, row, allow_tombstones))
        except Invalid as exc:
            out.append(exc)
    return out


def load(conn: Conn, kind: str, row: Mapping[str, Any], allow_tombstones: bool) -> str:
    """Put one checked record in: "added", or what `load_over` says of one whose key is
    stored already (locked until the import commits)."""
    found = shared.stored_record(POSTGRES, conn, kind, row)
    if found is not None:
        return shared.load_over(POSTGRES, conn, kind, row, found, allow_tombstones)
    try:
        with conn.transaction():  # a savepoint: a refused row leaves the rest intact
            conn.execute(shared.insert_record(POSTGRES, kind, row), list(row.values()))
    except psycopg.errors.ForeignKeyViolation:
        raise Invalid(shared.missing_ref(kind)) from None
    except psycopg.errors.IntegrityError as exc:
        raise Invalid(f"{kind} refused by the store: {exc}") from None
    return "added"
