"""The model adapter: `MEMLANE_LLM_CMD` asked under a budget it cannot exceed, for
answers that must follow a schema.

The command is split like a shell line and run without a shell: the prompt on its
stdin, the answer on its stdout. The caller's `parse` checks an answer against its
schema and raises Malformed (saying where and why) when it does not follow it; the
command is then asked once more, told what was wrong, and a second malformed answer is
given up (`ask` returns None, the error kept in `malformed`): nothing half-parsed is
ever used.

A Budget is per run of a job: at most `calls` runs of the command (a retry is one),
`tokens` sent and received in all (4 characters a token, as recall counts), `seconds`
spent in all (each run's timeout is what is left). Before a run that would break it,
or after a run that fails or times out, `ask` raises Spent with the reason, and the
job stops cleanly, saying what it did not process.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

import msgspec

from memlane.errors import Malformed
from memlane.retrieve.budget import estimate_tokens

# A model's answer is read up to this size, so a runaway answer cannot flood anything.
MAX_OUTPUT_BYTES = 256 * 1024
# Set in the command's environment: a hook started inside it (the command may be an
# agent host itself) does nothing, so a capture never captures itself.
NESTED_ENV = "MEMLANE_IN_HOOK"
T = TypeVar("T")


RETRY = """

Your previous answer was rejected: {error}
Answer again, exactly in the format described above and nothing else.
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
            argv,
            input=prompt.encode("utf-8"),
            capture_output=True,
            timeout=seconds,
            env=dict(env),
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise Spent(f"timeout: a run outlasted the {seconds:.0f} s left") from None
    except OSError as exc:
        raise Spent(f"failed: {argv[0]}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise Spent(f"failed: {argv[0]} exited {done.returncode}")
    return bytes(done.stdout[:MAX_OUTPUT_BYTES]).decode("utf-8", "replace")
