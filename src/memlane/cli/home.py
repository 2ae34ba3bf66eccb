"""What a bare `memlane` prints: where the store is, what it holds, what is due, and
the commands to start with. It reads only: no store is created to show it."""

from __future__ import annotations

import click

from memlane.cli.common import state

START = (
    ("add TEXT", "remember something"),
    ("recall QUERY", "the memories that answer a question, with why each was chosen"),
    ("list", "the newest memories in this project"),
    ("doctor", "check the store and the setup"),
    ("install", "give Claude Code or Codex memory through hooks and MCP"),
)


def show_home() -> None:
    current = state()
    missing = current.missing_store()
    click.echo("memlane: long-term memory for AI agents")
    if missing is not None:
        click.echo(f"store: {missing} (no store yet: the first write makes it)")
    else:
        mem = current.memory()
        stats = mem.stats()
        due = len(mem.lifecycle.due_reminders()) if mem.agent else 0
        review = mem.review_due_count()
        click.echo(
            f"store: {stats.path}: {stats.live} live of {stats.total} memories"
            + (f", {due} reminder(s) due" if due else "")
            + (f", {review} due for review (memlane review)" if review else "")
        )
    click.echo("start with:")
    for command, what in START:
        click.echo(f"  memlane {command:<14} {what}")
    click.echo("every command: memlane --help; the reference: docs/commands.md")
