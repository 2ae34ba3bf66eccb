"""`embed` and `reembed`: vectors for the vector lane."""

from __future__ import annotations

import click

from memlane.cli.common import emit_json, fail, in_section, json_option, memory, note, state
from memlane.cli.progress import progress_bar


@in_section("recall")
@click.command("embed")
@click.argument("memory_id", required=False)
@click.option("--all", "all_", is_flag=True, help="Embed every live memory again.")
@click.option("--pending", is_flag=True, help="Embed memories without current vectors.")
@click.option(
    "--long-only",
    type=int,
    metavar="N",
    help="Only memories whose text is longer than N tokens of the profile (alone: of all).",
)
@json_option
def embed_cmd(
    memory_id: str | None, all_: bool, pending: bool, long_only: int | None, as_json: bool
) -> None:
    """Compute vectors: for one memory, the pending ones, or all.

    ID embeds one memory; --pending the memories without current vectors (never embedded,
    embedded before their content changed, or deferred when the embedder failed); --all
    every live one again. --long-only N keeps those whose embedded text (title and body) is
    longer than N tokens of the profile's tokenizer, over all live memories when given
    alone: `memlane embed --long-only 256` embeds again only the memories longer than one
    256-token window. --pending and --all take the memories you may see (another owner's
    private memories wait for their owner). On a terminal a progress bar runs on stderr.

    Writes embed on their own unless `memlane add --no-embed` or MEMLANE_SKIP_WRITE_EMBED=1;
    a failed embedding never fails the write (status `embed_deferred`)."""
    with progress_bar("embedding", as_json or memory_id is not None) as tell:
        outcome = memory().embed(
            memory_id, pending=pending, all=all_, long_only=long_only, progress=tell
        )
    if as_json:
        emit_json(
            {
                "embedded": len(outcome.embedded),
                "failed": len(outcome.failed),
                "ids": list(outcome.embedded),
                "error": outcome.error,
            }
        )
    else:
        click.echo(f"{len(outcome.embedded)} embedded, {len(outcome.failed)} failed")
        if outcome.error:
            note(outcome.error)
    if outcome.failed:
        raise SystemExit(1)


@in_section("recall")
@click.command("reembed")
@click.option("--all", "all_", is_flag=True, required=True, help="Re-embed every live memory.")
@click.option(
    "--profile", required=True, help="Embedding profile to convert to (minilm, hash, http)."
)
@click.option("--dry-run", is_flag=True, help="Say how many memories would be re-embedded.")
@json_option
def reembed_cmd(all_: bool, profile: str, dry_run: bool, as_json: bool) -> None:
    """Convert the store's vectors to another embedding profile, in one transaction.

    Every vector is computed again with --profile (a new dimension is fine), and the profile
    is recorded as the store's. A store refuses vectors of a profile other than its own and
    names this command. --dry-run says how many memories it would embed."""
    embedder = state().embedder_for(profile)
    if embedder is None:
        fail(f"profile {profile!r} cannot embed here", 1)
    with progress_bar(f"re-embedding with {profile}", as_json or dry_run) as tell:
        count = memory().reembed(embedder, dry_run=dry_run, progress=tell)
    if as_json:
        emit_json({"profile": embedder.profile.signature, "memories": count, "dry_run": dry_run})
    elif dry_run:
        click.echo(f"would re-embed {count} memories with {embedder.profile.signature}")
    else:
        click.echo(f"re-embedded {count} memories with {embedder.profile.signature}")
