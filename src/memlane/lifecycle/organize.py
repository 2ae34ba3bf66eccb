"""Organize: topics over the most recent working set, each with an extractive summary.
Pure and deterministic; no LLM.

- The working set is the most recent live memories, without organize's own summary
  rows (their `source_ref` starts with `organize:`): summaries are the output, never
  the input. No summary (organize's or a session's) is a topic member either: it
  repeats its sources.
- Consolidation runs on it first; topics are found in what it leaves.
- Topics never mix readers: memories are grouped by scope and visibility (a public
  summary of a private note would expose it). Within a group, a topic is the term
  (an entity the extractor names, else a content word) shared by the most memories
  not yet in a topic, taken greedily while at least MIN_TOPIC share one. That gives
  a two-level hierarchy: scope, then topics, then their memories.
- A topic's summary is extractive: its members' most central sentences, whole
  (lifecycle.summary, the same summarizer as a session's episode summary).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import msgspec

from memlane.graph.entities import STOPWORDS, extract
from memlane.lifecycle.consolidate import Plan
from memlane.lifecycle.summary import summarize
from memlane.model import Kind, Record, Taint, Visibility, replace, worst_taint
from memlane.write.normalize import document_text

# The source_ref prefix reserved for organize's summary rows.
SUMMARY_REF = "organize:"
TOPIC_REF = SUMMARY_REF + "topic:"
# The episode bound: the most recent live memories organize reads, so a run costs the
# same however large the store grows.
WORKING_SET = 256
# Fewer memories than this sharing a term are those memories, not a topic.
MIN_TOPIC = 3
# A term in more than this share of a group of BROAD_AFTER memories or more says what
# the whole project is about ("api" in an API's repository), not a topic within it.
MAX_SHARE = 0.5
BROAD_AFTER = 10
# Content words shorter than this are rarely a subject ("bug", "fix" are verbs here).
MIN_WORD = 4
Group = tuple[str, Visibility, str | None]
_WORD = re.compile(r"[^\W\d_]+")
# Endings where a final s is no plural: class, redis, status.
_NOT_PLURAL = ("ss", "is", "us")


class Topic(msgspec.Struct, frozen=True):
    """Memories that share a term, and the summary row organize keeps for them."""

    key: str  # the summary row's source_ref: one row per key, refreshed in place
    label: str
    scope: str
    visibility: Visibility
    owner: str | None
    members: tuple[str, ...]  # newest first
    title: str
    summary: str
    taint: Taint  # the worst of its members': a summary is no more trusted than its sources


class TopicPlan(msgspec.Struct, frozen=True):
    """A topic and what happens to its summary row."""

    topic: Topic
    action: str  # create | update | unchanged
    summary_id: str | None  # the row refreshed or left as it is; None: a new one


def is_summary_row(record: Record) -> bool:
    return (record.source_ref or "").startswith(SUMMARY_REF)


def after(records: Sequence[Record], plan: Plan) -> list[Record]:
    """The working set as `plan` leaves it: absorbed memories gone, keepers grown."""
    gone = {a.id for m in plan.merges for a in m.absorbed}
    grown = {m.keeper: m for m in plan.merges}
    return [
        replace(r, body=grown[r.id].body, tags=grown[r.id].tags) if r.id in grown else r
        for r in records
        if r.id not in gone
    ]


def terms(text: str, tags: Iterable[str] = ()) -> dict[str, str]:
    """{key: as written} of what a text is about: the entities it names ("e:" keys),
    then its content words ("w:" keys: casefolded, a plural -s dropped)."""
    out = {f"e:{m.alias}": m.name for m in extract(text, tags)}
    for match in _WORD.finditer(text):
        word = match.group().casefold()
        if len(word) >= MIN_WORD and word.isalpha() and word not in STOPWORDS:
            stem = word[:-1] if word.endswith("s") and not word.endswith(_NOT_PLURAL) else word
            out.setdefault(f"w:{stem}", match.group())
    return out


def topics(records: Sequence[Record]) -> tuple[Topic, ...]:
    """The topics of a working set (newest first within it), group by group."""
    groups: dict[Group, list[Record]] = {}
    for record in records:
        if record.kind is Kind.SUMMARY:  # see the module docstring
            continue
        groups.setdefault((record.scope, record.visibility, record.owner), []).append(record)
    out: list[Topic] = []
    for group, members in sorted(groups.items(), key=lambda item: _group_order(item[0])):
        out.extend(_topics_of(group, members))
    return tuple(out)


def _group_order(group: Group) -> tuple[str, str, str]:
    return (group[0], group[1].value, group[2] or "")


def _topics_of(group: Group, members: list[Record]) -> list[Topic]:
    about = {r.id: terms(document_text(r), r.tags) for r in members}
    left, out = list(members), []
    while len(left) >= MIN_TOPIC:
        best = _best_term(left, about, len(members))
        if best is None:
            break
        chosen = [r for r in left if best in about[r.id]]
        out.append(_topic(group, best, _label(best, chosen, about), chosen))
        left = [r for r in left if best not in about[r.id]]
    return out


def _best_term(left: list[Record], about: Mapping[str, dict[str, str]], size: int) -> str | None:
    """The term most of `left` share (entities before words on a tie, then by name),
    if at least MIN_TOPIC do and it is not too broad."""
    counts: dict[str, int] = {}
    for record in left:
        for key in about[record.id]:
            counts[key] = counts.get(key, 0) + 1
    broad = math.floor(MAX_SHARE * size) if size >= BROAD_AFTER else size
    fitting = [k for k, n in counts.items() if MIN_TOPIC <= n <= broad]
    if not fitting:
        return None
    return min(fitting, key=lambda k: (-counts[k], not k.startswith("e:"), k))


def _label(key: str, chosen: list[Record], about: Mapping[str, dict[str, str]]) -> str:
    """The term as its members most often write it (the newest first on a tie)."""
    return Counter(about[r.id][key] for r in chosen).most_common(1)[0][0]


def _topic(group: Group, key: str, label: str, chosen: list[Record]) -> Topic:
    scope, visibility, owner = group
    reader = owner if visibility is Visibility.PRIVATE and owner else "public"
    summary = summarize([(r.id, document_text(r)) for r in chosen])
    lines = [f"- {s.text}" for s in summary.sentences]
    body = "\n".join([f"{len(chosen)} memories on {label}:", *lines])
    return Topic(
        key=f"{TOPIC_REF}{scope}:{reader}:{key}",
        label=label,
        scope=scope,
        visibility=visibility,
        owner=owner,
        members=tuple(r.id for r in chosen),
        title=f"Topic: {label}",
        summary=body,
        taint=worst_taint(*(r.taint for r in chosen)),
    )
