"""Lifecycle commands: reinforce, feedback, review and reviewed."""

from __future__ import annotations

import click

from memlane.cli.common import emit_json, in_section, json_option, memory, note, state
from memlane.cli.render import record_dict, record_line
from memlane.facade.lifecycle import MAX_IMPORTANCE


@in_section("lifecycle")
@click.command("reinforce")
@click.argument("memory_id")
@click.option("--amount", type=int, default=1, show_default=True, help="Importance to add.")
@click.option(
    "--cap", type=int, default=MAX_IMPORTANCE, show_default=True, help="Highest importance."
)
@json_option
def reinforce_cmd(memory_id: str, amount: int, cap: int, as_json: bool) -> None:
    """Raise a memory's importance, reset its decay clock and count the activation."""
    record = memory().reinforce(memory_id, amount, cap)
    if as_json:
        emit_json(record_dict(record))
    else:
        click.echo(
            f"Reinforced {record.id}: importance {record.importance}, "
            f"activated {record.activation_count} time(s)"
        )


@in_section("lifecycle")
@click.command("feedback")
@click.argument("memory_id")
@click.option("--applied", "outcome", flag_value="applied", help="It was applied and held.")
@click.option("--violated", "outcome", flag_value="violated", help="It was violated.")
@json_option
def feedback_cmd(memory_id: str, outcome: str | None, as_json: bool) -> None:
    """Count one use of a memory: applied, or violated (the second violation costs
    0.15 trust)."""
    if outcome is None:
        raise click.UsageError("say how it went: --applied or --violated")
    record = memory().feedback(memory_id, applied=outcome == "applied")
    if as_json:
        emit_json(record_dict(record))
    else:
        click.echo(
            f"Feedback on {record.id}: applied {record.applied_count}, "
            f"violated {record.violated_count}, trust {record.trust_score:.2f}"
        )


@in_section("lifecycle")
@click.command("review")
@click.option("--limit", type=int, help="At most N.")
@click.option("--scope", help="Scope (default: this project and global; 'all': everything).")
@json_option
def review_cmd(limit: int | None, scope: str | None, as_json: bool) -> None:
    """Important memories whose recall has decayed since their last review: check,
    refine or retire them (most decayed first)."""
    settings = state().settings
    due = memory().review(
        settings["review_threshold"], settings["review_min_importance"], limit, scope=scope
    )
    if as_json:
        emit_json({"results": [{**record_dict(r), "recall_probability": round(p, 4)}
                               for r, p in due], "count": len(due)})  # fmt: skip
        return
    for record, probability in due:
        click.echo(f"{probability:5.2f}  {record_line(record)}")
    if not due:
        note("nothing is due for review")


@in_section("lifecycle")
@click.command("reviewed")
@click.argument("memory_id")
@json_option
def reviewed_cmd(memory_id: str, as_json: bool) -> None:
    """Mark a memory reviewed: its review curve starts again."""
    record = memory().reviewed(memory_id)
    if as_json:
        emit_json(record_dict(record))
    else:
        click.echo(f"Reviewed {record.id}")
