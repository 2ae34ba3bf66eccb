"""`tune-weights`: recall score weights proposed from gold cases and usage feedback."""

from __future__ import annotations

from pathlib import Path

import click

from memlane import config
from memlane.cli.common import emit_json, in_section, json_option, memory
from memlane.cli.embedding import progress_bar
from memlane.evaluation import tuning
from memlane.retrieve.score import Weights

SETTING = "recall_weights"


def _value(weights: Weights) -> str:
    """Weights as MEMLANE_RECALL_WEIGHTS writes them."""
    return ",".join(f"{getattr(weights, t):g}" for t in Weights.__struct_fields__)


def _cases(gold: tuple[str, ...], feedback: bool) -> list[tuning.GoldCase]:
    cases = []
    for path in gold:
        with Path(path).open(encoding="utf-8") as lines:
            cases.extend(tuning.load_cases(lines, path))
    if feedback:
        cases.extend(tuning.feedback_cases(tuning.live_records(memory())))
    return cases


@in_section("recall")
@click.command("tune-weights")
@click.option(
    "--gold",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="A gold set, JSON lines of {id, query, expect: [ids], scope, as_of, kind, "
    "project, branch} (repeatable).",
)
@click.option(
    "--feedback/--no-feedback",
    default=True,
    show_default=True,
    help="Also a case per memory applied and never violated (asked for by its title).",
)
@click.option("--k", type=int, default=5, show_default=True, help="Ranks a case counts (MRR@k).")
@click.option(
    "--folds", type=int, default=tuning.FOLDS, show_default=True, help="Cross-validation folds."
)
@click.option(
    "--apply", "apply_", is_flag=True, help="Set the proposal when it beats the current weights."
)
@json_option
def tune_weights_cmd(
    gold: tuple[str, ...], feedback: bool, k: int, folds: int, apply_: bool, as_json: bool
) -> None:
    """Propose recall score weights (MEMLANE_RECALL_WEIGHTS) from gold cases and usage
    feedback, scored on the store as it is.

    Shows current -> proposed with the MRR@k of each, and the held-out score: each case
    recalled under weights tuned without it (--folds cross-validation), the one figure
    that says how the proposal does on cases it has not seen. Writes nothing; with
    --apply, a proposal that beats the current weights held out is set (today: the
    setting line to use is printed)."""
    cases = _cases(gold, feedback)
    with progress_bar("tuning", as_json) as tell:
        result = tuning.tune(memory(), cases, k=k, folds=folds, progress=tell)
    applying = apply_ and result.improves
    line = config.save_setting(SETTING, _value(result.proposed)) if applying else None
    if as_json:
        emit_json(_report(result, line))
        return
    _show(result)
    if not result.improves:
        click.echo("the current weights stay: the tuning did not beat them held out")
    elif line is not None:
        click.echo(
            f"applied: {line} (settings are environment variables: set it where memlane runs)"
        )
    else:
        click.echo(f"to use it: MEMLANE_RECALL_WEIGHTS={_value(result.proposed)} (or --apply)")


def _report(result: tuning.Tuning, line: str | None) -> dict[str, object]:
    return {
        "current": _value(result.current),
        "proposed": _value(result.proposed),
        "k": result.k,
        "cases": result.cases,
        "feedback_cases": result.feedback_cases,
        "folds": result.folds,
        "current_score": round(result.current_score, 4),
        "proposed_score": round(result.proposed_score, 4),
        "held_out_score": round(result.held_out_score, 4),
        "improves": result.improves,
        "applied": line,
    }


def _show(result: tuning.Tuning) -> None:
    click.echo(
        f"recall weights on {result.cases} cases ({result.feedback_cases} from feedback), "
        f"MRR@{result.k}:"
    )
    for term in Weights.__struct_fields__:
        now, then = getattr(result.current, term), getattr(result.proposed, term)
        mark = "" if now == then else "  *"
        click.echo(f"  {term:<11} {now:.2f} -> {then:.2f}{mark}")
    click.echo(f"current   {result.current_score:.3f}  (every case)")
    click.echo(f"proposed  {result.proposed_score:.3f}  (the cases it was tuned on)")
    click.echo(
        f"held out  {result.held_out_score:.3f}  ({result.folds}-fold cross-validation: "
        "each case under weights tuned without it)"
    )
