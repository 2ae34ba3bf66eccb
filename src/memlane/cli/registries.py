"""Registries and type lists: categories, agents, projects, applicability, tags, types."""

from __future__ import annotations

from pathlib import Path

import click

from memlane.cli.common import emit_json, in_section, json_option, memory, state
from memlane.cli.render import registry_dict
from memlane.model import TYPE_REGISTRIES, RegistryEntry
from memlane.scope import load_aliases, save_alias
from memlane.services.registries import Registries


def _print_entries(entries: list[RegistryEntry], as_json: bool) -> None:
    if as_json:
        emit_json([registry_dict(e) for e in entries])
        return
    for entry in entries:
        details = "  ".join(f"{k}: {v}" for k, v in entry.data.items() if v)
        click.echo(f"{entry.key:<20} {details}".rstrip())


def _list_command(registry: str) -> click.Command:
    @click.command("list", help=f"List the {registry} registry.")
    @json_option
    def command(as_json: bool) -> None:
        _print_entries(memory().registries.registry(registry), as_json)

    return command


@in_section("admin")
@click.group("categories")
def categories() -> None:
    """Categories memories are filed under.

    Every store starts with one per kind plus `general`."""


categories.add_command(_list_command("categories"))


@categories.command("add")
@click.argument("name")
@click.argument("description", required=False)
@json_option
def categories_add(name: str, description: str | None, as_json: bool) -> None:
    """Add a category (with an optional description)."""
    entry = memory().registries.register("categories", name, description=description)
    _print_entries([entry], as_json) if as_json else click.echo(f"Added category: {entry.key}")


@categories.command("remove")
@click.argument("name")
@json_option
def categories_remove(name: str, as_json: bool) -> None:
    """Remove a category; refused while any memory uses it."""
    memory().registries.unregister("categories", name)
    emit_json({"name": name, "status": "removed"}) if as_json else click.echo(
        f"Removed category: {name}"
    )


@in_section("admin")
@click.group("agents")
def agents() -> None:
    """Agents that write memories."""


agents.add_command(_list_command("agents"))


@agents.command("add")
@click.argument("name")
@click.option("-d", "--description", help="What the agent does.")
@click.option("-D", "--domain", help="Its domain or responsibility.")
@json_option
def agents_add(name: str, description: str | None, domain: str | None, as_json: bool) -> None:
    """Register an agent."""
    entry = memory().registries.register("agents", name, description=description, domain=domain)
    _print_entries([entry], as_json) if as_json else click.echo(f"Added agent: {entry.key}")


@agents.command("show")
@click.argument("name")
@json_option
def agents_show(name: str, as_json: bool) -> None:
    """Show an agent and how many memories it wrote."""
    mem = memory()
    entry = mem.registries.registry_entry("agents", name)
    written = mem.registries.usage("source_agent", name)
    if as_json:
        emit_json({**registry_dict(entry), "memories": written})
        return
    _print_entries([entry], False)
    click.echo(f"memories written: {written}")


@in_section("admin")
@click.group("projects")
def projects() -> None:
    """Projects, and the alias map that keeps renamed directories together."""


projects.add_command(_list_command("projects"))


@projects.command("add")
@click.option("--id", "key", required=True, help="Project identifier (as in project:ID scopes).")
@click.option("--name", help="Human-readable name.")
@click.option("--path", help="Local path of the project.")
@click.option("--repo-url", help="Repository URL or owner/repo.")
@click.option("--description", help="What the project is.")
@json_option
def projects_add(
    key: str,
    name: str | None,
    path: str | None,
    repo_url: str | None,
    description: str | None,
    as_json: bool,
) -> None:
    """Register a project."""
    entry = memory().registries.register(
        "projects", key, display_name=name, path=path, repo_url=repo_url, description=description
    )
    _print_entries([entry], as_json) if as_json else click.echo(f"Added project: {entry.key}")


@projects.command("alias")
@click.argument("directory_name")
@click.argument("project")
@json_option
def projects_alias(directory_name: str, project: str, as_json: bool) -> None:
    """Map a (renamed) directory name to an existing project name.

    The map is the file MEMLANE_PROJECT_ALIASES names; a checkout renamed to DIRECTORY_NAME
    keeps reading and writing PROJECT's memories."""
    path = Path(state().settings["project_aliases"]).expanduser()
    aliases = save_alias(path, directory_name, project)
    if as_json:
        emit_json({"path": str(path), "aliases": aliases})
    else:
        click.echo(f"{directory_name} -> {project} (in {path})")


@projects.command("aliases")
@json_option
def projects_aliases(as_json: bool) -> None:
    """Show the project alias map."""
    path = Path(state().settings["project_aliases"]).expanduser()
    aliases = load_aliases(path)
    if as_json:
        emit_json({"path": str(path), "aliases": aliases})
    else:
        for name, project in sorted(aliases.items()):
            click.echo(f"{name} -> {project}")


@in_section("admin")
@click.group("applicability")
def applicability() -> None:
    """Applicability contexts a memory can be limited to."""


applicability.add_command(_list_command("applicability"))


@applicability.command("add")
@click.option("--id", "key", required=True, help="Identifier.")
@click.option("--description", help="When this applicability applies.")
@click.option("--scope", help="Scope constraint (e.g. project, global).")
@json_option
def applicability_add(key: str, description: str | None, scope: str | None, as_json: bool) -> None:
    """Add an applicability context."""
    entry = memory().registries.register("applicability", key, description=description, scope=scope)
    _print_entries([entry], as_json) if as_json else click.echo(f"Added applicability: {entry.key}")


@in_section("admin")
@click.group("tags")
def tags() -> None:
    """Tags in use."""


@tags.command("list")
@click.option("-c", "--category", help="Only tags of this category.")
@json_option
def tags_list(category: str | None, as_json: bool) -> None:
    """List tags with how many memories carry each."""
    counts = memory().registries.tags(category)
    if as_json:
        emit_json([{"tag": t, "count": n} for t, n in counts.items()])
        return
    for tag, count in counts.items():
        click.echo(f"{count:>6}  {tag}")


@in_section("admin")
@click.command("types")
@click.argument("kind", type=click.Choice(sorted(TYPE_REGISTRIES)))
@click.argument("action", type=click.Choice(["list"]), default="list")
@json_option
def types_cmd(kind: str, action: str, as_json: bool) -> None:
    """List the valid values of a typed field, e.g. `memlane types kinds list`.

    KIND is one of the registries: kinds, source-types, entry-types, content-types,
    relationship-types, session-types, resonance-types, fact-types, signals, taints,
    memory-classes."""
    values = Registries.types(kind)
    if as_json:
        emit_json(values)
    else:
        click.echo("\n".join(values))
