"""The capture log's lines: what a hook captured, as JSON a day's file holds and `import
captures` replays. Pure functions.

A line is one memory a hook wrote: `at` (UTC), `id` (in the store that took it),
`event` and `host`, then the fields it was written with: `kind`, `title` (when given),
`content`, `scope`, `tags`, `importance`, `confidence`, `signal`, `taint`, `session`,
`source` (its source ref) and `agent`. Every text is redacted as the write policy
redacts (write.secrets): the log is a plain file, and a replay stores what the policy
would have stored.

A replay adds each line through the write policy again, in the line's session, so a
store that has its memory already finds it (an exact duplicate in that session, or a
near one in its scope) and adds nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memlane.errors import Invalid
from memlane.timeutil import to_text
from memlane.write.secrets import redact

# The log's own name for a field -> the name `add` takes it by.
_RENAMED = {"session": "session_id", "source": "source_ref", "agent": "source_agent"}
# Fields copied as written (texts redacted); everything else a write had stays out.
_KEPT = (
    "kind",
    "title",
    "content",
    "scope",
    "tags",
    "importance",
    "confidence",
    "signal",
    "taint",
    "session_id",
    "source_ref",
    "source_agent",
)
_REQUIRED = ("content", "kind")
_BY_LOG = {v: k for k, v in _RENAMED.items()}
# What a replayed memory is, whatever the line says: a hook's capture of a session.
SOURCE_TYPE = "agent_session"


def day_name(at: datetime) -> str:
    """The day file a line written at `at` (UTC) goes to."""
    return f"{at.date().isoformat()}.jsonl"


def entry(
    memory_id: str, fields: Mapping[str, Any], at: datetime, event: str, host: str
) -> dict[str, Any]:
    """The log line (as a dict) for a memory a hook wrote with these `add` fields."""
    line: dict[str, Any] = {"at": to_text(at), "id": memory_id, "event": event, "host": host}
    for name in _KEPT:
        value = fields.get(name)
        if value is not None:
            line[_BY_LOG.get(name, name)] = _redacted(value)
    return line


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)[0]
    if isinstance(value, (list, tuple)):
        return [_redacted(v) for v in value]
    return value


def as_item(line: Any) -> dict[str, Any]:
    """A log line as the `add` fields a replay writes; Invalid when it is not one."""
    if not isinstance(line, dict):
        raise Invalid("not a capture log line (a JSON object)")
    missing = [name for name in _REQUIRED if not isinstance(line.get(name), str)]
    if missing:
        raise Invalid(f"not a capture log line: no {' or '.join(missing)}")
    item = {"source_type": SOURCE_TYPE}
    for name, value in line.items():
        field = _RENAMED.get(name, name)
        if field in _KEPT and value is not None:
            item[field] = value
    return item
