"""The SQL both stores share, written once over a `Dialect` that each backend makes.

SQLite (through sqlite3) and PostgreSQL (through psycopg) keep the same tables and ask
them the same questions; they differ in how a few things are written: parameters, a
list of values to match, booleans, a cast, a NULL-safe comparison, an upsert and a
handful of functions, which a `Dialect` names. The statements they share are
this package's modules: the effective rows and the filters of list and search
(filters), the counts a reader may see (counts), the wake ritual's tables (wake),
entities (entities), reminders (reminders), the writes alike on both (writes) and
the records of export and import (transfer). What differs in kind (schemas, keyword
search, vectors, transactions) stays in each backend's package.

Nothing here imports a driver or a backend (each backend's package imports this
module): a connection is anything that runs a statement with `execute`, as sqlite3's
and psycopg's do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

import msgspec

Params = dict[str, Any]
# A test of one column and the value it binds, such as "starts with" (see Dialect).
ValueTest = Callable[[str, str], tuple[str, str]]
# Values per `IN (...)` list where each value is its own parameter: well under SQLite's
# limit on bound parameters.
_IN_LIST = 500


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """A sqlite3 or psycopg connection: what the shared statements run on."""

    def execute(self, query: str, params: Any = ..., /) -> Cursor: ...


class Dialect(msgspec.Struct, frozen=True):
    """How one backend writes what the shared SQL leaves open."""

    mark: str  # a positional parameter: "?" | "%s"
    named: str  # a named parameter, {} standing for its name: ":{}" | "%({})s"
    true: str  # "1" | "TRUE"
    false: str  # "0" | "FALSE"
    text_cast: str  # types a text parameter the server cannot type alone: "" | "::text"
    same: str  # NULL-safe equality: "IS" | "IS NOT DISTINCT FROM"
    greatest: str  # the larger of its arguments: "MAX" | "GREATEST"
    unlimited: int | None  # what LIMIT takes for no limit: -1 | None (NULL)
    arrays: bool  # a list binds as one text[] (`= ANY`), not a parameter a value (`IN`)
    upsert_form: str  # insert or overwrite: {table} {columns} {marks}, {key} {updates}
    ignore_form: str  # insert, skipping rows whose key is taken; {} for the rest
    row_lock: str  # ends a read of rows about to be written: "" | " FOR UPDATE"
    stores_nul: bool  # text may hold NUL characters (PostgreSQL's cannot)
    starts_with: ValueTest  # (column, prefix) -> (test with one mark, its value)
    contains: ValueTest  # (column, text) -> (test with one mark, its value)
    tag_rows: str  # a memory m's tags as rows j(value), to join: json_each | jsonb_array_...
    binary: str  # orders text by its bytes, as SQLite does: "" | ' COLLATE "C"'
    tags_any: Callable[[tuple[str, ...], Params], str]  # e.tags holds one of these
    no_tag_prefix: Callable[[tuple[str, ...], Params], str]  # no tag of e.tags starts so

    def param(self, name: str) -> str:
        return self.named.format(name)

    def text(self, name: str) -> str:
        """A named parameter compared as text, which may be None."""
        return self.param(name) + self.text_cast

    def marks(self, count: int) -> str:
        return ", ".join([self.mark] * count)

    def one_of(self, column: str, key: str, values: Iterable[object], params: Params) -> str:
        """`column` is one of `values` (as text), bound in `params` under `key`."""
        if self.arrays:
            params[key] = [str(v) for v in values]
            return f"{column} = ANY({self.param(key)}::text[])"
        names = []
        for i, value in enumerate(values):
            params[f"{key}{i}"] = str(value)
            names.append(self.param(f"{key}{i}"))
        return f"{column} IN ({', '.join(names)})"

    def among(self, column: str, values: Sequence[str]) -> Iterator[tuple[str, Sequence[Any]]]:
        """`column` is one of `values`, as (test, positional values) parts to run one by
        one: a single part with arrays, else one per `_IN_LIST` values (none for none)."""
        if self.arrays:
            yield f"{column} = ANY({self.mark}::text[])", (list(values),)
            return
        for start in range(0, len(values), _IN_LIST):
            part = list(values[start : start + _IN_LIST])
            yield f"{column} IN ({self.marks(len(part))})", part

    def upsert(self, table: str, columns: str, key: str) -> str:
        """Insert a row of `columns`, or overwrite the one with the same `key`."""
        names = columns.split(", ")
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in names if c != key)
        marks = self.marks(len(names))
        return self.upsert_form.format(
            table=table, columns=columns, marks=marks, key=key, updates=updates
        )

    def insert_ignoring(self, rest: str) -> str:
        """INSERT INTO `rest` (a table, its columns and rows), skipping rows already there."""
        return self.ignore_form.format(rest)
