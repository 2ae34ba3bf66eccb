"""SQL for reads: the effective row source (now or as-of) and the shared filters."""

from __future__ import annotations

import itertools
import re
from datetime import datetime
from typing import Any

from memlane.model import VERSIONED_FIELDS, Filters
from memlane.store.sqlite.rows import COLUMNS
from memlane.timeutil import to_text

ANCHORS = (
    "(SELECT json_group_array(l.target) FROM link l "
    "WHERE l.source = e.id AND l.type = 'anchor') AS anchors"
)
_ORDER = {
    "recent": "e.updated_at DESC, e.seq DESC",
    "created": "e.created_at DESC, e.seq DESC",
    "oldest": "e.created_at ASC, e.seq ASC",
    "importance": "e.importance DESC, e.updated_at DESC",
}
# Function words that carry no topic; dropped from keyword queries with other words.
STOPWORDS = frozenset(
    """a about above after again all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its just
    me more most my no nor not now of off on once only or other our ours out over own same
    she should so some such than that the their theirs them then there these they this
    those through to too under until up very was we were what when where which while who
    whom why will with would you your yours""".split()
)
# "Most words" is tried between "all" and "any" for queries of this many words: with
# fewer, it equals "any"; with more, the combinations grow too many to be cheap.
_MOST_MIN, _MOST_MAX = 3, 6
# Tokens as FTS5's unicode61 tokenizer sees them; a trailing * asks for a prefix.
_TOKEN = re.compile(r"[^\W_]+\*?")


def fts_query(text: str, match: str = "all") -> str | None:
    """An FTS5 query from arbitrary user text: every token quoted, so no syntax error.

    Trigger: user text with quotes, parentheses, AND/OR/NOT, `-`, `:` or `*`.
    Why: raw FTS5 syntax errors must never reach the user.
    Outcome: tokens become quoted strings (prefix queries for `tok*`), joined as `match`
    asks: "all" words, "most" (all but one, for 3-6 words) or "any". None when there
    is nothing to search, or when the mode would only repeat a narrower one.
    """
    terms = []
    text = text.encode("utf-8", "ignore").decode("utf-8")  # drop undecodable input
    tokens = _TOKEN.findall(text)
    # Trigger: a natural-language query ("where do we configure the proxy").
    # Why: words like "the" match most memories, so every match would be ranked.
    # Outcome: they are dropped, unless the query has nothing else.
    tokens = [t for t in tokens if t.rstrip("*").lower() not in STOPWORDS] or tokens
    for token in tokens:
        word, star = (token[:-1], "*") if token.endswith("*") else (token, "")
        terms.append(f'"{word}"{star}')
    unique = list(dict.fromkeys(terms))
    if not unique:
        return None
    if match == "all":
        return " AND ".join(unique)
    if match == "most":
        if not _MOST_MIN <= len(unique) <= _MOST_MAX:
            return None
        groups = itertools.combinations(unique, len(unique) - 1)
        return " OR ".join("(" + " AND ".join(group) + ")" for group in groups)
    return " OR ".join(unique) if len(unique) > 1 else None


def _live_at(alias: str) -> str:
    return (
        f"{alias}.created_at <= :as_of AND {alias}.valid_from <= :as_of "
        f"AND ({alias}.valid_until IS NULL OR {alias}.valid_until > :as_of) "
        f"AND ({alias}.superseded_at IS NULL OR {alias}.superseded_at > :as_of)"
    )


# Who may see a memory is decided by its current row, never by an old version.
_ACCESS_FIELDS = frozenset({"visibility", "owner"})


def _version_column(name: str) -> str:
    if name in _ACCESS_FIELDS:
        return f"m.{name}"
    if name == "version":
        return "v.number AS version"
    if name == "version_from":
        return "v.valid_from AS version_from"
    return f"v.{name}" if name in VERSIONED_FIELDS else f"m.{name}"


def as_of_source(include_superseded: bool) -> str:
    """Rows as they were at :as_of — the current row or the version valid then."""
    alive = "m.created_at <= :as_of" if include_superseded else _live_at("m")
    current = ", ".join(f"m.{c}" for c in COLUMNS)
    versioned = ", ".join(_version_column(c) for c in COLUMNS)
    return (
        f"(SELECT 'm' AS src, m.seq AS seq, {current} FROM memory m "
        f"WHERE {alive} AND m.version_from <= :as_of "
        f"UNION ALL SELECT 'v' AS src, v.seq AS seq, {versioned} "
        f"FROM memory_version v JOIN memory m ON m.id = v.memory_id "
        f"WHERE {alive} AND v.valid_from <= :as_of AND v.valid_until > :as_of)"
    )


def select_sql(
    filters: Filters,
    where: list[str],
    params: dict[str, Any],
    join: str = "",
    extra: str = "",
    columns: str = "e.*",
) -> str:
    """A SELECT over the effective rows (alias `e`) with the shared filters applied.

    `join` joins more tables to `e`; `extra` adds leading select columns.
    """
    if filters.as_of is not None:
        params["as_of"] = to_text(filters.as_of)
        source = as_of_source(filters.include_superseded)
    else:
        source = "(SELECT 'm' AS src, * FROM memory)"
        if not filters.include_superseded:
            where = [*where, "e.superseded_at IS NULL AND e.valid_until IS NULL"]
    clauses = [*where, *filter_clauses(filters, params)]
    sql = f"SELECT {extra}{columns} FROM {source} e {join}"
    return sql + (" WHERE " + " AND ".join(clauses) if clauses else "")


def order_limit(filters: Filters, params: dict[str, Any]) -> str:
    sql = f" ORDER BY {_ORDER.get(filters.order, _ORDER['recent'])}"
    if filters.limit is not None:
        params["limit"] = filters.limit
        sql += " LIMIT :limit"
    return sql


def _in(column: str, values: tuple[str, ...], key: str, params: dict[str, Any]) -> str:
    names = []
    for i, value in enumerate(values):
        params[f"{key}{i}"] = str(value)
        names.append(f":{key}{i}")
    return f"{column} IN ({', '.join(names)})"


def filter_clauses(f: Filters, params: dict[str, Any]) -> list[str]:
    out: list[str] = []
    if f.scopes is not None:
        out.append(_in("e.scope", f.scopes, "scope", params) if f.scopes else "0")
    if f.ids is not None:
        out.append(_in("e.id", f.ids, "id", params) if f.ids else "0")
    if f.categories:
        out.append(_in("e.category", f.categories, "cat", params))
    if f.kinds:
        out.append(_in("e.kind", tuple(f.kinds), "kind", params))
    if f.tags_any:
        inner = _in("value", f.tags_any, "tag", params)
        out.append(f"EXISTS (SELECT 1 FROM json_each(e.tags) WHERE {inner})")
    if f.exclude_tag_prefixes:
        out.append(_exclude_prefixes(f.exclude_tag_prefixes, params))
    out.extend(_resonance_clauses(f, params))
    out.extend(_presence_clauses(f))
    out.append(_visibility(f, params))
    out.extend(_time_clauses(f.since, f.until, params))
    if f.active_since is not None:  # activated or changed since (wake's recent layer)
        params["active_since"] = to_text(f.active_since)
        out.append("MAX(COALESCE(e.last_activated, ''), e.updated_at) >= :active_since")
    if f.session_id is not None:
        params["session_id"] = f.session_id
        out.append("e.session_id = :session_id")
    return out


def _exclude_prefixes(prefixes: tuple[str, ...], params: dict[str, Any]) -> str:
    tests = []
    for i, prefix in enumerate(prefixes):
        params[f"xtag{i}"] = prefix
        tests.append(f"substr(j.value, 1, length(:xtag{i})) = :xtag{i}")
    return f"NOT EXISTS (SELECT 1 FROM json_each(e.tags) j WHERE {' OR '.join(tests)})"


def _resonance_clauses(f: Filters, params: dict[str, Any]) -> list[str]:
    out = []
    effective = (
        "e.importance"
        if f.raw_resonance
        else "effective_resonance(e.importance, e.resonance_type, "
        "COALESCE(e.last_activated, e.created_at), :now)"
    )
    if f.min_importance is not None or f.max_importance is not None:
        params["now"] = to_text(f.as_of) if f.as_of else None
    if f.min_importance is not None:
        params["min_imp"] = f.min_importance
        out.append(f"{effective} >= :min_imp")
    if f.max_importance is not None:
        params["max_imp"] = f.max_importance
        out.append(f"{effective} <= :max_imp")
    if f.resonance_type_set is not None:
        out.append(f"e.resonance_type IS {'NOT ' if f.resonance_type_set else ''}NULL")
    if f.resonance_types:
        out.append(_in("e.resonance_type", tuple(f.resonance_types), "rtype", params))
    return out


def _presence_clauses(f: Filters) -> list[str]:
    out = []
    if f.wake_phrase is not None:
        out.append(f"e.wake_phrases {'!=' if f.wake_phrase else '='} '[]'")
    if f.anchors is not None:
        # Only anchors to memories the reader may see count: an anchor to someone
        # else's private memory must not give its existence away.
        exists = (
            "EXISTS (SELECT 1 FROM link a JOIN memory t ON t.id = a.target "
            "WHERE a.source = e.id AND a.type = 'anchor' "
            "AND (t.visibility = 'public' OR t.owner = :viewer))"
        )
        out.append(exists if f.anchors else f"NOT {exists}")
    return out


def _visibility(f: Filters, params: dict[str, Any]) -> str:
    params["viewer"] = f.viewer
    if f.any_visibility:
        return "1"
    if f.mine:
        return "e.visibility = 'private' AND e.owner = :viewer"
    if f.include_private:
        return "(e.visibility = 'public' OR e.owner = :viewer)"
    return "e.visibility = 'public'"


def _time_clauses(
    since: datetime | None, until: datetime | None, params: dict[str, Any]
) -> list[str]:
    out = []
    when = "COALESCE(e.occurred_at, e.created_at)"
    if since is not None:
        params["since"] = to_text(since)
        out.append(f"{when} >= :since")
    if until is not None:
        params["until"] = to_text(until)
        out.append(f"{when} < :until")
    return out
