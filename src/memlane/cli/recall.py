"""`recall`: the ranked, explained, budgeted read that agents use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from memlane.cli.common import (
    emit_json,
    in_section,
    json_option,
    memory,
    min_score_option,
    note,
)
from memlane.cli.read import filters_only
from memlane.cli.render import card_dict, plain, record_dict, said_nothing
from memlane.model import Record, as_dict
from memlane.retrieve.expand import MAX_LINK_HOPS
from memlane.retrieve.present import defanged, lane_warnings, provenance_marks, stamp
from memlane.services.recall import RECALL_LIMIT

if TYPE_CHECKING:
    from memlane.retrieve.explain import Explanation
    from memlane.retrieve.result import Extra, Prior, RecallResult


@in_section("recall")
@click.command("recall")
@click.argument("query")
@filters_only
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=RECALL_LIMIT,
    show_default=True,
    help="Most results (link neighbours come on top).",
)
@click.option("--max-tokens", type=int, help="Token budget: whole results, best first.")
@click.option(
    "--passive", is_flag=True, help="A hook's read: counts as surfaced; holds back risky rows."
)
@click.option("--activate", is_flag=True, help="Reset the decay clock of what is returned.")
@click.option(
    "--explain", is_flag=True, help="Say why each result (or --target) surfaced; writes nothing."
)
@click.option("--target", help="With --explain: a memory id, or text its title or body contains.")
@click.option(
    "--include-global/--no-global",
    default=None,
    help="Global memories join the read (default: as --scope says; its default holds global).",
)
@click.option(
    "--global-limit", type=click.IntRange(min=0), help="Most global memories among the results."
)
@click.option(
    "--link-budget",
    type=click.IntRange(min=0),
    help="Linked neighbours shown after the results (default: MEMLANE_RECALL_LINK_BUDGET).",
)
@click.option(
    "--link-hops",
    type=click.IntRange(0, MAX_LINK_HOPS),
    help="Links followed from a result: 0 none, 1 (default), 2 links of links.",
)
@click.option("--no-mmr", is_flag=True, help="Rank by score alone, without MMR diversity.")
@min_score_option
@json_option
def recall_cmd(
    query: str,
    max_tokens: int | None,
    passive: bool,
    activate: bool,
    explain: bool,
    target: str | None,
    min_score: float | None,
    as_json: bool,
    limit: int,
    no_mmr: bool,
    **options: Any,
) -> None:
    """The few memories that matter for QUERY: ranked by keyword and meaning, explained.

    The read agents use. Three lanes (keyword, vector, entity), over-fetched and filtered by
    the shared filters of `list`, are fused by their min-max normalised scores (weights
    keyword 0.6, vector 0.4, entity 0.2; the keyword lane fills its pool with all-words
    matches, then all-but-one, then any-word). The memories written just before and after
    the best five in the same session are lifted to half their score when they share a
    content word with it (any, when it ends with a question). When the query names (as
    written) the speaker of dialogue lines ("Maria: ..."), the lines said by others keep
    0.3 of their score; a memory that ends with a question keeps 0.6 of its score (its
    answer follows it). Then a composite score (relevance, importance, confidence x trust, recency by
    memory class, popularity) times the scope boost (branch 1.0, project 0.85, global 0.7,
    other projects 0.3 with `--scope all`; a scope --scope names counts as this project's,
    or as this branch's for a branch scope); time cues in the query ("last week", "in May
    2023", "the past 7 days"), whose memories (by event time) the keyword lane also
    searches; MMR diversity (lambda 0.9); and --max-tokens packing of whole results, where
    decisions and constraints are the last to go. The weights are settings
    (MEMLANE_RECALL_WEIGHTS and the other recall settings).

    Text output is fenced (`<memlane-recall>`) and marked `[UNTRUSTED WEB]`, `[INJECTION
    RISK]`, `[PREVIOUSLY]`, `[STALE SOURCE]`; --json gives each result's score, its `parts`
    and a `why` line, plus `omitted` and `tokens_used`. When the query names an entity that
    has relations, up to 3 short entity cards follow (`<memlane-entities>`, JSON
    `entities`: type, aliases, its 3 newest relations), within --max-tokens. After the
    results come up to MEMLANE_RECALL_LINK_BUDGET (2; --link-budget N for one call) linked
    neighbours (JSON `linked`): a contradiction first, marked `[CONTESTED]`, then updates,
    support, structure and plain relatedness; they pass the same filters, never take a
    result's place, and are the first to go under --max-tokens. --link-hops 2 follows links
    of links too, after every first-hop neighbour, each scored at half the score of what it
    hangs from per hop; --link-hops 0 follows none. --no-mmr ranks by score alone (JSON settings `mmr`: false).

    Global memories join a read of this project (the default --scope holds global);
    --no-global leaves them out, --include-global adds them to the scopes --scope names,
    and --global-limit N keeps at most N of them among the results. --as-of T recalls what
    was valid at T, marked as it stood then. --json (`settings`) and --explain report the controls a recall ran with.

    A question about a change ("why did we switch from MySQL", "what did we use before
    Postgres", "when did we change the deploy target"; not a how-to such as "how do I change
    the port") unfolds its top three results: under each, up to four prior states in all,
    newest first, marked `[PREVIOUSLY]` with the reason recorded when each ended: the content
    versions an update replaced and the memories it superseded (JSON `previously` on each
    result: id, title, content, valid_to, reason). They take the --max-tokens budget left
    before linked neighbours do. Such a question's keyword matches among superseded memories
    bring the memories that replaced them, so "why did we switch from MySQL" finds the
    PostgreSQL memory that no longer names MySQL.

    Recall answers with nothing when nothing is near enough: when the query's nearest memory
    is less alike (cosine) than the relevance floor (--min-score, MEMLANE_RECALL_MIN_SCORE,
    else the embedding profile's calibrated floor), or than the floor plus a margin when the
    query names someone or something no memory mentions (not an acronym, and not on a
    --passive read, whose gate weighs names itself). A memory holding every word of the
    query answers whatever its cosine, and so do the memories of a time the query names
    ("in May 2025", "the last 7 days") when it names no one unknown. It says so (JSON
    `abstained`, and `evidence`: the nearest memory's similarity, the floor, the unknown
    names, what else counted, and the reason).

    An explicit recall counts in `retrieval_count`; --passive (what hooks run) counts in
    `surfaced_count` and holds back untrusted-web, injection-risk and low-confidence (below
    0.25) memories; --activate resets the decay clocks of what it returns.

    --explain runs the same pipeline, writes nothing, and gives one verdict per result, or
    per --target (an id, or text a memory's title or body contains; one verdict per match):
    `found` (at rank), `linked`, `previously`, `omitted_by_budget`, `held_back` (a passive
    read), `over_global_limit`, `abstained` (nothing was near enough), `below_limit`, `not_valid_at_as_of`, `superseded`,
    `out_of_scope`, `filtered_out`, `not_in_pool` (no lane found it; says when the vector lane is absent and why) or
    `not_in_store` (nothing you may see matches)."""
    if target is not None and not explain:
        raise click.UsageError("--target needs --explain")
    if no_mmr:
        options["mmr"] = False
    mem = memory()
    if explain:
        explained = mem.explain(
            query,
            target,
            limit=limit,
            max_tokens=max_tokens,
            passive=passive,
            min_score=min_score,
            **options,
        )
        _print(query, explained.result, max_tokens, as_json, explained)
        return
    result = mem.recall(
        query,
        limit=limit,
        max_tokens=max_tokens,
        passive=passive,
        activate=activate,
        min_score=min_score,
        **options,
    )
    _print(query, result, max_tokens, as_json)


def _print(
    query: str,
    result: RecallResult,
    max_tokens: int | None,
    as_json: bool,
    explained: Explanation | None = None,
) -> None:
    from memlane.retrieve.recall import why

    if as_json:
        payload = {
            "query": query,
            "results": [
                {
                    **record_dict(h.record),
                    "score": round(h.score, 6),
                    "parts": {k: round(v, 6) for k, v in h.parts.items()},
                    "why": why(h),
                    "previously": [_prior_dict(p) for p in result.priors_of(h.record.id)],
                }
                for h in result.hits
            ],
            "linked": [_extra_dict(e) for e in result.extras],
            "entities": [card_dict(c) for c in result.entities],
            "count": len(result.hits),
            "omitted": result.omitted,
            "held_back": len(result.held_back),
            "tokens_used": result.tokens_used,
            "lanes": dict(result.lanes),
            "warnings": lane_warnings(result.skipped),
            "abstained": result.abstained,
            "evidence": None if result.evidence is None else result.evidence.to_json(),
            "settings": dict(result.settings),
        }
        if explained is not None:
            payload["explain"] = {
                "query": explained.query,
                "target": explained.target,
                "absent_lanes": explained.absent_lanes,
                "verdicts": [as_dict(v) for v in explained.verdicts],
            }
        emit_json(payload)
        return
    if result.abstained and result.evidence is not None:
        said_nothing("recall", result.evidence)
    elif not result.hits:
        note("nothing recalled")
    else:
        click.echo("<memlane-recall>")
        for h in result.hits:
            r = h.record
            click.echo(
                defanged(
                    f"- [{r.kind.value}] {r.title}{provenance_marks(r)} ({r.id}, {r.scope}; {why(h)})"
                )
            )
            _body(r)
            for prior in result.priors_of(r.id):
                _prior(prior)
        for extra in result.extras:
            r, n = extra.record, extra.neighbour
            contested = " [CONTESTED]" if n.contested else ""
            click.echo(
                defanged(
                    f"- [{r.kind.value}] {r.title}{contested}{provenance_marks(r)} "
                    f"({r.id}, {r.scope}; {n.link.value} link from {n.via})"
                )
            )
            _body(r)
        click.echo("</memlane-recall>")
    if result.entities:
        click.echo("<memlane-entities>")
        for card in result.entities:
            click.echo(defanged(f"- {card.text}"))
        click.echo("</memlane-entities>")
    if result.omitted:
        note(f"{result.omitted} more left out by --max-tokens {max_tokens}")
    if result.held_back:
        note(
            f"{len(result.held_back)} held back from a passive read "
            "(untrusted web, injection risk, a secret or low confidence)"
        )
    for warning in lane_warnings(result.skipped):
        note(warning)
    if explained is not None:
        click.echo("explain:")
        told = ", ".join(f"{k} {_setting(v)}" for k, v in result.settings.items())
        click.echo(f"  settings: {told}")
        if explained.absent_lanes:
            click.echo(f"  {explained.absent_lanes}")
        if result.abstained and result.evidence is not None:
            click.echo(f"  abstained: {result.evidence.reason()}")
        for v in explained.verdicts:
            rank = f" #{v.rank}" if v.rank is not None else ""
            click.echo(f"  {v.id or '-'}: {v.reason}{rank}  {v.detail}".rstrip())


def _body(record: Record) -> None:
    if record.body != record.title:
        click.echo("  " + defanged(record.body).replace("\n", "\n  "))


def _prior(prior: Prior) -> None:
    """A prior state under its result: indented, marked, with when and why it ended."""
    r = prior.record
    what = r.id if prior.version is None else f"{r.id} version {prior.version}"
    why = f"; {prior.reason}" if prior.reason else ""
    click.echo(
        defanged(f"  - {r.title}{provenance_marks(r)} ({what}, until {stamp(prior.valid_to)}{why})")
    )
    if r.body != r.title:
        click.echo("    " + defanged(r.body).replace("\n", "\n    "))


def _setting(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(value) or "none"
    return "-" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _prior_dict(prior: Prior) -> dict[str, Any]:
    r = prior.record
    return {
        "id": r.id,
        "version": prior.version,
        "title": r.title,
        "content": r.body,
        "valid_to": plain(prior.valid_to),
        "reason": prior.reason,
    }


def _extra_dict(extra: Extra) -> dict[str, Any]:
    n = extra.neighbour
    return {
        **record_dict(extra.record),
        "linked_from": n.via,
        "link": n.link.value,
        "contested": n.contested,
        "hop": n.hop,
        "score": round(extra.score, 6),
    }
