"""The feature parts of a store: the reads one feature needs, written once for both
backends over their `Dialect` and a way to borrow a connection.

A store holds one of each (`store.wake`, `store.entities`, `store.reminders`,
`store.registries`, `store.sessions`); the
Store contract (memlane.store.base) keeps the core reads and writes, which each
backend implements itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from memlane.model import (
    Entity,
    EntityMatch,
    RegistryEntry,
    Relation,
    Reminder,
    Session,
    WakeGuess,
    WakeRitual,
)
from memlane.store.dialect import Dialect, counts
from memlane.store.dialect import entities as entity_sql
from memlane.store.dialect import relations as relation_sql
from memlane.store.dialect import reminders as reminder_sql
from memlane.store.dialect import sessions as session_sql
from memlane.store.dialect import wake as wake_sql

# A connection to read on: the store's own (SQLite) or one from its pool (PostgreSQL).
Borrow = Callable[[], AbstractContextManager[Any]]
# The rows of NAMED_ENTITIES for these aliases (matching a list is written per backend).
Named = Callable[[Any, Sequence[str]], Iterable[Sequence[Any]]]


class WakeReads:
    """The wake ritual's sessions, its guess log and the phrase-vector cache."""

    def __init__(self, d: Dialect, borrow: Borrow) -> None:
        self._d, self._borrow = d, borrow

    def ritual(self, session_id: str) -> WakeRitual | None:
        with self._borrow() as conn:
            return wake_sql.ritual(self._d, conn, session_id)

    def guesses(
        self,
        agent: str,
        *,
        wake: int | None = None,
        memory_id: str | None = None,
        session_id: str | None = None,
        pending: bool | None = None,
    ) -> list[WakeGuess]:
        """An agent's guesses, oldest first; each keyword narrows them."""
        with self._borrow() as conn:
            return wake_sql.guesses(
                self._d,
                conn,
                agent,
                wake=wake,
                memory_id=memory_id,
                session_id=session_id,
                pending=pending,
            )

    def guess_vectors(self, agent: str) -> dict[tuple[str, int], bytes]:
        """The stored vectors of an agent's guesses, by (session, step)."""
        with self._borrow() as conn:
            return wake_sql.guess_vectors(self._d, conn, agent)

    def phrase_vector(self, key: str) -> bytes | None:
        with self._borrow() as conn:
            return wake_sql.phrase_vector(self._d, conn, key)


class EntityReads:
    """Entities, counted over the live memories a viewer may see."""

    def __init__(self, d: Dialect, borrow: Borrow, named: Named) -> None:
        self._d, self._borrow, self._named = d, borrow, named

    def listing(
        self,
        viewer: str | None,
        kind: str | None = None,
        limit: int | None = None,
        type: str | None = None,
    ) -> list[Entity]:
        """Entities named by visible live memories, most mentioned first."""
        with self._borrow() as conn:
            return entity_sql.entity_listing(self._d, conn, viewer, kind, limit, type)

    def find(self, alias: str, viewer: str | None) -> Entity | None:
        """The entity with this alias, if a visible live memory names it."""
        with self._borrow() as conn:
            return entity_sql.find_entity(self._d, conn, alias, viewer)

    def of_memory(self, memory_id: str, viewer: str | None) -> list[Entity]:
        """The entities one memory names, most named first."""
        with self._borrow() as conn:
            return entity_sql.entities_of(self._d, conn, memory_id, viewer)

    def mentioned(self, aliases: Sequence[str], cap: int) -> list[EntityMatch]:
        """For each known alias, its entity and the memories naming it (at most `cap`;
        `common` when there are more). Not filtered by viewer: the caller filters."""
        with self._borrow() as conn:
            return entity_sql.entity_matches(self._d, conn, self._named(conn, aliases), cap)

    def owners(self, aliases: Sequence[str]) -> dict[str, str]:
        """alias -> entity id, for the known aliases among these (in one read)."""
        with self._borrow() as conn:
            return {str(row[0]): str(row[1]) for row in self._named(conn, aliases)}

    def known(self, alias: str, viewer: str | None) -> Entity | None:
        """The entity with this alias if the viewer may see it, even when no live
        memory names it (see memlane.store.dialect.relations)."""
        with self._borrow() as conn:
            return relation_sql.known_entity(self._d, conn, alias, viewer)

    def unnamed(self) -> list[Entity]:
        """The entities no memory names (made by hand), by name."""
        with self._borrow() as conn:
            return relation_sql.made_by_hand(self._d, conn)

    def relations(
        self, entity_ids: Sequence[str], viewer: str | None, current: bool = True
    ) -> list[Relation]:
        """The relations touching these entities that the viewer may see, oldest first
        (only the current ones unless `current` is False)."""
        with self._borrow() as conn:
            return relation_sql.relations_of(self._d, conn, entity_ids, viewer, current)

    def relation(self, relation_id: str) -> Relation | None:
        with self._borrow() as conn:
            return relation_sql.relation(self._d, conn, relation_id)


class ReminderReads:
    """An agent's reminders."""

    def __init__(self, d: Dialect, borrow: Borrow) -> None:
        self._d, self._borrow = d, borrow

    def of(self, agent: str | None, include_dismissed: bool = False) -> list[Reminder]:
        """The agent's reminders, soonest first (pending ones only unless asked)."""
        with self._borrow() as conn:
            return reminder_sql.reminders(self._d, conn, agent, include_dismissed)


class RegistryReads:
    """The registries (categories, agents, projects, applicability) and what uses them."""

    def __init__(self, d: Dialect, borrow: Borrow) -> None:
        self._d, self._borrow = d, borrow

    def entries(self, name: str) -> list[RegistryEntry]:
        """A registry's entries, by key."""
        with self._borrow() as conn:
            return counts.registry(self._d, conn, name)

    def usage(self, field: str, value: str, viewer: str | None, *, everyone: bool = False) -> int:
        """How many memories `viewer` may see (`everyone`: any) have `field` = `value`."""
        with self._borrow() as conn:
            return counts.usage(self._d, conn, field, value, viewer, everyone)

    def tag_counts(self, viewer: str | None, category: str | None = None) -> dict[str, int]:
        """Tags of the live memories `viewer` may see, with their counts, most used first."""
        with self._borrow() as conn:
            return counts.tag_counts(self._d, conn, viewer, category)


class SessionReads:
    """The sessions memories were written in."""

    def __init__(self, d: Dialect, borrow: Borrow) -> None:
        self._d, self._borrow = d, borrow

    def listing(self, project: str | None = None) -> list[Session]:
        """Every session (of `project`), newest first."""
        with self._borrow() as conn:
            return session_sql.sessions(self._d, conn, project)

    def get(self, session_id: str) -> Session | None:
        with self._borrow() as conn:
            return session_sql.session(self._d, conn, session_id)
