"""SQL for reads on PostgreSQL: keyword queries built so that no user text is ever a
syntax error, and PostgreSQL's `Dialect` (psycopg's `%(name)s` parameters, arrays), over
which memlane.store.dialect writes the effective rows and the shared filters.
"""

from __future__ import annotations

import itertools
import re
from functools import partial
from typing import Any

from memlane.store.dialect import Dialect, Params
from memlane.store.dialect import filters as shared
from memlane.store.postgres.schema import FOLD, FTS_CONFIG
from memlane.store.sqlite.rows import COLUMNS
from memlane.store.sqlite.sql import STOPWORDS

MEMORY_COLUMNS = ", ".join(COLUMNS)
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


def _tags_any(tags: tuple[str, ...], params: Params) -> str:
    params["tags"] = list(tags)
    return "e.tags::jsonb ?| %(tags)s::text[]"


def _no_tag_prefix(prefixes: tuple[str, ...], params: Params) -> str:
    params["xtags"] = list(prefixes)
    return (
        "NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(e.tags::jsonb) j(value), "
        "unnest(%(xtags)s::text[]) x(prefix) WHERE starts_with(j.value, x.prefix))"
    )


def _starts_with(column: str, prefix: str) -> tuple[str, str]:
    return f"starts_with({column}, %s)", prefix


def _contains(column: str, text: str) -> tuple[str, str]:
    return f"strpos({column}, %s) > 0", text


POSTGRES = Dialect(
    mark="%s",
    named="%({})s",
    true="TRUE",
    false="FALSE",
    text_cast="::text",
    same="IS NOT DISTINCT FROM",
    greatest="GREATEST",
    unlimited=None,
    arrays=True,
    upsert_form="INSERT INTO {table}({columns}) VALUES ({marks}) "
    "ON CONFLICT ({key}) DO UPDATE SET {updates}",
    ignore_form="INSERT INTO {} ON CONFLICT DO NOTHING",
    row_lock=" FOR UPDATE",
    stores_nul=False,
    starts_with=_starts_with,
    contains=_contains,
    tags_any=_tags_any,
    no_tag_prefix=_no_tag_prefix,
)
_ROW = ", ".join(f"e.{c}" for c in COLUMNS)
select_sql = partial(shared.select_sql, POSTGRES, stored=COLUMNS, columns=_ROW)
order_limit = partial(shared.order_limit, POSTGRES)
