"""The `memlane` command: a root group, its global options, and every command."""

from __future__ import annotations

import gc

import click

from memlane import settings_file
from memlane.cli.common import READ_COMMANDS, SETTINGS_PROBLEMS, SectionedGroup, State
from memlane.errors import MemlaneError

# Every command as name -> "module:attribute", imported only when it runs (or for --help):
# a `memlane recall` from a hook never pays for the benchmark, the evaluation or the editors.
COMMANDS: dict[str, str] = {
    "add": "capture:add_cmd",
    "add-batch": "capture:add_batch_cmd",
    "show": "read:show_cmd",
    "list": "read:list_cmd",
    "search": "read:search_cmd",
    "recall": "recall:recall_cmd",
    "embed": "embedding:embed_cmd",
    "reembed": "embedding:reembed_cmd",
    "recent": "read:recent_cmd",
    "history": "read:history_cmd",
    "browse": "browse:browse_cmd",
    "stats": "read:stats_cmd",
    "doctor": "read:doctor_cmd",
    "journal": "read:journal_cmd",
    "update": "revise:update_cmd",
    "edit": "revise:edit_cmd",
    "append": "revise:append_cmd",
    "prepend": "revise:prepend_cmd",
    "restore": "revise:restore_cmd",
    "supersede": "revise:supersede_cmd",
    "invalidate": "revise:invalidate_cmd",
    "retire": "revise:retire_cmd",
    "merge": "revise:merge_cmd",
    "delete": "revise:delete_cmd",
    "forget": "revise:forget_cmd",
    "rekey-namespace": "scopes:rekey_namespace_cmd",
    "canonicalize-projects": "scopes:canonicalize_projects_cmd",
    "promote": "scopes:promote_cmd",
    "entities": "entities:entities",
    "relationships": "relations:relationships_cmd",
    "relate": "relations:relate_cmd",
    "unrelate": "relations:unrelate_cmd",
    "links": "links:links",
    "contradict": "links:contradict_cmd",
    "auto-anchor": "links:auto_anchor_cmd",
    "reinforce": "lifecycle:reinforce_cmd",
    "feedback": "lifecycle:feedback_cmd",
    "review": "lifecycle:review_cmd",
    "reflect": "reflect:reflect_cmd",
    "reviewed": "lifecycle:reviewed_cmd",
    "remind": "lifecycle:remind_cmd",
    "reminders": "lifecycle:reminders",
    "open-threads": "lifecycle:open_threads_cmd",
    "growth": "lifecycle:growth_cmd",
    "health": "lifecycle:health_cmd",
    "sessions": "lifecycle:sessions",
    "wake": "wake:wake_cmd",
    "wake-fetch": "wake:wake_fetch_cmd",
    "wake-log": "wake:wake_log",
    "for-session": "lifecycle:for_session_cmd",
    "fact-session": "lifecycle:fact_session_cmd",
    "consolidate": "consolidate:consolidate_cmd",
    "organize": "consolidate:organize_cmd",
    "pack": "pack:pack_cmd",
    "categories": "registries:categories",
    "agents": "registries:agents",
    "projects": "registries:projects",
    "applicability": "registries:applicability",
    "tags": "registries:tags",
    "types": "registries:types_cmd",
    "quickstart": "quickstart:quickstart_cmd",
    "backup": "backup:backup_cmd",
    "seed": "seed:seed",
    "serve": "serve:serve_cmd",
    "web": "web:web_cmd",
    "import": "transfer:import_group",
    "export": "transfer:export_cmd",
    "migrate-store": "migrate:migrate_store_cmd",
    "migrate": "migrate:migrate_cmd",
    "settings": "settings:settings_group",
    "install": "install:install_cmd",
    "hook": "hooks:hook_cmd",
    "extract": "extract:extract_cmd",
    "corrections": "extract:corrections_cmd",
    "queue": "extract:queue_group",
    "sweep": "sweep:sweep_cmd",
    "upkeep": "upkeep:upkeep_cmd",
    "uninstall": "install:uninstall_cmd",
    "eval": "evaluate:eval_group",
    "bench": "bench:bench_cmd",
    "tune-weights": "tune:tune_weights_cmd",
}


@click.group(
    cls=SectionedGroup,
    lazy=COMMANDS,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--db",
    envvar="MEMLANE_DB",
    help="The store: a SQLite path or a postgresql:// URL (default: MEMLANE_DB, else "
    "memlane.db in the platform data dir).",
)
@click.version_option(package_name="memlane")
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """memlane: long-term memory for AI agents."""
    # doctor, hook and settings report a bad setting rather than refuse to run: each bad
    # one is at its default, and the problems wait in ctx.meta for them.
    lenient = ctx.invoked_subcommand in ("doctor", "hook", "settings")
    try:
        resolved = settings_file.load(lenient=lenient)
    except MemlaneError as exc:
        raise click.UsageError(str(exc)) from None
    ctx.meta[SETTINGS_PROBLEMS] = list(resolved.problems)
    settings = resolved.values
    if ctx.invoked_subcommand == "doctor":
        ctx.obj = State(db=db, settings=settings, reading=True)
        return
    reading = ctx.invoked_subcommand in READ_COMMANDS or ctx.invoked_subcommand is None
    ctx.obj = State(db=db, settings=settings, reading=reading)
    if ctx.invoked_subcommand is None:  # a bare `memlane`: where things stand
        from memlane.cli.home import show_home

        show_home()


def main() -> None:
    try:
        cli(prog_name="memlane")
    finally:
        # The command is done (its store closed); at exit the interpreter would make
        # the collector walk every object the imports made, a share of every cold
        # `memlane recall` worth saving (`memlane bench` times cold recalls). Frozen
        # objects are still freed, just not walked.
        gc.freeze()
