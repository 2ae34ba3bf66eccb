"""Writes whose SQL is the same on both stores but for the dialect: sessions,
reminders, registries and plain link removal (see memlane.store.dialect)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import ClassVar

from memlane.model import LinkType, RegistryEntry, Reminder, Session
from memlane.store.dialect import Connection, Dialect
from memlane.timeutil import to_text, utcnow


class SharedWrites:
    """Writer operations written once; a backend's writer sets `dialect` and, in its
    constructor, `_rows` (the transaction's connection)."""

    dialect: ClassVar[Dialect]
    _rows: Connection

    def _marks(self, count: int) -> str:
        return self.dialect.marks(count)

    def put_reminder(self, reminder: Reminder) -> None:
        self._rows.execute(
            "INSERT INTO reminder(id, text, due_at, created_at, agent, project, dismissed_at) "
            f"VALUES ({self._marks(6)}, NULL)",
            (reminder.id, reminder.text, to_text(reminder.due_at), to_text(reminder.created_at),
             reminder.agent, reminder.project),
        )  # fmt: skip

    def put_session(self, session: Session) -> None:
        self._rows.execute(
            f"INSERT INTO session(id, type, project, agent, started_at) VALUES ({self._marks(5)})",
            (session.id, session.type, session.project, session.agent,
             to_text(session.started_at)),
        )  # fmt: skip

    def ensure_session(self, session_id: str, at: datetime, agent: str | None) -> None:
        self._rows.execute(
            self.dialect.insert_ignoring(
                f"session(id, agent, started_at) VALUES ({self._marks(3)})"
            ),
            (session_id, agent, to_text(at)),
        )

    def close_session(self, session_id: str, at: datetime) -> bool:
        m = self.dialect.mark
        cursor = self._rows.execute(
            f"UPDATE session SET ended_at = {m} WHERE id = {m} AND ended_at IS NULL",
            (to_text(at), session_id),
        )
        return cursor.rowcount > 0

    def dismiss_reminder(self, reminder_id: str, agent: str | None, at: datetime) -> bool:
        d, m = self.dialect, self.dialect.mark
        cursor = self._rows.execute(
            f"UPDATE reminder SET dismissed_at = {m} WHERE id = {m} "
            f"AND agent {d.same} {m}{d.text_cast} AND dismissed_at IS NULL",
            (to_text(at), reminder_id, agent),
        )
        return cursor.rowcount > 0

    def remove_link(self, source: str, target: str, type: LinkType) -> bool:
        m = self.dialect.mark
        cursor = self._rows.execute(
            f"DELETE FROM link WHERE source = {m} AND target = {m} AND type = {m}",
            (source, target, type.value),
        )
        return cursor.rowcount > 0

    def put_registry(self, entry: RegistryEntry) -> None:
        self._rows.execute(
            f"INSERT INTO registry(registry, key, data, created_at) VALUES ({self._marks(4)}) "
            "ON CONFLICT (registry, key) DO UPDATE SET data = EXCLUDED.data",
            (entry.registry, entry.key, json.dumps(entry.data, ensure_ascii=False),
             to_text(entry.created_at or utcnow())),
        )  # fmt: skip

    def remove_registry(self, registry: str, key: str) -> bool:
        m = self.dialect.mark
        cursor = self._rows.execute(
            f"DELETE FROM registry WHERE registry = {m} AND key = {m}", (registry, key)
        )
        return cursor.rowcount > 0
