"""SQL for reads in SQLite: FTS5 keyword queries, and SQLite's `Dialect`, over which
memlane.store.dialect writes the effective rows (now or as-of) and the shared filters."""

from __future__ import annotations

import itertools
import re
from functools import partial

from memlane.store.base import has_step
from memlane.store.dialect import Dialect, Params
from memlane.store.dialect import filters as shared
from memlane.store.sqlite.rows import COLUMNS

ANCHORS = (
    "(SELECT json_group_array(l.target) FROM link l "
    "WHERE l.source = e.id AND l.type = 'anchor') AS anchors"
)
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
# Tokens as FTS5's unicode61 tokenizer sees them; a trailing * asks for a prefix.
_TOKEN = re.compile(r"[^\W_]+\*?")
# An English clitic after an apostrophe ("what's", "don't", "we'll"): the tokenizer
# splits it off as a word of its own, which would match every "daughter's" and "it's".
_CLITIC = re.compile(r"(?<=[^\W_])['’](?:s|t|d|ll|m|re|ve)\b", re.IGNORECASE)


def fts_query(text: str, match: str = "all") -> str | None:
    """An FTS5 query from arbitrary user text: every token quoted, so no syntax error.

    Trigger: user text with quotes, parentheses, AND/OR/NOT, `-`, `:` or `*`.
    Why: raw FTS5 syntax errors must never reach the user.
    Outcome: tokens become quoted strings (prefix queries for `tok*`), joined as `match`
    asks: "all" words, "most" (all but one, for 3-6 words) or "any". None when there
    is nothing to search, or when the mode would only repeat a narrower one.
    """
    unique = fts_terms(text)
    if not has_step(match, len(unique)):
        return None
    if match == "all":
        return " AND ".join(unique)
    if match == "most":
        groups = itertools.combinations(unique, len(unique) - 1)
        return " OR ".join("(" + " AND ".join(group) + ")" for group in groups)
    return " OR ".join(unique)


def fts_terms(text: str) -> list[str]:
    """The distinct FTS5 terms of user text, each quoted (`"word"`, or `"word"*` for a
    prefix), in the order they first appear."""
    text = text.encode("utf-8", "ignore").decode("utf-8")  # drop undecodable input
    tokens = _TOKEN.findall(_CLITIC.sub("", text))
    # Trigger: a natural-language query ("where do we configure the proxy").
    # Why: words like "the" match most memories, so every match would be ranked.
    # Outcome: they are dropped, unless the query has nothing else.
    tokens = [t for t in tokens if t.rstrip("*").lower() not in STOPWORDS] or tokens
    terms = []
    for token in tokens:
        word, star = (token[:-1], "*") if token.endswith("*") else (token, "")
        terms.append(f'"{word}"{star}')
    return list(dict.fromkeys(terms))


def _tags_any(tags: tuple[str, ...], params: Params) -> str:
    inner = SQLITE.one_of("value", "tag", tags, params)
    return f"EXISTS (SELECT 1 FROM json_each(e.tags) WHERE {inner})"


def _no_tag_prefix(prefixes: tuple[str, ...], params: Params) -> str:
    tests = []
    for i, prefix in enumerate(prefixes):
        params[f"xtag{i}"] = prefix
        tests.append(f"substr(j.value, 1, length(:xtag{i})) = :xtag{i}")
    return f"NOT EXISTS (SELECT 1 FROM json_each(e.tags) j WHERE {' OR '.join(tests)})"


def _starts_with(column: str, prefix: str) -> tuple[str, str]:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"{column} LIKE ? ESCAPE '\\'", escaped + "%"


def _contains(column: str, text: str) -> tuple[str, str]:
    return f"{column} LIKE ?", f"%{text}%"


SQLITE = Dialect(
    mark="?",
    named=":{}",
    true="1",
    false="0",
    text_cast="",
    same="IS",
    greatest="MAX",
    unlimited=-1,
    arrays=False,
    upsert_form="INSERT OR REPLACE INTO {table}({columns}) VALUES ({marks})",
    ignore_form="INSERT OR IGNORE INTO {}",
    row_lock="",  # the one writer holds the whole database
    stores_nul=True,
    tag_rows="json_each(m.tags) j",
    binary="",
    starts_with=_starts_with,
    contains=_contains,
    tags_any=_tags_any,
    no_tag_prefix=_no_tag_prefix,
)
select_sql = partial(shared.select_sql, SQLITE, stored=COLUMNS, columns="e.*")
order_limit = partial(shared.order_limit, SQLITE)
