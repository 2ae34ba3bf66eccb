"""settings: the values in force and where each came from; the settings file's keys."""

from __future__ import annotations

import os
import shlex
from typing import Any

import click

from memlane import config, settings_file
from memlane.cli.common import State, emit_json, in_section, json_option, note, state
from memlane.errors import Invalid, MemlaneError

MASK = "********"


@in_section("admin")
@click.group("settings")
def settings_group() -> None:
    """The settings in force, and the settings file that holds some of them.

    Each setting comes from its environment variable (MEMLANE_...), else the settings
    file, else its default. The file is TOML (`memlane settings path` says where;
    MEMLANE_CONFIG moves it): `embed_profile = "hash"`, numbers as numbers, flags as
    true/false, the comma-separated settings as arrays, and an `[env]` table of
    environment variables memlane sets for itself when they are not set already (a
    provider's key, MEMLANE_LLM_CMD's own variables). Reading never creates the file.
    A bad value in it is named, with the file, by every command (doctor, hooks and
    `settings` run on with that setting at its default)."""


def _resolved() -> settings_file.Resolved:
    """The settings as the root group read them (leniently: `settings` runs to report),
    each problem named on stderr."""
    resolved = settings_file.load(lenient=True)
    for problem in resolved.problems:
        note(problem)
    return resolved


def _shown(setting: config.Setting, value: Any) -> Any:
    """A value as listed: a secret masked, a tuple as a list."""
    if setting.secret and value not in (None, ""):
        return MASK
    return list(value) if isinstance(value, tuple) else value


def _text(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list):
        return ",".join(map(str, value)) or "(empty)"
    return str(value) if value != "" else "(empty)"


def _derived(resolved: settings_file.Resolved) -> dict[str, Any]:
    """The derived values, of the store this invocation names (--db included)."""
    return settings_file.derived({**resolved.values, "db": state().location()})


def _rows(resolved: settings_file.Resolved) -> list[dict[str, Any]]:
    return [
        {
            "name": s.name,
            "value": _shown(s, resolved.values[s.name]),
            "source": resolved.sources[s.name],
            "env": s.env,
        }
        for s in config.SETTINGS
    ]


def _env_table(resolved: settings_file.Resolved) -> dict[str, str]:
    """The file's [env] names: set from the file, or shadowed by the environment."""
    return {
        name: "file" if os.environ.get(name) == value else "environment"
        for name, value in resolved.file.env.items()
    }


@settings_group.command("list")
@json_option
def list_cmd(as_json: bool) -> None:
    """Every setting's value and its source (default, file, file [env]: its variable set
    by the file's [env] table, environment), then the values derived from them (the
    embedding dimension, the store, the hooks' log). Secrets (API keys, tokens) are
    masked. A bad value is named on stderr; its default is listed."""
    resolved = _resolved()
    rows, derived = _rows(resolved), _derived(resolved)
    if as_json:
        emit_json(
            {
                "file": {"path": str(resolved.file.path), "exists": resolved.file.exists},
                "settings": rows,
                "derived": derived,
                "env": _env_table(resolved),
                "problems": list(resolved.problems),
            }
        )
        return
    exists = "" if resolved.file.exists else " (none yet)"
    click.echo(f"settings file: {resolved.file.path}{exists}")
    width = max(len(row["name"]) for row in rows)
    for row in rows:
        click.echo(f"{row['name']:<{width}}  {row['source']:<11}  {_text(row['value'])}")
    for name, value in derived.items():
        click.echo(f"{name:<{width}}  {'derived':<11}  {_text(value)}")
    for name, source in _env_table(resolved).items():
        click.echo(f"[env] {name}: {'set' if source == 'file' else 'kept from the environment'}")


@settings_group.command("get")
@click.argument("key")
@json_option
def get_cmd(key: str, as_json: bool) -> None:
    """One setting's value (or a derived value's: embed_dimension, store, hooks_log),
    a secret masked; --json adds its source."""
    resolved = _resolved()
    derived = _derived(resolved)
    if key in derived:
        value, source = derived[key], "derived"
    elif key in config.BY_NAME:
        value = _shown(config.BY_NAME[key], resolved.values[key])
        source = resolved.sources[key]
    else:
        raise Invalid(f"no setting {key!r} (`memlane settings list` lists them)")
    if as_json:
        emit_json({"name": key, "value": value, "source": source})
    else:
        click.echo(_text(value))


REINDEX = click.option(
    "--reindex",
    is_flag=True,
    help="After changing the embedding profile, model or dimension, compute every "
    "memory's vectors again with the new settings (as `memlane reembed`).",
)


@settings_group.command("set")
@click.argument("key")
@click.argument("value")
@REINDEX
@json_option
def set_cmd(key: str, value: str, reindex: bool, as_json: bool) -> None:
    """Write KEY = VALUE to the settings file, checked as the environment variable would
    be (a bad key or value: one line, exit 2, the file unchanged). The file is replaced
    whole, its other lines and comments kept. When the embedding profile, model or
    dimension in force is no longer the one the store's vectors were made with, it says
    so, and --reindex computes them again. An environment variable set for KEY still
    overrides the file: it says that too."""
    change = settings_file.set_value(key, value, reindex=reindex)
    again = f"memlane settings set {key} {shlex.quote(value)} --reindex"
    shown = _shown(change.setting, change.value)
    done = f"{key} = {_text(shown)} in {change.path}"
    _report(change, again, reindex, as_json, {"value": shown}, done)


def _report(
    change: settings_file.Change,
    again: str,
    reindex: bool,
    as_json: bool,
    fields: dict[str, Any],
    done: str,
) -> None:
    """What a change of the file means: an environment variable that overrides it,
    vectors now another profile's than the settings' (re-embedded with `reindex`, else
    the command `again` that would); then the JSON answer with `fields`, or the line
    `done` that says what was done."""
    if change.shadowed:
        where = "the settings file's [env] table" if change.from_env_table else "the environment"
        note(f"{change.setting.env} is set in {where} and overrides the file")
    stale = _vectors_stale(change)
    reembedded = _reindex(quiet=as_json) if reindex else None
    if stale and not reindex:
        note(
            f"the store's vectors were made with another {change.setting.name}: compute them "
            f"again with `{again}` (or `memlane reembed`)"
        )
    if as_json:
        emit_json(
            {
                "name": change.setting.name,
                **fields,
                "file": str(change.path),
                "reindex_needed": stale and not reindex,
                "reindexed": reembedded,
            }
        )
        return
    click.echo(done)
    if reembedded is not None:
        click.echo(f"re-embedded {reembedded} memories")


def _vectors_stale(change: settings_file.Change) -> bool:
    """Whether the store's vectors are another profile's than the settings now in force
    make: the profile the store records, read from it when it exists (never created
    here); a store that cannot be opened (an old one, auto_migrate off) falls back to
    whether the change changed the value in force."""
    if not change.setting.reindex or state().missing_store() is not None:
        return False
    values = settings_file.load(lenient=True).values
    store = State(db=state().db, settings=values, reading=True)
    try:
        recorded = store.memory().admin.vector_profile()
    except MemlaneError:
        return change.stale_vectors
    finally:
        store.close()
    return recorded is not None and recorded != config.vector_signature(values)


def _reindex(quiet: bool) -> int | None:
    """Every live memory embedded again with the settings now in force (None: the
    profile makes no vectors, or there is no store yet); a progress bar on a terminal
    unless `quiet`."""
    from memlane.cli.progress import progress_bar

    values = settings_file.load().values
    embedder = config.embedder_for(values, values["embed_profile"])
    fresh = State(db=state().db, settings=values)
    if embedder is None or fresh.missing_store() is not None:
        note("nothing to re-embed (no store yet, or the embedding profile is none)")
        return None
    try:
        with progress_bar(f"re-embedding with {values['embed_profile']}", quiet) as tell:
            return fresh.memory().reembed(embedder, progress=tell)
    finally:
        fresh.close()


@settings_group.command("unset")
@click.argument("key")
@REINDEX
@json_option
def unset_cmd(key: str, reindex: bool, as_json: bool) -> None:
    """Remove KEY from the settings file (its default, or its environment variable, is
    then in force); a key the file does not hold changes nothing. A key that is no
    setting (a typo) is removed too, when the file holds it. As for `set`, it says when
    the vectors are now another profile's, and --reindex computes them again."""
    resolved = _resolved()
    path = resolved.file.path
    done = f"removed {key} from {path}"
    if key in resolved.file.values and settings_file.is_unknown(key) and not reindex:
        settings_file.write(path, {key: None})  # a typo's key: removed, nothing more to say
        removed = True
    else:
        change = settings_file.unset_value(key, reindex=reindex)
        if change is not None:
            again = f"memlane settings unset {key} --reindex"
            _report(change, again, reindex, as_json, {"removed": True}, done)
            return
        removed = False
    if as_json:
        emit_json({"name": key, "file": str(path), "removed": removed})
    elif removed:
        click.echo(done)
    else:
        note(f"{key} is not set in {path}")


@settings_group.command("path")
@json_option
def path_cmd(as_json: bool) -> None:
    """Where the settings file is (MEMLANE_CONFIG, else settings.toml in the platform's
    config directory), whether or not it exists yet."""
    path = settings_file.settings_path()
    if as_json:
        emit_json({"path": str(path), "exists": path.exists()})
    else:
        click.echo(str(path))
