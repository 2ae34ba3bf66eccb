"""Counts over the memories a reader may see (stats, usage), written once for both
stores (see memlane.store.dialect).

A count is an answer about memories like any other: one that took in someone else's
private memories would tell the reader they exist, how many and of what kind. Only
the store's own upkeep (the consolidate cadence, the target of a migration) counts
every memory, with `everyone`.
"""

from __future__ import annotations

import json

from memlane.errors import Invalid
from memlane.model import Kind, RegistryEntry, Stats, class_of
from memlane.store.dialect import Connection, Dialect, Params
from memlane.timeutil import from_text

_LIVE = "m.superseded_at IS NULL AND m.valid_until IS NULL"
_INVALIDATED = "m.superseded_at IS NULL AND m.valid_until IS NOT NULL"
_RETIRED = "m.superseded_at IS NOT NULL AND m.superseded_by IS NULL"
USAGE_FIELDS = frozenset({"category", "project", "source_agent", "session_id", "scope"})


def _seen(d: Dialect, alias: str, everyone: bool) -> str:
    """The memories `alias` that the reader bound as `viewer` may see."""
    if everyone:
        return d.true
    return f"({alias}.visibility = 'public' OR {alias}.owner = {d.text('viewer')})"


def _params(viewer: str | None, everyone: bool) -> Params:
    return {} if everyone else {"viewer": viewer}


def stats(
    d: Dialect,
    conn: Connection,
    viewer: str | None,
    everyone: bool,
    schema_version: int,
    location: str,
) -> Stats:
    """The store's counts as `viewer` may see them: its memories by state, their
    versions, the links between two of them, and the live ones by kind, class,
    category and scope (`everyone`: every memory, every link)."""
    seen, params = _seen(d, "m", everyone), _params(viewer, everyone)
    one = conn.execute(
        f"SELECT COUNT(*), COUNT(CASE WHEN {_LIVE} THEN 1 END), "
        "COUNT(CASE WHEN m.superseded_by IS NOT NULL THEN 1 END), "
        f"COUNT(CASE WHEN {_INVALIDATED} THEN 1 END), "
        f"COUNT(CASE WHEN {_RETIRED} THEN 1 END) FROM memory m WHERE {seen}",
        params,
    ).fetchone()
    versions = conn.execute(
        f"SELECT COUNT(*) FROM memory_version v JOIN memory m ON m.id = v.memory_id WHERE {seen}",
        params,
    ).fetchone()
    links = conn.execute(
        "SELECT COUNT(*) FROM link l"
        if everyone
        else "SELECT COUNT(*) FROM link l JOIN memory s ON s.id = l.source "
        f"JOIN memory t ON t.id = l.target WHERE {_seen(d, 's', False)} AND {_seen(d, 't', False)}",
        params,
    ).fetchone()
    kinds = _live_by(d, conn, "kind", seen, params)
    by_class: dict[str, int] = {}
    for kind, count in kinds.items():
        name = class_of(Kind(kind)).value
        by_class[name] = by_class.get(name, 0) + count
    return Stats(
        total=int(one[0]),
        live=int(one[1]),
        superseded=int(one[2]),
        invalidated=int(one[3]),
        retired=int(one[4]),
        versions=int(versions[0]),
        links=int(links[0]),
        by_kind=kinds,
        by_category=_live_by(d, conn, "category", seen, params),
        by_scope=_live_by(d, conn, "scope", seen, params),
        by_class=by_class,
        schema_version=schema_version,
        path=location,
    )


def _live_by(
    d: Dialect, conn: Connection, column: str, seen: str, params: Params
) -> dict[str, int]:
    rows = conn.execute(
        f"SELECT m.{column}, COUNT(*) FROM memory m WHERE {_LIVE} AND {seen} "
        f"GROUP BY m.{column} ORDER BY COUNT(*) DESC",
        params,
    ).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def usage(
    d: Dialect, conn: Connection, field: str, value: str, viewer: str | None, everyone: bool
) -> int:
    """How many memories `viewer` may see (`everyone`: any) have `field` equal to `value`."""
    if field not in USAGE_FIELDS:
        raise Invalid(f"cannot count usage of {field!r}")
    row = conn.execute(
        f"SELECT COUNT(*) FROM memory m WHERE m.{field} = {d.param('value')} "
        f"AND {_seen(d, 'm', everyone)}",
        {"value": value, **_params(viewer, everyone)},
    ).fetchone()
    return int(row[0])


def tag_counts(
    d: Dialect, conn: Connection, viewer: str | None, category: str | None
) -> dict[str, int]:
    """How many live memories `viewer` may see carry each tag (of `category`), most
    used first."""
    rows = conn.execute(
        f"SELECT j.value, COUNT(*) FROM memory m, {d.tag_rows} "
        f"WHERE (m.visibility = 'public' OR m.owner = {d.text('viewer')}) "
        "AND m.superseded_at IS NULL AND m.valid_until IS NULL "
        f"AND ({d.text('cat')} IS NULL OR m.category = {d.text('cat')}) "
        f"GROUP BY j.value ORDER BY COUNT(*) DESC, j.value{d.binary}",
        {"viewer": viewer, "cat": category},
    ).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def registry(d: Dialect, conn: Connection, name: str) -> list[RegistryEntry]:
    """A registry's entries, by key."""
    rows = conn.execute(
        f"SELECT key, data, created_at FROM registry WHERE registry = {d.mark} ORDER BY key",
        (name,),
    ).fetchall()
    return [RegistryEntry(name, r[0], json.loads(r[1]), from_text(r[2])) for r in rows]
