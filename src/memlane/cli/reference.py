"""The generated parts of the docs: the command reference from the click tree, the
settings table from `memlane.config.SETTINGS`, benchmark tables from the JSON `memlane
bench` writes, and the MCP tools from the server's tool classes.

Each function returns Markdown that a `[[[cog ... ]]]` block in docs/*.md or README.md
prints; `cog -r docs/*.md README.md` writes the pages again, and tests/test_docs.py fails
while one differs from what these functions return.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from memlane import config
from memlane.cli.common import SectionedGroup

REGENERATE = "cog -r docs/*.md README.md"

# ---- the command reference -----------------------------------------------------------


def commands_page(root: click.Group) -> str:
    """Every command of `root` under its `--help` section: usage, help and options."""
    ctx = click.Context(root, info_name="memlane")
    sections: dict[str, list[click.Context]] = {s: [] for s in SectionedGroup.SECTIONS}
    for name in root.list_commands(ctx):
        command = root.get_command(ctx, name)
        if command is not None and not command.hidden:
            section = getattr(command, "section", "admin")
            sections.setdefault(section, []).extend(_contexts(command, name, ctx))
    parts = [_contents(sections), "## Global options", _options(root, ctx)]
    for section, contexts in sections.items():
        if contexts:
            parts.append(f"## {section.capitalize()}")
            parts += [_command(c) for c in contexts]
    return "\n\n".join(parts) + "\n"


def _contexts(command: click.Command, name: str, parent: click.Context) -> Iterator[click.Context]:
    """The command's context, then its subcommands' (depth first, by name)."""
    ctx = click.Context(command, info_name=name, parent=parent)
    yield ctx
    if isinstance(command, click.Group):
        for sub in command.list_commands(ctx):
            found = command.get_command(ctx, sub)
            if found is not None and not found.hidden:
                yield from _contexts(found, sub, ctx)


def _contents(sections: dict[str, list[click.Context]]) -> str:
    """One line per section linking to its commands."""
    lines = []
    for section, contexts in sections.items():
        links = [f"[{_name(c)}](#{_anchor(c.command_path)})" for c in contexts]
        if links:
            lines.append(f"- {section.capitalize()}: {', '.join(links)}")
    return "\n".join(lines)


def _name(ctx: click.Context) -> str:
    return ctx.command_path.removeprefix("memlane ")


def _anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation out, spaces as -."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _command(ctx: click.Context) -> str:
    command = ctx.command
    usage = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
    parts = [f"### `{ctx.command_path}`", f"```text\n{usage}\n```"]
    if command.help:
        parts.append(help_markdown(command.help))
    if isinstance(command, click.Group):
        subs = [f"`{_name(ctx)} {name}`" for name in command.list_commands(ctx)]
        parts.append(f"Subcommands: {', '.join(subs)}.")
    options = _options(command, ctx)
    if options:
        parts.append(f"Options:\n\n{options}")
    return "\n\n".join(parts)


def help_markdown(text: str) -> str:
    """A click help text as Markdown: a paragraph click rewraps becomes one line, a
    paragraph marked `\\b` keeps its lines (a list), and a `\\b` paragraph of `$ ` lines
    becomes a shell block; what follows `\\f` is not help."""
    blocks = []
    for paragraph in re.split(r"\n\s*\n", inspect.cleandoc(text).partition("\f")[0]):
        lines = paragraph.splitlines()
        if lines and lines[0].strip() == "\b":
            kept = inspect.cleandoc("\n".join(lines[1:]))
            if all(line.startswith("$ ") for line in kept.splitlines()):
                kept = f"```sh\n{kept}\n```"
            blocks.append(kept)
        elif lines:
            blocks.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(b for b in blocks if b)


def _options(command: click.Command, ctx: click.Context) -> str:
    """A bullet per option (the help options left out: every command takes -h/--help)."""
    help_names = set(ctx.help_option_names)
    rows = [
        _option(p, ctx)
        for p in command.get_params(ctx)
        if isinstance(p, click.Option) and not p.hidden and not help_names & set(p.opts)
    ]
    return "\n".join(rows)


def _option(option: click.Option, ctx: click.Context) -> str:
    """Names, value, help and what `--help` adds: the default, required, repeatable."""
    names = ", ".join([*option.opts, *option.secondary_opts])
    value = "" if option.is_flag or option.count else f" {option.make_metavar(ctx)}"
    notes = [" ".join((option.help or "").split())]
    default = _default(option, ctx)
    if default:
        notes.append(f"Default: `{default}`.")
    if option.required:
        notes.append("Required.")
    if option.multiple:
        notes.append("Repeatable.")
    return f"- `{names}{value}`: {' '.join(n for n in notes if n)}"


def _default(option: click.Option, ctx: click.Context) -> str:
    """The default `--help` shows (an option shows one only with `show_default`)."""
    if isinstance(option.show_default, str):
        return option.show_default
    if not option.show_default or option.is_flag:
        return ""
    value = option.get_default(ctx, call=True)
    return ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


# ---- the settings table ----------------------------------------------------------------


def settings_table() -> str:
    """One row per setting: name, environment variable, default and meaning."""
    rows = ["| setting | environment | default | meaning |", "|---|---|---|---|"]
    for setting in config.SETTINGS:
        meaning = setting.help.replace("|", "\\|")
        default = _setting_default(setting.default())
        rows.append(f"| {setting.name} | `{setting.env}` | {default} | {meaning} |")
    return "\n".join(rows) + "\n"


def _setting_default(value: Any) -> str:
    """A default as one would set it; a path under the data (or config) directory starts
    `<data dir>` (`<config dir>`), which differs from one machine to the next."""
    if value is None:
        return "unset"
    if value in ("", ()):
        return "(empty)"
    if isinstance(value, bool):
        return f"`{int(value)}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = ",".join(map(str, value)) if isinstance(value, tuple) else str(value)
    text = text.replace(str(config.data_dir()), "<data dir>")
    return f"`{text.replace(str(config.config_dir()), '<config dir>')}`"


# ---- benchmark results -----------------------------------------------------------------


def bench_page(path: Path) -> str:
    """The scale benchmark's results in `path` (what `memlane bench --out` writes): the
    command and machine, then one row per measure and a column per store size."""
    from memlane.benchmark.report import ROWS, goal_cell

    data = json.loads(path.read_text(encoding="utf-8"))
    p, results = data["parameters"], data["results"]
    command = (
        f"memlane bench --sizes {','.join(map(str, p['sizes']))} --profile {p['profile']} "
        f"--queries {p['queries']} --cold-runs {p['cold_runs']} "
        f"--write-sample {p['write_sample']} --seed {p['seed']}"
    )
    header = ["measure", *(f"{r['memories']:,} memories" for r in results), "goal"]
    rows = [
        [name, *(str(get(r)) for r in results), goal_cell(data, goal)] for name, get, goal in ROWS
    ]
    notes = [f"Vectors: {results[0]['build']['vectors']}."] if results else []
    return _page(command, data["machine"], [header, *rows], notes)


def writers_page(path: Path) -> str:
    """The writers benchmark's results in `path` (`memlane bench writers --out`)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    p, r = data["parameters"], data["result"]
    command = (
        f"memlane bench writers --writers {p['writers']} --writes {p['writes']} "
        f"--profile {p['profile']} --seed {p['seed']}"
    )
    latency = r["latency"]
    header = ["writes", "seconds", "writes/s", "p50 ms", "p95 ms", "p99 ms", "max ms",
              "stored", "acknowledged but missing", "goal"]  # fmt: skip
    goal = f"p99 <= {r['goal_p99_ms']:,.0f} ms: {'met' if r['goal_met'] else 'MISSED'}"
    row = [
        f"{r['writes']:,}",
        f"{r['seconds']:.1f}",
        f"{r['writes_per_second']:.1f}",
        *(f"{latency[k]:,.0f}" for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms")),
        f"{r['stored']:,}",
        str(r["lost"]),
        goal,
    ]
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(r["statuses"].items()))
    return _page(command, data["machine"], [header, row], [f"Outcomes: {statuses}."])


def _page(command: str, machine: dict[str, Any], table: list[list[str]], notes: list[str]) -> str:
    """What ran, where, the table, and notes below it."""
    head = ["```sh", command, "```", "", _machine(machine)]
    rows = [_row(table[0]), _row(["---"] * len(table[0])), *(_row(r) for r in table[1:])]
    return "\n".join([*head, "", *rows, "", *notes]) + "\n"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _machine(m: dict[str, Any]) -> str:
    """The machine a run recorded: CPU, platform, versions and its speed."""
    versions = ", ".join(f"{k} {v}" for k, v in m.get("packages", {}).items() if v)
    text = (
        f"On {m['cpu_count']} CPUs ({m['cpu']}), {m['platform']}, Python {m['python']}, "
        f"SQLite {m['sqlite']}, {versions}."
    )
    speed = m.get("calibration_ms")
    if speed:
        text += (
            f" A fixed workload took {speed['start']} ms at the start and {speed['end']} ms "
            "at the end (the machine's speed: compare latencies with runs of a like figure)."
        )
    return text


# ---- the MCP tools ---------------------------------------------------------------------


def mcp_tools() -> str:
    """A bullet per tool of `memlane serve`'s default set (its name, whether it only
    reads, and the opening of the description a client sees), then what the other
    sets offer."""
    from memlane.server import app, compat, lifecycle_tools, tools

    owners = [
        (tools.HINTS, tools.MemoryTools),
        (lifecycle_tools.HINTS, lifecycle_tools.LifecycleTools),
    ]
    shown = {name: (hint, owner) for hints, owner in owners for name, hint in hints.items()}

    def bullet(name: str) -> str:
        hints, owner = shown[name]
        kind = "reads" if hints.read_only_hint else "writes"
        return f"- `{name}` ({kind}): {_opening(getattr(owner, name))}"

    graph = ", ".join(f"`{name}`" for name in compat.TOOLS)
    lines = [
        *(bullet(name) for name in app.CORE),
        "",
        "`--tools all` adds:",
        "",
        *(bullet(name) for name in shown if name not in app.CORE),
        "- the official MCP memory server's tools, same arguments and results: "
        f"{graph}; `--tools official` offers only these.",
    ]
    return "\n".join(lines) + "\n"


# A description's first sentence stands alone unless it is shorter than this: "Call at
# the end of a session." says when, and only the next sentence says what it does.
OPENING_CHARS = 60


def _opening(function: Any) -> str:
    """The first sentence of a docstring, and the next ones while it is shorter than
    OPENING_CHARS."""
    sentences = " ".join((inspect.getdoc(function) or "").split()).split(". ")
    opening = sentences[0]
    for sentence in sentences[1:]:
        if len(opening) >= OPENING_CHARS:
            break
        opening += ". " + sentence
    return opening.rstrip(".") + "."
