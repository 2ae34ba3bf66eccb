"""install / uninstall: memlane's hooks and MCP server in Claude Code or Codex."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import click

from memlane import config
from memlane.cli.common import emit_json, in_section, json_option, note, state
from memlane.hosts import install as hosts


def _options(fn: Any) -> Any:
    for option in reversed(
        (
            click.argument("host", type=click.Choice(hosts.HOSTS)),
            click.option(
                "--scope",
                type=click.Choice(hosts.SCOPES),
                default="user",
                show_default=True,
                help="user: your settings for every project; project: this one's.",
            ),
            click.option(
                "--project-dir",
                type=click.Path(file_okay=False, path_type=Path),
                default=".",
                help="The project (with --scope project; default: here).",
            ),
            click.option("--dry-run", is_flag=True, help="Show the changes; write nothing."),
            json_option,
        )
    ):
        fn = option(fn)
    return fn


def _run(
    host: str,
    scope: str,
    project_dir: Path,
    dry_run: bool,
    as_json: bool,
    up: bool,
    pre_tool: bool = False,
) -> None:
    found = hosts.targets(
        host, scope, Path.home(), project_dir.resolve(), hosts.launcher(state().db), pre_tool
    )
    manifest = config.data_dir() / hosts.MANIFEST
    if up:
        changes = hosts.plan_install(found)
    else:
        changes = hosts.plan_uninstall(found, hosts.read_manifest(manifest))
    if not dry_run:
        changes = hosts.apply(changes, manifest, installing=up)
    if as_json:
        emit_json(
            {
                "host": host,
                "scope": scope,
                "dry_run": dry_run,
                "files": [_change_dict(c) for c in changes],
            }
        )
        return
    for change in changes:
        click.echo(f"{change.action:<9} {change.path}")
        if change.backup:
            click.echo(f"          backup: {change.backup}")
        if dry_run and change.action != "unchanged":
            click.echo(_diff(change), nl=False)
        for warning in change.added.warnings:
            note(warning)


def _change_dict(change: hosts.FileChange) -> dict[str, Any]:
    return {
        "path": str(change.path),
        "action": change.action,
        "backup": str(change.backup) if change.backup else None,
        "added": change.added.as_dict(),
        "warnings": change.added.warnings,
    }


def _diff(change: hosts.FileChange) -> str:
    lines = difflib.unified_diff(
        (change.before or "").splitlines(keepends=True),
        (change.after or "").splitlines(keepends=True),
        fromfile=f"{change.path} (now)",
        tofile=f"{change.path} (after)",
    )
    return "".join(lines)


@in_section("hooks")
@click.command("install")
@_options
@click.option(
    "--pre-tool",
    is_flag=True,
    help="Also the PreToolUse hook (experimental; see below).",
)
def install_cmd(
    host: str, scope: str, project_dir: Path, dry_run: bool, as_json: bool, pre_tool: bool
) -> None:
    """Add memlane's hooks and MCP server to an agent host's settings, keeping everything
    else (idempotent; a backup of each changed file).

    The hooks are `memlane hook session-start`, user-prompt, subagent-start, pre-compact,
    stop, and for Claude Code session-end, each with a 30 s timeout; with --pre-tool also
    pre-tool, for the tools that run a command or write a file (experimental: on
    projects it was not tuned on it shows an unrelated rule about as often as a related
    one, so it is off unless asked for). The MCP server is `memlane serve`,
    named `memlane`. Claude Code: `settings.json` (`~/.claude/` or the project's `.claude/`)
    and `~/.claude.json` or the project's `.mcp.json`. Codex: `hooks.json` and `config.toml`
    (`~/.codex/` or the project's `.codex/`, turning on `[features] codex_hooks` unless you
    set it).

    Everything already there is kept: other hooks, other servers, comments and layout in
    TOML, the file's own indent in JSON. A server entry named `memlane` that is not this one
    is left alone with a warning. A second install changes nothing. Each changed file is
    first copied to `FILE.memlane-<time>.bak`, and what was added is recorded in
    `installs.json` in the data directory. The commands use this Python (`python -m
    memlane`), so the host's PATH does not matter, and the store given with --db or
    MEMLANE_DB, if any. --dry-run prints a diff per file and writes nothing. A settings file
    that is not valid JSON or TOML is refused (exit 2) and no file is written."""
    _run(host, scope, project_dir, dry_run, as_json, up=True, pre_tool=pre_tool)


@in_section("hooks")
@click.command("uninstall")
@_options
def uninstall_cmd(host: str, scope: str, project_dir: Path, dry_run: bool, as_json: bool) -> None:
    """Remove exactly what `memlane install` added to an agent host's settings.

    Nothing else: a file otherwise as the install found it gets its backup's bytes back, a
    file the install created is deleted, and a file edited since keeps the edits."""
    _run(host, scope, project_dir, dry_run, as_json, up=False)
