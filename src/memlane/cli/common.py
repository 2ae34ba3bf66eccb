"""What every command shares: the opened Memory, --json, errors, input files."""

from __future__ import annotations

import difflib
import importlib
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn, TypeVar

import click
import msgspec

from memlane import config
from memlane.errors import Invalid, MemlaneError, NotFound
from memlane.memory import Memory
from memlane.retrieve.present import printable
from memlane.write import inputs
from memlane.write.settings import Limits

if TYPE_CHECKING:
    from memlane.embed import Embedder

F = TypeVar("F", bound=Callable[..., Any])
# Where the root group leaves the settings it could not read, for `doctor`, `hook` and
# `settings` to report (they run with those settings at their defaults).
SETTINGS_PROBLEMS = "memlane.settings_problems"


# Commands that only read the store (groups with a writing subcommand are not among
# them): on a store file that does not exist they read an empty store in memory, and
# create neither the file nor its directory.
READ_COMMANDS = frozenset(
    "show list search recall recent history stats journal open-threads growth "
    "types export doctor browse review health wake wake-fetch for-session "
    "tune-weights relationships".split()
) | frozenset(
    {
        "tags list",
        "entities list",
        "entities show",
        "entities search",
        "sessions list",
        "reminders list",
        "agents list",
        "agents show",
        "categories list",
        "projects list",
        "projects aliases",
        "links list",
        "wake-log report",
        "settings list",
        "settings get",
        "settings path",
    }
)
# Commands that only read when told so: a dry run, a pack printed instead of written.
_READS_WHEN = {
    "consolidate": "dry_run",
    "organize": "dry_run",
    "pack": "out",
    "migrate": "dry_run",
    "rekey-namespace": "dry_run",
    "canonicalize-projects": "dry_run",
    "promote": "candidates",
}

# Commands that change only what is already stored (the memory, entity, link or relation
# they name, the memories reflect reads): a store file that does not exist holds nothing
# for them, so they open it as a read does and fail "not found" (or find nothing to do),
# creating neither the file nor its directory. `_CREATES_WHEN` names the flag with which
# one of them makes a store of its own.
_CHANGES_EXISTING = frozenset(
    "update edit append prepend restore supersede invalidate retire merge delete forget "
    "promote reinforce feedback reviewed contradict unrelate reflect rekey-namespace "
    "canonicalize-projects".split()
) | frozenset({"entities type", "entities merge", "links add", "links delete"})
_CREATES_WHEN = {"restore": "snapshot"}


class State(msgspec.Struct):
    """Per-invocation state: settings and the lazily opened Memory."""

    db: str | None = None
    settings: dict[str, Any] = msgspec.field(default_factory=dict)
    reading: bool = False  # the command only reads (see READ_COMMANDS)
    absent: Path | None = None  # the store file that does not exist, opened empty instead
    _memory: Memory | None = None

    def location(self) -> str:
        """The store this invocation names: a path, ":memory:" or a URL."""
        return str(self.db or self.settings.get("db") or "")

    def missing_store(self) -> Path | None:
        """The store file this invocation names, when it is a file that does not exist."""
        location = self.location()
        if not location or location == ":memory:" or "://" in location:
            return None
        path = Path(location).expanduser()
        return None if path.exists() else path

    def memory(self) -> Memory:
        if self._memory is None:
            missing = self.missing_store()
            creates_nothing = self.reading or _reads_now() or _changes_existing()
            # Trigger: --db (or MEMLANE_DB) names a file in a directory that does not
            # exist. Why: that is far more often a typo than a wish for new folders.
            # Outcome: a write is refused with the fix; the default location is made.
            if self.db and missing and not missing.parent.exists() and not creates_nothing:
                raise Invalid(
                    f"no directory {missing.parent} for the store {missing}: create "
                    f"it (mkdir -p {missing.parent}) or fix --db"
                )
            empty = creates_nothing and missing is not None
            self.absent = missing if empty else None
            with _migrating(None if empty else self.location()):
                self._memory = config.open_memory(self.settings, ":memory:" if empty else self.db)
        return self._memory

    def embedder_for(self, profile: str) -> Embedder | None:
        """The embedder a profile name selects with the settings' options (none: None)."""
        return config.embedder_for(self.settings, profile)

    def close(self) -> None:
        if self._memory is not None:
            _tell_redactions(self._memory.redactions)
            self._memory.close()
            self._memory = None


@contextmanager
def _migrating(location: str | None) -> Iterator[None]:
    """Trigger: a command opens a store file an older memlane made. Why: opening
    migrates it, and a migration may build a derived index (the keyword postings read
    the whole keyword index) before the command shows anything. Outcome: a spinner
    names the migration while it runs, on a terminal."""
    file = Path(location).expanduser() if location and "://" not in location else None
    if file is None or location == ":memory:" or not file.is_file():
        yield
        return
    try:
        pending = Memory.schema_status(file).pending
    except MemlaneError:  # not a store, or a damaged one: opening it says so
        pending = ()
    if not pending:
        yield
        return
    from memlane.cli.progress import progress_steps

    with progress_steps("migrating the schema", bool(_running()[1].get("as_json"))):
        yield


def _running() -> tuple[str, Mapping[str, Any]]:
    """The command running (a group's subcommand as `group sub`) and its parameters."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return "", {}
    return " ".join(ctx.command_path.split()[1:]), ctx.params


def _changes_existing() -> bool:
    """Whether the command running changes only what is already stored."""
    path, params = _running()
    flag = _CREATES_WHEN.get(path)
    return path in _CHANGES_EXISTING and not (flag and params.get(flag))


def _reads_now() -> bool:
    """Whether the command running (a group's subcommand too) only reads."""
    path, params = _running()
    if not path:
        return False
    if path in READ_COMMANDS:
        return True
    flag = _READS_WHEN.get(path)
    return flag is not None and (
        params.get(flag) is None if flag == "out" else bool(params.get(flag))
    )


def _tell_redactions(found: Sequence[tuple[str, str]]) -> None:
    """Secrets the store's door redacted that no write result reported: which fields."""
    if found:
        fields = ", ".join(dict.fromkeys(field for field, _ in found))
        kinds = ", ".join(dict.fromkeys(kind for _, kind in found))
        note(f"redacted {len(found)} secret(s) from {fields} ({kinds})")


def state() -> State:
    return click.get_current_context().find_object(State) or State()


def memory() -> Memory:
    return state().memory()


def fail(message: str, code: int = 2) -> NoReturn:
    """One line on stderr, then exit with `code`."""
    click.echo(f"memlane: error: {message}", err=True)
    sys.exit(code)


def note(message: str) -> None:
    click.echo(f"note: {message}", err=True)


def echo_stored(text: str, nl: bool = True) -> None:
    """Stored text on stdout: on a terminal with its control characters written out (the
    terminal would act on them: restyle, retitle, write the clipboard); piped, as
    stored, byte for byte, for the program that reads it (click.echo would strip
    some sequences from it)."""
    sys.stdout.write((printable(text) if sys.stdout.isatty() else text) + ("\n" if nl else ""))


def emit_json(payload: Any) -> None:
    click.echo(json.dumps(payload, ensure_ascii=False, indent=2, default=str))


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout only.")(fn)


def min_score_option(fn: F) -> F:
    """--min-score: the relevance floor of a read by meaning (see retrieve.abstain)."""
    return click.option(
        "--min-score",
        type=click.FloatRange(0.0, 1.0),
        help="Relevance floor: nothing when the nearest memory is less alike (cosine; "
        "default: the recall_min_score setting, else the embedding profile's floor; 0: off).",
    )(fn)


def read_text(source: str, what: str, cap: int | None = None) -> str:
    """Text from a regular file, or stdin for `-`, read with a cap (the largest memory
    body unless told): past it, or from a device or a FIFO, a usage error."""
    limit = cap if cap is not None else body_cap()
    try:
        if source == "-":
            return inputs.decode(inputs.read_capped(sys.stdin.buffer, limit, what), what)
        return inputs.read_text(source, limit, what)
    except MemlaneError as exc:
        fail(str(exc))


def body_cap() -> int:
    """The largest memory body the settings accept, in bytes."""
    return int(state().settings.get("max_body_bytes") or Limits().body_bytes)


def open_input(path: str, what: str) -> BinaryIO:
    """A regular file to read (stdin for `-`); a usage error for anything else."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return inputs.open_file(path, what)
    except MemlaneError as exc:
        fail(str(exc))


def pick_content(inline: str | None, file: str | None, what: str = "content") -> str | None:
    """Content from exactly one of an inline value (`-` for stdin) or a file."""
    if inline is not None and file is not None:
        fail(f"give {what} inline or from a file, not both")
    if file is not None:
        return read_text(file, what)
    if inline == "-":
        return read_text("-", what)
    return inline


class SectionedGroup(click.Group):
    """A group whose --help lists commands under their section headings, and whose
    commands (name -> "module:attribute" under memlane.cli) load when first asked for."""

    SECTIONS = (
        "memory ops",
        "recall",
        "graph",
        "lifecycle",
        "data",
        "server",
        "hooks",
        "admin",
    )

    def __init__(self, *args: Any, lazy: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module, attribute = self.lazy[cmd_name].split(":")
            command = getattr(importlib.import_module(f"memlane.cli.{module}"), attribute)
            if command.name != cmd_name:
                raise LookupError(f"{module}:{attribute} is `{command.name}`, not `{cmd_name}`")
            self.add_command(command)
        return self.commands.get(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """The command `args` names; a misspelt one is refused naming the closest."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError:
            name = args[0] if args else ""
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.6)
            if not close or name.startswith("-"):
                raise
            raise click.UsageError(
                f"no command {name!r}; did you mean {' or '.join(close)}?", ctx
            ) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows: dict[str, list[tuple[str, str]]] = {s: [] for s in self.SECTIONS}
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            section = getattr(cmd, "section", "admin")
            rows.setdefault(section, []).append((name, cmd.get_short_help_str(70)))
        for section, items in rows.items():
            if items:
                with formatter.section(section.capitalize()):
                    formatter.write_dl(items)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the CLI; click's usage errors become one line on stderr, exit 2."""
        # A process's argv cannot hold NUL (C strings end there); a caller that passes
        # one in-process is refused here, before a path check hands it to the OS.
        if args is not None and any("\x00" in str(a) for a in args):
            fail("an argument holds a NUL character")
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as exc:
            ctx = getattr(exc, "ctx", None)
            where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
            fail(" ".join(exc.format_message().split()) + where, exc.exit_code)
        except click.Abort:
            fail("aborted", 1)
        if not standalone_mode:
            return result
        sys.exit(result if isinstance(result, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemlaneError as exc:
            found = ctx.find_object(State)
            absent = found.absent if found is not None else None
            where = f" (no store at {absent})" if absent and isinstance(exc, NotFound) else ""
            fail(f"{exc}{where}", exc.exit_code)
        except UnicodeEncodeError:
            fail("input is not valid Unicode (undecodable bytes in an argument?)", 2)
        finally:
            found = ctx.find_object(State)
            if found is not None:
                found.close()


def in_section(section: str) -> Callable[[F], F]:
    """Mark a command's --help section (see SectionedGroup)."""

    def mark(cmd: F) -> F:
        cmd.section = section  # type: ignore[attr-defined]
        return cmd

    return mark


# The settings -> core values mappings live in memlane.config (the MCP server and the
# hooks open their Memory the same way); the CLI's modules reach them by these names.
write_policy = config.write_policy
recall_settings = config.recall_settings
