"""Capture with a model: `MEMLANE_LLM_CMD` turns a transcript into typed memories,
under a budget it cannot exceed.

The command is split like a shell line and run without a shell. Its stdin is an
instruction followed by a piece of the transcript; its stdout is one JSON object per
line: {"kind", "content", "title"?, "importance"?, "tags"?}. Lines that are not such
an object are skipped and counted.

The budget is per capture: at most `calls` runs, `tokens` transcript tokens sent in
all (4 characters a token, as recall counts), `seconds` spent in all. The transcript
is sent oldest piece first; before a piece that would break the budget, or after a run
that fails or times out, the capture stops and says why (`breach`). The turns never
sent are returned, so the caller can read them another way. Whatever the model
returns is a proposal: it goes through the write policy like any other write.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from memlane.hooks.transcript import Turn
from memlane.retrieve.budget import CHARS_PER_TOKEN, estimate_tokens

# Kinds a captured memory may have; anything else a model invents is skipped.
KINDS = frozenset(
    {"fact", "preference", "decision", "procedure", "lesson", "convention", "constraint"}
)
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


class Budget(msgspec.Struct, frozen=True):
    calls: int
    tokens: int
    seconds: float


class LlmRun(msgspec.Struct, frozen=True):
    """What a capture with the command produced and spent."""

    items: tuple[dict[str, Any], ...] = ()
    calls: int = 0
    tokens: int = 0
    left: tuple[Turn, ...] = ()  # turns never sent to the command
    breach: str | None = None  # why it stopped early: calls, tokens, timeout, failed ...
    skipped_lines: int = 0


Runner = Callable[..., "subprocess.CompletedProcess[bytes]"]


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


def parse_items(stdout: str) -> tuple[list[dict[str, Any]], int]:
    """The memory objects of an answer and how many non-empty lines were not one."""
    items: list[dict[str, Any]] = []
    skipped = 0
    for line in stdout.splitlines():
        line = line.strip()
        if not line or line.startswith("```"):
            continue
        try:
            item = json.loads(line)
        except ValueError:
            skipped += 1
            continue
        if _valid(item):
            items.append(item)
        else:
            skipped += 1
    return items[:MAX_ITEMS_PER_CALL], skipped + max(0, len(items) - MAX_ITEMS_PER_CALL)


def _valid(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and item.get("kind") in KINDS
        and isinstance(item.get("content"), str)
        and bool(item["content"].strip())
    )


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
    argv = shlex.split(command)
    if not argv:
        return LlmRun(left=tuple(turns), breach="no command")
    env = {**(os.environ if environ is None else environ), NESTED_ENV: "1"}
    started = clock()
    pieces = chunks(turns, min(CHUNK_TOKENS, max(1, budget.tokens)))
    items: list[dict[str, Any]] = []
    calls = tokens = skipped = 0
    for index, piece in enumerate(pieces):
        text = render(piece, CHUNK_TOKENS)
        cost = estimate_tokens(text)
        remaining = budget.seconds - (clock() - started)
        breach = _breach(calls, tokens + cost, remaining, budget)
        if breach is None:
            answer, breach = _call(runner, argv, INSTRUCTION + text, remaining, env)
            calls, tokens = calls + 1, tokens + cost
            if answer is not None:
                found, bad = parse_items(answer)
                items += found
                skipped += bad
        if breach is not None:  # this piece was not sent, or its run failed: both left
            rest = tuple(t for p in pieces[index:] for t in p)
            return LlmRun(tuple(items), calls, tokens, rest, breach, skipped)
    return LlmRun(tuple(items), calls, tokens, (), None, skipped)


def _breach(calls: int, tokens: int, remaining: float, budget: Budget) -> str | None:
    """Why the next run may not start, or None."""
    if calls >= budget.calls:
        return f"calls: {budget.calls} runs used"
    if tokens > budget.tokens:
        return f"tokens: the next piece would send {tokens} > {budget.tokens}"
    if remaining <= 0:
        return f"timeout: {budget.seconds:g} s spent"
    return None


def _call(
    runner: Runner, argv: list[str], prompt: str, seconds: float, env: Mapping[str, str]
) -> tuple[str | None, str | None]:
    """One run: its stdout (None when it failed) and the breach it caused, if any."""
    try:
        done = runner(
            argv, input=prompt.encode("utf-8"), capture_output=True, timeout=seconds,
            env=dict(env), check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None, f"timeout: a run outlasted the {seconds:.0f} s left"
    except OSError as exc:
        return None, f"failed: {argv[0]}: {exc.strerror or exc}"
    if done.returncode != 0:
        return None, f"failed: {argv[0]} exited {done.returncode}"
    return done.stdout[:MAX_OUTPUT_BYTES].decode("utf-8", "replace"), None
