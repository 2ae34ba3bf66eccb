"""Moving memories between scopes: `rekey-namespace`, `canonicalize-projects` and
`promote`."""

from __future__ import annotations

from pathlib import Path

import click

from memlane.cli.common import emit_json, in_section, json_option, memory, state
from memlane.cli.progress import progress_bar
from memlane.lifecycle.promote import Verdict
from memlane.scope import load_aliases
from memlane.services.scoping import Move, Moves


def _move_dict(move: Move) -> dict[str, str]:
    return {"id": move.id, "from": move.old, "to": move.new, "title": move.title}


def _report(moves: Moves, as_json: bool) -> None:
    verb = "would move" if moves.dry_run else "moved"
    if as_json:
        emit_json(
            {
                "dry_run": moves.dry_run,
                "count": len(moves.moves),
                "moves": [_move_dict(m) for m in moves.moves],
            }
        )
        return
    if not moves.moves:
        click.echo("nothing to move")
        return
    for (old, new), count in moves.by_scope().items():
        memories = f"{count} memor{'y' if count == 1 else 'ies'}"
        if old == new:  # a global memory naming the project it was written in
            click.echo(f"{verb} {memories} of {old} to the canonical project name")
        else:
            click.echo(f"{verb} {memories}: {old} -> {new}")
    if not moves.dry_run:
        click.echo("each keeps its old scope in its history (memlane history ID)")


@in_section("memory ops")
@click.command("rekey-namespace")
@click.argument("old")
@click.argument("new")
@click.option("--dry-run", is_flag=True, help="Show what would move; write nothing.")
@json_option
def rekey_namespace_cmd(old: str, new: str, dry_run: bool, as_json: bool) -> None:
    """Move every memory of scope OLD to scope NEW.

    For a renamed project or a merged branch. Every memory you may see moves, in any state (superseded and retired ones too), under
    the same id; its prior version keeps the old scope in its reason, shown by `history`,
    and `journal` gets a move line. When OLD and NEW are both whole projects
    (project:NAME), OLD's branch scopes move to the same branches of NEW. `update ID
    --scope S` moves one memory the same way."""
    with progress_bar("moving", as_json or dry_run) as tell:
        moves = memory().scopes.rekey(old, new, dry_run=dry_run, progress=tell)
    _report(moves, as_json)


@in_section("memory ops")
@click.command("canonicalize-projects")
@click.option("--dry-run", is_flag=True, help="Show what would move; write nothing.")
@json_option
def canonicalize_projects_cmd(dry_run: bool, as_json: bool) -> None:
    """Fold aliased projects' memories into the canonical project.

    The alias map (`memlane projects alias`, MEMLANE_PROJECT_ALIASES) keeps new writes
    of a renamed directory under the project's name; this moves what was stored under
    the old names: project:OLD and its branches go to project:NEW and the same branches,
    a global memory written in OLD names NEW as its project, and so do OLD's sessions
    and reminders. Each move is kept in the memory's history, as `rekey-namespace`
    keeps it."""
    aliases = load_aliases(Path(state().settings["project_aliases"]).expanduser())
    with progress_bar("moving", as_json or dry_run) as tell:
        moves = memory().scopes.canonicalize(aliases, dry_run=dry_run, progress=tell)
    _report(moves, as_json)


def _verdict_dict(verdict: Verdict) -> dict[str, object]:
    return {
        "id": verdict.id,
        "scope": verdict.scope,
        "to": verdict.target,
        "eligible": verdict.eligible,
        "why": verdict.why,
    }


@in_section("lifecycle")
@click.command("promote")
@click.argument("memory_id", required=False)
@click.option("--candidates", is_flag=True, help="List the memories eligible now, with why.")
@click.option("--scope", help="With --candidates: only this scope (a project's with its branches).")
@click.option("--reason", help="Why it is promoted (kept with the prior version).")
@json_option
def promote_cmd(
    memory_id: str | None, candidates: bool, scope: str | None, reason: str | None, as_json: bool
) -> None:
    """Move a memory one rung up the scope ladder.

    A branch's memory goes to its project, a project's to global. Only explicit feedback earns a climb (`memlane feedback ID --applied`): applied 3
    times, never violated, a week old, confidence 0.6 or more, not from the web; only
    lessons, conventions, procedures, preferences, constraints and insights go global.
    A refusal says which rule failed. --candidates lists the eligible memories. The
    move is kept in the memory's history, as `rekey-namespace` keeps it."""
    if candidates == (memory_id is not None):
        raise click.UsageError("give a memory id or --candidates (not both)")
    if scope is not None and not candidates:
        raise click.UsageError("--scope goes with --candidates")
    if candidates:
        _candidates(memory().scopes.promotion_candidates(scope or "all"), as_json)
        return
    move = memory().scopes.promote(memory_id or "", reason)
    if as_json:
        emit_json(_move_dict(move))
    else:
        click.echo(f"Promoted {move.id}: {move.old} -> {move.new}")


def _candidates(verdicts: list[Verdict], as_json: bool) -> None:
    if as_json:
        emit_json([_verdict_dict(v) for v in verdicts])
        return
    if not verdicts:
        click.echo("no promotion candidates")
        return
    for v in verdicts:
        click.echo(f"{v.id}  {v.scope} -> {v.target}  ({v.why})")
