"""Storage backends behind the small `Store` contract, chosen by location."""

from __future__ import annotations

from pathlib import Path

from memlane.errors import Invalid
from memlane.store.base import (
    EMBED_PROFILE_META,
    SEARCH_STEPS,
    ChangeMark,
    Counts,
    SchemaStatus,
    Selection,
    Store,
    Writer,
)

__all__ = [
    "EMBED_PROFILE_META",
    "SEARCH_STEPS",
    "ChangeMark",
    "Counts",
    "SchemaStatus",
    "Selection",
    "Store",
    "Writer",
    "migrate_schema",
    "open_store",
    "schema_status",
]

_URLS = ("postgresql://", "postgres://")


def open_store(location: str | Path, synchronous: str = "full", *, migrate: bool = True) -> Store:
    """Open the backend a location names: a file path (SQLite) or a database URL.
    `migrate`: bring an older schema up to date on open (else it is refused, naming
    `memlane migrate`)."""
    text = str(location)
    if text.startswith(_URLS):
        from memlane.store.postgres import PostgresStore  # Unavailable names the extra

        return PostgresStore(text, synchronous, migrate=migrate)
    from memlane.store.sqlite import SQLiteStore

    path = Path(text).expanduser() if text != ":memory:" else text
    return SQLiteStore(path, synchronous, migrate=migrate)


def schema_status(location: str | Path) -> SchemaStatus:
    """Where the schema of the store at `location` stands, and what migrating it would
    apply; reads without creating, migrating or writing anything (a missing file is
    NotFound)."""
    text = str(location)
    if text == ":memory:":
        raise Invalid("an in-memory store is made whole on open: it has nothing to migrate")
    if text.startswith(_URLS):
        from memlane.store import postgres

        return postgres.schema_status(text)
    from memlane.store import sqlite

    return sqlite.schema_status(Path(text).expanduser())


def migrate_schema(location: str | Path) -> SchemaStatus:
    """Apply the pending migrations of the existing store at `location`: its status as
    it was before (`pending` is what was applied)."""
    before = schema_status(location)
    if before.pending:
        open_store(location).close()
    return before
