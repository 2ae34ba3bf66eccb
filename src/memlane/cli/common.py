"""What every command shares: the opened Memory, --json, errors, input files."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from memlane import config
from memlane.errors import MemlaneError
from memlane.memory import Memory
from memlane.scope import detect_context, load_aliases
from memlane.write.dedup import Thresholds
from memlane.write.draft import Limits

if TYPE_CHECKING:
    from memlane.embed import Embedder
    from memlane.retrieve.recall import RecallOptions

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class State:
    """Per-invocation state: settings and the lazily opened Memory."""

    db: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    _memory: Memory | None = None

    def memory(self) -> Memory:
        if self._memory is None:
            s = self.settings
            aliases_path = Path(s["project_aliases"]).expanduser()
            profile = s["embed_profile"]
            self._memory = Memory.open(
                self.db or s["db"],
                agent=s["agent"],
                context=detect_context(Path.cwd(), load_aliases(aliases_path)),
                limits=Limits(
                    s["max_body_bytes"], s["max_title_chars"], s["max_tags"], s["max_tag_chars"]
                ),
                synchronous=s["sqlite_synchronous"],
                # A factory: a command that needs no vectors never loads numpy or a model.
                embedder=None if profile == "none" else lambda: self.embedder_for(profile),
                embed_on_write=not s["skip_write_embed"],
            )
            self._memory.recall_settings = recall_settings(s)
            self._memory.write_policy = write_policy(s)
            self._memory.capture_mode = s["capture_mode"]
        return self._memory

    def embedder_for(self, profile: str) -> Embedder | None:
        """The embedder a profile name selects with the settings' options (none: None)."""
        if profile == "none":
            return None
        from memlane.embed import get_embedder

        s = self.settings
        options: dict[str, object] = {}
        if profile == "http":
            options = {
                "base_url": s["embed_url"],
                "model": s["embed_model"],
                "dimension": s["embed_dim"],
                "api_key": s["embed_api_key"],
            }
        return get_embedder(profile, **options)

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()
            self._memory = None


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


def emit_json(payload: Any) -> None:
    click.echo(json.dumps(payload, ensure_ascii=False, indent=2, default=str))


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout only.")(fn)


def read_text(source: str, what: str) -> str:
    """Text from a file path, or stdin for `-`; a missing file is a usage error."""
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).expanduser().read_text(encoding="utf-8")
    except FileNotFoundError:
        fail(f"{what} file not found: {source}")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {what} file {source}: {exc}")


def pick_content(inline: str | None, file: str | None, what: str = "content") -> str | None:
    """Content from exactly one of an inline value (`-` for stdin) or a file."""
    if inline is not None and file is not None:
        fail(f"give {what} inline or from a file, not both")
    if file is not None:
        return read_text(file, what)
    if inline == "-":
        return sys.stdin.read()
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
            fail(str(exc), exc.exit_code)
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


def write_policy(s: dict[str, Any]) -> Thresholds:
    """The write policy's thresholds: the settings given, the defaults otherwise."""
    given = {
        "string": s["dedup_string_threshold"],
        "vector": s["dedup_vector_threshold"],
        "conflict": s["dedup_conflict_threshold"],
    }
    return Thresholds(**{k: v for k, v in given.items() if v is not None})


def recall_settings(s: dict[str, Any]) -> RecallOptions:
    """Recall's options from the settings: what is set overrides, what is not keeps
    RecallOptions' own default (so the library and the CLI cannot drift apart)."""
    from memlane.retrieve.fuse import LANE_WEIGHTS, LANES
    from memlane.retrieve.recall import RecallOptions
    from memlane.retrieve.score import (
        DEFAULT_WEIGHTS,
        HALF_LIFE_DAYS,
        HALF_LIFE_ORDER,
        SCOPE_BOOSTS,
        Shape,
        Weights,
    )

    weights = Weights(*s["recall_weights"]) if s["recall_weights"] else DEFAULT_WEIGHTS
    days = s["recall_half_lives"]
    shape = Shape(
        half_lives=dict(zip(HALF_LIFE_ORDER, days, strict=True)) if days else HALF_LIFE_DAYS,
        boosts=s["recall_scope_boosts"] or SCOPE_BOOSTS,
    )
    lanes = s["recall_lane_weights"]
    scalars = {
        "passive_floor": s["recall_passive_floor"],
        "mmr_lambda": s["recall_mmr_lambda"],
        "link_budget": s["recall_link_budget"],
        "session_share": s["recall_session_share"],
    }
    return RecallOptions(
        weights=weights,
        shape=shape,
        lane_weights=dict(zip(LANES, lanes, strict=True)) if lanes else LANE_WEIGHTS,
        **{name: value for name, value in scalars.items() if value is not None},
    )


def settings_from_env() -> dict[str, Any]:
    return config.resolve()
