"""Changing memories: update and its shortcuts, restore, supersede, invalidate, retire, merge, delete."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memlane.cli.capture import CAPTURE_MODE
from memlane.cli.common import (
    emit_json,
    fail,
    in_section,
    json_option,
    memory,
    note,
    pick_content,
    state,
)
from memlane.cli.render import plain, record_dict, version_dict, write_dict
from memlane.memory import Memory
from memlane.model import CLEAR, MAX_IMPORTANCE, Patch, Record, WriteResult
from memlane.retrieve.present import printable
from memlane.services.forget import Forgotten


def _report(result: WriteResult, as_json: bool, verb: str = "Updated entry") -> None:
    if as_json:
        emit_json(write_dict(result))
    else:
        for warning in result.warnings:
            click.echo(f"note: {warning}", err=True)
        click.echo(
            f"{verb}: {result.id}" + (f" (version {result.version})" if result.version else "")
        )


def _report_record(record: Record, as_json: bool, verb: str) -> None:
    if as_json:
        emit_json(record_dict(record))
    else:
        click.echo(f"{verb}: {record.id} ({record.tombstone_text})")


_IMPORTANCE_RANGE = f"1-10 usual, up to {MAX_IMPORTANCE}"
_NO_EMBED = click.option("--no-embed", is_flag=True, help="Skip embedding on write.")
_NO_AUTO_ANCHOR = click.option(
    "--no-auto-anchor", is_flag=True, help="Do not re-anchor the memory to its neighbours."
)


def _writer(no_embed: bool) -> Memory:
    """The Memory for one write; `no_embed` leaves its vectors to `embed --pending`."""
    mem = memory()
    if no_embed:
        mem.embed_on_write = False
    return mem


@in_section("memory ops")
@click.command("update")
@click.argument("memory_id")
@click.option("-t", "--title", help="New title.")
@click.option("--content", help="Replace the content ('-': stdin).")
@click.option("-f", "--file", help="Replace the content from a file.")
@click.option("--append-content", help="Append text to the end.")
@click.option("--append-file", help="Append a file's text to the end.")
@click.option("--prepend-content", help="Prepend text to the start.")
@click.option("--prepend-file", help="Prepend a file's text to the start.")
@click.option("--find", help="Text to find (with --replace).")
@click.option("--replace", help="Replacement for --find.")
@click.option("--nth", type=int, help="Replace only the Nth match (1-based).")
@click.option("--replace-all", is_flag=True, help="Replace every match.")
@click.option("-c", "--category", help="New category.")
@click.option("--kind", help="New kind.")
@click.option("--tags", help="Replace all tags (comma-separated).")
@click.option("--add-tag", multiple=True, help="Add a tag (repeatable).")
@click.option("--remove-tag", multiple=True, help="Remove a tag (repeatable).")
@click.option(
    "--importance",
    "--resonance",
    "importance",
    type=int,
    help=f"New importance ({_IMPORTANCE_RANGE}).",
)
@click.option("--resonance-type", help="New resonance type.")
@click.option("--content-type", help="New content type.")
@click.option(
    "--wake-phrase",
    "--wake-phrases",
    "wake_phrases",
    help="Replace wake phrases (comma-separated).",
)
@click.option("--add-wake-phrase", multiple=True, help="Add a wake phrase (repeatable).")
@click.option("--remove-wake-phrase", multiple=True, help="Remove a wake phrase (repeatable).")
@click.option("--wake-order", help="New wake order; '-' clears it.")
@click.option("--anchors", help="Replace all anchors (comma-separated ids).")
@click.option("--add-anchor", multiple=True, help="Add an anchor (repeatable).")
@click.option("--remove-anchor", multiple=True, help="Remove an anchor (repeatable).")
@click.option("--private", is_flag=True, help="Make private.")
@click.option("--visibility", help="public or private.")
@click.option("--owner", help="Owner of a private memory: only you (MEMLANE_AGENT).")
@click.option("--force", is_flag=True, help="Allow the dangerous direction: private to public.")
@click.option("--session-id", help="Set the session id.")
@click.option("-a", "--applicability", help="Replace applicability (comma-separated).")
@click.option("-d", "--domain", help="New domain.")
@click.option("--state", help="open or closed (threads, commitments).")
@click.option("--source-ref", help="New provenance reference.")
@click.option("--scope", help="Move it to this scope (its history keeps the old one).")
@click.option("--reason", help="Why it changed (kept with the prior version).")
@_NO_EMBED
@_NO_AUTO_ANCHOR
@CAPTURE_MODE
@json_option
def update_cmd(
    memory_id: str,
    content: str | None,
    file: str | None,
    append_content: str | None,
    append_file: str | None,
    prepend_content: str | None,
    prepend_file: str | None,
    add_tag: tuple[str, ...],
    remove_tag: tuple[str, ...],
    add_wake_phrase: tuple[str, ...],
    remove_wake_phrase: tuple[str, ...],
    add_anchor: tuple[str, ...],
    remove_anchor: tuple[str, ...],
    wake_order: str | None,
    reason: str | None,
    no_embed: bool,
    no_auto_anchor: bool,
    capture_mode: str | None,
    as_json: bool,
    **rest: Any,
) -> None:
    """Change a memory in place; the prior content is kept as a version.

    One content change per call: replace (--content, --file), --append-content or
    --append-file, --prepend-content or --prepend-file, or --find with --replace and either
    --nth N or --replace-all (several matches without either are refused). Other fields
    change alongside it, as many as given; --wake-order '-' clears it. The id stays, and
    `history` lists the versions, each with --reason.

    A memory made private is the updating agent's (MEMLANE_AGENT): --owner may only name
    yourself, and a memory is never given to another owner. Making a private memory public
    needs --force. Like `add`, the new text passes the secret and injection screens
    (--capture-mode) and re-anchors the memory unless --no-auto-anchor. --scope moves
    it to another scope: the prior version's reason names the old one (see
    `rekey-namespace` for a whole scope)."""
    patch = Patch(
        content=pick_content(content, file),
        append=pick_content(append_content, append_file, "appended content"),
        prepend=pick_content(prepend_content, prepend_file, "prepended content"),
        add_tags=add_tag or None,
        remove_tags=remove_tag or None,
        add_wake_phrases=add_wake_phrase or None,
        remove_wake_phrases=remove_wake_phrase or None,
        add_anchors=add_anchor or None,
        remove_anchors=remove_anchor or None,
        wake_order=_wake_order(wake_order),
        **rest,
    )
    mem = _writer(no_embed)
    result = mem.update(
        memory_id, patch, reason=reason, auto_anchor=not no_auto_anchor, capture_mode=capture_mode
    )
    _report(result, as_json)


def _wake_order(value: str | None) -> Any:
    if value is None:
        return None
    if value.strip() == "-":
        return CLEAR
    try:
        return int(value)
    except ValueError:
        fail(f"--wake-order must be a whole number or '-', not {value!r}")


@in_section("memory ops")
@click.command("edit")
@click.argument("memory_id")
@click.option("--find", "--old", "find", required=True, help="Text to find.")
@click.option("--replace", "--new", "replace", required=True, help="Replacement text.")
@click.option(
    "--replace-all", is_flag=True, help="Replace every match (default: error on several)."
)
@click.option("--nth", type=int, help="Replace only the Nth match (1-based).")
@_NO_EMBED
@_NO_AUTO_ANCHOR
@CAPTURE_MODE
@json_option
def edit_cmd(
    memory_id: str,
    find: str,
    replace: str,
    replace_all: bool,
    nth: int | None,
    no_embed: bool,
    no_auto_anchor: bool,
    capture_mode: str | None,
    as_json: bool,
) -> None:
    """Find-and-replace in a memory's content (shortcut for update --find/--replace).

    Several matches are refused unless --nth N or --replace-all says which."""
    patch = Patch(find=find, replace=replace, replace_all=replace_all, nth=nth)
    mem = _writer(no_embed)
    result = mem.update(
        memory_id,
        patch,
        reason="edited",
        auto_anchor=not no_auto_anchor,
        capture_mode=capture_mode,
    )
    _report(result, as_json)


def _shortcut(name: str, field: str, doc: str) -> click.Command:
    @in_section("memory ops")
    @click.command(name, help=doc)
    @click.argument("memory_id")
    @click.option("--content", help="Text to add ('-' or omitted: stdin).")
    @click.option("-f", "--file", "--content-file", "file", help="Read the text from a file.")
    @_NO_EMBED
    @_NO_AUTO_ANCHOR
    @CAPTURE_MODE
    @json_option
    def command(
        memory_id: str,
        content: str | None,
        file: str | None,
        no_embed: bool,
        no_auto_anchor: bool,
        capture_mode: str | None,
        as_json: bool,
    ) -> None:
        text = pick_content(content if content is not None or file else "-", file)
        patch = Patch(append=text) if field == "append" else Patch(prepend=text)
        mem = _writer(no_embed)
        result = mem.update(
            memory_id,
            patch,
            reason=f"{name}ed",
            auto_anchor=not no_auto_anchor,
            capture_mode=capture_mode,
        )
        _report(result, as_json)

    return command


_SHORTCUT_MORE = (
    "\n\nThe text comes from --content, -f/--file or stdin; the prior content is kept as a "
    "version (see `history`)."
)
append_cmd = _shortcut("append", "append", "Append text to a memory's content." + _SHORTCUT_MORE)
prepend_cmd = _shortcut(
    "prepend", "prepend", "Prepend text to a memory's content." + _SHORTCUT_MORE
)


def _restore_store(snapshot: Path, force: bool, as_json: bool) -> None:
    from memlane.services.backup import refuse_server_store

    s = state()
    refuse_server_store(str(s.db or s.settings["db"]), "restore --from")
    report = Memory.restore_snapshot(s.db or s.settings["db"], snapshot, force=force)
    counts = report.counts
    if as_json:
        emit_json(
            {
                "path": str(report.path),
                "snapshot": str(report.snapshot),
                "kept": str(report.kept) if report.kept else None,
                "total": counts.total if counts else None,
                "live": counts.live if counts else None,
            }
        )
        return
    click.echo(f"Restored {report.path} from {report.snapshot}, verified")
    if report.kept:
        click.echo(f"The store it replaced is kept at {report.kept}")


@in_section("memory ops")
@click.command("restore")
@click.argument("memory_id", required=False)
@click.option(
    "--version", "number", type=int, help="Version to restore (default: the previous one)."
)
@click.option("--list", "list_only", is_flag=True, help="List the versions instead of restoring.")
@click.option(
    "--from",
    "snapshot",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Replace the whole store with this verified snapshot (see backup).",
)
@click.option("--force", is_flag=True, help="With --from: replace an existing store.")
@_NO_EMBED
@_NO_AUTO_ANCHOR
@json_option
def restore_cmd(
    memory_id: str | None,
    number: int | None,
    list_only: bool,
    snapshot: Path | None,
    force: bool,
    no_embed: bool,
    no_auto_anchor: bool,
    as_json: bool,
) -> None:
    """Bring back an earlier version of a memory's content (kept as a new version), or with
    --from SNAPSHOT the whole store from a backup.

    `memlane restore ID` brings back the previous version (--version N another one) as a new
    version; --list lists the versions instead.

    `memlane restore --from SNAPSHOT` replaces the whole store with a snapshot `backup`
    made. The snapshot is verified first (`integrity_check`, a schema this memlane reads);
    an existing store is replaced only with --force, never while a consolidate or organize
    run holds its lock, and only after a copy of it is kept beside it as
    `memlane.db.pre-restore-<time>` (a name retention never deletes). Stale `-wal` and
    `-shm` files are removed, and the restored store is verified against the snapshot's
    counts. Stop other memlane processes on the store first. On a PostgreSQL store it
    refuses and names the server's tools (see `backup`)."""
    if snapshot is not None:
        if memory_id or number is not None or list_only:
            raise click.UsageError("--from restores the whole store: give no memory id")
        _restore_store(snapshot, force, as_json)
        return
    if memory_id is None:
        raise click.UsageError("give a memory id, or --from SNAPSHOT")
    mem = _writer(no_embed)
    if list_only:
        versions = mem.history(memory_id)
        if as_json:
            emit_json(
                {"id": versions[-1].memory_id, "versions": [version_dict(v) for v in versions]}
            )
        else:
            for v in versions:
                mark = "current" if v.valid_until is None else f"until {plain(v.valid_until)}"
                click.echo(printable(f"v{v.number}  from {plain(v.valid_from)}  {mark}  {v.title}"))
        return
    result = mem.restore(memory_id, number, auto_anchor=not no_auto_anchor)
    _report(result, as_json, "Restored entry")


@in_section("memory ops")
@click.command("supersede")
@click.argument("memory_id")
@click.option("--content", help="Content of the successor ('-': stdin).")
@click.option(
    "-f", "--file", "--content-file", "file", help="Read the successor's content from a file."
)
@click.option("-t", "--title", help="Title of the successor.")
@click.option("--reason", help="Why the old memory is superseded.")
@click.option(
    "--importance",
    type=int,
    help=f"Importance of the successor ({_IMPORTANCE_RANGE}; default: inherited).",
)
@_NO_EMBED
@json_option
def supersede_cmd(
    memory_id: str,
    content: str | None,
    file: str | None,
    title: str | None,
    reason: str | None,
    importance: int | None,
    no_embed: bool,
    as_json: bool,
) -> None:
    """Replace a memory by a new one; the old one stays for audit with superseded_by.

    The successor inherits kind, category, scope, tags and visibility; the old memory keeps
    --reason and stops surfacing in reads of the present."""
    text = pick_content(content, file)
    if text is None:
        fail("supersede needs the new content: --content, --file or '-'")
    extra: dict[str, Any] = {"importance": importance} if importance is not None else {}
    result = _writer(no_embed).supersede(memory_id, text, title=title, reason=reason, **extra)
    _report(result, as_json, f"Superseded {memory_id} by")


@in_section("memory ops")
@click.command("invalidate")
@click.argument("memory_id")
@click.option("--reason", required=True, help="Why it is no longer true (required).")
@json_option
def invalidate_cmd(memory_id: str, reason: str, as_json: bool) -> None:
    """End a memory's validity now, recording why it is no longer true.

    The memory stays for reads of the past (`list --as-of`) and audit; it has no successor
    (see `supersede` for one)."""
    _report_record(memory().invalidate(memory_id, reason), as_json, "Invalidated")


@in_section("memory ops")
@click.command("retire")
@click.argument("memory_id")
@click.option("--reason", help="Why it is retired.")
@json_option
def retire_cmd(memory_id: str, reason: str | None, as_json: bool) -> None:
    """Retire a memory that has no successor; it stays for audit and for reads of the
    past (`list --as-of`)."""
    _report_record(memory().retire(memory_id, reason), as_json, "Retired")


@in_section("memory ops")
@click.command("merge")
@click.argument("memory_ids", nargs=-1, required=True)
@click.option("--into", "content", required=True, help="Content of the merged memory ('-': stdin).")
@click.option("-t", "--title", help="Title of the merged memory.")
@click.option(
    "--importance",
    type=int,
    help=f"Importance ({_IMPORTANCE_RANGE}; default: the sources' highest).",
)
@_NO_EMBED
@json_option
def merge_cmd(
    memory_ids: tuple[str, ...],
    content: str,
    title: str | None,
    importance: int | None,
    no_embed: bool,
    as_json: bool,
) -> None:
    """Merge memories into one new memory; the sources are superseded by it.

    The merged memory's importance is the sources' highest (unless --importance), its tags
    their union. Every ID must name a live memory you may see: one that does not (a typo,
    another owner's private memory) is an error (exit 1) and nothing is merged."""
    text = pick_content(content, None)
    extra: dict[str, Any] = {"importance": importance} if importance is not None else {}
    result = _writer(no_embed).merge(memory_ids, text or "", title=title, **extra)
    _report(result, as_json, "Merged into")


@in_section("memory ops")
@click.command("delete")
@click.argument("memory_id")
@json_option
def delete_cmd(memory_id: str, as_json: bool) -> None:
    """Delete a memory from every table and index (the journal keeps a line, no content).

    The same as `forget ID`."""
    done = memory().delete(memory_id)
    if as_json:
        emit_json({"id": done.ids[0], "status": "deleted", **_copies_dict(done)})
    else:
        click.echo(f"Deleted entry: {done.ids[0]}")
        _tell_copies(done)


@in_section("memory ops")
@click.command("forget")
@click.argument("memory_id", required=False)
@click.option("--reason", help="Why, kept in the journal (never repeat the content here).")
@click.option("--scope", help="Forget every memory of this scope instead (needs --confirm).")
@click.option("--confirm", is_flag=True, help="With --scope: really forget them all.")
@json_option
def forget_cmd(
    memory_id: str | None, reason: str | None, scope: str | None, confirm: bool, as_json: bool
) -> None:
    """Remove a memory (or a whole scope) from every table and index, leaving only a journal
    line without content.

    `memlane forget ID` removes the memory's content and versions, its keyword index entries
    (segments merged, freed pages zeroed), its vectors and chunks (the vector index file is
    rebuilt on next use), its links and mentions (and an entity only it named), and the wake
    log's rows about it. The journal keeps one line: who, when, and --reason (never repeat
    the content there).

    Forgetting reaches copies: the forgotten sentences are taken out of every memory derived
    from it (a consolidation keeper, a topic or session summary, a merge, an insight, and
    what was derived from those), in their versions too; a copy made only of them is
    forgotten with it; `pack --out` files that held it are written again. The output (and
    --json: `scrubbed`, `removed`, `unchanged`, `packs`, `warnings`) says which memories
    changed, and names derived memories where no sentence of it was found (a paraphrase:
    check them); another owner's private copy is scrubbed all the same but never named.

    `memlane forget --scope S --confirm` forgets every memory of a scope (a project's with
    its branches) you may see, whatever its state, in one transaction: the public ones and
    your own private ones, never another owner's. Without --confirm it says how many it
    would forget and exits 2. The id of another owner's private memory is not found, as if
    it did not exist."""
    if (memory_id is None) == (scope is None):
        raise click.UsageError("give a memory id or --scope S (not both)")
    mem = memory()
    done = (
        mem.forget(memory_id, reason)
        if memory_id
        else mem.forget_scope(scope or "", confirm=confirm, reason=reason)
    )
    ids = list(done.ids)
    if as_json:
        emit_json({"forgotten": ids, "count": len(ids), **_copies_dict(done)})
    else:
        click.echo(
            f"Forgot {len(ids)} memor{'y' if len(ids) == 1 else 'ies'}"
            + (f": {ids[0]}" if len(ids) == 1 else "")
        )
        _tell_copies(done)


def _copies_dict(done: Forgotten) -> dict[str, list[str]]:
    return {
        "scrubbed": list(done.scrubbed),
        "removed": list(done.removed),
        "unchanged": list(done.unchanged),
        "packs": list(done.packs),
        "warnings": list(done.warnings),
    }


def _tell_copies(done: Forgotten) -> None:
    """What forgetting did to the memories derived from what was forgotten."""
    if done.scrubbed:
        click.echo(f"Removed its text from {', '.join(done.scrubbed)}")
    if done.removed:
        click.echo(f"Forgot too, made only of its text: {', '.join(done.removed)}")
    if done.unchanged:
        note(f"derived from it, no sentence of it found (check them): {', '.join(done.unchanged)}")
    if done.packs:
        click.echo(f"Wrote again without it: {', '.join(done.packs)}")
    for warning in done.warnings:
        note(warning)
