"""Typed links between memories: links add/list/delete, and contradict."""

from __future__ import annotations

import click

from memlane.cli.common import emit_json, in_section, json_option, memory
from memlane.cli.progress import progress_bar
from memlane.cli.render import link_dict
from memlane.model import Link, LinkType
from memlane.write.anchors import ANCHOR_LOW, MAX_ANCHORS, AnchorPlan

# Every type a person may add; anchors come from --anchors and auto-anchor.
LINK_TYPES = [t.value for t in LinkType if t is not LinkType.ANCHOR]


def _line(link: Link) -> str:
    reason = f"  ({link.reason})" if link.reason else ""
    return f"{link.id}  {link.source} --{link.type.value}--> {link.target}{reason}"


@in_section("graph")
@click.group("links")
def links() -> None:
    """Typed links between memories: add, list, delete."""


@links.command("add")
@click.option("--from", "source", required=True, help="The memory the link starts from.")
@click.option("--to", "target", required=True, help="The memory it points to.")
@click.option(
    "--type",
    "link_type",
    type=click.Choice(LINK_TYPES),
    default="related",
    show_default=True,
    help="What the link says; related and contradicts are stored both ways.",
)
@click.option("--reason", help="Why they are linked.")
@click.option("--no-reinforce", is_flag=True, help="Do not raise the target's importance by 1.")
@json_option
def links_add(
    source: str,
    target: str,
    link_type: str,
    reason: str | None,
    no_reinforce: bool,
    as_json: bool,
) -> None:
    """Link two memories (adding the same link again changes nothing).

    Types: related (the default), supports, contradicts, supersedes, extends, implements,
    updates, derives, example_of; related and contradicts are stored both ways. Self-links
    and unknown ids are refused. A new link raises the target's importance by 1 (at most 10)
    unless it contradicts or supersedes it (or --no-reinforce); `supports` raises the
    target's trust by 0.05, `contradicts` lowers both sides' by 0.10."""
    link = memory().graph.link(source, target, link_type, reason, reinforce=not no_reinforce)
    if as_json:
        emit_json(link_dict(link))
    else:
        click.echo(f"Linked: {_line(link)}")


@links.command("list")
@click.argument("memory_id")
@json_option
def links_list(memory_id: str, as_json: bool) -> None:
    """A memory's links, both directions.

    Each with its id (`l-N`), type, ends and reason. Links to memories you may not see are
    left out."""
    found = memory().graph.links(memory_id)
    if as_json:
        emit_json({"links": [link_dict(x) for x in found], "count": len(found)})
        return
    for link in found:
        click.echo(_line(link))
    if not found:
        click.echo("no links")


@links.command("delete")
@click.argument("link_id")
@json_option
def links_delete(link_id: str, as_json: bool) -> None:
    """Delete a link by its id (`l-N`, from `links list`); both directions of a
    symmetric one."""
    gone = memory().graph.unlink(link_id)
    if as_json:
        emit_json({"deleted": link_dict(gone)})
    else:
        click.echo(f"Deleted link: {_line(gone)}")


@in_section("graph")
@click.command("contradict")
@click.argument("first")
@click.argument("second")
@click.option("--reason", required=True, help="Why they disagree (required).")
@json_option
def contradict_cmd(first: str, second: str, reason: str, as_json: bool) -> None:
    """Record that two memories disagree: linked both ways, each trusted 0.10 less.

    A `contradicts` link both ways; --reason is required. Recall shows a contradicting
    neighbour as `[CONTESTED]`."""
    link = memory().graph.contradict(first, second, reason)
    if as_json:
        emit_json(link_dict(link))
    else:
        click.echo(f"Contradiction recorded: {_line(link)}")


@in_section("graph")
@click.command("auto-anchor")
@click.argument("memory_id", required=False)
@click.option(
    "--threshold",
    type=float,
    default=ANCHOR_LOW,
    show_default=True,
    help="Lowest similarity that anchors (cosine; token Jaccard without vectors).",
)
@click.option(
    "--max-anchors", type=int, default=MAX_ANCHORS, show_default=True, help="Anchors per memory."
)
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option("--detailed", is_flag=True, help="Show the similarity of each anchor.")
@click.option("--fill", is_flag=True, help="Only memories without any anchor.")
@json_option
def auto_anchor_cmd(
    memory_id: str | None,
    threshold: float,
    max_anchors: int,
    dry_run: bool,
    detailed: bool,
    fill: bool,
    as_json: bool,
) -> None:
    """Anchor memories to their neighbours (similarity in [threshold, 0.95]) and prune
    anchors that fell out of that band.

    One memory (ID), or every live one you may see: each is anchored to its neighbours whose
    similarity is in [--threshold, 0.95] (cosine of the stored vectors; token Jaccard when
    the memory has none), the most similar first, at most --max-anchors, and automatic
    anchors that fell out of that band are pruned. Anchors set with `add --anchors` are
    never pruned. --fill only touches memories without anchors. Every `add`, `update`,
    `edit`, `append`, `prepend` and `restore` does the same for its memory, unless given
    `add --no-auto-anchor` (or the same flag of the others). On a terminal a progress bar
    runs on stderr."""
    with progress_bar("anchoring", as_json or memory_id is not None) as tell:
        plans = memory().auto_anchor(
            memory_id,
            threshold=threshold,
            max_anchors=max_anchors,
            dry_run=dry_run,
            fill=fill,
            progress=tell,
        )
    if as_json:
        emit_json(
            {
                "dry_run": dry_run,
                "memories": [_plan_dict(i, p) for i, p in plans],
                "added": sum(len(p.add) for _, p in plans),
                "pruned": sum(len(p.prune) for _, p in plans),
            }
        )
        return
    for memory_id_, plan in plans:
        if plan.changes or detailed:
            click.echo(_plan_line(memory_id_, plan, detailed))
    verb = "would add" if dry_run else "added"
    added, pruned = sum(len(p.add) for _, p in plans), sum(len(p.prune) for _, p in plans)
    click.echo(f"{len(plans)} memories: {verb} {added} anchors, pruned {pruned}")


def _plan_dict(memory_id: str, plan: AnchorPlan) -> dict[str, object]:
    return {
        "id": memory_id,
        "add": [{"id": i, "similarity": s} for i, s in plan.add],
        "prune": list(plan.prune),
        "keep": [{"id": i, "similarity": s} for i, s in plan.keep],
    }


def _plan_line(memory_id: str, plan: AnchorPlan, detailed: bool) -> str:
    def ids(pairs: tuple[tuple[str, float], ...]) -> str:
        return ", ".join(f"{i} ({s:.2f})" if detailed else i for i, s in pairs) or "-"

    line = f"{memory_id}: +{ids(plan.add)}"
    if plan.prune:
        line += f"  -{', '.join(plan.prune)}"
    if detailed and plan.keep:
        line += f"  ={ids(plan.keep)}"
    return line
