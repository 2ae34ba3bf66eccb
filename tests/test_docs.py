"""The docs are tested: the generated parts of docs/*.md and README.md are what the code
generates today (`cog -r docs/*.md README.md` writes them), every command has help and an
entry in docs/commands.md, every setting is in docs/settings.md, the README opens with the
two commands, stays within 12 KB, and its tour and Python example run."""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import click
import pytest
from cogapp import Cog

from memlane import config
from memlane.cli.main import cli
from memlane.cli.reference import REGENERATE

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS_DOC = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
SETTINGS_DOC = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
GENERATED = [p for p in PAGES if "[[[cog" in p.read_text(encoding="utf-8")]
README_LIMIT = 12_000  # bytes: the front door; the reference belongs in docs/


def _commands(
    group: click.Group, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, f"`{name}` is listed but does not load"
        if not isinstance(command, click.Group) or command.invoke_without_command:
            yield " ".join((*path, name)), command  # a group that also runs on its own
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


COMMANDS = list(_commands(cli))


def test_the_cli_has_the_everyday_commands() -> None:
    names = {name for name, _ in COMMANDS}
    assert {"add", "add-batch", "show", "list", "search", "update", "history", "restore"} <= names
    assert len(names) >= 30


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_every_command_has_help_and_a_reference_entry(name: str, command: click.Command) -> None:
    assert command.help and command.get_short_help_str().strip(), f"{name} has no help text"
    assert f"### `memlane {name}`" in COMMANDS_DOC, f"docs/commands.md lacks `memlane {name}`"
    option_names = {opt for p in command.params for opt in getattr(p, "opts", [])}
    assert "--json" in option_names, f"{name} does not take --json"


def test_every_option_has_help() -> None:
    missing = [
        f"{name} {param.opts[0]}"
        for name, command in COMMANDS
        for param in command.params
        if isinstance(param, click.Option) and not param.help
    ]
    assert not missing, f"options without help: {missing}"


@pytest.mark.parametrize("setting", config.SETTINGS, ids=[s.name for s in config.SETTINGS])
def test_every_setting_is_documented(setting: config.Setting) -> None:
    row = re.search(rf"^\| {setting.name} \| `{setting.env}` \|", SETTINGS_DOC, re.MULTILINE)
    assert row, f"setting {setting.name} ({setting.env}) missing from docs/settings.md"
    assert setting.help


def test_readme_opens_with_the_two_commands() -> None:
    blocks = re.findall(r"```sh\n(.*?)```", README, re.DOTALL)
    assert "memlane quickstart" in blocks[0]
    assert blocks[1].strip() == "./scripts/test"
    assert "./scripts/test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_stays_a_short_front_door() -> None:
    size = len(README.encode("utf-8"))
    assert size <= README_LIMIT, f"README.md is {size} bytes: the reference belongs in docs/"
    for page in ("commands", "settings", "storage", "benchmarks"):
        assert f"(docs/{page}.md)" in README


def test_the_reference_pages_are_generated() -> None:
    names = {p.name for p in GENERATED}
    assert {"README.md", "commands.md", "settings.md", "benchmarks.md"} <= names


@pytest.mark.parametrize("page", GENERATED, ids=[p.name for p in GENERATED])
def test_generated_pages_are_up_to_date(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    regenerated = Cog().process_string(text, fname=str(page))
    if regenerated != text:
        diff = difflib.unified_diff(
            text.splitlines(), regenerated.splitlines(), "on disk", "generated", lineterm="", n=0
        )
        shown = "\n".join(islice(diff, 24))
        pytest.fail(f"{page.relative_to(ROOT)} is out of date: run `{REGENERATE}`\n{shown}")


def test_the_staleness_check_fails_on_a_changed_page() -> None:
    page = ROOT / "docs" / "settings.md"
    stale = page.read_text(encoding="utf-8").replace("| db |", "| database |")
    assert Cog().process_string(stale, fname=str(page)) != stale


def _tour() -> list[list[str]]:
    """The README's ten-command tour: the memlane lines of its shell block."""
    block = re.search(r"## A ten-command tour\n\n```sh\n(.*?)```", README, re.DOTALL)
    assert block is not None, "README.md lacks its ten-command tour"
    lines = [shlex.split(line.split("  #")[0]) for line in block.group(1).splitlines()]
    return [words[1:] for words in lines if words and words[0] == "memlane"]


def test_readme_tour_has_ten_commands_that_run(run: Callable[..., Any]) -> None:
    tour = _tour()
    assert len(tour) == 10
    latest = ""  # ID in a line: the memory the latest `add` wrote
    for args in tour:
        args = [latest if word == "ID" else word for word in args]
        result = run(*args, "--json")
        assert result.exit_code == 0, f"memlane {shlex.join(args)}: {result.stderr}"
        if args[0] == "add":
            latest = result.json()["id"]


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    example = re.search(r"```python\n(.*?)```", README, re.DOTALL)
    assert example is not None
    exec(compile(example.group(1), "README.md", "exec"), {})
    assert (tmp_path / "demo.db").exists()


def test_root_help_lists_command_sections(run) -> None:
    result = run("--help")
    for section in ("Memory ops:", "Recall:", "Admin:"):
        assert section in result.stdout
