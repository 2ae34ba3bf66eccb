"""The memory graph from the command line: entities (list, show, search, type, merge)."""

from __future__ import annotations

import sys

import click

from memlane.cli.common import emit_json, fail, in_section, json_option, memory, note
from memlane.cli.render import plain, record_dict, record_line
from memlane.graph.entities import normalize_alias
from memlane.model import Entity, EntityKind, EntityType
from memlane.services.graph import SHOW_LIMIT, EntityMerge


def entity_dict(entity: Entity) -> dict[str, object]:
    return {name: plain(getattr(entity, name)) for name in entity.__struct_fields__}


def _entity_line(entity: Entity) -> str:
    others = [a for a in entity.aliases if a != normalize_alias(entity.name)]
    also = f"  (also {', '.join(others)})" if others else ""
    return (
        f"{entity.name:<32} {entity.kind.value:<15} {entity.type.value:<13} "
        f"{entity.mentions:>6}{also}"
    )


_HEADER = f"{'NAME':<32} {'KIND':<15} {'TYPE':<13} {'MEMORIES':>6}"


@in_section("graph")
@click.group("entities")
def entities() -> None:
    """Named things memories mention: code, paths, handles, names, entity: tags.

    Each has a kind (how its name was written) and a type (what it is: person, project,
    service, tool, file, organisation, place, concept or unknown); paths are files and
    @handles people from the start, `entities type` says the rest."""


@entities.command("list")
@click.option(
    "--kind", type=click.Choice([k.value for k in EntityKind]), help="Only entities of this kind."
)
@click.option(
    "--type",
    "type_",
    type=click.Choice([t.value for t in EntityType]),
    help="Only entities of this type.",
)
@click.option("-n", "--limit", type=int, default=50, show_default=True, help="At most N (0: all).")
@json_option
def entities_list(kind: str | None, type_: str | None, limit: int, as_json: bool) -> None:
    """Entities named by live memories, most mentioned first, then those only `relate`
    made (0 memories).

    Each with its kind and how many memories you may see name it. Every write records what a
    memory names, read by a deterministic extractor (no model): backticked identifiers, file
    paths, dotted, CamelCase and snake_case identifiers, `@handles`, runs of capitalised
    words, and `entity:NAME` tags. Aliases ignore case, accents, punctuation and separators,
    so `MemoryStore`, `memory_store` and "Memory Store" are one entity. The entity lane of
    `recall` looks up the names a query mentions (and adjacent word pairs, so "retry policy"
    finds `RetryPolicy`); rarer names weigh more, and a name more memories mention than the
    lane returns is left to the keyword lane."""
    found = memory().graph.entities(kind, limit, type_)
    if as_json:
        emit_json([entity_dict(e) for e in found])
        return
    if not found:
        note("no entities")
        return
    click.echo(_HEADER)
    for entity in found:
        click.echo(_entity_line(entity))


@entities.command("show")
@click.argument("name")
@click.option(
    "-n", "--limit", type=int, default=SHOW_LIMIT, show_default=True, help="Memories to list."
)
@json_option
def entities_show(name: str, limit: int, as_json: bool) -> None:
    """An entity (by any alias or spelling) and the memories that name it.

    The memories come newest first, at most --limit."""
    entity, records = memory().graph.mentioning(name, limit)
    if as_json:
        emit_json({**entity_dict(entity), "memories": [record_dict(r) for r in records]})
        return
    click.echo(_entity_line(entity))
    for record in records:
        click.echo("  " + record_line(record))


@entities.command("search")
@click.argument("query")
@click.option("-n", "--limit", type=int, default=10, show_default=True, help="At most N.")
@json_option
def entities_search(query: str, limit: int, as_json: bool) -> None:
    """Entities whose name or an alias is like QUERY, spelled roughly ("postgress").

    Best match first, with how alike (0-100) and the name that matched."""
    found = memory().graph.search_entities(query, limit)
    if as_json:
        emit_json(
            [{**entity_dict(h.entity), "score": h.score, "matched": h.matched} for h in found]
        )
        return
    if not found:
        note(f"no entity like {query!r}")
        return
    click.echo(f"{_HEADER} {'SCORE':>6}")
    for hit in found:
        click.echo(f"{_entity_line(hit.entity)} {hit.score:>6}")


@entities.command("type")
@click.argument("name")
@click.argument("type", type=click.Choice([t.value for t in EntityType]), required=False)
@json_option
def entities_type(name: str, type: str | None, as_json: bool) -> None:
    """Say what entity NAME is: TYPE person, project, service, tool, file, organisation,
    place, concept or unknown; without TYPE, show what it is now."""
    graph = memory().graph
    entity = graph.entity(name) if type is None else graph.set_type(name, type)
    if as_json:
        emit_json(entity_dict(entity))
        return
    click.echo(_entity_line(entity))


@entities.command("merge")
@click.argument("source")
@click.argument("target")
@click.option("--confirm", is_flag=True, help="Merge; without it, only show what would move.")
@click.option(
    "--yes", is_flag=True, help="Merge, without asking when the two differ in kind or type."
)
@json_option
def entities_merge(source: str, target: str, confirm: bool, yes: bool, as_json: bool) -> None:
    """Fold entity SOURCE into TARGET: its aliases, mentions and relations move (a dry run
    by default).

    With --confirm the merge happens, and later mentions of SOURCE's aliases land on TARGET.
    Entities of different kinds or types (a person and a project) merge only once you say
    so at the prompt, or with --yes; without a terminal, --confirm refuses such a merge
    unless --yes is given. Current relations between the two end (an entity is not
    related to itself), as do those that would repeat one of TARGET's. TARGET keeps its
    type unless it has none."""
    graph = memory().graph
    plan = graph.merge_entities(source, target)
    asked = confirm or yes
    if asked and _agreed(plan, yes):
        plan = graph.merge_entities(source, target, confirm=True)
    if as_json:
        emit_json(
            {
                "source": entity_dict(plan.source),
                "target": entity_dict(plan.target),
                "aliases": list(plan.aliases),
                "mentions": plan.mentions,
                "relations_moved": plan.relations_moved,
                "relations_ended": plan.relations_ended,
                "status": "merged" if plan.done else "declined" if asked else "dry_run",
            }
        )
        return
    verb = "Merged" if plan.done else "Would merge"
    click.echo(
        f"{verb} {plan.source.name!r} into {plan.target.name!r}: "
        f"{len(plan.aliases)} aliases ({', '.join(plan.aliases)}), {plan.mentions} mentions, "
        f"{plan.relations_moved} relations moved, {plan.relations_ended} ended"
    )
    if not plan.done:
        note("not merged" if asked else "dry run: pass --confirm to merge")


def _agreed(plan: EntityMerge, yes: bool) -> bool:
    """Whether to merge: yes unless the two differ, then only when told so.

    Trigger: a person into a project, a path into a name. Why: that is as often two
    things sharing a name as one thing named twice. Outcome: asked at a terminal,
    refused elsewhere without --yes."""
    if yes or not plan.crosses:
        return True
    a, b = plan.source, plan.target
    differ = (
        f"{a.name!r} is a {a.kind.value} of type {a.type.value}, "
        f"{b.name!r} a {b.kind.value} of type {b.type.value}"
    )
    if not _at_terminal():
        fail(f"{differ}: pass --yes to merge them anyway")
    return click.confirm(f"{differ}. Merge anyway?", default=False, err=True)


def _at_terminal() -> bool:
    return sys.stdin.isatty()
