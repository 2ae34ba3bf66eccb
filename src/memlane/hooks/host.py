"""The hosts' hook contract: their JSON on stdin as an `Event`, and the JSON they read
back on stdout. Pure.

Claude Code and Codex share the shape (Codex adopted Claude Code's contract):
- every event: `session_id`, `transcript_path` (null on Codex when there is none),
  `cwd`, `hook_event_name`; Codex adds `model`, `turn_id`, `permission_mode`;
- SessionStart: `source` (startup, resume, clear, compact); UserPromptSubmit:
  `prompt`; PreToolUse: `tool_name`, `tool_input` (a shell tool's `command`, a string
  or on Codex an argv list; an edit's `file_path`; Codex's `apply_patch` its patch in
  `input`); SubagentStart: the delegated task, when the host sends it, in `prompt`;
  PreCompact: `trigger` (manual, auto); Stop: `stop_hook_active`, and on Codex
  `last_assistant_message`; SessionEnd (Claude Code only): `reason`.
- Stop may ask the agent for one more step: `{"decision": "block", "reason": ...}`.
- SessionStart, UserPromptSubmit, PreToolUse and SubagentStart read context back:
  `{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": "..."}}`
  (PreToolUse never with a permission decision: memlane informs, it never denies).
  The other events are decision events whose schema has no such field (Claude Code
  rejects it on Stop and PreCompact), so they get `{}`, as does a silent hook.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from memlane.errors import Invalid

CLAUDE_CODE, CODEX = "claude-code", "codex"
HOSTS = (CLAUDE_CODE, CODEX)
SESSION_START, USER_PROMPT, PRE_TOOL, SUBAGENT_START = (
    "session-start",
    "user-prompt",
    "pre-tool",
    "subagent-start",
)
PRE_COMPACT, STOP, SESSION_END = ("pre-compact", "stop", "session-end")
EVENTS = (SESSION_START, USER_PROMPT, PRE_TOOL, SUBAGENT_START, PRE_COMPACT, STOP, SESSION_END)
HOST_EVENT = {
    SESSION_START: "SessionStart",
    USER_PROMPT: "UserPromptSubmit",
    PRE_TOOL: "PreToolUse",
    SUBAGENT_START: "SubagentStart",
    PRE_COMPACT: "PreCompact",
    STOP: "Stop",
    SESSION_END: "SessionEnd",
}
# Events each host sends (Codex has no session end) and those whose answer may carry
# context for the model.
HOST_EVENTS = {CLAUDE_CODE: frozenset(EVENTS), CODEX: frozenset(EVENTS) - {SESSION_END}}
INJECTING = frozenset({SESSION_START, USER_PROMPT, PRE_TOOL, SUBAGENT_START})
# A payload larger than this, in UTF-8 bytes, is not a hook event (a prompt is capped
# well below); stdin is read no further than one byte past it.
MAX_PAYLOAD_BYTES = 8 * 1024 * 1024


class Event(msgspec.Struct, frozen=True):
    """One hook call, in memlane's terms."""

    name: str  # one of EVENTS
    host: str  # one of HOSTS
    session_id: str | None = None
    transcript_path: str | None = None
    cwd: str | None = None
    prompt: str | None = None
    source: str | None = None  # SessionStart
    trigger: str | None = None  # PreCompact
    reason: str | None = None  # SessionEnd
    stop_hook_active: bool = False  # Stop: the host is already continuing for a hook
    tool_name: str | None = None  # PreToolUse
    tool_input: dict[str, Any] | None = None  # PreToolUse


def check(name: str, host: str) -> None:
    """Refuse an event or host memlane does not know, or an event the host never sends."""
    if host not in HOSTS:
        raise Invalid(f"unknown host {host!r}; use one of {', '.join(HOSTS)}")
    if name not in EVENTS:
        raise Invalid(f"unknown hook event {name!r}; use one of {', '.join(EVENTS)}")
    if name not in HOST_EVENTS[host]:
        raise Invalid(f"{host} has no {HOST_EVENT[name]} event")


def parse(name: str, host: str, text: str) -> Event:
    """The event in a host's stdin; Invalid when it is not that event's JSON object."""
    check(name, host)
    if len(text.encode("utf-8", "surrogatepass")) > MAX_PAYLOAD_BYTES:
        raise Invalid(f"payload of over {MAX_PAYLOAD_BYTES} bytes is too large for a hook event")
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        raise Invalid("stdin is not JSON") from None
    if not isinstance(payload, dict):
        raise Invalid(f"stdin is JSON {type(payload).__name__}, not an object")
    said = payload.get("hook_event_name")
    if said is not None and said != HOST_EVENT[name]:
        raise Invalid(f"payload is a {said!r} event, not {HOST_EVENT[name]}")
    prompt = payload.get("prompt")
    if name == USER_PROMPT and not isinstance(prompt, str):
        raise Invalid("UserPromptSubmit payload has no prompt")
    tool_input = payload.get("tool_input")
    if name == PRE_TOOL and not (_text(payload, "tool_name") and isinstance(tool_input, dict)):
        raise Invalid("PreToolUse payload has no tool_name and tool_input object")
    return Event(
        name=name,
        host=host,
        session_id=_text(payload, "session_id"),
        transcript_path=_text(payload, "transcript_path"),
        cwd=_text(payload, "cwd"),
        prompt=prompt if isinstance(prompt, str) else None,
        source=_text(payload, "source"),
        trigger=_text(payload, "trigger"),
        reason=_text(payload, "reason"),
        stop_hook_active=payload.get("stop_hook_active") is True,
        tool_name=_text(payload, "tool_name"),
        tool_input=tool_input if isinstance(tool_input, dict) else None,
    )


def _text(payload: dict[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def output(name: str, context: str | None, request: str | None = None) -> dict[str, Any]:
    """The JSON a host reads back: the context on an injecting event; on Stop, a request
    to the agent as the host's block decision (the agent goes on with it as its next
    instruction); else `{}`."""
    if name == STOP and request:
        return {"decision": "block", "reason": request}
    if not context or name not in INJECTING:
        return {}
    return {"hookSpecificOutput": {"hookEventName": HOST_EVENT[name], "additionalContext": context}}
