"""`pack`: the curated tier (MEMORY.md / core.md) as budgeted markdown."""

from __future__ import annotations

from pathlib import Path

import click

from memlane.cli.common import echo_stored, emit_json, in_section, json_option, memory, note
from memlane.lifecycle.pack import PACK_MAX_BYTES, Pack


@in_section("lifecycle")
@click.command("pack")
@click.option("--scope", help="Scope (default: this project and global; 'all': everything).")
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the pack to FILE."
)
@click.option(
    "--max-bytes",
    type=int,
    default=PACK_MAX_BYTES,
    show_default=True,
    help="Budget in UTF-8 bytes of the whole pack.",
)
@click.option("--max-tokens", type=int, help="Token budget too (about 4 characters a token).")
@click.option("--include-private", is_flag=True, help="Add your own private memories.")
@json_option
def pack_cmd(
    scope: str | None,
    out: Path | None,
    max_bytes: int,
    max_tokens: int | None,
    include_private: bool,
    as_json: bool,
) -> None:
    """The most important live memories as markdown for a MEMORY.md / core.md tier: whole
    bullets grouped by topic, with provenance, under the budget.

    One bullet per memory, under a heading per category, each ending with its provenance
    (id, author, date written, source; `private`, `UNTRUSTED TOOL` or `STALE SOURCE` when
    they apply). Memories are ranked by confidence x trust x importance (as decayed) x (1 +
    ln(1 + uses)), uses being explicit retrievals and applications; bullets are taken best
    first and kept only whole: one that does not fit is skipped and a smaller one after it
    may still fit. The whole output stays within --max-bytes UTF-8 bytes and --max-tokens (4
    characters a token).

    Like a passive recall it leaves out injection-risk, untrusted-web and low-confidence
    memories, and tasks, threads and ephemeral or session memories; your own private
    memories only with --include-private. Packing counts as no use. --out FILE replaces FILE
    whole, prints its path and is recorded: forgetting a memory it holds writes it again
    (unless the file was changed by hand since, which `forget` reports). --json prints
    `ids`, `omitted`, `bytes`, `tokens` and the `markdown`. A budget too small for the
    header, or nothing to pack, is refused (exit 2) and writes nothing."""
    mem = memory()
    if out is None:
        result = mem.packs.build(scope, max_bytes, max_tokens, include_private=include_private)
    else:
        result = mem.packs.write(out, scope, max_bytes, max_tokens, include_private=include_private)
    if as_json:
        emit_json(_pack_dict(result, out))
        return
    if out is not None:
        click.echo(str(out))
    else:
        echo_stored(result.markdown, nl=False)
    if result.omitted:
        note(f"left out by the budget: {len(result.omitted)} memory(ies)")


def _pack_dict(result: Pack, out: Path | None) -> dict[str, object]:
    return {
        "ids": list(result.ids),
        "count": len(result.ids),
        "omitted": list(result.omitted),
        "bytes": result.size_bytes,
        "tokens": result.tokens,
        "out": str(out) if out is not None else None,
        "markdown": result.markdown,
    }
