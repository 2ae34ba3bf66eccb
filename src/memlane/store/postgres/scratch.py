"""Throwaway databases on a PostgreSQL server: a store per benchmark run or per
evaluated conversation, dropped afterwards."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import psycopg


@contextmanager
def scratch_database(server_url: str, prefix: str) -> Iterator[str]:
    """A new, empty database on the server of `server_url` (whose user may create
    databases), named after `prefix` with a random suffix: its URL while the context
    lasts; dropped on exit, connections and all."""
    name = f"{re.sub(r'[^a-z0-9_]', '_', prefix.lower())}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(server_url)._replace(path="/" + name))
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def database_bytes(url: str) -> int:
    """The size on disk of the database `url` names (tables, indexes, TOAST)."""
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else 0
