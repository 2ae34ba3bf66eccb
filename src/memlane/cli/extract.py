"""`memlane extract`: a transcript's new turns into memories, as the capture hooks do."""

from __future__ import annotations

from pathlib import Path

import click

from memlane.cli.common import emit_json, in_section, json_option, memory, note, state


@in_section("hooks")
@click.command("extract")
@click.option("--transcript", "path", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A Claude Code (or Codex) transcript, JSON lines.")  # fmt: skip
@click.option("--session", help="The session it belongs to (default: the file's path).")
@click.option("--llm/--no-llm", "use_llm", default=None,
              help="Ask MEMLANE_LLM_CMD (the default when it is set) or only the cue-phrase "
              "extractor.")  # fmt: skip
@json_option
def extract_cmd(path: Path, session: str | None, use_llm: bool | None, as_json: bool) -> None:
    """Turn the transcript's turns not read before into memories: facts, preferences,
    decisions, procedures, lessons, through the write policy. With MEMLANE_LLM_CMD the
    command proposes them under its budget; without it (or with --no-llm) the cue-phrase
    extractor keeps what cue phrases reveal, with a lower confidence. A cursor per
    session remembers how far the file was read."""
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
        emit_json({"transcript": source, "session": session or source,
                   "captured": list(outcome.captured), **details})  # fmt: skip
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
