"""`recall`: the ranked, explained, budgeted read that agents use."""

from __future__ import annotations

from typing import Any

import click

from memlane.cli.common import emit_json, in_section, json_option, memory, note
from memlane.cli.read import filter_options
from memlane.cli.render import record_dict
from memlane.model import Record, Taint


def _marks(record: Record) -> str:
    """Provenance marks on fenced text output: what a model reading it should weigh."""
    marks = {
        "[UNTRUSTED WEB]": record.taint is Taint.UNTRUSTED_WEB,
        "[INJECTION RISK]": "injection-risk" in record.tags,
        "[PREVIOUSLY]": not record.live,
    }
    return "".join(f" {mark}" for mark, applies in marks.items() if applies)


@in_section("recall")
@click.command("recall")
@click.argument("query")
@filter_options
@click.option("--max-tokens", type=int, help="Token budget: whole results, best first.")
@click.option(
    "--passive", is_flag=True, help="A hook's read: counts as surfaced; holds back risky rows."
)
@click.option("--activate", is_flag=True, help="Reset the decay clock of what is returned.")
@json_option
def recall_cmd(query: str, max_tokens: int | None, passive: bool, activate: bool,
               as_json: bool, limit: int, **options: Any) -> None:  # fmt: skip
    """The few memories that matter for QUERY: ranked by keyword and meaning, explained."""
    from memlane.retrieve.recall import why

    result = memory().recall(
        query, limit=limit or 10, max_tokens=max_tokens, passive=passive, activate=activate,
        **options,
    )  # fmt: skip
    if as_json:
        emit_json(
            {
                "query": query,
                "results": [
                    {
                        **record_dict(h.record),
                        "score": round(h.score, 6),
                        "parts": {k: round(v, 6) for k, v in h.parts.items()},
                        "why": why(h),
                    }
                    for h in result.hits
                ],
                "count": len(result.hits),
                "omitted": result.omitted,
                "tokens_used": result.tokens_used,
                "lanes": dict(result.lanes),
            }
        )
        return
    if not result.hits:
        note("nothing recalled")
        return
    click.echo("<memlane-recall>")
    for h in result.hits:
        r = h.record
        click.echo(f"- [{r.kind.value}] {r.title}{_marks(r)} ({r.id}, {r.scope}; {why(h)})")
        if r.body != r.title:
            click.echo("  " + r.body.replace("\n", "\n  "))
    click.echo("</memlane-recall>")
    if result.omitted:
        note(f"{result.omitted} more left out by --max-tokens {max_tokens}")
