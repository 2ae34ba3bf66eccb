"""seed: agents from Markdown with YAML front matter, knowledge from JSONL files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from memlane import config
from memlane.cli.common import body_cap, emit_json, in_section, json_option, memory
from memlane.cli.progress import Notes, count_lines, progress_bar
from memlane.errors import MemlaneError
from memlane.write import inputs
from memlane.write.frontmatter import split


def _seed_dir(kind: str) -> Path:
    return config.data_dir() / "seed" / kind


@in_section("data")
@click.group("seed")
def seed() -> None:
    """Populate the store from files: agents and knowledge."""


@seed.command("agents")
@click.option(
    "-p",
    "--path",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory of agent files (default: seed/agents in the data directory).",
)
@json_option
def seed_agents(path: Path | None, as_json: bool) -> None:
    """Register each agent of a directory of Markdown files (front matter: name,
    description, domain; the body is the agent's identity memory). A bad file is reported
    and skipped; the others are seeded.

    Each `*.md` of the directory holds YAML front matter (`name`, else the file name;
    `description`, `domain`; and for the identity memory `title`, `importance`,
    `wake_phrases`, `wake_order`, `tags`, `private`) and a body. A non-empty body becomes
    the agent's identity memory (importance 9 unless said, tagged `agent:<name>`). Seeding
    the same files again changes nothing; a bad file exits 2."""
    directory = path or _seed_dir("agents")
    if not directory.is_dir():
        raise click.UsageError(f"no agents directory at {directory}")
    mem, done, failed = memory(), [], []
    for file in sorted(directory.glob("*.md")):
        try:
            inputs.inside(directory, file)
            meta, body = split(inputs.read_text(file, 2 * body_cap(), "agent"), str(file))
            name = str(meta.get("name") or file.stem)
            entry, result = mem.seed_agent(name, meta, body)
        except (MemlaneError, OSError, UnicodeDecodeError) as exc:
            failed.append({"file": str(file), "error": str(exc)})
            continue
        done.append(
            {
                "file": str(file),
                "agent": entry.key,
                "memory": result.id if result else None,
                "status": result.status.value if result else None,
            }
        )
    _report({"seeded": done, "failed": failed}, as_json, f"{len(done)} agent(s) seeded")


@seed.command("knowledge")
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@json_option
def seed_knowledge(path: Path | None, as_json: bool) -> None:
    """Add the memories of one JSONL file (the add-batch format), or of every `*.jsonl` in
    seed/knowledge in the data directory. Bad lines are reported and skipped.

    Every line goes through the write policy; a bad line is reported as `file:line` (the
    first 5, then how many; --json lists all) and the command exits 2. On a terminal a
    progress bar runs on stderr."""
    files = [path] if path else sorted(_seed_dir("knowledge").glob("*.jsonl"))
    mem, added, failed = memory(), 0, []
    for file in files:
        try:
            with (
                inputs.open_file(file, "knowledge") as stream,
                progress_bar(file.name, as_json) as tell,
            ):
                total = count_lines(stream)
                for line in mem.iter_batch(inputs.lines(stream)):
                    tell(line.line, total)
                    if line.error is not None:
                        failed.append({"file": str(file), "line": line.line, "error": line.error})
                    elif line.result is not None and line.result.landed:
                        added += 1
        except (MemlaneError, OSError) as exc:
            failed.append({"file": str(file), "line": None, "error": str(exc)})
    summary = f"{added} memories added from {len(files)} file(s)"
    _report({"files": [str(f) for f in files], "added": added, "failed": failed}, as_json, summary)


def _report(payload: dict[str, Any], as_json: bool, summary: str) -> None:
    if as_json:
        emit_json(payload)
    else:
        bad = Notes()
        for problem in payload["failed"]:
            where = problem["file"] + (f":{problem['line']}" if problem.get("line") else "")
            bad.add(f"{where}: {problem['error']}")
        bad.close("failures")
        click.echo(summary)
    if payload["failed"]:
        sys.exit(2)
