"""Conversion between frozen records and SQLite rows (text instants, JSON lists)."""

from __future__ import annotations

import functools
import json
import operator
import sqlite3
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import Any

import msgspec

from memlane.model import ENUM_FIELDS, VERSIONED_FIELDS, Record, Version
from memlane.timeutil import from_text, to_text

# Each field's annotation as written (model.py defers them): evaluating them all with
# typing.get_type_hints would cost every cold process.
_HINTS = {name: str(hint) for name, hint in Record.__annotations__.items()}
# Every Record field is a column except the anchors, which live in the link table, and
# the source state, which a read works out.
_NOT_STORED = frozenset({"anchors", "source_state"})
COLUMNS: tuple[str, ...] = tuple(n for n in Record.__struct_fields__ if n not in _NOT_STORED)
_TUPLE_FIELDS = frozenset(n for n in COLUMNS if "tuple" in _HINTS[n])
_TIME_FIELDS = frozenset(n for n in COLUMNS if "datetime" in _HINTS[n])
_BOOL_FIELDS = frozenset(n for n in COLUMNS if _HINTS[n] == "bool")
_VERSION_META = ("memory_id", "number", "valid_from", "valid_until", "reason", "actor")


def encode(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name in _TUPLE_FIELDS:
        return json.dumps(list(value), ensure_ascii=False)
    if name in _TIME_FIELDS:
        return to_text(value)
    if name in _BOOL_FIELDS:
        return int(value)
    if isinstance(value, StrEnum):
        return value.value
    return value


def _encoder(name: str) -> Callable[[Any], Any] | None:
    """The converter of one column, chosen once rather than per value (None: as is)."""
    if name in _TUPLE_FIELDS:
        return lambda v: json.dumps(v, ensure_ascii=False) if v else "[]"
    if name in _TIME_FIELDS:
        return lambda v: None if v is None else to_text(v)
    if name in _BOOL_FIELDS:
        return int
    return None  # str, int, float and StrEnum values bind as they are


_GET_COLUMNS = operator.attrgetter(*COLUMNS)
_CONVERTERS = tuple(
    (i, enc) for i, name in enumerate(COLUMNS) if (enc := _encoder(name)) is not None
)


def record_values(record: Record) -> list[Any]:
    """Column values in COLUMNS order, for positional binding."""
    values = list(_GET_COLUMNS(record))
    for i, convert in _CONVERTERS:
        values[i] = convert(values[i])
    return values


def record_params(record: Record) -> dict[str, Any]:
    return dict(zip(COLUMNS, record_values(record), strict=True))


# A JSON list column as its values. Trigger: recall reads about a hundred rows a query,
# most with tags. Why: json.loads goes through three Python frames per value, msgspec's
# decoder through none. Outcome: the same values (text written by json.dumps).
_json_values = msgspec.json.Decoder().decode


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(_json_values(value)) if value and value != "[]" else ()


def _decoder(name: str) -> Callable[[Any], Any] | None:
    """The converter of one non-null column value, chosen once (None: as is)."""
    if name in _TIME_FIELDS:
        return from_text
    if name in _BOOL_FIELDS:
        return bool
    if name in ENUM_FIELDS:
        members = {m.value: m for m in ENUM_FIELDS[name]}
        return members.__getitem__  # an unknown value fails as loudly as the enum would
    return None


_DECODER = {name: _decoder(name) for name in COLUMNS if name not in _TUPLE_FIELDS}


def decode(name: str, value: Any) -> Any:
    """One column's value as a Record field holds it."""
    if name in _TUPLE_FIELDS:
        return _tuple(value)
    convert = _DECODER[name]
    return value if convert is None or value is None else convert(value)


RowReader = Callable[[sqlite3.Row, tuple[str, ...]], Record]


# Record's fields by position: the columns in their order, the anchors among them, and
# the read-time source state last (left to its default).
_ANCHORS_AT = Record.__struct_fields__.index("anchors")
if (*COLUMNS[:_ANCHORS_AT], "anchors", *COLUMNS[_ANCHORS_AT:], "source_state") != (
    Record.__struct_fields__
):
    raise ImportError("rows.row_reader builds Records by position: update it with Record")


@functools.lru_cache(maxsize=32)
def row_reader(keys: tuple[str, ...]) -> RowReader:
    """Records from rows with these column names: each column's position and converter
    found once per query shape, not per value, and the Record built by position (recall
    reads a hundred rows a query; by name, value by value, each would cost about three
    times as much)."""
    where = {name: i for i, name in enumerate(keys)}
    pick = operator.itemgetter(*(where[name] for name in COLUMNS))
    converted = tuple(
        (i, convert) for i, name in enumerate(COLUMNS) if (convert := _DECODER.get(name))
    )
    tuples = tuple(i for i, name in enumerate(COLUMNS) if name in _TUPLE_FIELDS)

    def read(row: sqlite3.Row, anchors: tuple[str, ...] = ()) -> Record:
        values = list(pick(row))
        for i, convert in converted:
            value = values[i]
            if value is not None:
                values[i] = convert(value)
        for i in tuples:
            values[i] = _tuple(values[i])
        values.insert(_ANCHORS_AT, anchors)
        return Record(*values)

    return read


def record_from_row(row: sqlite3.Row, anchors: tuple[str, ...] = ()) -> Record:
    return row_reader(tuple(row.keys()))(row, anchors)


def version_params(version: Version) -> dict[str, Any]:
    params = {name: encode(name, version.fields[name]) for name in VERSIONED_FIELDS}
    params.update(
        memory_id=version.memory_id,
        number=version.number,
        valid_from=to_text(version.valid_from),
        valid_until=to_text(version.valid_until) if version.valid_until else None,
        reason=version.reason,
        actor=version.actor,
    )
    return params


def version_from_row(row: sqlite3.Row) -> Version:
    return Version(
        memory_id=row["memory_id"],
        number=row["number"],
        valid_from=from_text(row["valid_from"]),
        valid_until=from_text(row["valid_until"]),
        reason=row["reason"],
        actor=row["actor"],
        fields={name: decode(name, row[name]) for name in VERSIONED_FIELDS},
    )


def version_columns() -> tuple[str, ...]:
    return _VERSION_META + VERSIONED_FIELDS


def time_param(t: datetime | None) -> str | None:
    return to_text(t) if t is not None else None
