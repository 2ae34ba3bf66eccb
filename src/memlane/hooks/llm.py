"""Capture with a model: `MEMLANE_LLM_CMD` (asked through lifecycle.llm's Model, under
its budget) turns a transcript into typed memories.

Its stdin is an instruction followed by a piece of the transcript; its stdout is one
JSON object per line (a ``` fence around them is allowed): {"kind", "content",
"title"?, "importance"?, "tags"?}, checked against `Proposal`. An answer with any other
line is malformed, asked again once, then skipped whole and reported.

The transcript is sent oldest piece first; when the budget is spent, or a run fails or
times out, the capture stops and says why (`breach`). The turns never sent, and those
of a piece whose answers were malformed, are returned, so the caller reads them another
way. Whatever the model returns is a proposal: it goes through the write policy like
any other write.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Literal

import msgspec

from memlane.errors import Malformed as Malformed
from memlane.hooks.transcript import Turn
from memlane.lifecycle.llm import NESTED_ENV as NESTED_ENV
from memlane.lifecycle.llm import Budget as Budget
from memlane.lifecycle.llm import Model, Runner, Spent
from memlane.model import Predicate
from memlane.retrieve.budget import CHARS_PER_TOKEN, estimate_tokens

# Kinds a captured memory may have; an answer with any other is malformed.
CapturedKind = Literal[
    "fact", "preference", "decision", "procedure", "lesson", "convention", "constraint"
]
# What a proposal without an importance gets: a little more than an unmarked note (5):
# someone said it was worth keeping.
PROPOSED_IMPORTANCE = 6
# Transcript tokens in one run: large enough for a stretch of conversation, small
# enough for a small, fast model's context.
CHUNK_TOKENS = 8000
# At most this many memories from one run, so a runaway answer cannot flood the store.
MAX_ITEMS_PER_CALL = 20
INSTRUCTION = """\
You extract durable memories from a conversation between a person and a coding agent.
Print one JSON object per line (JSON Lines) and nothing else, one for each decision,
preference, convention, correction of the agent, procedure, bug fixed or lasting fact
that would help in a future session. Fields: "kind" (one of decision, preference,
convention, lesson, procedure, fact, constraint; a correction or a bug fixed is a
lesson), "content" (one or two self-contained sentences that name the tool, file or
project they are about), "importance" (1-10), and optionally "title" (a few words),
"tags" (short words) and "entities" (the names of the services, tools, files or people
it is about). A relation between two named things is a line of kind "relation" with
"subject", "predicate" and "object" (e.g. "invoicer", "depends on", "tax service");
the predicate is best one of {predicates}, else a few words of your own.
Leave out small talk, one-off steps of the task at hand, what the code already says,
and every secret (keys, tokens, passwords). Print nothing if nothing is durable.

Conversation:
""".replace("{predicates}", ", ".join(p.value for p in Predicate))


SUMMARY_INSTRUCTION = """\
Summarise a coding session for whoever picks up the work later, from the memories it
left. Write at most five plain sentences: what was done, what was decided and why, and
what is still open. No lists, no preamble, no secrets (keys, tokens, passwords).

Memories of the session:
"""
# An episode summary is a paragraph: a longer answer is not one.
MAX_SUMMARY_CHARS = 1500


Tag = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
# An entity name: short enough that "entity:NAME" stays a tag (64 characters at most).
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=56)]


class Proposal(msgspec.Struct, frozen=True):
    """One memory a model proposes: the schema of each line of its answer."""

    kind: CapturedKind | Literal["relation"]
    content: Annotated[str, msgspec.Meta(max_length=4000)] = ""
    title: Annotated[str, msgspec.Meta(max_length=200)] | None = None
    importance: Annotated[int, msgspec.Meta(ge=1, le=10)] = PROPOSED_IMPORTANCE
    tags: Annotated[list[Tag], msgspec.Meta(max_length=8)] = []
    entities: Annotated[list[Name], msgspec.Meta(max_length=8)] = []
    # A relation's three parts (kind "relation" only).
    subject: Name | None = None
    predicate: Annotated[str, msgspec.Meta(min_length=1, max_length=60)] | None = None
    object: Name | None = None

    def __post_init__(self) -> None:
        parts = (self.subject, self.predicate, self.object)
        if self.kind == "relation":
            if not all(p and p.strip() for p in parts):
                raise ValueError("a relation needs subject, predicate and object")
        elif any(p is not None for p in parts):
            raise ValueError("only a relation has subject, predicate and object")
        elif not self.content.strip():
            raise ValueError("content is empty")

    @property
    def text(self) -> str:
        """The memory's content: a relation's parts as a sentence (and its content)."""
        if self.kind != "relation":
            return self.content.strip()
        said = f"{self.subject} {self.predicate} {self.object}."
        return f"{said} {self.content.strip()}".strip()

    @property
    def about(self) -> list[str]:
        """The entities it names: a relation's two ends, else those given."""
        ends = [self.subject, self.object] if self.kind == "relation" else self.entities
        return [e.strip() for e in ends if e and e.strip()]


def parse_proposals(answer: str) -> list[Proposal]:
    """Every line of an answer as a Proposal (blank lines and ``` fences aside); the
    first line that is not one makes the whole answer Malformed."""
    found: list[Proposal] = []
    for number, line in enumerate(answer.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("```"):
            continue
        try:
            found.append(msgspec.json.decode(line, type=Proposal))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise Malformed(f"line {number}: {exc} in {line[:80]!r}") from None
    if len(found) > MAX_ITEMS_PER_CALL:
        raise Malformed(f"{len(found)} memories; at most {MAX_ITEMS_PER_CALL} in one answer")
    return found


class LlmRun(msgspec.Struct, frozen=True):
    """What a capture with the command produced and spent."""

    items: tuple[Proposal, ...] = ()
    calls: int = 0
    tokens: int = 0
    left: tuple[Turn, ...] = ()  # turns never sent, or whose answers were malformed
    breach: str | None = None  # why it stopped early: calls, tokens, timeout, failed ...
    malformed: tuple[str, ...] = ()  # why each skipped answer was rejected


def render(turns: Sequence[Turn], max_tokens: int) -> str:
    """Turns as `ROLE: text` lines; a turn longer than `max_tokens` is cut to fit."""
    limit = max_tokens * CHARS_PER_TOKEN
    return "\n\n".join(f"{t.role.upper()}: {t.text}"[:limit] for t in turns)


def chunks(turns: Sequence[Turn], size: int = CHUNK_TOKENS) -> list[tuple[Turn, ...]]:
    """Consecutive turns grouped so each group renders within `size` tokens (a turn
    larger than that is a group of its own, cut by `render`)."""
    groups: list[tuple[Turn, ...]] = []
    current: list[Turn] = []
    for turn in turns:
        if current and estimate_tokens(render([*current, turn], size)) > size:
            groups.append(tuple(current))
            current = []
        current.append(turn)
    if current:
        groups.append(tuple(current))
    return groups


def run(
    command: str,
    turns: Sequence[Turn],
    budget: Budget,
    *,
    runner: Runner = subprocess.run,
    clock: Callable[[], float] = time.monotonic,
    environ: Mapping[str, str] | None = None,
) -> LlmRun:
    """Send the turns to `command` piece by piece within `budget` (module docstring)."""
    model = Model(command, budget, runner=runner, clock=clock, environ=environ)
    pieces = chunks(turns, min(CHUNK_TOKENS, max(1, budget.tokens)))
    items: list[Proposal] = []
    unread: list[Turn] = []
    breach = None
    for index, piece in enumerate(pieces):
        try:
            found = model.ask(INSTRUCTION + render(piece, CHUNK_TOKENS), parse_proposals)
        except Spent as exc:  # this piece and the rest are left
            breach = str(exc)
            unread += [t for p in pieces[index:] for t in p]
            break
        if found is None:
            unread += piece
        else:
            items += found
    return LlmRun(
        tuple(items), model.calls, model.tokens, tuple(unread), breach, tuple(model.malformed)
    )


def parse_summary(answer: str) -> str:
    """A summary answer: its text without a ``` fence; Malformed when empty or longer
    than a paragraph."""
    text = "\n".join(
        line for line in answer.strip().splitlines() if not line.strip().startswith("```")
    ).strip()
    if not text:
        raise Malformed("an empty summary")
    if len(text) > MAX_SUMMARY_CHARS:
        raise Malformed(f"a summary of {len(text)} characters; at most {MAX_SUMMARY_CHARS}")
    return text


def summarizer(
    command: str,
    budget: Budget,
    *,
    runner: Runner = subprocess.run,
    environ: Mapping[str, str] | None = None,
) -> Callable[[Sequence[tuple[str, str]]], str | None]:
    """A session's summary through `command` (one call under `budget`, the memories cut
    to one piece): None when it fails, times out or answers malformed twice, so the
    caller writes the extractive one."""

    def summarize(texts: Sequence[tuple[str, str]]) -> str | None:
        model = Model(command, budget, runner=runner, environ=environ)
        body = "\n".join(f"- {text}" for _, text in texts)[: CHUNK_TOKENS * CHARS_PER_TOKEN]
        try:
            return model.ask(SUMMARY_INSTRUCTION + body, parse_summary)
        except Spent:
            return None

    return summarize
