"""`hook`: answer an agent host's hook event (Claude Code, Codex) on stdin/stdout."""

from __future__ import annotations

import json
import sys

import click

from memlane.cli.common import SETTINGS_PROBLEMS, in_section, json_option, state
from memlane.hooks.host import CLAUDE_CODE, MAX_PAYLOAD_BYTES


@in_section("hooks")
# Unknown options and a missing EVENT are logged, not refused: a usage error exits 2,
# which a host reads as "block this prompt".
@click.command("hook", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("event", metavar="EVENT", required=False, default="")
@click.option(
    "--host",
    "host_name",
    default=CLAUDE_CODE,
    show_default=True,
    help="The host whose JSON comes in and goes out: claude-code or codex.",
)
@json_option
def hook_cmd(event: str, host_name: str, as_json: bool) -> None:
    """Answer a host's hook EVENT (session-start, user-prompt, pre-tool, subagent-start,
    pre-compact, stop, session-end): its JSON on stdin, its JSON on stdout. Always exits
    0; errors go to the hooks log (and to stderr when it is run at a terminal).

    What `install` registers with the host (Claude Code's hook contract, which Codex shares;
    Codex has no session-end). --json prints memlane's account instead: `output` (the host's
    JSON), `reason`, `injected`, `captured`, `error`, `details`.

    The commands the injected text names (`memlane show ID`, `memlane recall QUERY`,
    `memlane add`) are `memlane` when that is this installation on the PATH, else this
    interpreter with `-m memlane` (with `--db` when the hook was given one): what the
    agent runs from them works whether or not memlane is on the host's PATH.

    \b
    - session-start injects a fenced `<memlane-session>` block: due reminders, then core
      memories, then recent ones (the agent's wake cascade when MEMLANE_AGENT is set; else
      importance 8+ and the last 7 days), in this project's scopes, within
      MEMLANE_INJECT_BUDGET tokens.
      Then, at most once an hour, it starts `memlane upkeep` detached (backup --if-due,
      sweep, organize when due; MEMLANE_HOOK_UPKEEP=0 turns it off) and answers without
      waiting for it.
    - user-prompt runs a passive recall on the prompt plus the session's recent tool
      operations (program and subcommand names, file basenames and test names from the
      transcript's last 64 KiB; never argument values) and injects a `<memlane-recall>`
      block of at most 3 memories, only those that clear the gate: at least 1.5 shared
      content words (a tool-operation word counts half), covering at least a quarter of
      the prompt's, from a hit scoring at least 0.8 of the best. A prompt that could never
      clear it (`ok`, `/compact`) is answered before the store is opened.
    - stop captures the turns added since the last capture with the cue-phrase extractor:
      what a person says that opens or frames a correction (`No, use X`), a preference
      (`I prefer`, `always`/`never`, `from now on`), a decision (`we decided`, `let's go
      with`) or a convention (`convention:`, `we always`), or asks to be remembered, kept
      whole as said; the assistant's text only where it labels a line (`Decision:`).
      Questions, code, quotes, tool results and injected text are never read.
    - pre-compact and session-end capture the same way, or with MEMLANE_LLM_CMD set, with
      that command under its budget (MEMLANE_LLM_MAX_CALLS, MEMLANE_LLM_MAX_TOKENS,
      MEMLANE_LLM_TIMEOUT); the transcript goes in pieces of at most 8,000 tokens, and
      what the command never saw goes to the cue extractor. session-end then closes the
      session and writes its episode summary (`sessions close`).
    - pre-tool (registered by `install --pre-tool`, for the tools that run a command or
      write a file; experimental) injects a `<memlane-tool>` block of at most 2 rules
      (lessons, constraints, conventions, preferences) that name what the call touches:
      a file it edits or names, or its directory (in this project), or its words
      (subcommands, options, plain arguments; the program itself counts a quarter
      unless the rule names it as what not to use). A command that only looks (ls, cat,
      grep, sed without -i, `git diff`, `docker compose ps`) is left alone, and so are
      quoted messages and here-documents; a rule that names options (`--force`) speaks
      only to calls that give one, and one on a setting (`--target prod`,
      `DBT_TARGET=prod`) not to calls that set another. It never asks the host to deny
      or hold the call, and stays silent otherwise.
    - subagent-start reads the delegated task (the payload's prompt, else the newest
      Task or agent call in the parent's transcript) as user-prompt reads a prompt, for
      the subagent's context.
    - stop, after its capture, reads the transcript since the last Stop for a test,
      compile or lint run (pytest, cargo, tsc, ruff, ...) that failed and later
      succeeded (Claude Code's `is_error`, Codex's exit code) and, when there is one,
      asks the agent to save what fixed it as a lesson grounded in that signal (the
      host's block decision, with the request as its reason): once a session, and never
      while the host is already continuing for a hook.

    MEMLANE_LLM_CMD's answer must be JSON lines `{"kind", "content", "title"?, "importance"?
    1-10, "tags"? at most 8, "entities"? at most 8}` (kinds: decision, preference,
    convention, lesson, procedure, fact, constraint; a bug fixed is a lesson), or `{"kind":
    "relation", "subject", "predicate", "object"}` (stored as a fact "SUBJECT PREDICATE
    OBJECT.", tagged `relation`, and as a relation of the entity graph learned from that
    fact: `memlane relationships NAME`); the entities a line names become `entity:NAME` tags. A
    fence around the lines is allowed. An answer with any other line is asked once more with
    the error; a second malformed answer is skipped whole, never stored in part, and logged
    (`llm_malformed`). A piece that would break the budget, a failed run or a timeout stops
    the capture (`llm_breach`). A hook started inside the command does nothing.

    Every capture goes through the write policy (secrets redacted, injection-shaped text
    tagged, duplicates skipped or refreshed), `untrusted_tool`, in the project's scope (not
    the branch's), tagged `captured`, with the session as `session_id` and source ref
    `session:ID`; what a person said carries signal `user`; what the cue extractor keeps has
    confidence 0.45. Each session keeps a cursor per capture mode in MEMLANE_HOOK_DIR, so
    each transcript line is read once. Each memory a hook writes is also appended, secrets
    redacted, to the day's capture log, `captures/DATE.jsonl` in MEMLANE_HOOK_DIR (unless
    MEMLANE_CAPTURE_LOG is 0), which `import captures` replays. Injection counts as surfaced, never as a use.

    The user-prompt gate is tuned for precision first: a memory injected unasked that has
    nothing to do with the prompt costs more than one left out. `bench/hook_gate.py`
    measures its precision and recall on the gold set in `tests/hook_gold.py` (prompts
    that should bring memories, and near misses that should stay silent).

    A hook never breaks its host: a payload that is not the event's JSON, an unknown event,
    a store that cannot be opened or any internal error prints `{}` and exits 0, and the
    error is logged to `hooks.log` in MEMLANE_HOOK_DIR. A bad setting (in the environment
    or the settings file) does not stop it: that one setting falls back to its default,
    and the line logs the problem under `settings`. Every run logs one line
    there (event, session, reason, ids, milliseconds), never a prompt or a memory's text."""
    from memlane.hooks.run import handle

    ctx = click.get_current_context()
    current = state()
    report = handle(
        event,
        host_name,
        _stdin(),
        current.settings,
        db=current.db,
        settings_problems=tuple(ctx.find_root().meta.get(SETTINGS_PROBLEMS, ())),
        ignored=tuple(ctx.args),
    )
    payload = report.as_dict() if as_json else report.output
    click.echo(json.dumps(payload, ensure_ascii=False))
    if _at_terminal():
        # A person typing, not a host: say what the log says (a host only reads stdout,
        # and the exit status stays 0 for it either way).
        for problem in (*report.settings_problems, *([report.error] if report.error else [])):
            click.echo(f"memlane hook: {problem}", err=True)


def _at_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):
        return False


def _stdin() -> str:
    """The host's payload; nothing from a terminal (a person typing is not a host) or
    from a stream that cannot be read (the hook then logs a bad payload). It is read
    no further than one byte past the largest payload, which `host.parse` refuses."""
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return ""
        return sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""
