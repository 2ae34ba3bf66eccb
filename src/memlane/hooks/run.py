"""One hook call, end to end, that never breaks the host.

stdin -> host.parse -> the event's handler (hooks.events) -> host.output. Whatever
goes wrong (a payload that is not the host's JSON, a store that cannot be opened, a
bug) ends in a silent answer (`{}`), exit 0, and a log line with the error in the
hooks' directory: a host must never lose a prompt or a session to its memory.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from memlane import config
from memlane.errors import Invalid, SchemaOutdated
from memlane.hooks import host, llm, state
from memlane.hooks.events import (
    Options,
    Outcome,
    capture,
    pre_tool,
    session_end,
    session_start,
    stop,
    subagent_start,
    user_prompt,
)

if TYPE_CHECKING:
    from memlane.memory import Memory

Handler = Callable[[host.Event, Callable[[], "Memory"], Options], Outcome]
HANDLERS: dict[str, Handler] = {
    host.SESSION_START: session_start,
    host.USER_PROMPT: user_prompt,
    host.PRE_TOOL: pre_tool,
    host.SUBAGENT_START: subagent_start,
    host.PRE_COMPACT: capture,
    host.STOP: stop,
    host.SESSION_END: session_end,
}


class Report(msgspec.Struct, frozen=True):
    """What one hook call did: the host's JSON, and memlane's account of it."""

    event: str
    host: str
    output: dict[str, Any]
    reason: str
    injected: tuple[str, ...] = ()
    captured: tuple[str, ...] = ()
    error: str | None = None
    details: Mapping[str, Any] = msgspec.field(default_factory=dict)
    settings_problems: tuple[str, ...] = ()  # bad settings, each run at its default

    def as_dict(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "host": self.host,
            "output": self.output,
            "reason": self.reason,
            "injected": list(self.injected),
            "captured": list(self.captured),
            "error": self.error,
            "details": dict(self.details),
            "settings_problems": list(self.settings_problems),
        }


def hint_command(db: str | None = None) -> str:
    """The command the injected hints name: `memlane` when that is this installation
    on the PATH, else this interpreter running memlane (what `install` registers, so it
    works without a PATH entry); with the store the hook was started on, if named."""
    found = shutil.which("memlane")
    here = Path(sys.executable).parent
    ours = found is not None and here in (Path(found).parent, Path(found).resolve().parent)
    named = ["memlane"] if ours else [sys.executable, "-m", "memlane"]
    return shlex.join([*named, *(["--db", db] if db else [])])


def options(settings: Mapping[str, Any], db: str | None = None) -> Options:
    """The hooks' options from the settings table (and the store named on the command
    line, which the hints name too)."""
    return Options(
        budget=settings["inject_budget"],
        hook_dir=Path(settings["hook_dir"]).expanduser(),
        llm_cmd=settings["llm_cmd"],
        llm_budget=llm.Budget(
            settings["llm_max_calls"], settings["llm_max_tokens"], settings["llm_timeout"]
        ),
        command=hint_command(db),
        capture_log=settings["capture_log"],
        upkeep=upkeep_command(db) if settings["hook_upkeep"] else (),
    )


def upkeep_command(db: str | None = None) -> tuple[str, ...]:
    """What session-start starts in the background: this interpreter running `memlane
    upkeep` on the store the hook was given (else the settings' store, from the
    environment it inherits)."""
    return (sys.executable, "-m", "memlane", *(("--db", db) if db else ()), "upkeep")


def hook_dir(settings: Mapping[str, Any] | None) -> Path:
    """Where the log goes: the setting; when the settings could not be read (that must be
    logged too), its environment variable alone, else its default."""
    if settings and settings.get("hook_dir"):
        return Path(settings["hook_dir"]).expanduser()
    setting = config.BY_NAME["hook_dir"]
    return Path(os.environ.get(setting.env) or setting.default()).expanduser()


def handle(
    name: str,
    host_name: str,
    stdin: str,
    settings: Mapping[str, Any],
    *,
    db: str | None = None,
    settings_problems: tuple[str, ...] = (),
    ignored: tuple[str, ...] = (),
) -> Report:
    """Run one hook; never raises (see the module docstring). `settings_problems`: the
    settings that were bad (the interface put their defaults in `settings`), logged;
    `ignored`: arguments the interface did not understand, logged."""
    started = time.monotonic()
    opened: list[Memory] = []
    error = trace = None
    event: host.Event | None = None
    try:
        if os.environ.get(llm.NESTED_ENV):
            outcome = Outcome("nested")  # inside MEMLANE_LLM_CMD: never capture a capture
        else:
            event = host.parse(name, host_name, stdin)
            opener = _opener(settings, db, event, opened)
            outcome = HANDLERS[name](event, opener, options(settings, db))
    except Invalid as exc:
        outcome, error = Outcome("bad-input"), f"{type(exc).__name__}: {exc}"
    except SchemaOutdated as exc:
        outcome = outdated(name, str(exc), settings, db)
    except Exception as exc:  # the promise: nothing reaches the host
        outcome, error = Outcome("error"), f"{type(exc).__name__}: {exc}"
        trace = traceback.format_exc(limit=8)
    finally:
        for memory in opened:
            _close(memory)
    report = Report(
        event=name,
        host=host_name,
        output=host.output(name, outcome.context, outcome.request) if error is None else {},
        reason=outcome.reason,
        injected=outcome.injected,
        captured=outcome.captured,
        error=error,
        details=outcome.details,
        settings_problems=settings_problems,
    )
    _log(settings, report, event, trace, started, ignored)
    return report


def outdated(name: str, why: str, settings: Mapping[str, Any], db: str | None) -> Outcome:
    """A store older than this memlane, with auto_migrate off.

    Trigger: the store needs migrating and the user chose to migrate by hand. Why: that
    is a state one command ends, not a fault: no traceback. Outcome: one log line with
    the reason; a session start tells the agent its memory waits for `memlane migrate`
    (unless the hooks are silenced)."""
    context = None
    if name == host.SESSION_START and settings["inject_budget"] > 0:
        migrate = f"{hint_command(db)} migrate"
        context = (
            f"memlane: long-term memory is unavailable until `{migrate}` runs "
            "(the store's schema is older than this memlane)."
        )
    return Outcome("schema-outdated", context, details={"why": why})


def _opener(
    settings: Mapping[str, Any], db: str | None, event: host.Event, opened: list[Memory]
) -> Callable[[], Memory]:
    """Opens the Memory on first call (a silent prompt never opens the store), in the
    project of the host's working directory."""

    def open_memory() -> Memory:
        if not opened:
            cwd = Path(event.cwd) if event.cwd and Path(event.cwd).is_dir() else None
            opened.append(config.open_memory(settings, db, cwd=cwd))
        return opened[0]

    return open_memory


def _close(memory: Memory) -> None:
    with contextlib.suppress(Exception):  # closing cannot fail a hook that answered
        memory.close()


def _log(
    settings: Mapping[str, Any],
    report: Report,
    event: host.Event | None,
    trace: str | None,
    started: float,
    ignored: tuple[str, ...] = (),
) -> None:
    entry: dict[str, Any] = {
        "event": report.event,
        "host": report.host,
        "session": event.session_id if event else None,
        "reason": report.reason,
        "ms": round((time.monotonic() - started) * 1000, 1),
    }
    for key, value in (("injected", report.injected), ("captured", report.captured)):
        if value:
            entry[key] = list(value)
    if report.details:
        entry["details"] = dict(report.details)
    if report.settings_problems:
        entry["settings"] = list(report.settings_problems)
    if report.error:
        entry["error"] = report.error
    if trace:
        entry["trace"] = trace
    if ignored:
        entry["ignored_arguments"] = list(ignored)
    state.log(hook_dir(settings), entry)
