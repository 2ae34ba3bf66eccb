"""`tune-weights`: recall score weights proposed from gold cases and usage feedback."""

from __future__ import annotations

from pathlib import Path

import click

from memlane import config, settings_file
from memlane.cli.common import emit_json, in_section, json_option, memory
from memlane.cli.progress import progress_bar
from memlane.evaluation import tuning
from memlane.evaluation.climb import Mix
from memlane.retrieve.fuse import LANES
from memlane.retrieve.score import Weights


def _lines(mix: Mix) -> dict[str, str]:
    """The setting values of a mix: setting name -> value as its variable takes it."""
    weights = ",".join(f"{getattr(mix.weights, t):g}" for t in Weights.__struct_fields__)
    return {
        "recall_weights": weights,
        "recall_lane_weights": ",".join(f"{w:g}" for w in mix.lanes),
    }


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
    """Propose recall weights from gold cases and usage feedback.

    The score weights (MEMLANE_RECALL_WEIGHTS) and the lanes' fusion weights
    (MEMLANE_RECALL_LANE_WEIGHTS), scored on the store as it is.
    Shows current -> proposed with the MRR@k of each, and the held-out score: each case
    recalled under weights tuned without it (--folds cross-validation), the one figure
    that says how the proposal does on cases it has not seen. Writes nothing; with
    --apply, a proposal that beats the current weights held out is written to the
    settings file (see `memlane settings`), where an environment variable still rules."""
    cases = _cases(gold, feedback)
    with progress_bar("tuning", as_json) as tell:
        result = tuning.tune(memory(), cases, k=k, folds=folds, progress=tell)
    proposed = _lines(result.proposed)
    changed = {n: v for n, v in proposed.items() if v != _lines(result.current)[n]}
    applied = (
        [settings_file.set_value(name, value) for name, value in changed.items()]
        if apply_ and result.improves
        else []
    )
    if as_json:
        emit_json(_report(result, [_applied(c, changed) for c in applied]))
        return
    _show(result)
    if not result.improves:
        click.echo("the current weights stay: the tuning did not beat them held out")
    elif applied:
        for change in applied:
            name = change.setting.name
            click.echo(f"applied: {name} = {changed[name]} in {change.path}")
            if change.shadowed:
                click.echo(f"  (but {change.setting.env} is set, and rules over the file)")
    else:
        use = " ".join(f"{config.BY_NAME[n].env}={v}" for n, v in changed.items())
        click.echo(f"to use it: {use} (or --apply)")


def _applied(change: settings_file.Change, changed: dict[str, str]) -> dict[str, object]:
    """A setting --apply wrote: its value as given, the file, and whether its
    environment variable overrides the file."""
    name = change.setting.name
    return {"name": name, "value": changed[name], "file": str(change.path),
            "overridden": change.shadowed}  # fmt: skip


def _report(result: tuning.Tuning, applied: list[dict[str, object]]) -> dict[str, object]:
    return {
        "current": _lines(result.current),
        "proposed": _lines(result.proposed),
        "k": result.k,
        "cases": result.cases,
        "feedback_cases": result.feedback_cases,
        "folds": result.folds,
        "current_score": round(result.current_score, 4),
        "proposed_score": round(result.proposed_score, 4),
        "held_out_score": round(result.held_out_score, 4),
        "improves": result.improves,
        "applied": applied,
    }


def _show(result: tuning.Tuning) -> None:
    click.echo(
        f"recall weights on {result.cases} cases ({result.feedback_cases} from feedback), "
        f"MRR@{result.k}:"
    )
    now, then = result.current, result.proposed
    rows = [
        *(
            (t, getattr(now.weights, t), getattr(then.weights, t))
            for t in Weights.__struct_fields__
        ),
        *((f"lane {lane}", a, b) for lane, a, b in zip(LANES, now.lanes, then.lanes, strict=True)),
    ]
    for name, old, new in rows:
        click.echo(f"  {name:<12} {old:.2f} -> {new:.2f}{'' if old == new else '  *'}")
    click.echo(f"current   {result.current_score:.3f}  (every case)")
    click.echo(f"proposed  {result.proposed_score:.3f}  (the cases it was tuned on)")
    click.echo(
        f"held out  {result.held_out_score:.3f}  ({result.folds}-fold cross-validation: "
        "each case under weights tuned without it)"
    )
