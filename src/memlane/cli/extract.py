"""`memlane extract`: a transcript's new turns into memories, as the capture hooks do."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from memlane import config
from memlane.cli.common import emit_json, fail, in_section, json_option, memory, note, state
from memlane.timeutil import utcnow

transcript_option = click.option(
    "--transcript",
    "path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A Claude Code (or Codex) transcript, JSON lines.",
)


@in_section("hooks")
@click.command("extract")
@transcript_option
@click.option("--session", help="The session it belongs to (default: the file's path).")
@click.option(
    "--llm/--no-llm",
    "use_llm",
    default=None,
    help="Ask MEMLANE_LLM_CMD (the default when it is set) or only the cue-phrase extractor.",
)
@json_option
def extract_cmd(path: Path, session: str | None, use_llm: bool | None, as_json: bool) -> None:
    """Turn the transcript's turns not read before into memories: facts, preferences,
    decisions, procedures, lessons, through the write policy. With MEMLANE_LLM_CMD the
    command proposes them under its budget; without it (or with --no-llm) the cue-phrase
    extractor keeps what cue phrases reveal, with a lower confidence. A cursor per session
    remembers how far the file was read.

    The capture the pre-compact and session-end hooks run (see `hook`), on a transcript file
    (Claude Code's or Codex's JSON lines); the cursor is kept per session (by default the
    file's path) and per mode. The cue-phrase extractor keeps decisions, preferences,
    conventions, constraints, procedures and corrections, each with the sentences that
    give its instruction and reason, at confidence 0.45 (a model's or a person's note gets
    0.6). It prints what it captured, and notes a budget breach or a skipped malformed
    answer on stderr."""
    from memlane.hooks.events import capture_transcript
    from memlane.hooks.run import options

    chosen = options(state().settings)
    if use_llm and not chosen.llm_cmd:
        raise click.UsageError("--llm needs MEMLANE_LLM_CMD")
    wanted = bool(chosen.llm_cmd) if use_llm is None else use_llm
    source = str(path.resolve())
    outcome = capture_transcript(source, session, "transcript", memory, chosen, wanted)
    details = dict(outcome.details)
    if as_json:
        emit_json(
            {
                "transcript": source,
                "session": session or source,
                "captured": list(outcome.captured),
                **details,
            }
        )
        if details.get("failed"):
            sys.exit(1)
        return
    for memory_id in outcome.captured:
        record = memory().get(memory_id)
        click.echo(f"{record.id}  [{record.kind.value}] {record.title}")
    click.echo(
        f"captured {len(outcome.captured)} of {details.get('proposed', 0)} proposed from "
        f"{details.get('turns', 0)} new turns ({details.get('mode')})"
    )
    if details.get("llm_breach"):
        note(f"the model stopped early: {details['llm_breach']}")
    for why in details.get("llm_malformed", []):
        note(f"an answer was skipped as malformed: {why}")
    if details.get("failed"):
        fail(
            f"{details['failed']} could not be stored ({details['error']}); their turns "
            "are read again next time",
            code=1,
        )


def _hook_dir() -> Path:
    return Path(state().settings["hook_dir"]).expanduser()


def _queue_scope(given: str | None) -> str:
    """The queue's scope: the one given, else this project's (global outside one),
    found without opening the store."""
    from memlane.scope import GLOBAL, parse_scope

    if given:
        return parse_scope(given)
    project = config.context_for(state().settings).project
    return f"project:{project}" if project else GLOBAL


def _queued_line(item: Any) -> str:
    return f"{item.id}  {item.confidence:.2f}  [{item.type}] {item.message}"


@in_section("hooks")
@click.command("corrections")
@transcript_option
@click.option("--scope", help="The queue to add them to (default: this project's).")
@click.option("--no-queue", is_flag=True, help="Only print them; queue nothing.")
@json_option
def corrections_cmd(path: Path, scope: str | None, no_queue: bool, as_json: bool) -> None:
    """Mine a transcript for what a person corrected ("no, use X instead") or asked to be
    remembered, into the review queue (`memlane queue list`). Read-only: the store is never
    opened; what clears review is added with `memlane add --signal user`.

    Corrections ("no, use X instead", "that's wrong", "stop using ...") and notes ("remember
    that ...") are found each sentence once, with the cues they matched and a confidence
    (0.7 for a correction, 0.6 for a note, 0.1 more for each further cue, at most 0.9). They
    go to the review queue of the scope (this project's by default); likely secrets are
    masked first. Mining the same transcript again queues nothing twice."""
    from memlane.hooks import queue, transcript
    from memlane.hooks.extract import corrections

    source = str(path.resolve())
    found = corrections(transcript.read(source).turns)
    now = utcnow()
    items = [queue.queued(c, source, now) for c in found]
    where = _queue_scope(scope)
    added = [] if no_queue else queue.add(_hook_dir(), where, items)
    if as_json:
        emit_json(
            {
                "count": len(items),
                "queued": len(added),
                "scope": where,
                "items": [queue.as_dict(q) for q in items],
            }
        )
        return
    for item in items:
        click.echo(_queued_line(item))
    if not no_queue:
        note(
            f"{len(added)} new in the {where} review queue ({len(items) - len(added)} there already)"
        )


@in_section("hooks")
@click.group("queue")
def queue_group() -> None:
    """The review queue of mined corrections (see `memlane corrections`)."""


@queue_group.command("list")
@click.option("--scope", help="The queue (default: this project's).")
@json_option
def queue_list_cmd(scope: str | None, as_json: bool) -> None:
    """The corrections waiting for review, oldest first.

    The queue is a JSON file per scope in MEMLANE_HOOK_DIR/queue."""
    from memlane.hooks import queue

    where = _queue_scope(scope)
    items = queue.load(_hook_dir(), where)
    if as_json:
        emit_json({"scope": where, "count": len(items), "items": [queue.as_dict(q) for q in items]})
        return
    for item in items:
        click.echo(_queued_line(item))
    if not items:
        note(f"the {where} review queue is empty")


@queue_group.command("clear")
@click.option("--id", "ids", multiple=True, help="A reviewed item to remove (repeatable).")
@click.option("--all", "everything", is_flag=True, help="Empty the queue.")
@click.option(
    "--drop-stale",
    is_flag=True,
    help="Remove items queued over 14 days ago with confidence below 0.7.",
)
@click.option("--scope", help="The queue (default: this project's).")
@json_option
def queue_clear_cmd(
    ids: tuple[str, ...], everything: bool, drop_stale: bool, scope: str | None, as_json: bool
) -> None:
    """Remove reviewed items (--id), every item (--all) or stale ones (--drop-stale):
    exactly one of them, so a bare `clear` never empties a queue by mistake.

    A bare `clear` is refused (exit 2), as is an id not in the queue. Stale items were
    queued over 14 days ago below confidence 0.7."""
    from memlane.hooks import queue

    if sum((bool(ids), everything, drop_stale)) != 1:
        raise click.UsageError("give exactly one of --id, --all, --drop-stale")
    where = _queue_scope(scope)
    known = {q.id for q in queue.load(_hook_dir(), where)}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise click.UsageError(f"not in the {where} queue: {', '.join(unknown)}")
    removed = queue.clear(_hook_dir(), where, ids=ids, everything=everything, stale=drop_stale)
    if as_json:
        emit_json({"scope": where, "removed": [q.id for q in removed]})
        return
    click.echo(f"removed {len(removed)} from the {where} review queue")
