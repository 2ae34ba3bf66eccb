"""Capture with a model: `MEMLANE_LLM_CMD` turns a transcript into typed memories,
under a budget it cannot exceed, in answers it must get exactly right.

The command is split like a shell line and run without a shell. Its stdin is an
instruction followed by a piece of the transcript; its stdout is one JSON object per
line (a ``` fence around them is allowed): {"kind", "content", "title"?,
"importance"?, "tags"?}, checked against `Proposal`. An answer with any other line is
malformed: the command is asked once more, told what was wrong; a second malformed
answer is skipped whole and reported, so nothing half-parsed is ever stored.

The budget is per run: at most `calls` runs of the command (a retry is one), `tokens`
tokens sent and received in all (4 characters a token, as recall counts), `seconds`
spent in all (each run's timeout is what is left). The transcript is sent oldest piece
first; before a piece that would break the budget, or after a run that fails or times
out, the capture stops and says why (`breach`). The turns never sent, and those of a
piece whose answers were malformed, are returned, so the caller reads them another way.
Whatever the model returns is a proposal: it goes through the write policy like any
other write.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Literal, TypeVar

import msgspec

from memlane.hooks.transcript import Turn
from memlane.retrieve.budget import CHARS_PER_TOKEN, estimate_tokens

# Kinds a captured memory may have; an answer with any other is malformed.
CapturedKind = Literal[
    "fact", "preference", "decision", "procedure", "lesson", "convention", "constraint"
]
# What a proposal without an importance gets: a little more than an unmarked note (5):
# someone said it was worth keeping.
PROPOSED_IMPORTANCE = 6
T = TypeVar("T")
# Transcript tokens in one run: large enough for a stretch of conversation, small
# enough for a small, fast model's context.
CHUNK_TOKENS = 8000
# A model's answer is read up to this size and at most this many memories from a run,
# so a runaway answer cannot flood the store.
MAX_OUTPUT_BYTES = 256 * 1024
MAX_ITEMS_PER_CALL = 20
# Set in the command's environment: a hook started inside it (the command may be an
# agent host itself) does nothing, so a capture never captures itself.
NESTED_ENV = "MEMLANE_IN_HOOK"
INSTRUCTION = """\
You extract durable memories from a conversation between a person and a coding agent.
Print one JSON object per line (JSON Lines) and nothing else, one for each decision,
preference, convention, correction of the agent, procedure or lasting fact that would
help in a future session. Fields: "kind" (one of decision, preference, convention,
lesson, procedure, fact, constraint; a correction is a lesson), "content" (one or two
self-contained sentences that name the tool, file or project they are about),
optionally "title" (a few words), "importance" (1-10) and "tags" (short words).
Leave out small talk, one-off steps of the task at hand, what the code already says,
and every secret (keys, tokens, passwords). Print nothing if nothing is durable.

Conversation:
"""


Tag = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]


class Proposal(msgspec.Struct, frozen=True):
    """One memory a model proposes: the schema of each line of its answer."""

    kind: CapturedKind
    content: Annotated[str, msgspec.Meta(max_length=4000)]
    title: Annotated[str, msgspec.Meta(max_length=200)] | None = None
    importance: Annotated[int, msgspec.Meta(ge=1, le=10)] = PROPOSED_IMPORTANCE
    tags: Annotated[list[Tag], msgspec.Meta(max_length=8)] = []

    def __post_init__(self) -> None:
        if not self.content.strip():
            raise ValueError("content is empty")


class Malformed(ValueError):
    """An answer that does not follow its schema; the message says where and why."""


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


RETRY = """

Your previous answer was rejected: {error}
Answer again: print only JSON objects, one per line, exactly as described above.
"""


class Budget(msgspec.Struct, frozen=True):
    calls: int
    tokens: int
    seconds: float


class Spent(Exception):
    """The run may not go on: its budget is spent, or the command failed or timed out."""


Runner = Callable[..., "subprocess.CompletedProcess[bytes]"]


class Model:
    """The command, asked under one budget: every answer parsed by the caller's schema,
    a malformed one asked again once with the error (module docstring)."""

    def __init__(
        self,
        command: str,
        budget: Budget,
        *,
        runner: Runner = subprocess.run,
        clock: Callable[[], float] = time.monotonic,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.argv = shlex.split(command)
        self.budget, self.runner, self.clock = budget, runner, clock
        self.env = {**(os.environ if environ is None else environ), NESTED_ENV: "1"}
        self.started = clock()
        self.calls = self.tokens = 0
        self.malformed: list[str] = []  # why each skipped answer was rejected

    def ask(self, prompt: str, parse: Callable[[str], T]) -> T | None:
        """The parsed answer to `prompt`; None when two answers were malformed (the
        second error is kept in `malformed`). Raises Spent when the run must stop."""
        try:
            return parse(self._run(prompt))
        except Malformed as exc:
            first = str(exc)
        try:
            return parse(self._run(prompt + RETRY.format(error=first)))
        except Malformed as exc:
            self.malformed.append(str(exc))
            return None

    def _run(self, prompt: str) -> str:
        if not self.argv:
            raise Spent("no command")
        cost = estimate_tokens(prompt)
        remaining = self.budget.seconds - (self.clock() - self.started)
        breach = _breach(self.calls, self.tokens + cost, remaining, self.budget)
        if breach is not None:
            raise Spent(breach)
        self.calls += 1
        self.tokens += cost
        answer = _call(self.runner, self.argv, prompt, remaining, self.env)
        self.tokens += estimate_tokens(answer)  # what it answered counts too
        return answer


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
    return LlmRun(tuple(items), model.calls, model.tokens, tuple(unread), breach,
                  tuple(model.malformed))  # fmt: skip


def _breach(calls: int, tokens: int, remaining: float, budget: Budget) -> str | None:
    """Why the next run may not start, or None."""
    if calls >= budget.calls:
        return f"calls: {budget.calls} runs used"
    if tokens > budget.tokens:
        return f"tokens: the next run would bring the total to {tokens} > {budget.tokens}"
    if remaining <= 0:
        return f"timeout: {budget.seconds:g} s spent"
    return None


def _call(
    runner: Runner, argv: list[str], prompt: str, seconds: float, env: Mapping[str, str]
) -> str:
    """One run's stdout; Spent when it failed or timed out."""
    try:
        done = runner(
            argv, input=prompt.encode("utf-8"), capture_output=True, timeout=seconds,
            env=dict(env), check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise Spent(f"timeout: a run outlasted the {seconds:.0f} s left") from None
    except OSError as exc:
        raise Spent(f"failed: {argv[0]}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise Spent(f"failed: {argv[0]} exited {done.returncode}")
    return bytes(done.stdout[:MAX_OUTPUT_BYTES]).decode("utf-8", "replace")
