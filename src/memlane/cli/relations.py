"""Relations between entities from the command line: relationships, relate, unrelate."""

from __future__ import annotations

import click

from memlane.cli.common import emit_json, in_section, json_option, memory, note
from memlane.cli.entities import entity_dict
from memlane.cli.render import plain
from memlane.graph.relations import words_of
from memlane.model import Relation


def relation_dict(relation: Relation) -> dict[str, object]:
    out = {name: plain(getattr(relation, name)) for name in relation.__struct_fields__}
    out["current"] = relation.current
    return out


def relation_line(relation: Relation) -> str:
    """`r-… subject -predicate-> object  "as written"  (context)`, and when it ended."""
    line = f"{relation.id}  {relation.subject} -{relation.predicate.value}-> {relation.object}"
    if words_of(relation.label) != words_of(relation.predicate.value):
        line += f'  "{relation.label}"'
    if relation.context:
        line += f"  ({relation.context})"
    if relation.valid_to is not None:
        line += f"  [ended {plain(relation.valid_to)}]"
    return line


@in_section("graph")
@click.command("relationships")
@click.argument("entity")
@click.option("--all", "include_ended", is_flag=True, help="Ended relations too.")
@json_option
def relationships_cmd(entity: str, include_ended: bool, as_json: bool) -> None:
    """An entity's relations, both ways (current ones; --all adds ended).

    ENTITY is any of its names or aliases, in any case or spelling. Relations come from
    `memlane relate`, the MCP `create_relations` tool and LLM extraction."""
    found = memory().graph.relationships(entity, include_ended)
    if as_json:
        emit_json(
            {**entity_dict(found.entity), "relations": [relation_dict(r) for r in found.relations]}
        )
        return
    shown = found.entity
    click.echo(f"{shown.name} ({shown.type.value})")
    if not found.relations:
        note("no relations" if include_ended else "no current relations (--all shows ended ones)")
    for relation in found.relations:
        click.echo("  " + relation_line(relation))


@in_section("graph")
@click.command("relate")
@click.argument("subject")
@click.argument("predicate")
@click.argument("object")
@click.option("--context", help="Why they are related, in a few words.")
@click.option("--memory", "memory_id", metavar="ID", help="The memory this was learned from.")
@json_option
def relate_cmd(
    subject: str,
    predicate: str,
    object: str,
    context: str | None,
    memory_id: str | None,
    as_json: bool,
) -> None:
    """Record that SUBJECT PREDICATE OBJECT, e.g. api "relies on" postgres.

    The predicate maps onto uses, depends_on, part_of, owns, works_on, contributes_to,
    manages, replaces, located_in or related_to ("relies on" is depends_on; a passive
    one such as "owned by" swaps the ends); other wording is kept, as related_to. A name
    no entity has yet becomes one. A relation from a --memory is seen by whoever may see
    that memory, and goes when it is forgotten."""
    done = memory().graph.relate(subject, predicate, object, context, memory_id)
    if as_json:
        emit_json({**relation_dict(done.relation), "status": "added" if done.added else "exists"})
        return
    click.echo(relation_line(done.relation))
    if not done.added:
        note("already related: nothing changed")


@in_section("graph")
@click.command("unrelate")
@click.argument("subject")
@click.argument("predicate")
@click.argument("object")
@json_option
def unrelate_cmd(subject: str, predicate: str, object: str, as_json: bool) -> None:
    """End the current relation SUBJECT PREDICATE OBJECT.

    It is kept, ended: `memlane relationships ENTITY --all` still shows it."""
    ended = memory().graph.unrelate(subject, predicate, object)
    if as_json:
        emit_json([relation_dict(r) for r in ended])
        return
    for relation in ended:
        click.echo("Ended " + relation_line(relation))
