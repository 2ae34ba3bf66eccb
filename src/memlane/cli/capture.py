"""`add` and `add-batch`: every way a memory comes in."""

from __future__ import annotations

import sys
from typing import Any

import click

from memlane.cli.common import (
    emit_json,
    fail,
    in_section,
    json_option,
    memory,
    note,
    open_input,
    pick_content,
)
from memlane.cli.progress import Notes, count_lines, progress_bar
from memlane.cli.render import batch_dict, write_dict
from memlane.model import (
    MAX_IMPORTANCE,
    BatchLine,
    BatchResult,
    FactType,
    Kind,
    WriteResult,
    WriteStatus,
)
from memlane.write import inputs

_NO_SESSION = (
    "no session id: the exact-duplicate check was skipped (pass --session-id to enable it)"
)


CAPTURE_MODE = click.option(
    "--capture-mode",
    type=click.Choice(["auto", "reviewed", "manual"]),
    help="Secrets: auto redacts them, reviewed/manual keep and warn (env MEMLANE_CAPTURE_MODE).",
)


@in_section("memory ops")
@click.command("add")
@click.argument("content_arg", metavar="[CONTENT]", required=False)
@click.option("-t", "--title", help="Title (derived from the first sentence when absent).")
@click.option("--content", help="Content inline; '-' reads stdin.")
@click.option(
    "-f", "--file", "--content-file", "file", help="Read content from a file ('-': stdin)."
)
@click.option(
    "--kind", type=click.Choice([k.value for k in Kind]), help="Kind of memory (default fact)."
)
@click.option(
    "--type",
    "fact_type",
    type=click.Choice([t.value for t in FactType]),
    help="Typed fact shortcut: routes kind and category, derives the title.",
)
@click.option("--session", "fact_session", help="Session the typed fact comes from (with --type).")
@click.option("--thread-id", help="Thread this thread_closed fact closes (with --type).")
@click.option("-c", "--category", help="Category (see `memlane categories list`).")
@click.option("--tags", help="Comma-separated tags.")
@click.option(
    "--importance",
    "--resonance",
    "importance",
    type=int,
    help=f"Importance: 1-10 is the usual scale, up to {MAX_IMPORTANCE}.",
)
@click.option(
    "--resonance-type",
    help="foundational, transformative, relational, operational, ephemeral, session.",
)
@click.option("--scope", help="global, project:NAME or project:NAME@BRANCH (default: detected).")
@click.option("--source-agent", help="Agent writing this (default: MEMLANE_AGENT).")
@click.option("--source-ref", help="Provenance: file:path#sha, url:..., session:..., commit:...")
@click.option("--source-type", help="manual, ram, cache, agent_session, import.")
@click.option("--entry-type", help="primary, summary, synthesis.")
@click.option("--content-type", help="text, code, config, data.")
@click.option(
    "--session-id", help="Session this memory belongs to (enables exact-duplicate checks)."
)
@click.option("--private", is_flag=True, help="Visible only to its owner.")
@click.option("--visibility", help="public or private.")
@click.option("--owner", help="Owner of a private memory: only you (MEMLANE_AGENT).")
@click.option("--wake-phrase", "wake_phrase", multiple=True, help="A wake phrase (repeatable).")
@click.option("--wake-phrases", help="Comma-separated wake phrases.")
@click.option("--anchors", help="Comma-separated ids of memories this one is anchored to.")
@click.option("--wake-order", type=int, help="Position in the wake sequence (lower first).")
@click.option("-a", "--applicability", help="Comma-separated applicability contexts.")
@click.option("-d", "--domain", help="Domain or subdomain path.")
@click.option("--occurred-at", help="When it happened (ISO-8601), if not now.")
@click.option("--signal", help="Grounding: test, compile, lint, reviewer, user, none.")
@click.option("--confidence", type=float, help="Confidence 0-1 (default from --signal).")
@click.option("--taint", help="trusted_internal, untrusted_tool, untrusted_web.")
@click.option("--ephemeral", is_flag=True, help="Mark as ephemeral.")
@click.option(
    "--allow-duplicate",
    is_flag=True,
    help="Write even if the same fact is stored (skip the exact and near-duplicate checks).",
)
@click.option("--no-embed", is_flag=True, help="Skip embedding on write (embed later).")
@click.option("--no-auto-anchor", is_flag=True, help="Do not anchor the memory to its neighbours.")
@CAPTURE_MODE
@json_option
def add_cmd(
    content_arg: str | None,
    content: str | None,
    file: str | None,
    wake_phrase: tuple[str, ...],
    wake_phrases: str | None,
    no_auto_anchor: bool,
    as_json: bool,
    **fields: Any,
) -> None:
    """Add a memory: content inline, from a file, or from stdin ('-').

    Content comes from CONTENT, --content, -f/--file or stdin ('-'). The fact shortcut
    --type routes kind and category, derives the title and sets the resonance type
    `ephemeral`; --session names the session the fact comes from, --thread-id the thread a
    `thread_closed` fact closes.

    An identical entry (differing only by case, punctuation, including smart quotes, dashes
    and ellipses, or whitespace) in the same session, by the same owner and in the same
    category is not written again: exit 0, `Already saved as ID`, and in JSON `{"id",
    "skipped": true, "duplicate_of", "status": "already_persisted", "note"}`. Without
    --session-id that check is skipped, and a note says so (`"dedup": "bypassed_no_session"`
    in JSON). --allow-duplicate forces the write.

    Past that check, the write policy compares the memory with the live ones of the same
    scope, kind and visibility. The same fact restated (text 0.85 alike and saying nothing
    new, or cosine 0.92) refreshes the stored memory instead: newer, the higher importance,
    0.05 more trust (`status: refreshed`, with its id and similarity). The same statement
    negated ("always X" / "never X") is kept as its own memory, linked `contradicts` both
    ways, each side 0.10 less trusted (`status: contradiction`). A text alike but stating
    other figures or words, or a cosine in [0.60, 0.92), is stored and listed in
    `potential_conflicts` (ids and similarity) with a warning. The thresholds are settings
    (MEMLANE_DEDUP_STRING_THRESHOLD and the others).

    Secrets are redacted on write (--capture-mode auto, the default) to `[REDACTED:kind]`,
    whole, in every free-text field (title, body, tags, source ref, domain, wake phrases),
    the memory tagged `auto-redacted` and the result listing `redactions`; reviewed and
    manual keep the text and warn. Both the shapes of tokens (cloud, VCS, chat, payment and
    model vendors' keys, JWTs, private key blocks, base64 of key files) and values people
    name in prose or config ("the staging password is X", `DB_PASSWORD=X`, a PIN) are found.
    Text that reads as instructions to a model is tagged `injection-risk` in every mode; a
    memory derived from one carries the flag. Passive reads (hooks, the MCP session start,
    `pack`) never surface it. Every write path passes the same screens: add, import, MCP,
    hooks, and the memories memlane writes itself.

    A private memory belongs to the agent writing it (MEMLANE_AGENT): --owner may only name
    that agent (any other name is refused, exit 2, nothing written, on every write path:
    `add`, `add-batch`, `update`, `supersede`, `merge`, the hooks), and without an agent
    identity nothing can be written private. --source-agent names the author only and never
    chooses the owner.

    A time (--occurred-at) is ISO-8601, a span back from now (`24h`, `7d`) or words such as
    `yesterday`. A `--source-ref file:PATH[#fragment]` is kept as given, with the file's
    sha256 and absolute path at write time; reads flag a memory whose file changed or
    vanished since (`[STALE SOURCE]`, `source_state` in JSON) and halve its confidence.
    Other refs (`commit:SHA`, `url:...`) are recorded as given. Limits: a body of 64 KiB, a
    title of 300 characters, 50 tags of at most 64 characters (MEMLANE_MAX_BODY_BYTES and
    the other max settings); a write past one is refused, exit 2.

    For example:

    \b
    $ memlane add --type decision --content "Chose PostgreSQL for billing" --session-id s-1
    $ memlane add -t "Retry with backoff" -f notes.md --tags reliability,networking"""
    if content_arg is not None and content is not None:
        fail("give the content once: as an argument or with --content")
    text = pick_content(content if content is not None else content_arg, file)
    if text is None:
        fail("no content: pass CONTENT, --content, --file or '-' for stdin")
    phrases = [*wake_phrase, *(wake_phrases.split(",") if wake_phrases else [])]
    given = {k: v for k, v in fields.items() if v is not None and v is not False}
    if phrases:
        given["wake_phrases"] = phrases
    result = memory().add(text, auto_anchor=not no_auto_anchor, **given)
    report_write(result, as_json)


def report_write(result: WriteResult, as_json: bool) -> None:
    if as_json:
        emit_json(write_dict(result))
        return
    if result.skipped:
        click.echo(f"Already saved as {result.id} (identical entry this session — nothing to do).")
        return
    if result.status is WriteStatus.REFRESHED:
        click.echo(
            f"Refreshed entry: {result.id} (the same fact restated, "
            f"{result.similarity:.0%} alike; no new entry)"
        )
        return
    if result.dedup == "bypassed_no_session":
        note(_NO_SESSION)
    for warning in result.warnings:
        note(warning)
    if result.status is WriteStatus.CONTRADICTION:
        click.echo(f"Added entry: {result.id} (contradicts {result.contradicts}; both kept)")
        return
    click.echo(f"Added entry: {result.id}")


@in_section("memory ops")
@click.command("add-batch")
@click.option(
    "-f",
    "--file",
    "file",
    default="-",
    show_default="stdin",
    help="JSONL file, one object per line.",
)
@click.option("--no-embed", is_flag=True, help="Skip embedding for the whole batch.")
@CAPTURE_MODE
@json_option
def add_batch_cmd(file: str, no_embed: bool, capture_mode: str | None, as_json: bool) -> None:
    """Add many memories from JSONL; bad lines are reported and skipped, good ones land.

    One object per line with the fields of `add` (`content`, `title`, `kind`, `type`,
    `tags`, `session_id`, `private`, `allow_duplicate`, ...), each line through the same
    write policy, also compared with the lines before it. A bad line is reported with its
    line number and skipped. Prints a line per entry as its chunk commits, then `N added, R
    refreshed, K already saved (no action needed), F failed`; exit 2 when any line failed.
    The notes (a text close in meaning to stored ones, ...) are printed for the first 5
    lines, then counted; --json gives the summary with `ids` in input order (null for a
    failed line) and every line's `warnings`. On a terminal a progress bar runs on
    stderr."""
    stream = open_input(file, "batch")
    lines: list[BatchLine] = []
    mem = memory()
    if capture_mode is not None:
        mem.capture_mode = capture_mode
    if no_embed:  # every line lands without vectors; `embed --pending` adds them later
        mem.embed_on_write = False
    notes = Notes()
    with stream, progress_bar("adding", as_json) as tell:
        total = count_lines(stream)
        for line in mem.iter_batch(inputs.lines(stream)):
            lines.append(line)
            tell(line.line, total)
            if not as_json:
                _report_line(line, notes)
    result = BatchResult(tuple(lines))
    if as_json:
        emit_json(batch_dict(result))
    else:
        notes.close("notes")
        bypassed = sum(1 for ln in result.lines if ln.result and ln.result.dedup)
        if bypassed:
            note(f"{bypassed} line(s) had no session id: their exact-duplicate check was skipped")
        click.echo(
            f"{result.added} added, {result.refreshed} refreshed, "
            f"{result.already_saved} already saved (no action needed), "
            f"{len(result.failed)} failed"
        )
    if result.failed:
        sys.exit(2)


def _report_line(line: BatchLine, notes: Notes) -> None:
    """One line of the batch report, printed once the line's transaction committed; its
    warnings go to NOTES."""
    if line.error is not None:
        click.echo(f"[{line.line}] error: {line.error}", err=True)
    elif line.result is not None and line.result.skipped:
        click.echo(
            f"[{line.line}] Already saved: {line.result.id} ({line.result.title}) "
            "— identical this session, no action"
        )
    elif line.result is not None and line.result.status is WriteStatus.REFRESHED:
        click.echo(f"[{line.line}] Refreshed entry: {line.result.id} ({line.result.title})")
    elif line.result is not None:
        click.echo(f"[{line.line}] Added entry: {line.result.id} ({line.result.title})")
        for warning in line.result.warnings:
            notes.add(f"[{line.line}] note: {warning}")
