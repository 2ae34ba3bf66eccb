"""Failure reflection at Stop: a tool call that failed and then, later in the same
stretch of the session, succeeded again is where a lesson was learned (what fixed it).
Pure: transcript lines in, at most one request to the agent out.

Only test, compile and lint runs count (a lesson grounded in their signal). A failure
that was never resolved is left alone (the agent is still on it, or gave
up: either way there is no fix to write down), and so is a stretch without failures:
asking on every Stop would teach the agent to ignore the request. A call is named by
its program and first subcommand (a shell command) or its tool and file; its result
failed when the host marked it an error (Claude Code's `is_error`) or its exit code
was not 0 (Codex's function call output). Each stretch of transcript is read once
(the hook keeps a cursor), a Stop the host is already continuing for a hook asks
nothing, and a session is asked at most once.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

import msgspec

from memlane.hooks import tool, transcript
from memlane.model import Signal

# Programs whose failure is a test, compile or lint signal (the lesson's grounding).
SIGNALS = {
    Signal.TEST: frozenset(
        "pytest jest vitest mocha rspec unittest tox nox playwright phpunit".split()
    ),
    Signal.COMPILE: frozenset(
        "tsc gcc g++ clang cargo go javac mvn gradle make cmake rustc dotnet".split()
    ),
    Signal.LINT: frozenset(
        "ruff eslint mypy flake8 pylint black prettier shellcheck golangci-lint biome".split()
    ),
}
# At most this many fixes named in one request: the agent writes one lesson per idea.
MAX_NAMED = 3


class Call(msgspec.Struct, frozen=True):
    """A tool call and how it ended."""

    what: str  # "pytest", "npm install", "Edit settings.py"
    program: str | None  # a shell command's program
    failed: bool


class Fix(msgspec.Struct, frozen=True):
    """A call that failed and later succeeded: what to reflect on."""

    what: str
    signal: Signal


def calls(lines: Iterable[str]) -> list[Call]:
    """The tool calls in transcript lines (either format) whose result is among them,
    in the order their results came."""
    asked: dict[str, tuple[str, str | None]] = {}
    done: list[Call] = []
    for line in lines:
        for event in transcript.tool_events(line):
            if event.name is not None:
                asked[event.key] = _named(event.name, event.given)
            elif event.key in asked:
                what, program = asked.pop(event.key)
                done.append(Call(what, program, event.failed))
    return done


def fixes(done: Iterable[Call]) -> list[Fix]:
    """Each test, compile or lint run that failed and was later run again with success
    (the same `what`), once, in the order they were fixed. Other retries (a typo in a
    path, an edit that missed, a server polled until it answers) teach nothing that
    lasts."""
    failing: set[str] = set()
    found: dict[str, Fix] = {}
    for call in done:
        signal = _signal(call.program)
        if signal is Signal.NONE:
            continue
        if call.failed:
            failing.add(call.what)
        elif call.what in failing and call.what not in found:
            found[call.what] = Fix(call.what, signal)
    return list(found.values())


def request(
    found: list[Fix], command: str = "memlane", session_id: str | None = None
) -> str | None:
    """What the Stop hook asks of the agent (None: nothing to ask)."""
    if not found:
        return None
    named = ", ".join(f"`{f.what}`" for f in found[:MAX_NAMED])
    signal = found[0].signal.value
    session = f" --session-id {shlex.quote(session_id)}" if session_id else ""
    return (
        f"memlane: {named} failed and then succeeded in this session. If what fixed it "
        "will matter again (a cause that is not obvious, a step that is easy to forget), "
        f"save it as one lesson: `{command} add --kind lesson --signal {signal}{session} "
        '"<what went wrong, why, and what fixed it>"`. If not, stop without doing anything.'
    )


def _signal(program: str | None) -> Signal:
    for signal, programs in SIGNALS.items():
        if program in programs:
            return signal
    return Signal.NONE


def _named(name: Any, given: Mapping[str, Any]) -> tuple[str, str | None]:
    """A call's name for the request, and its program when it runs one."""
    tool_name = str(name or "tool")
    about = tool.subject(tool_name, given)
    if about is not None and about.programs:
        return about.programs[0], about.programs[0].split()[0]
    if about is not None and about.files:
        return f"{tool_name} {min(about.files)}", None
    path = given.get("file_path")
    return (f"{tool_name} {PurePosixPath(str(path)).name}" if path else tool_name), None
