"""backup: verified snapshots of the store (restore --from lives with `restore`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from memlane.cli.common import emit_json, in_section, json_option, memory, note, state


def settings_dir(settings: Mapping[str, Any]) -> Path | None:
    """The backup_dir setting's folder (None: backups/ beside the store)."""
    return Path(settings["backup_dir"]).expanduser() if settings["backup_dir"] else None


@in_section("data")
@click.command("backup")
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where snapshots go (default: the backup_dir setting, else beside the store).",
)
@click.option("--retention", type=int, help="Snapshots to keep (default: the setting, 7).")
@click.option(
    "--if-due",
    is_flag=True,
    help="Only when the newest snapshot is older than backup_interval_hours.",
)
@json_option
def backup_cmd(out_dir: Path | None, retention: int | None, if_due: bool, as_json: bool) -> None:
    """Snapshot the store with SQLite's online backup (writers carry on), verify it
    (integrity_check and the memory counts), then keep the newest --retention.

    One read transaction copies the pages and counts the memories at the same instant, into
    `memlane-<UTC time>.db`. A snapshot counts only once verified: `integrity_check` is ok
    and it holds as many memories, and as many live ones, as the store did; one that fails
    is deleted and the command exits 1. Then only the oldest snapshot files beyond
    --retention are deleted. --if-due takes one only when the newest is older than
    MEMLANE_BACKUP_INTERVAL_HOURS (24). One backup runs at a time per directory (an OS file
    lock, released if the process dies); a second prints a notice and exits 0. `restore
    --from SNAPSHOT --force` brings a snapshot back.

    On a PostgreSQL store `backup` (and `restore --from`) refuses in one line (exit 2) and
    names the server's tools instead: `pg_dump --format=custom --file memlane.dump URL`,
    `pg_restore --clean --dbname URL memlane.dump`, or `memlane export --include-superseded
    --include-private` for a portable copy."""
    s = state().settings
    directory = out_dir or settings_dir(s)
    due = timedelta(hours=s["backup_interval_hours"]) if if_due else None
    report = memory().admin.backup(directory, retention or s["backup_retention"], due)
    if as_json:
        emit_json(
            {
                "path": report.path,
                "skipped": report.skipped,
                "notice": report.notice,
                "total": report.counts.total if report.counts else None,
                "live": report.counts.live if report.counts else None,
                "deleted": [str(p) for p in report.deleted],
            }
        )
        return
    if report.path is None:
        note(report.notice or "skipped")
        return
    counts = report.counts
    held = f" ({counts.total} memories, {counts.live} live)" if counts else ""
    click.echo(f"Snapshot {report.path}{held}, verified")
    for path in report.deleted:
        click.echo(f"Deleted old snapshot {path}")
