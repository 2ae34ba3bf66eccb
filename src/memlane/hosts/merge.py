"""Merging memlane's entries into a host's settings document and taking them out again.

Pure functions over parsed documents (JSON objects, or tomlkit documents, which behave
as dicts). Each merge returns what it added, so removal takes out exactly that and
nothing a person put there, and a second merge adds nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

import msgspec

from memlane.errors import Invalid

Doc = MutableMapping[str, Any]


class Added(msgspec.Struct):
    """What one merge put into one document (the install manifest keeps it)."""

    hooks: dict[str, list[str]] = msgspec.field(default_factory=dict)  # event -> commands
    created: list[list[str]] = msgspec.field(default_factory=list)  # key paths it created
    entries: list[list[str]] = msgspec.field(default_factory=list)  # key paths of values it set
    warnings: list[str] = msgspec.field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.hooks or self.created or self.entries)

    def as_dict(self) -> dict[str, Any]:
        return {"hooks": self.hooks, "created": self.created, "entries": self.entries}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Added:
        return cls(
            dict(data.get("hooks", {})),
            list(data.get("created", [])),
            list(data.get("entries", [])),
        )


def _table(doc: Doc, path: Sequence[str], added: Added, where: str) -> Doc:
    """The table at `path`, created (and noted) when missing; refuses a non-table."""
    node: Doc = doc
    for depth, key in enumerate(path):
        if key not in node:
            node[key] = {}
            added.created.append(list(path[: depth + 1]))
        child = node[key]
        if not isinstance(child, MutableMapping):
            raise Invalid(f"{where}: `{'.'.join(path[: depth + 1])}` is not a table; left as is")
        node = child
    return node


def merge_hooks(
    doc: Doc,
    events: Mapping[str, str],
    timeout: int,
    added: Added,
    where: str,
    matchers: Mapping[str, str] | None = None,
) -> None:
    """One command hook per event (event name -> command), unless that exact command
    is already configured for the event; under its matcher (the tools it runs for)
    where `matchers` names one."""
    hooks = _table(doc, ["hooks"], added, where)
    for event, command in events.items():
        if event not in hooks:
            hooks[event] = []
            added.created.append(["hooks", event])
        groups = hooks[event]
        if not isinstance(groups, list):
            raise Invalid(f"{where}: `hooks.{event}` is not a list; left as is")
        if command in _commands(groups):
            continue
        group: dict[str, Any] = (
            {"matcher": matchers[event]} if matchers and event in matchers else {}
        )
        group["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
        groups.append(group)
        added.hooks.setdefault(event, []).append(command)


def _commands(groups: Sequence[Any]) -> list[Any]:
    return [
        hook.get("command")
        for group in groups
        if isinstance(group, Mapping)
        for hook in group.get("hooks") or []
        if isinstance(hook, Mapping)
    ]


def merge_entry(doc: Doc, path: Sequence[str], value: Any, added: Added, where: str) -> None:
    """Set `path` (a table's key) to `value` unless it is set: an equal value is kept
    silently, a different one is kept with a warning (never overwritten)."""
    table = _table(doc, path[:-1], added, where)
    key = path[-1]
    if key not in table:
        table[key] = value
        added.entries.append(list(path))
    elif _plain(table[key]) != _plain(value):
        added.warnings.append(f"{where}: `{'.'.join(path)}` is already set; left as is")


def _plain(value: Any) -> Any:
    """A tomlkit item as plain Python, so values compare by content."""
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def unmerge(doc: Doc, added: Added) -> None:
    """Take out what a merge added: its hook commands, the entries it set, then the
    tables and lists it created if they are now empty."""
    hooks = doc.get("hooks")
    if isinstance(hooks, MutableMapping):
        for event, commands in added.hooks.items():
            groups = hooks.get(event)
            if isinstance(groups, list):
                hooks[event] = _without(groups, set(commands))
    for path in added.entries:
        parent = _lookup(doc, path[:-1])
        if isinstance(parent, MutableMapping):
            parent.pop(path[-1], None)
    for path in sorted(added.created, key=len, reverse=True):
        parent = _lookup(doc, path[:-1])
        if isinstance(parent, MutableMapping) and path[-1] in parent and not parent[path[-1]]:
            del parent[path[-1]]


def _without(groups: list[Any], commands: set[str]) -> list[Any]:
    """Groups minus the hooks running `commands`; a group left with no hook goes."""
    kept = []
    for group in groups:
        if not isinstance(group, MutableMapping) or not isinstance(group.get("hooks"), list):
            kept.append(group)
            continue
        hooks = [
            h
            for h in group["hooks"]
            if not (isinstance(h, Mapping) and h.get("command") in commands)
        ]
        if hooks:
            group["hooks"] = hooks
            kept.append(group)
        elif len(hooks) == len(group["hooks"]):
            kept.append(group)  # it had no hooks to begin with: not ours to drop
    return kept


def _lookup(doc: Mapping[str, Any], path: Sequence[str]) -> Any:
    node: Any = doc
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node
