"""The `memlane` command: a root group, its global options, and every command."""

from __future__ import annotations

import click

from memlane.cli import (
    bench,
    capture,
    embedding,
    evaluate,
    graph,
    quickstart,
    read,
    recall,
    registries,
    revise,
)
from memlane.cli.common import SectionedGroup, State, settings_from_env
from memlane.errors import MemlaneError

COMMANDS: tuple[click.Command, ...] = (
    capture.add_cmd,
    capture.add_batch_cmd,
    read.show_cmd,
    read.list_cmd,
    read.search_cmd,
    recall.recall_cmd,
    embedding.embed_cmd,
    embedding.reembed_cmd,
    read.recent_cmd,
    read.history_cmd,
    read.stats_cmd,
    read.doctor_cmd,
    read.journal_cmd,
    revise.update_cmd,
    revise.edit_cmd,
    revise.append_cmd,
    revise.prepend_cmd,
    revise.restore_cmd,
    revise.supersede_cmd,
    revise.invalidate_cmd,
    revise.retire_cmd,
    revise.merge_cmd,
    revise.delete_cmd,
    graph.entities,
    registries.categories,
    registries.agents,
    registries.projects,
    registries.applicability,
    registries.tags,
    registries.types_cmd,
    quickstart.quickstart_cmd,
    evaluate.eval_group,
    bench.bench_cmd,
)


@click.group(cls=SectionedGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db", envvar="MEMLANE_DB", help="Store path (default: the platform data dir; env MEMLANE_DB)."
)
@click.version_option(package_name="memlane")
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """memlane: long-term memory for AI agents."""
    try:
        settings = settings_from_env()
    except MemlaneError as exc:
        raise click.UsageError(str(exc)) from None
    ctx.obj = State(db=db, settings=settings)


for _command in COMMANDS:
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="memlane")
