"""Writes whose SQL is the same on both stores but for the dialect: sessions and
their sightings, reminders, registries, plain link removal, entities made by hand and
relations, the meta compare-and-swap and the wake log (see memlane.store.dialect)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar

from memlane.errors import Invalid
from memlane.model import (
    Entity,
    EntityType,
    LinkType,
    RegistryEntry,
    Relation,
    Reminder,
    Session,
    WakeGuess,
    WakeRitual,
)
from memlane.store.dialect import Connection, Dialect, wake
from memlane.store.dialect import relations as relation_sql
from memlane.timeutil import to_text, utcnow


class SharedWrites:
    """Writer operations written once; a backend's writer sets `dialect` and `_conn`
    (the transaction's connection)."""

    dialect: ClassVar[Dialect]
    _conn: Connection
    load: Callable[[str, Mapping[str, Any], bool], str]  # the backend's, one record

    def _marks(self, count: int) -> str:
        return self.dialect.marks(count)

    def load_many(
        self, kind: str, rows: Sequence[Mapping[str, Any]], allow_tombstones: bool
    ) -> list[str | Invalid]:
        out: list[str | Invalid] = []
        for row in rows:
            try:
                out.append(self.load(kind, row, allow_tombstones))
            except Invalid as exc:
                out.append(exc)
        return out

    def put_entity(self, entity: Entity, alias: str) -> str:
        return relation_sql.put_entity(self.dialect, self._conn, entity, alias)

    def set_entity_type(self, entity_id: str, type: EntityType) -> None:
        relation_sql.set_entity_type(self.dialect, self._conn, entity_id, type)

    def add_relation(self, relation: Relation) -> None:
        relation_sql.add_relation(self.dialect, self._conn, relation)

    def end_relation(self, relation_id: str, at: datetime) -> bool:
        return relation_sql.end_relation(self.dialect, self._conn, relation_id, at)

    def put_reminder(self, reminder: Reminder) -> None:
        self._conn.execute(
            "INSERT INTO reminder(id, text, due_at, created_at, agent, project, dismissed_at) "
            f"VALUES ({self._marks(6)}, NULL)",
            (
                reminder.id,
                reminder.text,
                to_text(reminder.due_at),
                to_text(reminder.created_at),
                reminder.agent,
                reminder.project,
            ),
        )

    def put_session(self, session: Session) -> None:
        self._conn.execute(
            f"INSERT INTO session(id, type, project, agent, started_at) VALUES ({self._marks(5)})",
            (session.id, session.type, session.project, session.agent, to_text(session.started_at)),
        )

    def rename_project(self, old: str, new: str) -> None:
        mark = self.dialect.mark
        for table in ("session", "reminder"):
            self._conn.execute(
                f"UPDATE {table} SET project = {mark} WHERE project = {mark}", (new, old)
            )

    def ensure_session(
        self, session_id: str, at: datetime, agent: str | None, project: str | None = None
    ) -> None:
        """A session row for a memory written in it, unless it exists: started when
        that memory was, in the project of its scope."""
        self._conn.execute(
            self.dialect.insert_ignoring(
                f"session(id, agent, started_at, project) VALUES ({self._marks(4)})"
            ),
            (session_id, agent, to_text(at), project),
        )

    def sighted(
        self,
        memory_id: str,
        session_id: str,
        at: datetime,
        source_ref: str | None,
        agent: str | None,
    ) -> None:
        self._conn.execute(
            self.dialect.insert_ignoring(
                "sighting(memory_id, session_id, seen_at, source_ref, agent) "
                f"VALUES ({self._marks(5)})"
            ),
            (memory_id, session_id, to_text(at), source_ref, agent),
        )

    def close_session(self, session_id: str, at: datetime) -> bool:
        m = self.dialect.mark
        cursor = self._conn.execute(
            f"UPDATE session SET ended_at = {m} WHERE id = {m} AND ended_at IS NULL",
            (to_text(at), session_id),
        )
        return cursor.rowcount > 0

    def dismiss_reminder(self, reminder_id: str, agent: str | None, at: datetime) -> bool:
        d, m = self.dialect, self.dialect.mark
        cursor = self._conn.execute(
            f"UPDATE reminder SET dismissed_at = {m} WHERE id = {m} "
            f"AND agent {d.same} {m}{d.text_cast} AND dismissed_at IS NULL",
            (to_text(at), reminder_id, agent),
        )
        return cursor.rowcount > 0

    def remove_link(self, source: str, target: str, type: LinkType) -> bool:
        m = self.dialect.mark
        cursor = self._conn.execute(
            f"DELETE FROM link WHERE source = {m} AND target = {m} AND type = {m}",
            (source, target, type.value),
        )
        return cursor.rowcount > 0

    def put_registry(self, entry: RegistryEntry) -> None:
        self._conn.execute(
            f"INSERT INTO registry(registry, key, data, created_at) VALUES ({self._marks(4)}) "
            "ON CONFLICT (registry, key) DO UPDATE SET data = EXCLUDED.data",
            (
                entry.registry,
                entry.key,
                json.dumps(entry.data, ensure_ascii=False),
                to_text(entry.created_at or utcnow()),
            ),
        )

    def swap_meta(self, key: str, expected: str | None, value: str) -> bool:
        """Trigger: two transactions read the same value and both write theirs. Why:
        on PostgreSQL, at READ COMMITTED, the second UPDATE waits for the first's row
        lock, then checks its WHERE against the committed row again; the second INSERT
        waits for the first's key, then does nothing (SQLite has one writer at a time).
        Outcome: exactly one of them sees True."""
        m = self.dialect.mark
        if expected is None:
            cursor = self._conn.execute(
                f"INSERT INTO store_meta(key, value) VALUES ({m}, {m}) "
                "ON CONFLICT (key) DO NOTHING",
                (key, value),
            )
        else:
            cursor = self._conn.execute(
                f"UPDATE store_meta SET value = {m} WHERE key = {m} AND value = {m}",
                (value, key, expected),
            )
        return cursor.rowcount == 1

    def _forget_wake(self, memory_id: str) -> None:
        """A deleted memory's wake guesses and ritual steps (see dialect.wake)."""
        wake.forget_memory(self.dialect, self._conn, memory_id)

    def put_ritual(self, ritual: WakeRitual) -> None:
        wake.put_ritual(self.dialect, self._conn, ritual)

    def put_guess(self, guess: WakeGuess) -> None:
        wake.put_guess(self.dialect, self._conn, guess)

    def score_guess(
        self, guess: WakeGuess, scores: dict[str, float | int | None], vector: bytes
    ) -> None:
        wake.score_guess(
            self.dialect,
            self._conn,
            guess.session_id,
            guess.step,
            scores,
            vector,
            to_text(utcnow()),
        )

    def put_phrase_vector(self, key: str, vector: bytes) -> None:
        wake.put_phrase_vector(self.dialect, self._conn, key, vector)

    def remove_registry(self, registry: str, key: str) -> bool:
        m = self.dialect.mark
        cursor = self._conn.execute(
            f"DELETE FROM registry WHERE registry = {m} AND key = {m}", (registry, key)
        )
        return cursor.rowcount > 0
