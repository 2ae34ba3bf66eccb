"""Storage backends behind the small `Store` contract, chosen by location."""

from __future__ import annotations

from pathlib import Path

from memlane.store.base import (
    EMBED_PROFILE_META,
    SEARCH_STEPS,
    ChangeMark,
    Counts,
    Selection,
    Store,
    Writer,
)

__all__ = [
    "EMBED_PROFILE_META",
    "SEARCH_STEPS",
    "ChangeMark",
    "Counts",
    "Selection",
    "Store",
    "Writer",
    "open_store",
]


def open_store(location: str | Path, synchronous: str = "full") -> Store:
    """Open the backend a location names: a file path (SQLite) or a database URL."""
    text = str(location)
    if text.startswith(("postgresql://", "postgres://")):
        from memlane.store.postgres import PostgresStore  # Unavailable names the extra

        return PostgresStore(text, synchronous)
    from memlane.store.sqlite import SQLiteStore

    return SQLiteStore(Path(text).expanduser() if text != ":memory:" else text, synchronous)
