"""SQL for reads on PostgreSQL: the effective row source (now or as-of), the shared
filters, and keyword queries built so that no user text is ever a syntax error.

The port of `memlane.store.sqlite.sql`, with psycopg's `%(name)s` parameters.
"""

from __future__ import annotations

import itertools
import re
from datetime import datetime
from typing import Any

from memlane.model import VERSIONED_FIELDS, Filters
from memlane.store.postgres.schema import FOLD, FTS_CONFIG
from memlane.store.sqlite.rows import COLUMNS
from memlane.store.sqlite.sql import STOPWORDS
from memlane.timeutil import to_text

MEMORY_COLUMNS = ", ".join(COLUMNS)
_ORDER = {
    "recent": "e.updated_at DESC, e.seq DESC",
    "created": "e.created_at DESC, e.seq DESC",
    "oldest": "e.created_at ASC, e.seq ASC",
    "importance": "e.importance DESC, e.updated_at DESC",
}
# "Most words" is tried between "all" and "any" for this many words (as in SQLite).
_MOST_MIN, _MOST_MAX = 3, 6
_TOKEN = re.compile(r"[^\W_]+\*?")


def tsquery(text: str, match: str, params: dict[str, Any]) -> str | None:
    """A tsquery expression for arbitrary user text, or None when there is nothing to
    search (or the mode would only repeat a narrower one).

    Trigger: user text with quotes, parentheses, AND/OR, `-`, `:` or `*`.
    Why: a syntax error must never reach the user, and the keyword ladder needs
    "all", "most" and "any" of the words. Outcome: each word is its own
    `websearch_to_tsquery` (which accepts any text), a `word*` a prefix query of a
    word that holds letters and digits only; they are combined with && and ||.
    """
    words = terms(text, params)
    if not words:
        return None
    if match == "all":
        return "(" + " && ".join(words) + ")"
    if match == "most":
        if not _MOST_MIN <= len(words) <= _MOST_MAX:
            return None
        groups = itertools.combinations(words, len(words) - 1)
        return "(" + " || ".join("(" + " && ".join(g) + ")" for g in groups) + ")"
    return "(" + " || ".join(words) + ")" if len(words) > 1 else None


def terms(text: str, params: dict[str, Any]) -> list[str]:
    """One tsquery per distinct word (stopwords dropped unless that is all there is).

    Trigger: ts_rank_cd scores a document against the query it is given, and an AND
    query scores the same document lower than an OR query does. Why: the keyword
    ladder keeps the first score a memory got (lanes.keyword), so an "all the words"
    match ranked below a later "any word" match of another memory. Outcome: every
    step ranks word by word (as SQLite's BM25 sums per-word scores, whatever the
    operator); the step's query only decides which memories match."""
    text = text.encode("utf-8", "ignore").decode("utf-8")
    tokens = _TOKEN.findall(text)
    tokens = [t for t in tokens if t.rstrip("*").lower() not in STOPWORDS] or tokens
    terms = []
    for i, token in enumerate(dict.fromkeys(tokens)):
        params[f"w{i}"] = token.rstrip("*")
        if token.endswith("*"):
            params[f"w{i}"] = f"'{token[:-1]}':*"
            terms.append(f"to_tsquery('{FTS_CONFIG}', {FOLD}(%(w{i})s))")
        else:
            terms.append(f"websearch_to_tsquery('{FTS_CONFIG}', {FOLD}(%(w{i})s))")
    return terms


def _live_at(alias: str) -> str:
    return (
        f"{alias}.created_at <= %(as_of)s AND {alias}.valid_from <= %(as_of)s "
        f"AND ({alias}.valid_until IS NULL OR {alias}.valid_until > %(as_of)s) "
        f"AND ({alias}.superseded_at IS NULL OR {alias}.superseded_at > %(as_of)s)"
    )


_ACCESS_FIELDS = frozenset({"visibility", "owner"})


def _version_column(name: str) -> str:
    if name in _ACCESS_FIELDS:
        return f"m.{name}"
    if name == "version":
        return "v.number AS version"
    if name == "version_from":
        return "v.valid_from AS version_from"
    return f"v.{name}" if name in VERSIONED_FIELDS else f"m.{name}"


def as_of_source(include_superseded: bool, fts: bool = False) -> str:
    """Rows as they were at %(as_of)s: the current row or the version valid then."""
    alive = "m.created_at <= %(as_of)s" if include_superseded else _live_at("m")
    current = ", ".join(f"m.{c}" for c in COLUMNS)
    versioned = ", ".join(_version_column(c) for c in COLUMNS)
    m_fts, v_fts = (", m.fts", ", v.fts") if fts else ("", "")
    return (
        f"(SELECT 'm' AS src, m.seq AS seq, {current}{m_fts} FROM memory m "
        f"WHERE {alive} AND m.version_from <= %(as_of)s "
        f"UNION ALL SELECT 'v' AS src, v.seq AS seq, {versioned}{v_fts} "
        f"FROM memory_version v JOIN memory m ON m.id = v.memory_id "
        f"WHERE {alive} AND v.valid_from <= %(as_of)s AND v.valid_until > %(as_of)s)"
    )


def select_sql(
    filters: Filters,
    where: list[str],
    params: dict[str, Any],
    join: str = "",
    extra: str = "",
    columns: str | None = None,
    fts: bool = False,
) -> str:
    """A SELECT over the effective rows (alias `e`) with the shared filters applied."""
    if filters.as_of is not None:
        params["as_of"] = to_text(filters.as_of)
        source = as_of_source(filters.include_superseded, fts)
    else:
        source = f"(SELECT 'm' AS src, seq, {MEMORY_COLUMNS}{', fts' if fts else ''} FROM memory)"
        if not filters.include_superseded:
            where = [*where, "e.superseded_at IS NULL AND e.valid_until IS NULL"]
    clauses = [*where, *filter_clauses(filters, params)]
    cols = columns or ", ".join(f"e.{c}" for c in COLUMNS)
    sql = f"SELECT {extra}{cols} FROM {source} e {join}"
    return sql + (" WHERE " + " AND ".join(clauses) if clauses else "")


def order_limit(filters: Filters, params: dict[str, Any]) -> str:
    sql = f" ORDER BY {_ORDER.get(filters.order, _ORDER['recent'])}"
    if filters.limit is not None:
        params["limit"] = filters.limit
        sql += " LIMIT %(limit)s"
    return sql


def _any(column: str, values: tuple[str, ...], key: str, params: dict[str, Any]) -> str:
    params[key] = [str(v) for v in values]
    return f"{column} = ANY(%({key})s::text[])"


def filter_clauses(f: Filters, params: dict[str, Any]) -> list[str]:
    out: list[str] = []
    if f.scopes is not None:
        out.append(_any("e.scope", f.scopes, "scopes", params) if f.scopes else "FALSE")
    if f.ids is not None:
        out.append(_any("e.id", f.ids, "ids", params) if f.ids else "FALSE")
    if f.categories:
        out.append(_any("e.category", f.categories, "cats", params))
    if f.kinds:
        out.append(_any("e.kind", tuple(f.kinds), "kinds", params))
    if f.tags_any:
        params["tags"] = list(f.tags_any)
        out.append("e.tags::jsonb ?| %(tags)s::text[]")
    if f.exclude_tag_prefixes:
        params["xtags"] = list(f.exclude_tag_prefixes)
        out.append(
            "NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(e.tags::jsonb) j(value), "
            "unnest(%(xtags)s::text[]) x(prefix) WHERE starts_with(j.value, x.prefix))"
        )
    out.extend(_resonance_clauses(f, params))
    out.extend(_presence_clauses(f))
    out.append(_visibility(f, params))
    out.extend(_time_clauses(f.since, f.until, params))
    if f.active_since is not None:
        params["active_since"] = to_text(f.active_since)
        out.append("GREATEST(COALESCE(e.last_activated, ''), e.updated_at) >= %(active_since)s")
    if f.session_id is not None:
        params["session_id"] = f.session_id
        out.append("e.session_id = %(session_id)s")
    return out


def _resonance_clauses(f: Filters, params: dict[str, Any]) -> list[str]:
    out = []
    effective = (
        "e.importance"
        if f.raw_resonance
        else "effective_resonance(e.importance, e.resonance_type, "
        "COALESCE(e.last_activated, e.created_at), %(now)s::text)"
    )
    if f.min_importance is not None or f.max_importance is not None:
        params["now"] = to_text(f.as_of) if f.as_of else None
    if f.min_importance is not None:
        params["min_imp"] = float(f.min_importance)
        out.append(f"{effective} >= %(min_imp)s")
    if f.max_importance is not None:
        params["max_imp"] = float(f.max_importance)
        out.append(f"{effective} <= %(max_imp)s")
    if f.resonance_type_set is not None:
        out.append(f"e.resonance_type IS {'NOT ' if f.resonance_type_set else ''}NULL")
    if f.resonance_types:
        out.append(_any("e.resonance_type", tuple(f.resonance_types), "rtypes", params))
    return out


def _presence_clauses(f: Filters) -> list[str]:
    out = []
    if f.wake_phrase is not None:
        out.append(f"e.wake_phrases {'!=' if f.wake_phrase else '='} '[]'")
    if f.anchors is not None:
        exists = (
            "EXISTS (SELECT 1 FROM link a JOIN memory t ON t.id = a.target "
            "WHERE a.source = e.id AND a.type = 'anchor' "
            "AND (t.visibility = 'public' OR t.owner = %(viewer)s::text))"
        )
        out.append(exists if f.anchors else f"NOT {exists}")
    return out


def _visibility(f: Filters, params: dict[str, Any]) -> str:
    params["viewer"] = f.viewer
    if f.any_visibility:
        return "TRUE"
    if f.mine:
        return "e.visibility = 'private' AND e.owner = %(viewer)s::text"
    if f.include_private:
        return "(e.visibility = 'public' OR e.owner = %(viewer)s::text)"
    return "e.visibility = 'public'"


def _time_clauses(
    since: datetime | None, until: datetime | None, params: dict[str, Any]
) -> list[str]:
    out = []
    when = "COALESCE(e.occurred_at, e.created_at)"
    if since is not None:
        params["since"] = to_text(since)
        out.append(f"{when} >= %(since)s")
    if until is not None:
        params["until"] = to_text(until)
        out.append(f"{when} < %(until)s")
    return out
