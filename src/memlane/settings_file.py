"""The settings file: TOML in the config directory, beside the environment.

Top-level keys are the settings' names (`embed_profile = "hash"`), valued as TOML
(strings, numbers, booleans, arrays for the comma-separated settings); an `[env]`
table holds extra environment variables for the process. It is read with tomllib,
never created by a read, and written with tomlkit (its comments and layout kept),
whole or not at all.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

import msgspec

from memlane import config
from memlane.errors import Invalid, shown
from memlane.files import private_dirs, replace_file

ENV_TABLE = "env"
# The source of a setting whose variable the file's [env] table set.
ENV_SOURCE = "file [env]"


class SettingsFile(msgspec.Struct, frozen=True):
    """A settings file as read: its settings (TOML values) and its `[env]` table."""

    path: Path
    values: dict[str, Any]
    env: dict[str, str]
    exists: bool


def read(path: Path) -> SettingsFile:
    """The file at `path` (a missing one is empty); a file that is not TOML, or whose
    `[env]` is not a table of names and texts, is Invalid naming the file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return SettingsFile(path, {}, {}, exists=False)
    except OSError as exc:
        raise Invalid(f"cannot read the settings file {path}: {exc.strerror}") from None
    try:
        values = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise Invalid(f"the settings file {path} is not valid TOML: {exc}") from None
    return SettingsFile(path, values, _env_table(path, values.pop(ENV_TABLE, {})), exists=True)


def _env_table(path: Path, table: Any) -> dict[str, str]:
    if not isinstance(table, dict):
        raise Invalid(f'{path}: [{ENV_TABLE}] must be a table of NAME = "value"')
    env = {}
    for name, value in table.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise Invalid(f"{path}: [{ENV_TABLE}] {name} must be a string or a number")
        env[name] = str(value)
    return env


# The variables an [env] table set in this process's environment: a later load (each
# command's own, after the root group's) still counts them as the file's.
_SET_IN_PROCESS: set[str] = set()


def apply_env(env: Mapping[str, str], environ: MutableMapping[str, str]) -> list[str]:
    """Set each `[env]` variable that `environ` lacks (or holds empty); the names set
    (in the process's environment: set now or by an earlier call, and unchanged since)."""
    applied = [name for name in env if not environ.get(name)]
    for name in applied:
        environ[name] = env[name]
    if environ is not os.environ:
        return applied
    _SET_IN_PROCESS.update(applied)
    return [name for name in env if name in _SET_IN_PROCESS and environ.get(name) == env[name]]


def as_text(value: Any) -> str:
    """A TOML value as the settings table's parsers read it (as from the environment):
    a boolean is 1 or 0, an array its items joined by commas."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list):
        return ",".join(as_text(item) for item in value)
    if isinstance(value, dict):
        raise ValueError("a table is not a setting's value")
    return str(value)


def as_toml(value: Any) -> Any:
    """A parsed setting's value as the file keeps it (a tuple as an array)."""
    return list(value) if isinstance(value, tuple) else value


def write(path: Path, changes: Mapping[str, Any]) -> None:
    """Set (or, for None, remove) top-level keys in the file at `path`, keeping the
    rest of it, comments included; the new file replaces the old whole, owner-only."""
    import tomlkit  # only a write needs it

    target = path.resolve() if path.is_symlink() else path
    try:
        document = tomlkit.parse(target.read_text(encoding="utf-8") if target.exists() else "")
    except (OSError, UnicodeDecodeError, tomlkit.exceptions.ParseError) as exc:
        raise Invalid(f"cannot update the settings file {path}: {exc}") from None
    for key, value in changes.items():
        if value is None:
            document.pop(key, None)
        else:
            document[key] = value
    private_dirs(target.parent)
    try:
        replace_file(target, tomlkit.dumps(document))
    except (OSError, ValueError) as exc:
        raise Invalid(f"cannot write the settings file {path}: {exc}") from None


# ---- the settings, layered: environment > file > default -------------------------------


class Resolved(msgspec.Struct, frozen=True):
    """Every setting's value and where it came from (default, file, file [env],
    environment), the settings file read, and what was bad (each then at its default)."""

    values: dict[str, Any]
    sources: dict[str, str]
    file: SettingsFile
    problems: tuple[str, ...] = ()


def settings_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the settings file is: MEMLANE_CONFIG, else settings.toml in the config dir."""
    env = os.environ if environ is None else environ
    setting = config.BY_NAME["config"]
    return Path(env.get(setting.env) or setting.default()).expanduser()


def load(environ: MutableMapping[str, str] | None = None, *, lenient: bool = False) -> Resolved:
    """Every setting: from its environment variable, else the settings file, else its
    default; first the file's [env] variables are set where `environ` (the process's
    environment by default) lacks them. A bad value is Invalid naming it, or, when
    `lenient` (doctor, the hooks, `settings`: they must run to report it), its setting
    falls back to its default and the problem is listed."""
    env = os.environ if environ is None else environ
    problems: list[str] = []
    path = settings_path(env)
    try:
        file = read(path)
    except Invalid as exc:
        if not lenient:
            raise
        file, problems = SettingsFile(path, {}, {}, exists=True), [str(exc)]
    from_file = set(apply_env(file.env, env))
    values, sources = {}, {}
    for setting in config.SETTINGS:
        try:
            values[setting.name], sources[setting.name] = _value(setting, env, file, from_file)
        except Invalid as exc:
            if not lenient:
                raise
            values[setting.name], sources[setting.name] = setting.default(), "default"
            problems.append(str(exc))
    for problem in _unknown_keys(file):
        if not lenient:
            raise Invalid(problem)
        problems.append(problem)
    misfits = _fit_together(values, sources, file.path)
    if misfits and not lenient:
        raise Invalid(misfits[0])
    return Resolved(values, sources, file, (*problems, *misfits))


def _value(
    setting: config.Setting, env: Mapping[str, str], file: SettingsFile, from_file: set[str]
) -> tuple[Any, str]:
    """A setting's value and its source; `from_file`: the variables the file's [env]
    table set (a value from there is the file's, and a bad one is named as its)."""
    raw = env.get(setting.env)
    if raw and setting.env in from_file:
        where = f"{file.path}: [{ENV_TABLE}] {setting.env} = {raw!r}"
        return _parsed(setting, raw, where), ENV_SOURCE
    if raw:
        return _parsed(setting, raw, f"{setting.env}={raw!r}"), "environment"
    given = file.values.get(setting.name) if setting.name != "config" else None
    if given is None:
        return setting.default(), "default"
    where = f"{file.path}: {setting.name} = {'***' if setting.secret else shown(given)}"
    try:
        text = as_text(given)
    except ValueError as exc:
        raise Invalid(f"{where} is not valid: {exc}") from None
    return (_parsed(setting, text, where), "file") if text else (setting.default(), "default")


def _parsed(setting: config.Setting, text: str, where: str) -> Any:
    try:
        return setting.parse(text)
    except ValueError as exc:
        raise Invalid(f"{where} is not valid: {exc}") from None


def _unknown_keys(file: SettingsFile) -> list[str]:
    """The file's keys that are no setting it may hold (`config` names the file itself)."""
    problems = []
    for key in file.values:
        if key == "config":
            problems.append(f"{file.path}: config is read from MEMLANE_CONFIG only")
        elif key not in config.BY_NAME:
            close = difflib.get_close_matches(key, list(config.BY_NAME), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            fix = f"`memlane settings unset {key}` removes it"
            problems.append(f"{file.path}: unknown setting {key!r}{hint} ({fix})")
    return problems


# Settings checked together (by prefix), by the function that turns them into the
# values the core receives, as every command's Memory gets them.
GROUPS: tuple[tuple[str, Callable[[Mapping[str, Any]], object]], ...] = (
    ("recall_", config.recall_settings),
    ("dedup_", config.write_policy),
    ("review_", config.review_policy),
)


def _fit_together(values: dict[str, Any], sources: Mapping[str, str], path: Path) -> list[str]:
    """Settings that parse but do not fit together: each group goes back to defaults."""
    problems = []
    for prefix, check in GROUPS:
        try:
            check(values)
        except Invalid as exc:
            group = [s for s in config.SETTINGS if s.name.startswith(prefix)]
            values.update({s.name: s.default() for s in group})
            given = [_origin(s, sources[s.name], path) for s in group]
            named = ", ".join(g for g in given if g) or f"the {prefix.rstrip('_')} defaults"
            problems.append(f"{named}: {exc}")
    return problems


def _origin(setting: config.Setting, source: str, path: Path) -> str:
    """Where a setting's value came from, as a problem names it ("" for a default)."""
    if source == "environment":
        return setting.env
    if source == ENV_SOURCE:
        return f"{path}: [{ENV_TABLE}] {setting.env}"
    return f"{path}: {setting.name}" if source == "file" else ""


def is_unknown(name: str) -> bool:
    """Whether `name` is no setting the file may hold (a typo, or `config`)."""
    return name not in config.BY_NAME or name == "config"


def check_known(name: str) -> config.Setting:
    """The setting `name`, one the file may hold; else Invalid naming the closest."""
    if is_unknown(name):
        names = [s.name for s in config.SETTINGS if s.name != "config"]
        close = difflib.get_close_matches(name, names, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise Invalid(f"no setting {name!r} can be set in the settings file{hint}")
    return config.BY_NAME[name]


def check_value(setting: config.Setting, text: str) -> Any:
    """The value `text` gives `setting` as the file keeps it (checked by the table's own
    parser, as its environment variable would be), or Invalid."""
    where = f"{setting.name} = {'***' if setting.secret else shown(text)}"
    return as_toml(_parsed(setting, text, where))


def _check_fits(setting: config.Setting, text: str, values: Mapping[str, Any]) -> None:
    """Invalid when `text` would not fit the settings of its group in force (`values`),
    as every command's Memory would refuse them."""
    trial = {**values, setting.name: setting.parse(text)}
    for prefix, check in GROUPS:
        if setting.name.startswith(prefix):
            try:
                check(trial)
            except Invalid as exc:
                where = f"{setting.name} = {shown(text)}"
                raise Invalid(f"{where} does not fit the other {prefix}* settings: {exc}") from None


class Change(msgspec.Struct, frozen=True):
    """A setting written to the file: the value as kept there, and the value in force
    before and after (the same when its environment variable overrides the file)."""

    setting: config.Setting
    value: Any
    path: Path
    before: Any
    after: Any
    shadowed: bool  # its environment variable is set, and rules
    from_env_table: bool = False  # the file's [env] table set that variable

    @property
    def stale_vectors(self) -> bool:
        """The stored vectors are another model's now (`memlane reembed` remakes them)."""
        return self.setting.reindex and self.before != self.after


def set_value(name: str, text: str, *, reindex: bool = False) -> Change:
    """Write setting `name` = `text` to the settings file, checked first by the table's
    parser (Invalid, the file untouched). `reindex`: the caller will re-embed, which only
    a setting that changes the vectors asks for."""
    setting = check_known(name)
    value = check_value(setting, text)
    _check_reindex(setting, reindex)
    before = load(lenient=True)
    _check_fits(setting, text, before.values)
    return _changed(setting, value, before)


def unset_value(name: str, *, reindex: bool = False) -> Change | None:
    """Remove setting `name` from the settings file (None: the file does not hold it,
    and is left as it is); `reindex` as for set_value."""
    setting = check_known(name)
    _check_reindex(setting, reindex)
    before = load(lenient=True)
    return _changed(setting, None, before) if name in before.file.values else None


def _check_reindex(setting: config.Setting, reindex: bool) -> None:
    if reindex and not setting.reindex:
        names = ", ".join(s.name for s in config.SETTINGS if s.reindex)
        raise Invalid(f"--reindex goes with a setting that changes the vectors ({names})")


def _changed(setting: config.Setting, value: Any, before: Resolved) -> Change:
    """`setting` written to the file as `value` (None: removed), and what that changed."""
    name = setting.name
    write(before.file.path, {name: value})
    after = load(lenient=True).values[name]
    source = before.sources[name]
    shadowed = source in ("environment", ENV_SOURCE)
    return Change(
        setting, value, before.file.path, before.values[name], after, shadowed, source == ENV_SOURCE
    )


def derived(values: Mapping[str, Any]) -> dict[str, Any]:
    """Values computed from the settings, not set: the embedding dimension, the store
    (a path made absolute, a URL without its password), the hooks' log."""
    from memlane.embed.profiles import PROFILES

    profile = values["embed_profile"]
    dimension = values["embed_dim"] if profile == "http" else None
    if profile in PROFILES and profile != "http":
        dimension = PROFILES[profile].dimension
    db = str(values["db"])
    if "://" in db:
        store = re.sub(r"^(\w+://[^:/@]*):[^@]*@", r"\1:***@", db)
    else:
        store = db if db == ":memory:" else str(Path(db).expanduser().absolute())
    return {
        "embed_dimension": dimension,
        "store": store,
        "hooks_log": str(Path(values["hook_dir"]).expanduser() / "hooks.log"),
    }
