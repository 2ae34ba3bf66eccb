"""The embedded SQLite backend."""

from memlane.store.sqlite.store import SQLiteStore, schema_status

__all__ = ["SQLiteStore", "schema_status"]
