"""Maintenance commands: consolidate and organize."""

from __future__ import annotations

from typing import Any

import click
import msgspec

from memlane.cli.common import emit_json, in_section, json_option, memory, note, state
from memlane.cli.progress import Notes, progress_bar
from memlane.lifecycle.consolidate import DEFAULT_THRESHOLD, Absorbed, Merge, Plan
from memlane.lifecycle.organize import TopicPlan
from memlane.lifecycle.prune import PruneRules
from memlane.model import Cadence
from memlane.services.maintenance import MaintenanceReport

# Characters of appended text shown per absorbed memory in the text output.
_PREVIEW = 70


def _cadence() -> Cadence:
    s = state().settings
    return Cadence(s["consolidate_interval_days"], s["consolidate_growth"])


@in_section("lifecycle")
@click.command("consolidate")
@click.option(
    "--threshold",
    type=float,
    default=DEFAULT_THRESHOLD,
    show_default=True,
    help="Similarity (cosine, or token Jaccard without vectors) at which memories fold.",
)
@click.option("--dry-run", is_flag=True, help="Report what a run would do; write nothing.")
@click.option("--scope", help="Only this scope (default: every scope).")
@click.option("--force", is_flag=True, help="Run even when the cadence gate would skip.")
@click.option("--prune", is_flag=True, help="Also retire unused and idle ephemeral memories.")
@json_option
def consolidate_cmd(
    threshold: float, dry_run: bool, scope: str | None, force: bool, prune: bool, as_json: bool
) -> None:
    """Fold live near-duplicates into their most used, most confident memory without losing
    text; contradicting clusters are parked.

    Over the live memories you may see (every scope unless --scope; the 5,000 most recently
    updated). Memories fold only with others of the same scope, kind and visibility (a
    private memory never lands in one others can read), when their vectors' cosine (or,
    where either has none, their token Jaccard) reaches --threshold. Each cluster forms
    around its keeper, the member with the highest confidence x uses (retrievals plus
    passive surfacings; ties: the more confident, then the older), so every absorbed memory
    is itself that alike with the keeper.

    The keeper gets a new version (`history` keeps the old text) with the sentences of the
    absorbed memories it does not already say appended, a paragraph each (code, config and
    data whole unless already contained), their tags, the highest importance and the worst
    taint; each absorbed memory is superseded by it with a reason and linked `supersedes`. A
    memory whose text would push the keeper past MEMLANE_MAX_BODY_BYTES is not appended: it
    is recorded `:truncated` and its text stays on its superseded row. `merged_from` in the
    output lists the absorbed ids. A cluster whose members disagree in negation polarity
    ("always X" / "never X") is parked: reported, never merged.

    A cadence gate skips a run while the last consolidate or organize was less than
    MEMLANE_CONSOLIDATE_INTERVAL_DAYS ago and the live memories grew by less than
    MEMLANE_CONSOLIDATE_GROWTH since (--force bypasses it). One run at a time: a second one,
    from any process, prints a notice and exits 0 (a crashed run's lock expires after 30
    minutes). --dry-run writes nothing and reports exactly what a run would do. --json:
    `status` (done, planned, skipped), `skipped` (lock, cadence), `notice`, and `plan` with
    `merges` (keeper, `merged_from`, each absorbed id, similarity, appended text, truncated)
    and `parked`.

    --prune also retires (never deletes: `show` and `history` keep them) live memories
    written more than MEMLANE_PRUNE_AGE_DAYS (30) ago that no merge touches and that
    either rule takes. unused: signal `none`, confidence below 0.5, importance 5 or less,
    never retrieved, applied or activated, and never surfaced by a hook or last surfaced
    more than the prune age ago; a memory with no signal, or foundational or
    transformative, is never pruned. ephemeral: flagged ephemeral or of resonance ephemeral
    or session, not changed, retrieved, surfaced or activated for the prune age, unless an
    open thread or commitment or of importance 8 or more. --json then adds `pruned` (id,
    title, rule, reason); --dry-run lists what would be. On a terminal a progress bar runs on
    stderr."""
    rules = PruneRules(state().settings["prune_age_days"]) if prune else None
    with progress_bar("consolidate", as_json) as tell:
        report = memory().maintenance.consolidate(
            threshold,
            dry_run=dry_run,
            scope=scope,
            force=force,
            cadence=_cadence(),
            prune=rules,
            progress=tell,
        )
    _render(report, as_json)


@in_section("lifecycle")
@click.command("organize")
@click.option("--dry-run", is_flag=True, help="Report what a run would do; write nothing.")
@click.option("--force", is_flag=True, help="Run even when the cadence gate would skip.")
@json_option
def organize_cmd(dry_run: bool, force: bool, as_json: bool) -> None:
    """Consolidate the most recent memories, group them into topics and keep an extractive
    summary of each topic.

    Consolidation (as `consolidate`, threshold 0.80) runs over the most recent
    MEMLANE_ORGANIZE_WORKING_SET live memories; then topics, without a model: within each
    scope and visibility, the term (a named entity, else a content word) shared by the most
    memories not yet in a topic makes a topic while at least 3 share one (a term in more
    than half of a group of 10 or more is too broad). Each topic keeps one summary memory
    (kind and category `summary`, tagged `organize`), refreshed in place on later runs: its
    members' most central sentences, whole (at most 5 and 800 characters), linked `derives`
    to each member. Summaries are never organized themselves. The cadence gate, the lock and
    --dry-run are consolidate's (one clock for both). --json adds `topics` (label, scope,
    members, summary, and `action`: create, update or unchanged) and `written`. On a
    terminal a progress bar runs on stderr."""
    size = state().settings["organize_working_set"]
    with progress_bar("organize", as_json) as tell:
        report = memory().maintenance.organize(
            dry_run=dry_run, force=force, cadence=_cadence(), working_set=size, progress=tell
        )
    _render(report, as_json)


def _render(report: MaintenanceReport, as_json: bool) -> None:
    if report.notice:
        note(f"{report.operation}: {report.notice}")
    notes = Notes()
    for warning in report.warnings:
        notes.add(f"note: {warning}")
    notes.close("notes")
    if as_json:
        emit_json(report_dict(report))
    elif report.plan is not None:
        _echo_plan(report)


def report_dict(report: MaintenanceReport) -> dict[str, Any]:
    status = "skipped" if report.skipped else ("planned" if report.dry_run else "done")
    out: dict[str, Any] = {
        "operation": report.operation,
        "dry_run": report.dry_run,
        "status": status,
        "skipped": report.skipped,
        "notice": report.notice,
        "plan": plan_dict(report.plan) if report.plan else None,
    }
    if report.operation == "organize":
        out["topics"] = [topic_dict(t) for t in report.topics]
    else:
        out["pruned"] = [msgspec.to_builtins(p) for p in report.pruned]
    out["written"] = list(report.written)
    out["warnings"] = list(report.warnings)
    return out


def plan_dict(plan: Plan) -> dict[str, Any]:
    return {
        "threshold": plan.threshold,
        "method": plan.method.value,
        "considered": plan.considered,
        "capped": plan.capped,
        "merged": len(plan.merges),
        "absorbed": plan.absorbed,
        "parked_clusters": len(plan.parked),
        "merges": [merge_dict(m) for m in plan.merges],
        "parked": [{"ids": list(p.ids), "reason": p.reason} for p in plan.parked],
    }


def merge_dict(merge: Merge) -> dict[str, Any]:
    return {
        "keeper": merge.keeper,
        "merged_from": list(merge.merged_from),
        "absorbed": [_absorbed_dict(a) for a in merge.absorbed],
        "body_chars": len(merge.body),
        "tags": list(merge.tags),
        "importance": merge.importance,
        "taint": merge.taint.value,
    }


def _absorbed_dict(a: Absorbed) -> dict[str, Any]:
    return {
        "id": a.id,
        "similarity": a.similarity,
        "appended": a.appended,
        "truncated": a.truncated,
    }


def topic_dict(planned: TopicPlan) -> dict[str, Any]:
    t = planned.topic
    return {
        "key": t.key,
        "label": t.label,
        "scope": t.scope,
        "visibility": t.visibility.value,
        "members": list(t.members),
        "title": t.title,
        "summary": t.summary,
        "action": planned.action,
        "summary_id": planned.summary_id,
    }


def _echo_plan(report: MaintenanceReport) -> None:
    plan = report.plan
    assert plan is not None  # only called with one
    verb = "would merge" if report.dry_run else "merged"
    click.echo(
        f"{report.operation}: {verb} {len(plan.merges)} cluster(s), {plan.absorbed} "
        f"absorbed, {len(plan.parked)} parked (considered {plan.considered}, "
        f"{plan.method.value}, threshold {plan.threshold:g})"
    )
    for merge in plan.merges:
        click.echo(f"{merge.keeper}  <- {', '.join(_absorbed_text(merge))}")
    for parked in plan.parked:
        click.echo(f"parked ({parked.reason}): {', '.join(parked.ids)}")
    for planned in report.topics:
        t = planned.topic
        click.echo(f"topic [{t.scope}] {t.label}: {len(t.members)} memories ({planned.action})")
    if report.pruned:
        click.echo(f"{'would prune' if report.dry_run else 'pruned'} {len(report.pruned)}:")
    for item in report.pruned:
        click.echo(f"{item.id}  {item.rule}: {item.title}")


def _absorbed_text(merge: Merge) -> list[str]:
    out = []
    for a in merge.absorbed:
        extra = (
            " truncated"
            if a.truncated
            else (" adds: " + _preview(a.appended) if a.appended else "")
        )
        out.append(f"{a.id} ({a.similarity:.2f}{extra})")
    return out


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW else flat[: _PREVIEW - 1] + "…"
