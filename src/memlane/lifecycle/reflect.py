"""Reflection: memories turned into insights, and the curated pack kept consolidated.
Pure: which memories a run reads, the prompt, the schema its answer must follow, and
the deterministic findings a run without a model reports.

- A watermark per scope (the newest memory reflected on: its creation time and id)
  makes each memory reflected on once; insights themselves are never reflected on, so
  reflection does not feed on itself.
- A novelty gate skips a run while fewer than `min_new` memories are new.
- Batches are taken oldest first, `batch_size` at a time.
- The model answers one JSON object: 3-5 insights, each naming the memories it draws
  on, and operations on the curated pack (add, rewrite, merge, retire), each naming the
  memories it consolidates and why. Any other answer is malformed (lifecycle.llm).
- Without a model: clusters of alike memories, those whose recall has decayed (due for
  review), and contradicting pairs: what a person reflecting would look at first.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Annotated, Literal

import msgspec

from memlane.errors import Malformed
from memlane.model import Kind, Record

WATERMARK_META = "reflect_watermark"
PROPOSALS_META = "reflect_proposals"
MIN_NEW = 3  # the novelty gate: fewer new memories than this say too little to reflect on
BATCH_SIZE = 50  # memories one run reads at most
MAX_INSIGHTS = 5
MAX_OPS = 10
# What reflection writes: insights, tagged so they are never reflected on again.
REFLECTION_TAG = "reflection"
# A memory an `add` puts in the pack is important enough to be packed.
ADDED_IMPORTANCE = 8
# Texts longer than this are cut in the prompt (the memory is still named by its id).
PROMPT_CHARS = 600

OpName = Literal["add", "rewrite", "merge", "retire"]
MemoryId = Annotated[str, msgspec.Meta(pattern=r"^m-[0-9a-z]+$")]
Text = Annotated[str, msgspec.Meta(min_length=1, max_length=4000)]
Title = Annotated[str, msgspec.Meta(max_length=200)]


class Insight(msgspec.Struct, frozen=True):
    content: Text
    sources: Annotated[list[MemoryId], msgspec.Meta(min_length=1, max_length=50)]
    title: Title | None = None


class Op(msgspec.Struct, frozen=True):
    """An operation on the curated pack: `ids` are the memories it consolidates."""

    op: OpName
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=400)]
    ids: Annotated[list[MemoryId], msgspec.Meta(max_length=20)] = []
    content: Text | None = None
    title: Title | None = None

    def __post_init__(self) -> None:
        wanted = {"add": (0, True), "rewrite": (1, True), "merge": (2, True), "retire": (1, False)}
        least, needs_content = wanted[self.op]
        if len(self.ids) < least:
            raise ValueError(f"{self.op} names at least {least} memories")
        if self.op == "rewrite" and len(self.ids) != 1:
            raise ValueError("rewrite names exactly one memory")
        if needs_content != (self.content is not None and bool(self.content.strip())):
            raise ValueError(f"{self.op} {'needs' if needs_content else 'takes no'} content")


class Answer(msgspec.Struct, frozen=True):
    insights: Annotated[list[Insight], msgspec.Meta(max_length=MAX_INSIGHTS)]
    ops: Annotated[list[Op], msgspec.Meta(max_length=MAX_OPS)] = []


class Proposal(msgspec.Struct, frozen=True):
    """A pack operation waiting for approval, with the pack's diff it would make."""

    id: str
    op: OpName
    ids: tuple[str, ...]
    reason: str
    content: str | None
    title: str | None
    diff: str
    proposed_at: datetime
    private: bool = False  # its model read private memories: what it writes stays private


class Findings(msgspec.Struct, frozen=True):
    """What a run without a model finds among the memories it would reflect on."""

    clusters: tuple[tuple[str, ...], ...]  # alike memories, the best keeper first
    stale: tuple[tuple[str, float], ...]  # due for review, with their recall probability
    contradictions: tuple[tuple[str, str], ...]


Mark = tuple[datetime, str]  # a watermark: creation time and id of a memory


def mark_of(record: Record) -> Mark:
    return (record.created_at, record.id)


def encode_mark(mark: Mark) -> str:
    return json.dumps([mark[0].isoformat(), mark[1]])


def decode_mark(text: str | None) -> Mark | None:
    if not text:
        return None
    try:
        at, memory_id = json.loads(text)
        return (datetime.fromisoformat(at), str(memory_id))
    except (ValueError, TypeError):
        return None


def reflectable(record: Record) -> bool:
    """Whether reflection reads a memory: not an insight (its own output) nor one of
    its rows."""
    return record.kind is not Kind.INSIGHT and REFLECTION_TAG not in record.tags


def unreflected(
    records: Iterable[Record], watermark: Mark | None, since: datetime | None = None
) -> list[Record]:
    """The memories not reflected on yet, oldest first: after the watermark, or without
    one, created since `since` (the bootstrap window; None: all)."""
    out = [
        r
        for r in records
        if reflectable(r)
        and (mark_of(r) > watermark if watermark else since is None or r.created_at >= since)
    ]
    return sorted(out, key=mark_of)


INSTRUCTION = """\
You reflect on an agent's long-term memories. Below are memories not reflected on yet,
then the curated pack (the memories loaded into every session). Answer with one JSON
object and nothing else:
{"insights": [{"content": "...", "title": "...", "sources": ["m-..."]}],
 "ops": [{"op": "add|rewrite|merge|retire", "ids": ["m-..."], "content": "...",
          "title": "...", "reason": "..."}]}
insights: 3 to 5 patterns, lessons or conclusions that no single memory states, each
naming (sources) the new memories it draws on. ops: changes that keep the pack short
and true: add (a new memory worth loading every session; ids: what it consolidates,
may be empty), rewrite (one memory's better content), merge (two or more into one
content), retire (memories no longer worth keeping; no content). Every op names its
memories by id and gives a reason. Propose no op rather than a doubtful one. Never
copy secrets.

"""


def _line(record: Record) -> str:
    body = " ".join(record.body.split())
    body = body if len(body) <= PROMPT_CHARS else body[: PROMPT_CHARS - 1] + "…"
    return f"#{record.id} [{record.kind.value}] {record.title}: {body}"


def prompt(batch: Sequence[Record], packed: Sequence[Record]) -> str:
    return (
        INSTRUCTION
        + "New memories:\n"
        + "\n".join(_line(r) for r in batch)
        + "\n\nThe curated pack now:\n"
        + ("\n".join(_line(r) for r in packed) or "(empty)")
        + "\n"
    )


def parse(text: str, batch_ids: Iterable[str], known_ids: Iterable[str]) -> Answer:
    """The answer, checked: the schema, and every id one the prompt showed (an
    insight's sources among the new memories)."""
    body = "\n".join(line for line in text.strip().splitlines() if not line.startswith("```"))
    try:
        answer = msgspec.json.decode(body.strip(), type=Answer)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise Malformed(str(exc)) from None
    new, shown = set(batch_ids), set(known_ids) | set(batch_ids)
    for i, insight in enumerate(answer.insights):
        if strange := [s for s in insight.sources if s not in new]:
            raise Malformed(f"insight {i + 1} names memories not among the new: {strange}")
    for i, op in enumerate(answer.ops):
        if strange := [s for s in op.ids if s not in shown]:
            raise Malformed(f"op {i + 1} names memories not shown: {strange}")
    return answer


def pack_after(records: Sequence[Record], op: Op | Proposal, now: datetime) -> list[Record]:
    """The memories a pack is drawn from, as they would be after `op`: the ones it
    merges or retires gone, a rewritten one's text replaced, an added or merged one new
    (modelled on the first memory it names, or on any, with the pack's importance; an
    add keeps what it names, as its sources)."""
    named = set(op.ids)
    template = next((r for r in records if r.id in named), records[0] if records else None)
    if op.op == "rewrite":
        return [
            msgspec.structs.replace(r, body=op.content or r.body, title=op.title or r.title)
            if r.id in named
            else r
            for r in records
        ]
    kept = records if op.op == "add" else [r for r in records if r.id not in named]
    if op.op == "retire" or template is None:
        return list(kept)
    content = op.content or ""
    made = msgspec.structs.replace(
        template,
        id="(new)",
        title=op.title or content.split(".")[0][:80],
        body=content,
        kind=Kind.FACT if op.op == "add" else template.kind,
        category=Kind.FACT.value if op.op == "add" else template.category,
        importance=max([ADDED_IMPORTANCE, *(r.importance for r in records if r.id in named)]),
        created_at=now,
        updated_at=now,
        tags=(),
        retrieval_count=0,
        surfaced_count=0,
    )
    return [*kept, made]


def diff(before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), "pack before", "pack after", lineterm="", n=1
    )
    return "\n".join(lines) or "(the pack would not change within its budget)"


def contradictions(
    ids: Iterable[str], links: Mapping[str, Iterable[str]]
) -> tuple[tuple[str, str], ...]:
    """The pairs among `ids` a contradicts link joins, each once, in id order."""
    chosen = set(ids)
    pairs = {
        tuple(sorted((a, b))) for a in chosen for b in links.get(a, ()) if b in chosen and a != b
    }
    return tuple(sorted((a, b) for a, b in pairs))
