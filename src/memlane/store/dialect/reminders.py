"""An agent's reminders as both stores read them (see memlane.store.dialect)."""

from __future__ import annotations

from memlane.model import Reminder
from memlane.store.dialect import Connection, Dialect
from memlane.timeutil import from_text


def reminders(
    d: Dialect, conn: Connection, agent: str | None, include_dismissed: bool
) -> list[Reminder]:
    """The agent's reminders, soonest first (pending ones only unless asked)."""
    pending = "" if include_dismissed else " AND dismissed_at IS NULL"
    rows = conn.execute(
        "SELECT id, text, due_at, created_at, agent, project, dismissed_at FROM reminder "
        f"WHERE agent {d.same} {d.mark}{d.text_cast}{pending} ORDER BY due_at, id",
        (agent,),
    ).fetchall()
    return [_reminder(*row) for row in rows]


def _reminder(
    id: str,
    text: str,
    due: str,
    created: str,
    agent: str | None,
    project: str | None,
    dismissed: str | None,
) -> Reminder:
    ended = from_text(dismissed) if dismissed else None
    return Reminder(id, text, from_text(due), from_text(created), agent, project, ended)
