"""Lifecycle commands: reinforce and feedback."""

from __future__ import annotations

import click

from memlane.cli.common import emit_json, in_section, json_option, memory
from memlane.cli.render import record_dict
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
