"""The PostgreSQL backend (`pip install 'memlane[postgres]'`): imported only when a
store's location is a postgresql:// URL."""

from __future__ import annotations

from memlane.errors import Unavailable

INSTALL = "pip install 'memlane[postgres]'"

try:
    import pgvector.psycopg  # noqa: F401
    import psycopg  # noqa: F401
    import psycopg_pool  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise Unavailable(
        f"the PostgreSQL backend needs packages that are not installed ({exc.name}): run {INSTALL}"
    ) from None

from memlane.store.postgres.store import PostgresStore, schema_status  # noqa: E402

__all__ = ["INSTALL", "PostgresStore", "schema_status"]
