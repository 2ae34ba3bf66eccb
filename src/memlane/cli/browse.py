"""`memlane browse`: the terminal browser, or a grouped summary without a terminal."""

from __future__ import annotations

import sys

import click

from memlane.cli.common import echo_stored, emit_json, fail, in_section, json_option, memory
from memlane.cli.render import record_dict
from memlane.tui import view

# The browser's default, kept here too: the summary must not import Textual.
DEFAULT_LIMIT = 2_000


def on_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def run_browser(
    by: str, scope: str | None, limit: int, review: bool, review_limit: int | None = None
) -> None:
    """The Textual browser over this store; a one-line error without the tui extra.
    `scope` None: this project and global."""
    try:
        from memlane.tui.app import Browser
    except ImportError:
        fail("the browser needs the tui extra: pip install 'memlane[tui]'")
    mem = memory()
    mem.filters(scope=scope)  # a bad scope is a one-line error here, not a crash inside
    Browser(
        mem,
        by=by,
        scope=scope,
        limit=limit,
        review=review,
        store_label=str(mem.stats().path),
        review_limit=review_limit,
    ).run()


@in_section("memory ops")
@click.command("browse")
@click.option(
    "--by",
    type=click.Choice(view.GROUPINGS),
    default="kind",
    show_default=True,
    help="Group the tree by kind, scope, tag or session.",
)
@click.option(
    "--scope", default="all", show_default=True, help="Scope to show: project:NAME, global, all."
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=DEFAULT_LIMIT,
    show_default=True,
    help="At most N memories, newest first.",
)
@click.option("--review", is_flag=True, help="Start by walking the memories due for review.")
@json_option
def browse_cmd(by: str, scope: str, limit: int, review: bool, as_json: bool) -> None:
    """Look through memories in the terminal: a tree by kind, scope, tag or session, each
    memory's card, search, history, graph neighbourhood; reinforce, review, invalidate or
    retire after a confirmation. Without a terminal (or with --json), prints the groups
    instead.

    Needs the tui extra: `pip install 'memlane[tui]'`. Left, the live memories as a tree
    grouped by kind, newest first with a count per group; right, the highlighted memory as
    Markdown with its metadata (scope, importance and its effective resonance after decay,
    trust, taint, source, times, versions, links, entities).

    \b
    Keys:
    - `/` filters live by text, `s` runs `recall` and shows each result's score parts;
    - `b` switches the grouping (kind, scope, tag, session), `p` narrows to a scope;
    - `h` shows the history with a diff between versions;
    - `g` the graph neighbourhood (links and entities, one hop; Enter opens a linked memory);
    - `n` lists Claude Code's own memory files for this user and project, read-only:
      `~/.claude/CLAUDE.md` and its rules, the project's `CLAUDE.md`, `.claude/CLAUDE.md`
      and `CLAUDE.local.md` (here and in each directory above), the files they import with
      `@path`, and auto memory (`~/.claude/projects/<project>/memory/`), each shown as
      Markdown;
    - `r` reloads, `?` lists the keys.
    - Writes ask first: `f` reinforce, `m` mark reviewed, `i` invalidate with a reason,
      `x` retire; `v` walks the review queue (as `memlane review --tui`).

    --scope and --limit (the newest memories) bound what it loads. Without a terminal
    (piped, in CI) it prints the groups with their newest memories; --json prints every
    group with its memories."""
    if on_terminal() and not as_json:
        run_browser(by, scope, limit, review)
        return
    mem = memory()
    shown, more = view.newest_live(mem, scope, limit)
    groups = view.group(shown, by)
    if as_json:
        emit_json(
            {
                "by": by,
                "count": len(shown),
                "more": more,
                "groups": [
                    {
                        "label": g.label,
                        "count": len(g.records),
                        "memories": [record_dict(r) for r in g.records],
                    }
                    for g in groups
                ],
            }
        )
        return
    echo_stored(view.summary(groups, by, len(shown), more=more), nl=False)
