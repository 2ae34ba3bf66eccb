"""`memlane reflect`: insights from new memories, and pack operations for approval."""

from __future__ import annotations

import sys
from typing import Any

import click

from memlane.cli.common import emit_json, in_section, json_option, memory, note, state
from memlane.cli.progress import progress_steps
from memlane.lifecycle.reflect import BATCH_SIZE, MIN_NEW, Proposal


def _proposal_dict(p: Proposal) -> dict[str, Any]:
    return {
        "id": p.id,
        "op": p.op,
        "ids": list(p.ids),
        "reason": p.reason,
        "content": p.content,
        "title": p.title,
        "diff": p.diff,
        "private": p.private,
    }


def _show(p: Proposal) -> None:
    names = ", ".join(p.ids) or "nothing"
    click.echo(f"{p.id}  {p.op} ({names}): {p.reason}")
    for line in p.diff.splitlines():
        colour = "green" if line.startswith("+") else "red" if line.startswith("-") else None
        click.secho(f"    {line}", fg=colour)


def on_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def llm_model(settings: dict[str, Any] | None = None) -> Any:
    """The model MEMLANE_LLM_CMD names, under the capture budget settings (`settings`,
    else this command's); None when no command is set. A new one for each run: each
    has its own budget."""
    from memlane.lifecycle.llm import Budget, Model

    s = state().settings if settings is None else settings
    if not s["llm_cmd"]:
        return None
    return Model(s["llm_cmd"], Budget(s["llm_max_calls"], s["llm_max_tokens"], s["llm_timeout"]))


@in_section("lifecycle")
@click.command("reflect")
@click.option(
    "--days",
    type=click.IntRange(min=1),
    help="Without a watermark yet, only memories of the last N days.",
)
@click.option(
    "--min-new",
    type=click.IntRange(min=0),
    default=MIN_NEW,
    show_default=True,
    help="Skip the run while fewer memories are new (the novelty gate).",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=BATCH_SIZE,
    show_default=True,
    help="Memories per batch, oldest first.",
)
@click.option("--drain", is_flag=True, help="Every batch until none is left (or the budget is).")
@click.option("--scope", help="Scope (default: this project and global).")
@click.option("--list", "listing", is_flag=True, help="Only list the proposals waiting.")
@click.option(
    "--apply",
    "apply_ids",
    multiple=True,
    metavar="ID",
    help="Apply these waiting proposals (repeatable).",
)
@json_option
def reflect_cmd(
    days: int | None,
    min_new: int,
    batch_size: int,
    drain: bool,
    scope: str | None,
    listing: bool,
    apply_ids: tuple[str, ...],
    as_json: bool,
) -> None:
    """Reflect on the memories not reflected on yet: with MEMLANE_LLM_CMD, 3-5 insights
    stored as `insight` memories linked to their sources, and operations on the curated pack
    (add, rewrite, merge, retire) shown as a diff of the pack and applied only on approval
    (--apply ID, or asked one by one on a terminal). Without it, the deterministic part:
    the memories it would reflect on (the next batch; `batch` in --json), clusters of alike
    memories, the stale and the contradicting.

    A watermark per scope (the newest memory reflected on) makes each memory reflected on
    once, and insights are never read again; the novelty gate skips a run while fewer than
    --min-new memories are new; --days bounds the first run. Batches go oldest first, one
    per run, every one with --drain.

    With MEMLANE_LLM_CMD (under the capture budget settings: calls, tokens in and out,
    seconds) each batch is sent with the curated pack, and the answer must be one JSON
    object: 3-5 insights, each naming the new memories it draws on, stored as `insight`
    memories (tagged `reflection`, confidence 0.5, through the write policy) linked
    `derives` to their sources; and operations on the pack: `add` (a new memory of
    importance 8), `rewrite` (one memory's content), `merge` (two or more into one) and
    `retire`, each naming its memories and a reason. An answer off the schema, or naming a
    memory it was not shown, is asked again once, then the batch waits for the next run (the
    watermark does not move past it). A spent budget or a timeout stops the run and says how
    many memories wait.

    The operations are only proposed: each is shown with the diff of the pack it would make,
    kept in the store, and applied through the write path only when approved; --list shows
    those waiting. Proposals are each agent's own: another agent neither lists nor applies
    them. When the model was shown any of your private memories, what it wrote stays yours:
    its insights land private, its `add` and `merge` write private memories, and its
    `rewrite` of a public memory is refused.

    Without a model the watermark does not move. A run with a model, and --apply, hold the
    maintenance lock consolidate and organize take: while another holds it, reflect refuses
    (exit 2)."""
    mem = memory()
    if apply_ids:
        _apply(mem, list(apply_ids), scope, as_json)
        return
    if listing:
        waiting = mem.reflection.proposals(scope)
        if as_json:
            emit_json({"proposals": [_proposal_dict(p) for p in waiting]})
            return
        for p in waiting:
            _show(p)
        if not waiting:
            note("no proposals are waiting")
        return
    model = llm_model()
    with progress_steps("reflecting", as_json or model is None):  # a model takes its time
        done = mem.reflection.reflect(
            model, scope=scope, days=days, min_new=min_new, batch_size=batch_size, drain=drain
        )
    if as_json:
        emit_json(
            {
                "scope": done.scope,
                "new": done.new,
                "reflected": done.reflected,
                "insights": list(done.insights),
                "skipped": done.skipped,
                "breach": done.breach,
                "malformed": list(done.malformed),
                "calls": done.calls,
                "tokens": done.tokens,
                "proposals": [_proposal_dict(p) for p in done.proposals],
                "batch": list(done.batch),
                "findings": None
                if done.findings is None
                else {
                    "clusters": [list(c) for c in done.findings.clusters],
                    "stale": [{"id": i, "recall_probability": p} for i, p in done.findings.stale],
                    "contradictions": [list(pair) for pair in done.findings.contradictions],
                },
            }
        )
        return
    _report(mem, done, scope)


def _report(mem: Any, done: Any, scope: str | None) -> None:
    click.echo(f"{done.new} new memories in {done.scope}; reflected on {done.reflected}")
    if done.skipped:
        note(done.skipped)
    for memory_id in done.insights:
        click.echo(f"insight {memory_id}  {mem.get(memory_id).title}")
    if done.batch:
        click.echo(f"would reflect on: {', '.join(done.batch)}")
    if done.findings is not None:
        f = done.findings
        for cluster in f.clusters:
            click.echo(f"alike: {', '.join(cluster)}")
        for memory_id, chance in f.stale:
            click.echo(f"stale: {memory_id} (recall probability {chance:.2f})")
        for a, b in f.contradictions:
            click.echo(f"contradicting: {a} and {b}")
    if done.breach:
        note(f"stopped early: {done.breach}; {done.new - done.reflected} memories wait")
    for why in done.malformed:
        note(f"a batch's answers were malformed and it waits for the next run: {why}")
    for p in done.proposals:
        _show(p)
    if done.proposals and on_terminal():
        chosen = [p.id for p in done.proposals if click.confirm(f"Apply {p.id} ({p.op})?")]
        if chosen:
            _apply(mem, chosen, scope, False)
    elif done.proposals:
        note("apply any with: memlane reflect --apply ID")


def _apply(mem: Any, ids: list[str], scope: str | None, as_json: bool) -> None:
    applied = mem.reflection.apply_proposals(ids, scope)
    if as_json:
        emit_json(
            {
                "applied": [
                    {
                        "id": a.proposal.id,
                        "op": a.proposal.op,
                        "result": list(a.result),
                        "error": a.error,
                    }
                    for a in applied
                ]
            }
        )
        return
    for a in applied:
        if a.error:
            note(f"{a.proposal.id} failed: {a.error}")
        else:
            click.echo(f"applied {a.proposal.id} ({a.proposal.op}): {', '.join(a.result)}")
