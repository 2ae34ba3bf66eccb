"""backup: verified snapshots of the store (restore --from lives with `restore`)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import click

from memlane.cli.common import emit_json, in_section, json_option, memory, note, state


@in_section("data")
@click.command("backup")
@click.option("--out-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where snapshots go (default: the backup_dir setting, else beside the store).")  # fmt: skip
@click.option("--retention", type=int, help="Snapshots to keep (default: the setting, 7).")
@click.option("--if-due", is_flag=True,
              help="Only when the newest snapshot is older than backup_interval_hours.")  # fmt: skip
@json_option
def backup_cmd(out_dir: Path | None, retention: int | None, if_due: bool, as_json: bool) -> None:
    """Snapshot the store with SQLite's online backup (writers carry on), verify it
    (integrity_check and the memory counts), then keep the newest --retention."""
    s = state().settings
    directory = out_dir or (Path(s["backup_dir"]).expanduser() if s["backup_dir"] else None)
    due = timedelta(hours=s["backup_interval_hours"]) if if_due else None
    report = memory().backup(directory, retention or s["backup_retention"], due)
    if as_json:
        emit_json({"path": report.path, "skipped": report.skipped, "notice": report.notice,
                   "total": report.counts.total if report.counts else None,
                   "live": report.counts.live if report.counts else None,
                   "deleted": [str(p) for p in report.deleted]})  # fmt: skip
        return
    if report.path is None:
        note(report.notice or "skipped")
        return
    counts = report.counts
    held = f" ({counts.total} memories, {counts.live} live)" if counts else ""
    click.echo(f"Snapshot {report.path}{held}, verified")
    for path in report.deleted:
        click.echo(f"Deleted old snapshot {path}")
