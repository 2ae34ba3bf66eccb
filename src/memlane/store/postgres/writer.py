"""Writes on PostgreSQL: one transaction per `PostgresStore.write()`, on one pooled
connection, at READ COMMITTED; the races that matter are closed by locks, not by
reading first (see get, find_duplicate and put_vectors)."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import psycopg

from memlane.errors import Invalid, Unavailable
from memlane.model import (
    Link,
    LinkType,
    Mention,
    Record,
    Version,
)
from memlane.store.dialect import relations as relation_sql
from memlane.store.dialect.relations import KEPT_BY_RELATION
from memlane.store.dialect.writes import SharedWrites
from memlane.store.postgres import dump as dump_sql
from memlane.store.postgres import entities as entity_sql
from memlane.store.postgres import vectors as vector_sql
from memlane.store.postgres.schema import POLICY_LOCK
from memlane.store.postgres.sql import MEMORY_COLUMNS, POSTGRES
from memlane.store.sqlite.rows import (
    COLUMNS,
    record_params,
    record_values,
    version_columns,
    version_params,
)
from memlane.timeutil import to_text, utcnow

if TYPE_CHECKING:
    from memlane.store.postgres.store import PostgresStore

Conn = psycopg.Connection[tuple[Any, ...]]
_COUNTERS = {
    "retrieval": ("retrieval_count", "last_retrieved"),
    "surfaced": ("surfaced_count", "last_surfaced"),
    "activation": ("activation_count", "last_activated"),
}
_ROWS_PER_INSERT = 100
_ROW_MARKS = "(" + ", ".join("%s" for _ in COLUMNS) + ")"
_UPDATE_SQL = (
    f"UPDATE memory SET {', '.join(f'{c} = %({c})s' for c in COLUMNS if c != 'id')} "
    "WHERE id = %(id)s"
)
_VERSION_SQL = (
    f"INSERT INTO memory_version ({', '.join(version_columns())}) "
    f"VALUES ({', '.join(f'%({c})s' for c in version_columns())})"
)
LINK_COLUMNS = "source, target, type, score, reason, created_at, seq"
# Advisory lock namespace (the first key of pg_advisory_xact_lock(int, int)).
DEDUP_LOCK = 0x6D6C6431  # "mld1": one exact-dedup key


@functools.cache
def _insert_sql(rows: int) -> str:
    marks = ", ".join([_ROW_MARKS] * rows)
    return (
        f"INSERT INTO memory ({', '.join(COLUMNS)}) VALUES {marks} "
        "ON CONFLICT (id) DO NOTHING RETURNING id"
    )


def link_from_row(row: Any) -> Link:
    from memlane.timeutil import from_text

    return Link(row[0], row[1], LinkType(row[2]), row[3], row[4], from_text(row[5]), f"l-{row[6]}")


class PostgresWriter(SharedWrites):
    """Operations inside one write transaction."""

    dialect = POSTGRES

    def __init__(self, store: PostgresStore, conn: Conn) -> None:
        self._store = store
        self._connection = conn
        self._serialized = False
        self._vectors: dict[tuple[str, str], vector_sql.Put] = {}

    # The shared writes' `_conn` too (an attribute there), narrowed to psycopg's.
    @property
    def _conn(self) -> Conn:  # type: ignore[override]
        """The transaction's connection, the vectors put so far written first: every
        statement runs after them, as if each put had been written when it was made."""
        self.flush_vectors()
        return self._connection

    def flush_vectors(self) -> None:
        """Write the vectors put since the last statement (see put_vectors)."""
        if self._vectors:
            puts, self._vectors = list(self._vectors.values()), {}
            vector_sql.write(self._connection, puts, self._store.deferred)

    def get(self, memory_id: str) -> Record | None:
        """The memory's current row, locked until the transaction ends.

        Trigger: a read for modification (update, link, merge, feedback, a refresh,
        consolidate). Why: at READ COMMITTED two transactions would both read the row,
        both write, and the second would silently overwrite the first. Outcome, in two
        locks: the store-wide modification lock (see `serialize`), so transactions that
        read-then-write run one after another, whatever order they read memories in, as
        they do under SQLite's BEGIN IMMEDIATE; then the row's own lock (FOR UPDATE,
        which also reads the latest committed row), which holds off any writer that
        takes no store-wide lock (every write of memlane's own to a memory row takes
        it: text, versions, counters)."""
        self.serialize()
        found = self._store._records(
            f"SELECT {MEMORY_COLUMNS} FROM memory WHERE id = %s FOR UPDATE", (memory_id,)
        )
        return found[0] if found else None

    def serialize(self) -> None:
        """Take the store-wide modification lock (held to commit), once per transaction.

        Trigger: two transactions each locking two memories in opposite orders (link
        A->B and B->A, merge of A,B and B,A), or a batch refreshing memories another
        transaction is changing. Why: row locks taken in the callers' orders deadlock.
        Outcome: one advisory key, the write policy's own (`PostgresStore.
        serialize_policy`), taken before a transaction's first memory lock; waiters
        queue on it holding no memory lock, so no cycle can form among them. Every
        write of a memory's text takes it first, as the trigger keeping the word
        statistics does after the rows (schema.m003): taken there first, it would be
        waited for while holding them.
        """
        if not self._serialized:
            self._conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (POLICY_LOCK,))
            self._serialized = True

    def find_duplicate(
        self, dedup_hash: str, session_id: str, owner: str | None, author: str | None, category: str
    ) -> str | None:
        """Trigger: two writers adding the same memory at once. Why: both would read "no
        duplicate" and both insert. Outcome: the key's advisory lock is held to the end
        of the transaction, so the second reads after the first commits and finds it."""
        key = json.dumps([dedup_hash, session_id, owner, author, category])
        self._conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (DEDUP_LOCK, key))
        row = self._conn.execute(
            "SELECT id FROM memory WHERE dedup_hash = %s AND session_id = %s AND category = %s "
            "AND owner IS NOT DISTINCT FROM %s::text "
            "AND source_agent IS NOT DISTINCT FROM %s::text "
            "AND superseded_at IS NULL AND valid_until IS NULL ORDER BY seq LIMIT 1",
            (dedup_hash, session_id, category, owner, author),
        ).fetchone()
        return str(row[0]) if row else None

    def insert(self, records: Sequence[Record]) -> list[str]:
        self.serialize()  # before the rows: the word statistics' trigger takes it too
        taken: list[str] = []
        for start in range(0, len(records), _ROWS_PER_INSERT):
            part = records[start : start + _ROWS_PER_INSERT]
            values = [v for record in part for v in record_values(record)]
            written = {r[0] for r in self._conn.execute(_insert_sql(len(part)), values)}
            taken.extend(self._taken_ids([r for r in part if r.id not in written]))
        return taken

    def _taken_ids(self, part: Sequence[Record]) -> list[str]:
        """Ids of `part` whose row is not ours: the id belonged to another memory."""
        out = []
        for record in part:
            row = self._conn.execute(
                "SELECT created_at, dedup_hash FROM memory WHERE id = %s", (record.id,)
            ).fetchone()
            if row is None or (row[0], row[1]) != (to_text(record.created_at), record.dedup_hash):
                out.append(record.id)
        return out

    def replace(self, record: Record, prior: Version | None) -> None:
        self.serialize()
        if prior is not None:
            self._conn.execute(_VERSION_SQL, version_params(prior))
        cursor = self._conn.execute(_UPDATE_SQL, record_params(record))
        if cursor.rowcount != 1:
            raise Unavailable(f"memory {record.id} vanished during the write")

    def rewrite_version(self, version: Version) -> None:
        self.serialize()
        self._conn.execute(
            "DELETE FROM memory_version WHERE memory_id = %s AND number = %s",
            (version.memory_id, version.number),
        )
        self._conn.execute(_VERSION_SQL, version_params(version))

    def delete(self, memory_id: str) -> None:
        self.serialize()
        named = [
            r[0]
            for r in self._conn.execute(
                "SELECT entity_id FROM mention WHERE memory_id = %s", (memory_id,)
            )
        ]
        for statement in (
            "DELETE FROM memory_version WHERE memory_id = %(id)s",
            "DELETE FROM link WHERE source = %(id)s OR target = %(id)s",
            "DELETE FROM mention WHERE memory_id = %(id)s",
            "DELETE FROM embedding WHERE memory_id = %(id)s",
            "DELETE FROM memory WHERE id = %(id)s",
        ):
            self._conn.execute(statement, {"id": memory_id})
        self._forget_wake(memory_id)
        self._conn.execute(
            "DELETE FROM entity WHERE id = ANY(%s::text[]) "
            "AND NOT EXISTS (SELECT 1 FROM mention WHERE entity_id = entity.id) "
            f"AND NOT EXISTS ({KEPT_BY_RELATION})",
            (named,),
        )

    def set_mentions(self, mentions: Mapping[str, Sequence[Mention]]) -> None:
        entity_sql.set_mentions(self._conn, mentions)

    def merge_entities(self, source: str, target: str) -> None:
        relation_sql.repoint_relations(self.dialect, self._conn, source, target, utcnow())
        entity_sql.merge(self._conn, source, target)

    def add_link(self, link: Link) -> None:
        self._conn.execute(
            "INSERT INTO link(source, target, type, score, reason, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (source, target, type) "
            "DO UPDATE SET score = EXCLUDED.score, reason = EXCLUDED.reason, "
            "created_at = EXCLUDED.created_at",
            (
                link.source,
                link.target,
                link.type.value,
                link.score,
                link.reason,
                to_text(link.created_at or utcnow()),
            ),
        )

    def put_vectors(
        self,
        memory_id: str,
        profile: str,
        vectors: Sequence[tuple[int, bytes]],
        dim: int,
        content_hash: str,
    ) -> None:
        """Trigger: a batch embeds its memories one put each. Why: a statement per put
        is a round trip each, and each row goes into the HNSW index on its own.
        Outcome: the put waits, and the transaction's next statement or its commit
        writes all waiting puts in one DELETE and one COPY (see vectors.write); a
        later put of the same memory and profile replaces an earlier one, as its
        DELETE would have."""
        key = (memory_id, profile)
        self._vectors.pop(key, None)  # in the order of the latest puts
        self._vectors[key] = vector_sql.Put(
            memory_id, profile, tuple(vectors), dim, content_hash, to_text(utcnow())
        )

    def touch(self, memory_ids: Sequence[str], counter: str, at: datetime) -> None:
        # Trigger: two recalls counting the same memories in different rank orders,
        # or a recall counting A and B while a link B -> A reads them for change.
        # Why: row locks taken in those orders deadlock under concurrent writers, and
        # PostgreSQL then fails one side. Outcome: the store-wide modification
        # lock first (as a recall's counters wait for the write lock on SQLite), then
        # one statement that locks the rows in id order, once per id.
        self.serialize()
        count, last = _COUNTERS[counter]
        ids = sorted(set(memory_ids))
        self._conn.execute(
            f"UPDATE memory SET {count} = {count} + 1, {last} = %s WHERE id IN "
            "(SELECT id FROM memory WHERE id = ANY(%s::text[]) ORDER BY id FOR UPDATE)",
            (to_text(at), ids),
        )

    def drop_vectors(self) -> None:
        self._conn.execute("DELETE FROM embedding")

    def set_meta(self, key: str, value: str) -> None:
        self._conn.execute(
            "INSERT INTO store_meta(key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            (key, value),
        )

    def load(self, kind: str, row: Mapping[str, Any], allow_tombstones: bool) -> str:
        self.serialize()
        return dump_sql.load(self._conn, kind, row, allow_tombstones)

    def load_many(
        self, kind: str, rows: Sequence[Mapping[str, Any]], allow_tombstones: bool
    ) -> list[str | Invalid]:
        self.serialize()
        return dump_sql.load_many(self._conn, kind, rows, allow_tombstones)

    def delete_link(self, link_id: str) -> Link | None:
        number = link_id.strip().removeprefix("l-")
        if not number.isdigit():
            return None
        row = self._conn.execute(
            f"DELETE FROM link WHERE seq = %s RETURNING {LINK_COLUMNS}", (int(number),)
        ).fetchone()
        return link_from_row(row) if row else None

    def journal(
        self,
        operation: str,
        memory_ids: Sequence[str | None],
        actor: str | None,
        detail: str | None = None,
    ) -> None:
        at = to_text(utcnow())
        with self._conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO journal(at, operation, memory_id, actor, detail) "
                "VALUES (%s, %s, %s, %s, %s)",
                [(at, operation, memory_id, actor, detail) for memory_id in memory_ids],
            )
