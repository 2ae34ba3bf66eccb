"""SQL for reads on PostgreSQL: keyword queries built so that no user text is ever a
syntax error, and PostgreSQL's `Dialect` (psycopg's `%(name)s` parameters, arrays), over
which memlane.store.dialect writes the effective rows and the shared filters.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import partial
from typing import Any, NamedTuple

from memlane.store.base import has_step
from memlane.store.dialect import Dialect, Params
from memlane.store.dialect import filters as shared
from memlane.store.sqlite.rows import COLUMNS
from memlane.store.terms import K1, B

MEMORY_COLUMNS = ", ".join(COLUMNS)


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
    tag_rows="jsonb_array_elements_text(m.tags::jsonb) j(value)",
    binary=' COLLATE "C"',
    starts_with=_starts_with,
    contains=_contains,
    tags_any=_tags_any,
    no_tag_prefix=_no_tag_prefix,
)
_ROW = ", ".join(f"e.{c}" for c in COLUMNS)
select_sql = partial(shared.select_sql, POSTGRES, stored=COLUMNS, columns=_ROW)
order_limit = partial(shared.order_limit, POSTGRES)


# ---- keyword ranking as SQLite's FTS5 ranks (migration 4) ------------------------


class Word(NamedTuple):
    """One word of a keyword query: its FTS5 terms (usually one), and whether it asks
    for a prefix (`word*`)."""

    terms: tuple[str, ...]
    prefix: bool


def words(text: str) -> list[Word]:
    """The words SQLite's fts_query builds its query of, as FTS5 tokenizes them."""
    from memlane.store import terms
    from memlane.store.sqlite.sql import fts_terms

    quoted = fts_terms(text)
    prefixes = [q.endswith("*") for q in quoted]
    parsed = terms.phrases([q[1 : -2 if p else -1] for q, p in zip(quoted, prefixes, strict=True)])
    return [Word(t, p) for t, p in zip(parsed, prefixes, strict=True) if t]


def word_params(found: Sequence[Word], params: dict[str, Any]) -> None:
    for i, word in enumerate(found):
        params[f"k{i}"] = word.terms[0]
        params[f"ks{i}"] = list(word.terms)
        if word.prefix:  # the end of the terms that start with it, in code point order
            params[f"kn{i}"] = _after(word.terms[0])


def _after(prefix: str) -> str:
    """The least text after every text that starts with `prefix` (code point order)."""
    following = ord(prefix[-1]) + 1
    if 0xD800 <= following <= 0xDFFF:  # surrogates are not text
        following = 0xE000
    if following > sys.maxunicode:
        return _after(prefix[:-1]) if len(prefix) > 1 else chr(sys.maxunicode) * 2
    return prefix[:-1] + chr(following)


def prefixed(i: int) -> str:
    """SQL: the stored memories' terms that start with (prefix) word i, from term_df
    (its key is in code point order, "C")."""
    return f"ARRAY(SELECT term FROM term_df WHERE term >= %(k{i})s AND term < %(kn{i})s)"


def has_word(alias: str, i: int, word: Word, vocabulary: bool = False) -> str:
    """SQL: the row of `alias` holds word i. With `vocabulary` (a memory, not a
    version), a prefix word is the terms that start with it (parameter kx{i}, see
    prefixed), which the index finds; otherwise each row's terms are read."""
    if word.prefix:
        if vocabulary:
            return f"({alias}.terms ?| %(kx{i})s::text[])"
        return (
            f"EXISTS (SELECT 1 FROM jsonb_object_keys({alias}.terms) k "
            f"WHERE starts_with(k, %(k{i})s))"
        )
    if len(word.terms) > 1:
        return f"({alias}.terms ?& %(ks{i})s::text[])"
    return f"({alias}.terms ? %(k{i})s)"


def frequency(alias: str, i: int, word: Word) -> str:
    """SQL: word i's weighted count in the row (FTS5's aFreq; a phrase of several terms
    counts its first)."""
    if word.prefix:
        return (
            f"COALESCE((SELECT sum(e.value::float8) FROM jsonb_each_text({alias}.terms) e "
            f"WHERE starts_with(e.key, %(k{i})s)), 0)"
        )
    return f"COALESCE(({alias}.terms ->> %(k{i})s)::float8, 0)"


def scored(table: str, alias: str, found: Sequence[Word], match: str) -> str:
    """SQL: the rows of `table` the step matches, as (seq, src, score): src is `alias`,
    the score FTS5's bm25 (see bm25); each word's weighted count read once a row."""
    vocabulary = table == "memory"
    held = matching(alias, found, match, vocabulary)
    counts = ", ".join(f"{frequency(alias, i, w)} AS f{i}" for i, w in enumerate(found))
    score = bm25(alias, found, match, vocabulary)
    return (
        f"SELECT {alias}.seq, '{alias}' AS src, {score} AS score "
        f"FROM {table} {alias} CROSS JOIN LATERAL (SELECT {counts}) w WHERE {held}"
    )


def _held(alias: str, found: Sequence[Word], vocabulary: bool) -> str:
    """SQL: how many of the words the row of `alias` holds."""
    held = (f"({has_word(alias, i, w, vocabulary)})::int" for i, w in enumerate(found))
    return "(" + " + ".join(held) + ")"


def matching(alias: str, found: Sequence[Word], match: str, vocabulary: bool = False) -> str | None:
    """SQL: the rows of `alias` the step matches: every word, all but one, or any;
    None where SQLite's fts_query has no query for the step.

    A row with all words but one holds at least one of any two: "most" asks for one of
    the first two words (the rarest, as the store orders them) for the index to find
    the few rows to count words in: counting every row's words would cost a search
    more as the store grows, and the write policy searches so for each line it adds.
    """
    if not has_step(match, len(found)):
        return None
    held = [has_word(alias, i, w, vocabulary) for i, w in enumerate(found)]
    if match == "all":
        return " AND ".join(held)
    if match == "most":
        return f"({held[0]} OR {held[1]}) AND {_held(alias, found, vocabulary)} >= {len(held) - 1}"
    return "(" + " OR ".join(held) + ")"


def bm25(alias: str, found: Sequence[Word], match: str, vocabulary: bool) -> str:
    """SQL: FTS5's bm25 of the row for the step's query. Each word's IDF is the
    parameter {alias}idf{i}, the table's mean length {alias}avgdl.

    The "most" query is an OR of groups of n-1 words, and FTS5 counts the words of
    each group that matches: a row holding all n words matches every group, so each
    word counts n-1 times; a row with n-1 of them matches one group, once.
    """
    n = len(found)
    times = f"(CASE WHEN {_held(alias, found, vocabulary)} = {n} THEN {n - 1} ELSE 1 END)"
    times = times if match == "most" else "1"
    return f"({times} * (" + " + ".join(_word_score(alias, i) for i in range(n)) + "))"


def _word_score(alias: str, i: int) -> str:
    """SQL: word i's part of the row's bm25 (its weighted count read as w.f{i})."""
    f = f"w.f{i}"
    return (
        f"%({alias}idf{i})s * {f} * {K1 + 1} / ({f} + {K1} * "
        f"({1 - B} + {B} * {alias}.term_count / %({alias}avgdl)s))"
    )


def windows(found: Sequence[Word], floors: Sequence[bool]) -> str:
    """SQL: the memories holding any word as (seq, src, score), each word's matches
    above its floor only (parameter wf{i}, where floors[i]), scored by the sum of
    their words' parts of bm25: what SQLite ranks at first for an "any" step of many
    matches (see SQLiteStore._windows)."""
    parts = []
    for i, word in enumerate(found):
        part = (
            f"SELECT m.seq, {_word_score('m', i)} AS score FROM memory m CROSS JOIN LATERAL "
            f"(SELECT {frequency('m', i, word)} AS f{i}) w WHERE {has_word('m', i, word, True)}"
        )
        parts.append(part + (f" AND m.seq > %(wf{i})s" if floors[i] else ""))
    return (
        f"SELECT seq, 'm' AS src, sum(score) AS score FROM ({' UNION ALL '.join(parts)}) x "
        "GROUP BY seq"
    )


def newest(held: str, skip: str) -> str:
    """SQL: the seq of the memory after the newest `skip` (a parameter) that hold."""
    return f"(SELECT m.seq FROM memory m WHERE {held} ORDER BY m.seq DESC OFFSET {skip} LIMIT 1)"
