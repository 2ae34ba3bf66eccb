"""sweep: the hooks' stale per-session files removed (hooks.sweep)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click
import msgspec

from memlane.cli.common import emit_json, in_section, json_option, note, state
from memlane.hooks.sweep import SweepReport, sweep

DAYS = click.FloatRange(min=0, min_open=True)


@in_section("hooks")
@click.command("sweep")
@click.option(
    "--older-than",
    "days",
    type=DAYS,
    help="Days a file must be untouched (default: MEMLANE_SWEEP_RETENTION_DAYS, 14).",
)
@click.option(
    "--captures-older-than",
    "capture_days",
    type=DAYS,
    help="Also remove capture log days older than this many days (kept otherwise).",
)
@click.option("--dry-run", is_flag=True, help="Report what would be removed; remove nothing.")
@json_option
def sweep_cmd(days: float | None, capture_days: float | None, dry_run: bool, as_json: bool) -> None:
    """Remove the files the hooks leave in MEMLANE_HOOK_DIR once their sessions are over:
    what each session was shown (`shown/`) and its capture cursors (`cursors/`) untouched
    for longer than --older-than days, review queues emptied that long ago (`queue/`; a
    queue with items waits for `queue clear`), and drafts a crash left (`.write-*`).

    Age is the file's modification time, and a live session keeps rewriting its files, so
    they stay. What was shown is removed under the lock the hooks take to rewrite it: a
    file being written is never removed, and a lock held longer than 2 seconds leaves that
    folder for the next sweep (`busy`). The capture log (`captures/`) stays unless
    --captures-older-than names an age. The store is never opened. It prints the count
    and size of what it removed; --json: `dry_run`, `removed` (path, kind, bytes,
    modified), `count`, `bytes`, `busy`. The session-start hook runs it once a day (see
    `upkeep`)."""
    s = state().settings
    report = sweep(
        Path(s["hook_dir"]).expanduser(),
        datetime.now(UTC),
        days or s["sweep_retention_days"],
        captures_days=capture_days,
        dry_run=dry_run,
    )
    render(report, as_json)


def render(report: SweepReport, as_json: bool) -> None:
    for folder in report.busy:
        note(f"sweep: {folder} is in use by a hook; left for the next sweep")
    if as_json:
        emit_json(report_dict(report))
        return
    verb = "Would remove" if report.dry_run else "Removed"
    click.echo(f"{verb} {len(report.removed)} file(s), {report.bytes} bytes")


def report_dict(report: SweepReport) -> dict[str, object]:
    return {
        "dry_run": report.dry_run,
        "removed": [msgspec.to_builtins(s) for s in report.removed],
        "count": len(report.removed),
        "bytes": report.bytes,
        "busy": list(report.busy),
    }
