"""export, and import of memlane's own JSONL, of CSV files and of Markdown folders."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memlane.cli.capture import CAPTURE_MODE
from memlane.cli.common import (
    body_cap,
    echo_stored,
    emit_json,
    fail,
    in_section,
    json_option,
    memory,
    note,
    open_input,
)
from memlane.cli.progress import Notes, Tell, progress_bar
from memlane.errors import Invalid, MemlaneError
from memlane.files import private_dirs, replace_file
from memlane.services.transfer import ImportReport
from memlane.write import inputs
from memlane.write.frontmatter import split

if TYPE_CHECKING:
    from memlane.memory import Memory

FORMATS = ("jsonl", "csv", "md")


@in_section("data")
@click.command("export")
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="jsonl",
    show_default=True,
    help="jsonl: lossless; csv: one row per memory, every "
    "field (lists as JSON arrays, null as an empty cell); md: one file per "
    "memory (needs -o DIR).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="File (jsonl, csv) or directory (md); default: stdout.",
)
@click.option("--scope", help="Only this scope (a project's with its branches).")
@click.option("--include-superseded", is_flag=True, help="Also superseded and invalidated.")
@click.option("--include-private", is_flag=True, help="Also your own private memories.")
@json_option
def export_cmd(
    fmt: str,
    output: Path | None,
    scope: str | None,
    include_superseded: bool,
    include_private: bool,
    as_json: bool,
) -> None:
    """Write memories out: JSONL with every field, version, link, entity, session and
    registry, CSV with one row per memory, or Markdown files with one memory each. `import`
    restores each of them exactly (CSV and Markdown carry the memories only).

    By default the live public memories of every scope; --scope takes one scope with its
    branches, --include-superseded the superseded and invalidated ones too, and
    --include-private your own private memories and reminders.

    JSONL is lossless: a header line, then one record per line with a `kind`: `registry`,
    `session`, `memory` (every field; its own kind as `memory_kind`), `version`, `link`
    (both ends exported), `entity`, `alias`, `mention`, `reminder`. No embeddings (`embed
    --pending` rebuilds them), no journal, no wake log. Export, import into an empty store
    and export again gives the same bytes.

    CSV: one row per memory with every field of its JSONL record as a column, id, scope,
    kind, category, title, body, tags and importance first; a list (tags, applicability,
    wake_phrases) is a JSON array, so any tag comes back as it was; a missing value is an
    empty cell; numbers as JSON writes them, `ephemeral` as 0 or 1; rows end in CRLF. A text
    a spreadsheet would run as a formula gets a leading ' that `import csv` takes off again.

    md writes one `<id>.md` per memory into `-o DIR`: YAML front matter, then the body. On
    a terminal a progress bar runs on stderr."""
    options: dict[str, Any] = {
        "scope": scope,
        "include_superseded": include_superseded,
        "include_private": include_private,
    }
    mem = memory()
    if fmt == "md":
        if output is None:
            raise click.UsageError("-f md writes one file per memory: give -o DIRECTORY")
        private_dirs(output)
        with progress_bar("export", as_json) as tell:
            files = []
            for name, text in mem.transfer.export_markdown(**options):
                files.append(_write(output / name, text))
                tell(len(files), None, "files")
        _done(as_json, output, len(files))
        return
    with progress_bar("export", as_json) as tell:
        text = (
            _jsonl(mem.transfer.export_jsonl(**options), tell)
            if fmt == "jsonl"
            else mem.transfer.export_csv(progress=tell, **options)
        )
    if output is None and not as_json:
        echo_stored(text, nl=False)
        return
    if output is not None:
        _write(output, text)
    _done(as_json, output, text.count("\n"))


def _jsonl(lines: Iterator[str], tell: Tell) -> str:
    """The export's lines as one text, TELL told how many so far."""
    out = []
    for line in lines:
        out.append(f"{line}\n")
        tell(len(out), None, "lines")
    return "".join(out)


def _write(path: Path, text: str) -> Path:
    try:
        replace_file(path, text)
    except (FileNotFoundError, ValueError) as exc:  # a missing folder, a device: the input's
        fail(f"cannot write {path}: {exc}")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}", 1)
    return path


def _done(as_json: bool, output: Path | None, count: int) -> None:
    if as_json:
        emit_json({"output": str(output) if output else None, "lines": count})
    else:
        click.echo(
            f"Wrote {count} {'files' if output and output.is_dir() else 'lines'} to {output}"
        )


class ImportGroup(click.Group):
    """`memlane import FILE` loads memlane's JSONL; `memlane import <format> ...` others."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["jsonl", *args]
        return super().resolve_command(ctx, args)


@in_section("data")
@click.group("import", cls=ImportGroup)
def import_group() -> None:
    """Load memories: `import FILE` (a memlane JSONL export), `import csv FILE`, `import
    markdown DIR`, `import mcp-memory FILE`.

    `memlane import FILE` is `memlane import jsonl FILE`. Every import screens what it loads
    as `add` does (secrets redacted, injection tagged) unless --capture-mode reviewed or
    manual, for files from a store you trust; new memories are embedded when a profile is
    set. A bad line, row or file is reported and the import exits 2: `import mcp-memory`
    then writes nothing, the others skip it and load the rest. The first 5 bad lines are
    printed, then how many there were (--json lists all). On a terminal a progress bar
    runs on stderr."""


@import_group.command("jsonl")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@CAPTURE_MODE
@click.option(
    "--allow-tombstones",
    is_flag=True,
    help="Let a record end a live memory of the same id (trusted files only).",
)
@json_option
def import_jsonl_cmd(
    file: Path, capture_mode: str | None, allow_tombstones: bool, as_json: bool
) -> None:
    """Load a JSONL export: every line checked first, bad lines reported by number and
    skipped; ids kept; loading the same file again changes nothing.

    Every line is checked before anything is written (its kind, exactly its columns, each
    value's shape); a bad line is reported as `FILE:LINE` and skipped (exit 2), the good
    ones land in one transaction, in dependency order. A record already there as is changes
    nothing; one there but different is left alone and counted as a `conflict`, except that
    --allow-tombstones lets a superseded or invalidated record end a live memory of the same
    id (for files from a store you trust).

    Without an agent identity an import is a restore: every owner's private memories and
    every agent's reminders land as they are. An agent (MEMLANE_AGENT) imports shared
    memories and its own private ones and reminders only: a line holding another owner's
    private memory or another agent's reminder, or a version, link or mention naming a
    memory the agent may not see, is a bad line. Every record is screened as `add` screens
    it (secrets redacted in every text column, injection tagged, an entity named by a piece
    of a secret left out and counted `redacted`)."""
    with open_input(str(file), "import") as stream, progress_bar("import", as_json) as tell:
        report = memory().transfer.import_jsonl(
            inputs.lines(stream),
            capture_mode=capture_mode,
            allow_tombstones=allow_tombstones,
            progress=tell,
        )
    _report(file, report, as_json, "line")


@import_group.command("csv")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@CAPTURE_MODE
@json_option
def import_csv_cmd(file: Path, capture_mode: str | None, as_json: bool) -> None:
    """Load a CSV: a memlane export restored exactly, any other table added as new memories.

    FILE may be `-` for stdin; it is read a line at a time under the same 4 MiB line cap as
    JSONL. A `memlane export -f csv` file (its header names `id` or `dedup_hash`, and then
    must hold every column the export writes) is restored as `import` restores JSONL: each
    row becomes the memory's JSONL record, with the same id, times, counters and state, and
    an agent's import is held to the same rules.

    Any other table is a list of new memories: a `body` (or `content`) column and any of
    `add`'s fields (`title`, `tags`, `kind`, `category`, `importance`, `scope`, `private`,
    `occurred_at`, ...; headers match case-blind, `Wake phrases` as `wake_phrases`), a list
    either a JSON array or comma-separated, a flag true/false/yes/no, an empty cell the
    field left out; each row is added through the write policy in session `import:FILE`.

    Every row is read before anything is written. A bad row is reported as `FILE: row N`
    (the header is row 1, as a spreadsheet numbers rows; a cell over several lines is one
    row) and skipped (exit 2), the good ones land; --json prints `counts`, `added`,
    `redactions`, `unembedded` and `errors` (`row`, `error`). A header naming an unknown
    column or lacking one, or a text that is not UTF-8 CSV, is refused in one line (exit 2)
    and nothing lands. Importing the same file again changes nothing."""
    source = "stdin" if str(file) == "-" else str(file.resolve())
    with open_input(str(file), "import") as stream, progress_bar("import", as_json) as tell:
        try:
            report = memory().transfer.import_csv(
                inputs.lines(stream), capture_mode=capture_mode, source=source, progress=tell
            )
        except Invalid as exc:
            fail(f"{file}: {exc}")
    _report(file, report, as_json, "row")


def _report(file: Path, report: ImportReport, as_json: bool, unit: str) -> None:
    """What an import did, and the bad lines (or rows) it skipped: exit 2 if any."""
    if as_json:
        emit_json(
            {
                "counts": report.counts,
                "added": report.added,
                "redactions": report.redactions,
                "unembedded": report.unembedded,
                "errors": [{unit: n, "error": e} for n, e in report.errors],
            }
        )
    else:
        bad = Notes()
        for number, error in report.errors:
            where = f"{file}:{number}" if unit == "line" else f"{file}: {unit} {number}"
            bad.add(f"{where}: {error}")
        bad.close(f"bad {unit}s")
        for kind, outcomes in report.counts.items():
            click.echo(f"{kind}: " + ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items())))
        if report.unembedded:
            note(f"{report.unembedded} memories without vectors: run `memlane embed --pending`")
    if report.errors:
        sys.exit(2)


@import_group.command("captures")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@json_option
def import_captures_cmd(path: Path, as_json: bool) -> None:
    """Replay the hooks' capture log: a day's file (`captures/DATE.jsonl` in
    MEMLANE_HOOK_DIR), or every `*.jsonl` in a folder, oldest day first.

    Each line is added through the write policy in the session it was captured in, with
    its kind, scope, tags, importance, confidence, signal and taint, so a store that has
    the memory already (an exact or near duplicate) adds nothing: replaying a log into the
    store that wrote it changes nothing. A line that is not the log's is reported as
    `FILE:LINE` and skipped (exit 2); the rest land. --json: `files`, `counts`, `added`,
    `redactions`, `unembedded`, `errors` (`file`, `line`, `error`)."""
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    mem, total = memory(), ImportReport()
    counts: dict[str, int] = {}
    errors: list[dict[str, Any]] = []
    for file in files:
        with open_input(str(file), "import") as stream, progress_bar(file.name, as_json) as tell:
            report = mem.transfer.import_captures(inputs.lines(stream), tell)
        for outcome, n in report.counts.get("memory", {}).items():
            counts[outcome] = counts.get(outcome, 0) + n
        errors += [{"file": str(file), "line": n, "error": e} for n, e in report.errors]
        total.landed += report.landed
        total.redactions += report.redactions
        total.unembedded += report.unembedded
    if as_json:
        emit_json(
            {
                "files": [str(f) for f in files],
                "counts": counts,
                "added": total.landed,
                "redactions": total.redactions,
                "unembedded": total.unembedded,
                "errors": errors,
            }
        )
    else:
        bad = Notes()
        for problem in errors:
            bad.add(f"{problem['file']}:{problem['line']}: {problem['error']}")
        bad.close("bad lines")
        done = ", ".join(f"{n} {o}" for o, n in sorted(counts.items())) or "nothing"
        click.echo(f"{len(files)} capture log file(s): {done}")
    if errors:
        sys.exit(2)


@import_group.command("markdown")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@CAPTURE_MODE
@json_option
def import_markdown_cmd(directory: Path, capture_mode: str | None, as_json: bool) -> None:
    """Add one memory per `*.md` file below DIRECTORY (front matter: title, tags, kind,
    category, importance, scope, private...; the body is the content) through the write
    policy. Importing the same folder again adds nothing.

    Each memory's source is its file. A file of memlane's own `export -f md` (its front
    matter names `id`, `memory_kind` and `dedup_hash`) is restored as `import` restores
    JSONL: the same id, times, counters and state. A bad file, a link out of DIRECTORY, a
    FIFO or a device is reported and skipped (exit 2)."""
    if not directory.is_dir():
        raise click.UsageError(f"{directory} is not a directory")
    mem = memory()
    added: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    exported: list[tuple[Path, str]] = []
    files = sorted(directory.rglob("*.md"))
    with progress_bar("import", as_json) as tell:
        for number, file in enumerate(files, start=1):
            _markdown_file(mem, directory, file, capture_mode, added, failed, exported)
            tell(number, len(files), "reading")
        if exported:
            _restore_exported(mem, exported, capture_mode, added, failed, tell)
    if as_json:
        emit_json({"imported": added, "failed": failed})
    else:
        bad = Notes()
        for problem in failed:
            bad.add(f"{problem['file']}: {problem['error']}")
        bad.close("bad files")
        landed = sum(1 for a in added if a["status"] == "added")
        click.echo(f"{landed} added, {len(added) - landed} already there, {len(failed)} failed")
    if failed:
        sys.exit(2)


def _markdown_file(
    mem: Memory,
    directory: Path,
    file: Path,
    capture_mode: str | None,
    added: list[dict[str, Any]],
    failed: list[dict[str, Any]],
    exported: list[tuple[Path, str]],
) -> None:
    """One Markdown file: added through the write policy, set aside in EXPORTED when it
    is memlane's own export, or its problem put in FAILED."""
    try:
        inputs.inside(directory, file)
        meta, body = split(inputs.read_text(file, 2 * body_cap(), "markdown"), str(file))
        record = mem.transfer.exported_record(meta, body)
        if record is not None:  # memlane's own export: restored as `import` does
            exported.append((file, record))
            return
        fields = {k: v for k, v in meta.items() if k in _MARKDOWN_FIELDS}
        if "memory_kind" in meta:  # a memlane Markdown export names the kind so
            fields.setdefault("kind", meta["memory_kind"])
        result = mem.add(
            body,
            session_id=f"import:{directory.resolve()}",
            source_ref=meta.get("source_ref") or f"file:{file.resolve()}",
            capture_mode=capture_mode,
            **fields,
        )
        added.append({"file": str(file), "id": result.id, "status": result.status.value})
    except (MemlaneError, OSError, UnicodeDecodeError) as exc:
        failed.append({"file": str(file), "error": str(exc)})


def _restore_exported(
    mem: Memory,
    exported: list[tuple[Path, str]],
    capture_mode: str | None,
    added: list[dict[str, Any]],
    failed: list[dict[str, Any]],
    tell: Tell,
) -> None:
    """memlane's own Markdown export files, restored as `import` restores JSONL."""
    records = [r for _, r in exported]
    report = mem.transfer.import_jsonl(records, capture_mode=capture_mode, progress=tell)
    bad = dict(report.errors)
    for number, (file, record) in enumerate(exported, start=1):
        if number in bad:
            failed.append({"file": str(file), "error": bad[number]})
        else:
            memory_id = json.loads(record)["id"]
            status = "added" if memory_id in report.landed else "unchanged"
            added.append({"file": str(file), "id": memory_id, "status": status})


_MARKDOWN_FIELDS = frozenset(
    {
        "title",
        "tags",
        "kind",
        "category",
        "importance",
        "scope",
        "private",
        "occurred_at",
        "valid_from",
        "applicability",
        "domain",
        "wake_phrases",
        "wake_order",
        "content_type",
    }
)


def _attach_mcp_memory() -> None:
    """`import mcp-memory FILE`: the official MCP memory server's file (cli/serve.py)."""
    from memlane.cli.serve import import_mcp_memory_cmd

    import_group.add_command(import_mcp_memory_cmd)


_attach_mcp_memory()
