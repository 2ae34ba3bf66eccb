"""The effective rows (now or as of an instant) and the filters of list and search,
written once for both stores (see memlane.store.dialect).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memlane.model import ACCESS_FIELDS, VERSIONED_FIELDS, Filters
from memlane.store.dialect import Dialect, Params
from memlane.timeutil import to_text

_ORDER = {
    "recent": "e.updated_at DESC, e.seq DESC",
    "created": "e.created_at DESC, e.seq DESC",
    "oldest": "e.created_at ASC, e.seq ASC",
    "importance": "e.importance DESC, e.updated_at DESC",
}


def _live_at(alias: str, at: str) -> str:
    return (
        f"{alias}.created_at <= {at} AND {alias}.valid_from <= {at} "
        f"AND ({alias}.valid_until IS NULL OR {alias}.valid_until > {at}) "
        f"AND ({alias}.superseded_at IS NULL OR {alias}.superseded_at > {at})"
    )


def _version_column(name: str) -> str:
    if name in ACCESS_FIELDS:
        return f"m.{name}"
    if name == "version":
        return "v.number AS version"
    if name == "version_from":
        return "v.valid_from AS version_from"
    return f"v.{name}" if name in VERSIONED_FIELDS else f"m.{name}"


# How a memory ended, as read at an instant: each column with the end it belongs to.
# Trigger: a read of the past (--as-of). Why: a memory superseded or invalidated later
# was current then, and marking it [PREVIOUSLY] or "superseded by" a memory that did
# not exist yet misreports that instant. Outcome: an end after the instant reads NULL.
_ENDS = {
    "superseded_at": ("superseded_at",),
    "superseded_by": ("superseded_at",),
    "valid_until": ("valid_until",),
    "supersede_reason": ("superseded_at", "valid_until"),
}


def _ended_then(name: str, at: str) -> str:
    """Column `name` of memory `m` as it read at `at` (see _ENDS)."""
    ended = " OR ".join(f"m.{end} <= {at}" for end in _ENDS[name])
    return f"CASE WHEN {ended} THEN m.{name} END AS {name}"


def as_of_source(d: Dialect, include_superseded: bool, stored: Sequence[str]) -> str:
    """Rows as they were at parameter `as_of`: the current row or the version valid
    then, with the memory columns `stored` (how it ended only if it had by then)."""
    at = d.param("as_of")
    alive = f"m.created_at <= {at}" if include_superseded else _live_at("m", at)
    current = ", ".join(_ended_then(c, at) if c in _ENDS else f"m.{c}" for c in stored)
    versioned = ", ".join(_ended_then(c, at) if c in _ENDS else _version_column(c) for c in stored)
    return (
        f"(SELECT 'm' AS src, m.seq AS seq, {current} FROM memory m "
        f"WHERE {alive} AND m.version_from <= {at} "
        f"UNION ALL SELECT 'v' AS src, v.seq AS seq, {versioned} "
        f"FROM memory_version v JOIN memory m ON m.id = v.memory_id "
        f"WHERE {alive} AND v.valid_from <= {at} AND v.valid_until > {at})"
    )


def select_sql(
    d: Dialect,
    filters: Filters,
    where: list[str],
    params: Params,
    *,
    stored: Sequence[str],
    columns: str,
    join: str = "",
    extra: str = "",
) -> str:
    """A SELECT of `columns` over the effective rows (alias `e`: src, seq and the memory
    columns `stored`) with the shared filters applied.

    `join` joins more tables to `e`; `extra` adds leading select columns.
    """
    if filters.as_of is not None:
        params["as_of"] = to_text(filters.as_of)
        source = as_of_source(d, filters.include_superseded, stored)
    else:
        source = f"(SELECT 'm' AS src, seq, {', '.join(stored)} FROM memory)"
        if not filters.include_superseded:
            where = [*where, "e.superseded_at IS NULL AND e.valid_until IS NULL"]
    clauses = [*where, *filter_clauses(d, filters, params)]
    sql = f"SELECT {extra}{columns} FROM {source} e {join}"
    return sql + (" WHERE " + " AND ".join(clauses) if clauses else "")


def adjacent_sql(d: Dialect, memory_ids: Sequence[str], params: Params) -> str:
    """(id, the id written just before, just after) in its session, for each of these
    memories in a session (any liveness or visibility; index memory_session)."""
    return (
        "SELECT m.id, (SELECT p.id FROM memory p WHERE p.session_id = m.session_id "
        "AND p.seq < m.seq ORDER BY p.seq DESC LIMIT 1), "
        "(SELECT n.id FROM memory n WHERE n.session_id = m.session_id AND n.seq > m.seq "
        "ORDER BY n.seq LIMIT 1) FROM memory m WHERE m.session_id IS NOT NULL AND "
        + d.one_of("m.id", "id", memory_ids, params)
    )


def order_limit(d: Dialect, filters: Filters, params: Params) -> str:
    sql = f" ORDER BY {_ORDER.get(filters.order, _ORDER['recent'])}"
    if filters.limit is not None:
        params["limit"] = filters.limit
        sql += f" LIMIT {d.param('limit')}"
    return sql


def filter_clauses(d: Dialect, f: Filters, params: Params) -> list[str]:
    out: list[str] = []
    if f.scopes is not None:
        out.append(d.one_of("e.scope", "scopes", f.scopes, params) if f.scopes else d.false)
    if f.ids is not None:
        out.append(d.one_of("e.id", "ids", f.ids, params) if f.ids else d.false)
    if f.categories:
        out.append(d.one_of("e.category", "cats", f.categories, params))
    if f.kinds:
        out.append(d.one_of("e.kind", "kinds", f.kinds, params))
    if f.tags_any:
        out.append(d.tags_any(f.tags_any, params))
    if f.exclude_tag_prefixes:
        out.append(d.no_tag_prefix(f.exclude_tag_prefixes, params))
    out.extend(_resonance_clauses(d, f, params))
    out.extend(_presence_clauses(d, f))
    out.append(_visibility(d, f, params))
    out.extend(_time_clauses(d, f.since, f.until, params))
    if f.active_since is not None:  # activated or changed since (wake's recent layer)
        params["active_since"] = to_text(f.active_since)
        latest = f"{d.greatest}(COALESCE(e.last_activated, ''), e.updated_at)"
        out.append(f"{latest} >= {d.param('active_since')}")
    if f.session_id is not None:  # written in the session, or restated in it
        params["session_id"] = f.session_id
        sid = d.param("session_id")
        out.append(
            f"(e.session_id = {sid} OR EXISTS (SELECT 1 FROM sighting s "
            f"WHERE s.memory_id = e.id AND s.session_id = {sid}))"
        )
    return out


def _resonance_clauses(d: Dialect, f: Filters, params: Params) -> list[str]:
    out = []
    effective = (
        "e.importance"
        if f.raw_resonance
        else "effective_resonance(e.importance, e.resonance_type, "
        f"COALESCE(e.last_activated, e.created_at), {d.text('now')})"
    )
    if f.min_importance is not None or f.max_importance is not None:
        params["now"] = to_text(f.as_of) if f.as_of else None
    if f.min_importance is not None:
        params["min_imp"] = float(f.min_importance)
        out.append(f"{effective} >= {d.param('min_imp')}")
    if f.max_importance is not None:
        params["max_imp"] = float(f.max_importance)
        out.append(f"{effective} <= {d.param('max_imp')}")
    if f.resonance_type_set is not None:
        out.append(f"e.resonance_type IS {'NOT ' if f.resonance_type_set else ''}NULL")
    if f.resonance_types:
        out.append(d.one_of("e.resonance_type", "rtypes", f.resonance_types, params))
    return out


def _presence_clauses(d: Dialect, f: Filters) -> list[str]:
    out = []
    if f.wake_phrase is not None:
        out.append(f"e.wake_phrases {'!=' if f.wake_phrase else '='} '[]'")
    if f.anchors is not None:
        # Only anchors to memories the reader may see count: an anchor to someone
        # else's private memory must not give its existence away.
        exists = (
            "EXISTS (SELECT 1 FROM link a JOIN memory t ON t.id = a.target "
            "WHERE a.source = e.id AND a.type = 'anchor' "
            f"AND (t.visibility = 'public' OR t.owner = {d.text('viewer')}))"
        )
        out.append(exists if f.anchors else f"NOT {exists}")
    return out


def _visibility(d: Dialect, f: Filters, params: Params) -> str:
    params["viewer"] = f.viewer
    if f.any_visibility:
        return d.true
    if f.mine:
        return f"e.visibility = 'private' AND e.owner = {d.text('viewer')}"
    if f.include_private:
        return f"(e.visibility = 'public' OR e.owner = {d.text('viewer')})"
    return "e.visibility = 'public'"


def _time_clauses(
    d: Dialect, since: datetime | None, until: datetime | None, params: Params
) -> list[str]:
    out = []
    when = "COALESCE(e.occurred_at, e.created_at)"  # indexed: memory_event_time
    if since is not None:
        params["since"] = to_text(since)
        out.append(f"{when} >= {d.param('since')}")
    if until is not None:
        params["until"] = to_text(until)
        out.append(f"{when} < {d.param('until')}")
    return out
