"""Sessions as both stores read them (see memlane.store.dialect)."""

from __future__ import annotations

from typing import Any

from memlane.model import Session
from memlane.store.dialect import Connection, Dialect
from memlane.timeutil import from_text

_COLUMNS = "id, started_at, type, project, agent, ended_at"


def sessions(d: Dialect, conn: Connection, project: str | None) -> list[Session]:
    """Every session (of `project`), newest first."""
    where, params = (f"WHERE project = {d.mark}", (project,)) if project else ("", ())
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM session {where} ORDER BY started_at DESC, id", params
    ).fetchall()
    return [_session(r) for r in rows]


def session(d: Dialect, conn: Connection, session_id: str) -> Session | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM session WHERE id = {d.mark}", (session_id,)
    ).fetchone()
    return _session(row) if row else None


def _session(row: Any) -> Session:
    ended = from_text(row[5]) if row[5] else None
    return Session(row[0], from_text(row[1]), row[2], row[3], row[4], ended)
