"""The embedded SQLite backend."""

from memlane.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
