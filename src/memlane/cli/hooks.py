"""`hook`: answer an agent host's hook event (Claude Code, Codex) on stdin/stdout."""

from __future__ import annotations

import json
import sys

import click

from memlane.cli.common import in_section, json_option, state
from memlane.cli.main import SETTINGS_ERROR
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
    """Answer a host's hook EVENT (session-start, user-prompt, pre-compact, stop,
    session-end): its JSON on stdin, its JSON on stdout. Always exits 0; errors go to
    the hooks log."""
    from memlane.hooks.run import handle

    ctx = click.get_current_context()
    current = state()
    report = handle(
        event, host_name, _stdin(), current.settings or None, db=current.db,
        settings_error=ctx.find_root().meta.get(SETTINGS_ERROR), ignored=tuple(ctx.args),
    )  # fmt: skip
    payload = report.as_dict() if as_json else report.output
    click.echo(json.dumps(payload, ensure_ascii=False))


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
