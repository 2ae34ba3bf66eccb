"""Upkeep: what is due, run one at a time, outside the agent's way.

The session-start hook starts `memlane upkeep` as a detached process (`start`) and
answers at once: the host never waits for a backup. It starts one at most once an hour
(UPKEEP_EVERY), and none while one runs. The upkeep (`run`) then does, each only when
due, in this order:

- backup --if-due: a snapshot when the newest is older than the backup interval;
- sweep: the hooks' stale files (hooks.sweep), once a day;
- organize: under its own cadence gate and lock, and only when the store is idle (no
  journal line for IDLE): sleep-time work must not churn a store in use.

One upkeep at a time: it holds an OS lock on `upkeep.lock` in the hook dir (released if
the process dies); a second one finds it held and does nothing. A step that fails is
reported and the next one still runs; nothing here can reach the hook's answer. Each run
logs one line (`event: upkeep`) to the hooks' log.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from memlane.errors import MemlaneError
from memlane.files import lock_within, open_private
from memlane.hooks import state, sweep
from memlane.model import Cadence
from memlane.timeutil import from_text, to_text

if TYPE_CHECKING:
    from memlane.memory import Memory

LOCK_NAME = "upkeep.lock"
STATE_NAME = "upkeep.json"  # when the hook last started one, when the sweep last ran
# The session-start hook starts an upkeep at most this often: backups are due daily by
# default and organize weekly, so an hour finds each soon enough and costs a process
# start in one session start of many.
UPKEEP_EVERY = timedelta(hours=1)
SWEEP_EVERY = timedelta(days=1)
# The store counts as idle once nothing was written to it for this long (a session's
# captures come in bursts minutes apart).
IDLE = timedelta(minutes=10)


class UpkeepOptions(msgspec.Struct, frozen=True):
    """What the settings say about upkeep (the interface reads them)."""

    hook_dir: Path
    backup_dir: Path | None = None  # None: backups/ beside the store
    backup_retention: int = 7
    backup_every: timedelta = timedelta(hours=24)
    sweep_retention_days: float = 14.0
    cadence: Cadence = msgspec.field(default_factory=Cadence)
    working_set: int = 256


class UpkeepReport(msgspec.Struct, frozen=True):
    """What each step did: `backup`, `sweep`, `organize` -> a short outcome."""

    steps: dict[str, str]
    busy: bool = False  # another upkeep was running: nothing done


def run(
    open_memory: Callable[[], Memory],
    options: UpkeepOptions,
    now: datetime,
    progress: Callable[[str], None] = lambda _: None,
) -> UpkeepReport:
    """Run what is due (see the module docstring), one upkeep at a time; logged.
    `progress` is told each step as it starts."""
    with _locked(options.hook_dir) as had:
        if not had:
            report = UpkeepReport({}, busy=True)
        else:
            work: dict[str, Callable[[], str]] = {
                "backup": lambda: _backup(open_memory(), options),
                "sweep": lambda: _sweep(options, now),
                "organize": lambda: _organize(open_memory(), options, now),
            }
            steps = {}
            for name, step in work.items():
                progress(name)
                steps[name] = _step(step)
            report = UpkeepReport(steps)
    state.log(options.hook_dir, {"event": "upkeep", "busy": report.busy, **report.steps})
    return report


def _step(work: Callable[[], str]) -> str:
    try:
        return work()
    except (MemlaneError, OSError, ValueError) as exc:
        return f"failed: {type(exc).__name__}: {exc}"


def _backup(mem: Memory, options: UpkeepOptions) -> str:
    report = mem.admin.backup(options.backup_dir, options.backup_retention, options.backup_every)
    return f"snapshot {report.path}" if report.path else (report.notice or "skipped")


def _sweep(options: UpkeepOptions, now: datetime) -> str:
    last = _state(options.hook_dir).get("swept")
    if last and now - from_text(last) < SWEEP_EVERY:
        return "not due"
    done = sweep.sweep(options.hook_dir, now, options.sweep_retention_days)
    _save_state(options.hook_dir, swept=to_text(now))
    return f"removed {len(done.removed)} file(s), {done.bytes} bytes"


def _organize(mem: Memory, options: UpkeepOptions, now: datetime) -> str:
    newest = mem.journal(limit=1)
    if newest and now - newest[0].at < IDLE:
        return "not idle"
    report = mem.maintenance.organize(cadence=options.cadence, working_set=options.working_set)
    if report.skipped:
        return report.notice or f"skipped ({report.skipped})"
    merged = len(report.plan.merges) if report.plan else 0
    return f"done: {merged} merge(s), {len(report.written)} summary row(s)"


# ---- starting one from the hook --------------------------------------------------------


def start(argv: Sequence[str], hook_dir: Path, now: datetime, cwd: str | None = None) -> str:
    """Start `argv` (an upkeep) detached from this process when one is due and none
    runs; what happened: started, not due, running, or failed (never raises)."""
    try:
        last = _state(hook_dir).get("started")
        if last and now - from_text(last) < UPKEEP_EVERY:
            return "not due"
        with _locked(hook_dir) as had:
            if not had:
                return "running"
        subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=cwd if cwd and Path(cwd).is_dir() else None,
            start_new_session=True,  # not in the host's process group: outlives the hook
            close_fds=True,
        )
        _save_state(hook_dir, started=to_text(now))
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return f"failed: {type(exc).__name__}: {exc}"
    return "started"


@contextlib.contextmanager
def _locked(hook_dir: Path) -> Iterator[bool]:
    """The upkeep lock, if free now (never waits)."""
    fd = open_private(hook_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    try:
        yield lock_within(fd, 0, 0)
    finally:
        os.close(fd)


def _state(hook_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((hook_dir / STATE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_state(hook_dir: Path, **changes: str) -> None:
    state.write_atomic(hook_dir / STATE_NAME, json.dumps({**_state(hook_dir), **changes}))
