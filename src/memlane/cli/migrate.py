"""migrate-store: copy a whole store to another backend (SQLite <-> PostgreSQL); migrate:
bring a store's schema up to date."""

from __future__ import annotations

import re
from pathlib import Path

import click

from memlane import config
from memlane.cli.common import emit_json, fail, in_section, json_option, note, state
from memlane.cli.progress import progress_bar, progress_steps
from memlane.memory import Memory

_URL_SCHEMES = ("postgresql://", "postgres://")


def _open(location: str, must_exist: bool) -> Memory:
    """A Memory on `location` with the settings' embedder and policies. A source file
    that does not exist is refused: opening it would create an empty store."""
    local = not location.startswith(_URL_SCHEMES)
    if must_exist and local and not Path(location).expanduser().is_file():
        fail(f"no store at {location}")
    return config.open_memory(state().settings, location)


def _shown(location: str) -> str:
    """A location without its password."""
    return re.sub(r"^(\w+://[^:/@]*):[^@]*@", r"\1:***@", location)


@in_section("data")
@click.command("migrate-store")
@click.option(
    "--from",
    "source",
    required=True,
    metavar="STORE",
    help="The store to copy: a SQLite path or a postgresql:// URL.",
)
@click.option(
    "--to",
    "target",
    required=True,
    metavar="STORE",
    help="The store to fill: a SQLite path or a postgresql:// URL.",
)
@click.option("--force", is_flag=True, help="Merge into a target that already holds memories.")
@json_option
def migrate_store_cmd(source: str, target: str, force: bool, as_json: bool) -> None:
    """Copy everything from one store into another (either backend): superseded memories,
    every agent's private memories and reminders, versions, links, entities, sessions,
    registries; then check the counts and embed on the target.

    Either store is a SQLite path or a `postgresql://` URL: the way from one laptop to a
    shared PostgreSQL server and back. It carries everything an export can: live, superseded
    and invalidated memories with every version, every agent's private memories and
    reminders (one export per agent, merged in the source's order), links, entities,
    aliases, mentions, sessions and registries. Embeddings, the journal and the wake log are
    store-local and stay behind; the target records the import in its own journal and, when
    an embedding profile is set, embeds the copied memories once the copy is checked.

    A target that already holds memories is refused unless --force (the import then merges:
    records already there are left alone). Afterwards the records of each kind are counted
    on both sides; a difference fails the command (exit 1). A source path that does not
    exist is refused rather than created. On a terminal a progress bar runs on stderr."""
    if source == target:
        fail("--from and --to name the same store")
    with (
        _open(source, must_exist=True) as src,
        _open(target, must_exist=False) as dst,
        progress_bar("copy", as_json) as tell,
    ):
        report = src.transfer.migrate_to(dst.transfer, force=force, progress=tell)
    if as_json:
        emit_json(
            {
                "from": _shown(source),
                "to": _shown(target),
                "sent": report.sent,
                "target": report.target_counts,
                "imported": report.imported.counts,
                "embedded": report.embedded,
                "embed_failed": report.embed_failed,
                "forced": report.forced,
            }
        )
        return
    for kind, count in report.sent.items():
        click.echo(f"{kind:<9} {count:>8} copied, {report.target_counts.get(kind, 0):>8} on target")
    click.echo("Counts match" + (" (merged into an existing store)" if force else ""))
    if report.embedded is not None:
        click.echo(f"Embedded {report.embedded} memories on the target")
    if report.embed_failed:
        note(f"{report.embed_failed} memories left without vectors: run `memlane embed --pending`")


@in_section("admin")
@click.command("migrate")
@click.option("--dry-run", is_flag=True, help="List the pending migrations; apply none.")
@json_option
def migrate_cmd(dry_run: bool, as_json: bool) -> None:
    """Bring the store's schema up to date: apply the migrations this memlane has that
    the store has not (each in its own transaction, recorded in the store), on SQLite and
    on PostgreSQL alike.

    A store is migrated when it is opened unless the auto_migrate setting is 0
    (MEMLANE_AUTO_MIGRATE=0): then a store an older memlane made is refused until this
    command runs, so you choose when (after `memlane backup`, say). --dry-run lists what
    would be applied and changes nothing. A store that does not exist is refused (exit
    1), never created; a store a newer memlane made is refused too."""
    location = state().location()
    if dry_run:
        status = Memory.schema_status(location)
    else:
        with progress_steps("migrating the schema", as_json):
            status = Memory.migrate_schema(location)
    where = _shown(status.location)
    if as_json:
        emit_json(
            {
                "store": where,
                "version": status.version,
                "latest": status.latest,
                "migrations": [{"version": n, "name": name} for n, name in status.pending],
                "dry_run": dry_run,
            }
        )
        return
    if not status.pending:
        click.echo(f"{where} is up to date (schema version {status.version})")
        return
    verb = "would apply" if dry_run else "applied"
    click.echo(f"{where}: schema version {status.version} -> {status.latest}, {verb}:")
    for number, name in status.pending:
        click.echo(f"  {number:>3} {name}")
