"""upkeep: what is due (backup, sweep, organize), run now; the session-start hook starts
it in the background (hooks.upkeep)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import click

from memlane.cli.backup import settings_dir
from memlane.cli.common import emit_json, in_section, json_option, memory, note, state
from memlane.cli.progress import progress_steps
from memlane.hooks import upkeep
from memlane.model import Cadence


@in_section("hooks")
@click.command("upkeep")
@json_option
def upkeep_cmd(as_json: bool) -> None:
    """Run the upkeep that is due, each step only when due: `backup --if-due` (a snapshot
    when the newest is older than MEMLANE_BACKUP_INTERVAL_HOURS), `sweep` (once a day,
    with MEMLANE_SWEEP_RETENTION_DAYS), then `organize` under its cadence gate, and only
    when the store is idle (nothing written for 10 minutes).

    The session-start hook starts it in the background (detached; the hook answers at
    once) at most once an hour, unless MEMLANE_HOOK_UPKEEP is 0. One upkeep runs at a time
    (an OS lock on `upkeep.lock` in MEMLANE_HOOK_DIR); a second one does nothing and says
    so. A failed step is reported and the next one runs. Each run logs an `upkeep` line to
    `hooks.log`. On a store file that does not exist it does nothing and says so.
    --json: `busy` and `steps` (backup, sweep, organize: what each did). On a terminal the
    step running shows on stderr."""
    if (absent := state().missing_store()) is not None:  # nothing to back up, sweep or organize
        note(f"upkeep: no store at {absent}: nothing to do")
        if as_json:
            emit_json({"busy": False, "steps": {}})
        return
    s = state().settings
    options = upkeep.UpkeepOptions(
        hook_dir=Path(s["hook_dir"]).expanduser(),
        backup_dir=settings_dir(s),
        backup_retention=s["backup_retention"],
        backup_every=timedelta(hours=s["backup_interval_hours"]),
        sweep_retention_days=s["sweep_retention_days"],
        cadence=Cadence(s["consolidate_interval_days"], s["consolidate_growth"]),
        working_set=s["organize_working_set"],
    )
    with progress_steps("upkeep", as_json, leave=False) as starting:
        report = upkeep.run(memory, options, datetime.now(UTC), starting)
    if as_json:
        emit_json({"busy": report.busy, "steps": report.steps})
    elif report.busy:
        note("upkeep: another upkeep is running")
    else:
        for step, outcome in report.steps.items():
            click.echo(f"{step}: {outcome}")
