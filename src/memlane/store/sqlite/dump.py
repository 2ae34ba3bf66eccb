"""The whole store as plain records and back: what `export` and `import` carry.

Each record is one table row as a dict of its columns (never a store-local rowid or
sequence number), under a kind: registry, session, memory, version, link, entity,
alias, mention, sighting, reminder. Rows come out in a fixed order (memories in the order they
were written), so exporting a store, importing it into an empty one and exporting
again gives the same bytes. Embeddings, the journal, the wake log and store settings
are store-local and stay behind. The statements are PostgreSQL's too
(memlane.store.dialect); what is SQLite's own is here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from functools import partial
from typing import Any

from memlane.errors import Invalid
from memlane.store.base import Selection
from memlane.store.dialect import transfer as shared
from memlane.store.dialect.transfer import TABLES
from memlane.store.sqlite.rows import decode
from memlane.store.sqlite.sql import SQLITE

_LOCAL = frozenset({"seq"})  # store-local numbering, never carried


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
        for kind in shared.exported_kinds(selection):
            yield from ((kind, row) for row in _rows(conn, kind, selection))
    finally:
        conn.execute("COMMIT")


def _select(conn: sqlite3.Connection, s: Selection) -> None:
    """Fill the temporary tables export_ids and export_entities (kept for the
    connection's next export, which empties them first)."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS export_ids (id TEXT PRIMARY KEY)")
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS export_entities (entity_id TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM temp.export_ids")
    conn.execute("DELETE FROM temp.export_entities")
    where, params = shared.export_where(SQLITE, s)
    conn.execute(f"INSERT INTO temp.export_ids SELECT id FROM memory WHERE {where}", params)
    conn.execute(SQLITE.insert_ignoring("temp.export_entities " + shared.export_entities(s)))


def _rows(conn: sqlite3.Connection, kind: str, s: Selection) -> Iterator[dict[str, Any]]:
    query, params, names = shared.export_rows(SQLITE, kind, columns(conn, kind), s.viewer)
    for row in conn.execute(query, params):
        yield dict(zip(names, row, strict=True))


def check(conn: sqlite3.Connection, kind: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """A record fit to load (Invalid saying what is wrong otherwise; see check_record)."""
    return shared.check_record(SQLITE, kind, record, partial(columns, conn), decode)


def load(
    conn: sqlite3.Connection, kind: str, row: Mapping[str, Any], allow_tombstones: bool
) -> str:
    """Put one checked record in: "added", or what `load_over` says of one whose key is
    stored already."""
    found = shared.stored_record(SQLITE, conn, kind, row)
    if found is not None:
        return shared.load_over(SQLITE, conn, kind, row, found, allow_tombstones)
    try:
        conn.execute(shared.insert_record(SQLITE, kind, row), list(row.values()))
    except sqlite3.IntegrityError as exc:  # e.g. a link to a memory not in the file
        if "FOREIGN KEY" in str(exc):
            raise Invalid(shared.missing_ref(kind)) from None
        raise Invalid(f"{kind} refused by the store: {exc}") from None
    return "added"
