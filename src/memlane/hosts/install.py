"""`memlane install` / `uninstall`: memlane's hooks and MCP server in an agent host's
settings, merged without clobbering anything, idempotently, with a backup, and taken
out again exactly.

Claude Code keeps hooks in `settings.json` (`~/.claude/` for the user, `.claude/` in a
project) and MCP servers in `~/.claude.json` (user) or `.mcp.json` (project). Codex
keeps hooks in `hooks.json` and MCP servers in `config.toml` (`~/.codex/` or the
project's `.codex/`); its hooks run only with `[features] codex_hooks = true`.

What an install added is recorded in a manifest in memlane's data directory, so an
uninstall removes those entries and nothing else. When the file is otherwise as the
install found it, the uninstall puts back the backup's exact bytes.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from memlane.errors import Invalid
from memlane.hosts.merge import Added, Doc, merge_entry, merge_hooks, unmerge

HOSTS = ("claude-code", "codex")
SCOPES = ("user", "project")
SERVER_NAME = "memlane"
# Seconds a host waits for one hook. The hooks answer in well under a second; the
# margin covers a cold start on a slow disk, and a hook that overruns is cut off by
# the host rather than stalling the session.
HOOK_TIMEOUT = 30
# Host event -> `memlane hook` event. Codex has no session-end event.
CLAUDE_EVENTS = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt",
    "PreToolUse": "pre-tool",
    "SubagentStart": "subagent-start",
    "PreCompact": "pre-compact",
    "Stop": "stop",
    "SessionEnd": "session-end",
}
CODEX_EVENTS = {k: v for k, v in CLAUDE_EVENTS.items() if k != "SessionEnd"}
# Hooks installed only when asked for: before every command and edit, a rule shown
# wrongly costs the agent's attention on each call, and on projects it was not tuned on
# the PreToolUse lane shows an unrelated rule about as often as a related one.
OPT_IN = frozenset({"PreToolUse"})
# The tools a PreToolUse hook is started for: those that run a command or write a file
# (hooks.tool); reads and searches never start it. Codex's hook sees its shell tool only.
TOOL_MATCHERS = {
    "claude-code": {"PreToolUse": "Bash|Edit|Write|MultiEdit|NotebookEdit"},
    "codex": {"PreToolUse": "Bash"},
}
MANIFEST = "installs.json"


class Target(msgspec.Struct, frozen=True):
    """One settings file of a host and how memlane's entries go into it."""

    path: Path
    edit: Callable[[Doc, Added, str], None]

    @property
    def toml(self) -> bool:
        return self.path.suffix == ".toml"


class FileChange(msgspec.Struct, frozen=True):
    """What an install or uninstall does to one file."""

    path: Path
    action: str  # create | update | unchanged | restore | delete
    before: str | None
    after: str | None  # None: the file is removed
    added: Added
    backup: Path | None = None


def launcher(db: str | None) -> list[str]:
    """How a host starts memlane: this interpreter, so the host's PATH does not matter;
    the store named at install time, when one was."""
    import sys

    return [sys.executable, "-m", "memlane", *(["--db", str(Path(db).resolve())] if db else [])]


def targets(
    host: str,
    scope: str,
    home: Path,
    project: Path,
    run: Sequence[str],
    pre_tool: bool = False,
) -> list[Target]:
    """The files of `host` for `scope`, each with its edit; the PreToolUse hook only
    when `pre_tool` asks for it (see OPT_IN)."""
    if host not in HOSTS or scope not in SCOPES:
        raise Invalid(f"unknown host or scope: {host} {scope}")
    base = home if scope == "user" else project
    events = CLAUDE_EVENTS if host == "claude-code" else CODEX_EVENTS
    hook = {
        e: shlex.join([*run, "hook", name, "--host", host])
        for e, name in events.items()
        if pre_tool or e not in OPT_IN
    }
    server = {"command": run[0], "args": [*run[1:], "serve"]}

    def hooks(doc: Doc, added: Added, where: str) -> None:
        merge_hooks(doc, hook, HOOK_TIMEOUT, added, where, TOOL_MATCHERS[host])

    def mcp_json(doc: Doc, added: Added, where: str) -> None:
        entry = {"type": "stdio", **server} if scope == "user" else server
        merge_entry(doc, ["mcpServers", SERVER_NAME], entry, added, where)

    def codex_toml(doc: Doc, added: Added, where: str) -> None:
        merge_entry(doc, ["mcp_servers", SERVER_NAME], server, added, where)
        merge_entry(doc, ["features", "codex_hooks"], True, added, where)

    if host == "claude-code":
        mcp_file = home / ".claude.json" if scope == "user" else project / ".mcp.json"
        return [Target(base / ".claude" / "settings.json", hooks), Target(mcp_file, mcp_json)]
    return [
        Target(base / ".codex" / "hooks.json", hooks),
        Target(base / ".codex" / "config.toml", codex_toml),
    ]


# ---- documents -------------------------------------------------------------------------


def _parse(text: str | None, toml: bool, where: Path) -> Doc:
    if toml:
        import tomlkit

        try:
            return tomlkit.parse(text or "")
        except Exception as exc:  # tomlkit's errors share no public base
            raise Invalid(f"{where} is not valid TOML ({exc}); nothing was changed") from None
    try:
        doc = json.loads(text) if text and text.strip() else {}
    except json.JSONDecodeError as exc:
        raise Invalid(f"{where} is not valid JSON ({exc}); nothing was changed") from None
    if not isinstance(doc, dict):
        raise Invalid(f"{where} does not hold a JSON object; nothing was changed")
    return doc


def _dump(doc: Doc, toml: bool, like: str | None = None) -> str:
    """The document as text; JSON indented as the file it came from was (2 spaces for
    a new file), so a person's formatting survives as far as JSON lets it."""
    if toml:
        import tomlkit

        return tomlkit.dumps(doc)
    return json.dumps(doc, indent=_indent(like), ensure_ascii=False) + "\n"


def _indent(text: str | None) -> int | str:
    found = re.search(r"^([ \t]+)\S", text or "", re.MULTILINE)
    return found.group(1) if found else 2


def _plain(doc: Doc, toml: bool) -> Any:
    return json.loads(json.dumps(doc.unwrap() if toml else doc))  # type: ignore[attr-defined]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


# ---- install and uninstall ---------------------------------------------------------------


def plan_install(found: Sequence[Target]) -> list[FileChange]:
    """Every file's change, worked out before any is written (a refusal writes none)."""
    changes = []
    for target in found:
        before = _read(target.path)
        doc = _parse(before, target.toml, target.path)
        added = Added()
        target.edit(doc, added, str(target.path))
        if added.empty:
            changes.append(FileChange(target.path, "unchanged", before, before, added))
            continue
        action = "create" if before is None else "update"
        after = _dump(doc, target.toml, before)
        changes.append(FileChange(target.path, action, before, after, added))
    return changes


def plan_uninstall(found: Sequence[Target], manifest: dict[str, Any]) -> list[FileChange]:
    """Take out what the manifest says an install added; a file otherwise untouched
    since gets its backup's exact bytes back, one the install created is removed."""
    changes = []
    for target in found:
        record = manifest.get(str(target.path))
        before = _read(target.path)
        if record is None or before is None:
            changes.append(FileChange(target.path, "unchanged", before, before, Added()))
            continue
        added = Added.from_dict(record["added"])
        doc = _parse(before, target.toml, target.path)
        unmerge(doc, added)
        changes.append(_undone(target, before, doc, added, record))
    return changes


def _undone(
    target: Target, before: str, doc: Doc, added: Added, record: dict[str, Any]
) -> FileChange:
    backup = Path(record["backup"]) if record.get("backup") else None
    original = _read(backup) if backup else None
    plain = _plain(doc, target.toml)
    if original is not None and plain == _plain(_parse(original, target.toml, backup), target.toml):  # type: ignore[arg-type]
        return FileChange(target.path, "restore", before, original, added)
    if not record.get("existed") and not plain:
        return FileChange(target.path, "delete", before, None, added)
    return FileChange(target.path, "update", before, _dump(doc, target.toml, before), added)


def apply(changes: Sequence[FileChange], manifest_path: Path, installing: bool) -> list[FileChange]:
    """Write the changes (each file replaced in one step, a backup first) and keep the
    manifest in step. Returns the changes with their backups."""
    manifest = read_manifest(manifest_path)
    done = []
    for change in changes:
        if change.action == "unchanged":
            done.append(change)
            continue
        key = str(change.path)
        if installing:
            backup = _backup(change.path) if change.before is not None else None
            manifest[key] = {
                "added": change.added.as_dict(),
                "existed": change.before is not None,
                "backup": str(backup) if backup else None,
            }
            change = FileChange(
                change.path, change.action, change.before, change.after, change.added, backup
            )
        else:
            manifest.pop(key, None)
        _write(change.path, change.after)
        done.append(change)
    _write(manifest_path, json.dumps(manifest, indent=2) + "\n" if manifest else None)
    return done


def read_manifest(path: Path) -> dict[str, Any]:
    text = _read(path)
    try:
        data = json.loads(text) if text else {}
    except json.JSONDecodeError:
        raise Invalid(f"the install manifest {path} is damaged; nothing was changed") from None
    return data if isinstance(data, dict) else {}


def _backup(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    backup = path.with_name(f"{path.name}.memlane-{stamp}.bak")
    backup.write_bytes(path.read_bytes())
    return backup


def _write(path: Path, text: str | None) -> None:
    """Replace a file in one step (or remove it when `text` is None), keeping its mode."""
    if text is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
