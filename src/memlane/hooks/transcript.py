"""Host transcripts (JSON lines) as conversation turns and tool-operation tokens.

Two formats, told apart line by line:
- Claude Code: `{"type": "user"|"assistant", "message": {"role", "content"}, ...}`;
  content is a string or blocks (`text`, `tool_use` with `name` and `input`,
  `tool_result`, `thinking`). Lines with `isMeta` or `isSidechain` are not the
  conversation.
- Codex rollouts: `{"type": "response_item", "payload": {...}}` with payload `message`
  (role, content blocks of `input_text` / `output_text`), `function_call` (`name`,
  JSON `arguments`) or `custom_tool_call` (`input`, e.g. an apply_patch).

Only what a person typed and what the assistant said become turns: tool results, file
contents and the host's own injected blocks (memlane's fenced context among them) never
do, so a capture cannot re-learn what memlane injected. Tool operations become tokens
(program and subcommand, file basenames, test names), never argument values.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec

USER, ASSISTANT = "user", "assistant"
# Blocks hosts (and memlane) put inside messages that nobody typed.
_INJECTED = re.compile(
    r"<(memlane-[\w-]+|system-reminder|user-prompt-submit-hook|environment_context|"
    r"user_instructions|permissions instructions|turn_aborted)\b[^>]*>.*?</\1>",
    re.DOTALL,
)
# A user line that is a local slash command or its output, not a message.
_COMMAND_LINE = re.compile(r"^\s*<(command-name|command-message|local-command-\w+)>")
# Tools whose input names a file being worked on.
_FILE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "Read"})
_SHELL_TOOLS = frozenset({"Bash", "shell", "exec_command", "shell_command", "container.exec"})
# Programs whose first argument is a subcommand worth keeping (git rebase, pnpm install).
_SUBCOMMANDS = frozenset(
    "git npm pnpm yarn bun cargo go make uv pip poetry docker kubectl helm terraform "
    "alembic gh just dotnet mvn gradle npx deno rake bundle".split()
)
_WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "exec"})
_SHELLS = frozenset({"bash", "sh", "zsh"})
_TOKEN = re.compile(r"^[A-Za-z][\w.+-]{0,40}$")
_SECRETISH = re.compile(r"^(ghp_|gho_|github_pat_|sk-|xox[abpr]-|AKIA|glpat-)", re.IGNORECASE)
_SOURCE = re.compile(
    r"\.(py|pyi|ts|tsx|js|jsx|go|rs|rb|java|kt|sql|toml|ya?ml|json|md|sh|css|html)$"
)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
# Bytes of a transcript's end read for the recent tool operations of a prompt.
OPS_TAIL_BYTES = 64 * 1024
# Distinct operation tokens a prompt's query may carry (newest kept).
OPS_KEEP = 12
# Bytes one capture reads from its cursor; the rest waits for the next capture.
MAX_READ_BYTES = 4 * 1024 * 1024


class Turn(msgspec.Struct, frozen=True):
    role: str  # USER or ASSISTANT
    text: str


class Chunk(msgspec.Struct, frozen=True):
    """What a read of a transcript found, and the offset just past its last whole line."""

    turns: tuple[Turn, ...]
    ops: tuple[str, ...]
    end: int


def clean(text: str) -> str:
    """A message without the blocks hosts and memlane inject into it."""
    return _INJECTED.sub("", text).strip()


def parse_line(line: str) -> tuple[list[Turn], list[str]]:
    """The turns and operation tokens of one transcript line (either format); a line
    that is not JSON, or not conversation, gives nothing."""
    try:
        entry = json.loads(line)
    except ValueError:
        return [], []
    if not isinstance(entry, dict):
        return [], []
    if entry.get("type") == "response_item" and isinstance(entry.get("payload"), dict):
        return _codex(entry["payload"])
    if entry.get("type") in (USER, ASSISTANT) and not entry.get("isMeta"):
        if entry.get("isSidechain"):
            return [], []
        message = entry.get("message")
        if isinstance(message, dict):
            return _claude(str(entry["type"]), message.get("content"))
    return [], []


def parse(lines: Iterable[str]) -> tuple[list[Turn], list[str]]:
    turns: list[Turn] = []
    ops: list[str] = []
    for line in lines:
        more, tokens = parse_line(line)
        turns += more
        ops += tokens
    return turns, ops


def _claude(role: str, content: Any) -> tuple[list[Turn], list[str]]:
    if isinstance(content, str):
        return _turns(role, [content]), []
    if not isinstance(content, list):
        return [], []
    texts, ops = [], []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use" and role == ASSISTANT:
            ops += tool_tokens(str(block.get("name", "")), block.get("input"))
    return _turns(role, texts), ops


def _codex(payload: Mapping[str, Any]) -> tuple[list[Turn], list[str]]:
    kind = payload.get("type")
    if kind == "message" and payload.get("role") in (USER, ASSISTANT):
        blocks = payload.get("content")
        texts = [
            b["text"]
            for b in (blocks if isinstance(blocks, list) else [])
            if isinstance(b, dict) and isinstance(b.get("text"), str)
        ]
        return _turns(str(payload["role"]), texts), []
    if kind == "function_call":
        try:
            arguments = json.loads(str(payload.get("arguments") or "{}"))
        except ValueError:
            arguments = {}
        return [], tool_tokens(str(payload.get("name", "")), arguments)
    if kind == "custom_tool_call":
        return [], tool_tokens(str(payload.get("name", "")), payload.get("input"))
    return [], []


def _turns(role: str, texts: list[str]) -> list[Turn]:
    kept = [t for t in texts if not (role == USER and _COMMAND_LINE.match(t))]
    text = clean("\n".join(kept))
    return [Turn(role, text)] if text else []


def tool_tokens(name: str, given: Any) -> list[str]:
    """Tokens of one tool call: the files it touches, the programs and subcommands it
    runs, test names. Argument values (messages, URLs, secrets) are never kept."""
    found: list[str] = []
    if name in _FILE_TOOLS and isinstance(given, dict):
        path = given.get("file_path") or given.get("notebook_path")
        found += _file_tokens(str(path)) if path else []
    elif name in _SHELL_TOOLS and isinstance(given, dict):
        command = given.get("command") or given.get("cmd")
        if isinstance(command, list):  # Codex: ["bash", "-lc", "<command>"]
            argv = [str(part) for part in command]
            shell = len(argv) > 2 and os.path.basename(argv[0]) in _SHELLS
            command = argv[2] if shell and argv[1] in ("-c", "-lc") else shlex.join(argv)
        found += command_tokens(command) if isinstance(command, str) else []
    elif name == "apply_patch" and isinstance(given, str):
        for path in _PATCH_FILE.findall(given):
            found += _file_tokens(path)
    return [t for t in found if _TOKEN.match(t) and not _SECRETISH.match(t)]


def command_tokens(command: str) -> list[str]:
    """Program names, the subcommands of known tools, and source-file basenames."""
    found: list[str] = []
    for segment in re.split(r"&&|\|\||[;|\n]", command):
        try:
            argv = shlex.split(segment)
        except ValueError:
            argv = segment.split()
        argv = [a for a in argv if not re.match(r"^\w+=", a)]  # FOO=bar assignments
        while argv and argv[0] in _WRAPPERS:
            argv = argv[1:]
        if not argv or argv[0] == "cd":
            continue
        program = os.path.basename(argv[0])
        if program in _SHELLS and argv[1:2] in (["-c"], ["-lc"]) and len(argv) > 2:
            found += command_tokens(argv[2])  # Codex runs `bash -lc "<command>"`
            continue
        found.append(program)
        rest = argv[1:]
        if program.startswith("python") and rest[:1] == ["-m"] and len(rest) > 1:
            found.append(rest[1])
        elif program in _SUBCOMMANDS and rest and re.match(r"^[a-z][a-z0-9-]{1,20}$", rest[0]):
            found.append(rest[0])
        for arg in rest:
            if _SOURCE.search(arg.split("::")[0]):
                found += _file_tokens(arg)
    return found


def _file_tokens(path: str) -> list[str]:
    """A file's basename, and a pytest node's test name (`tests/x.py::test_y`)."""
    file, _, node = path.partition("::")
    return [os.path.basename(file.rstrip("/")), *([node.split("[")[0]] if node else [])]


def _whole_lines(data: bytes) -> Iterator[tuple[str, int]]:
    """Each complete line of `data` (decoded, undecodable bytes replaced) and the offset
    just past it; a last line without its newline is left for a later read."""
    start = 0
    while (stop := data.find(b"\n", start)) != -1:
        yield data[start:stop].decode("utf-8", "replace"), stop + 1
        start = stop + 1


def lines(path: str | Path, start: int = 0, limit: int = MAX_READ_BYTES) -> tuple[list[str], int]:
    """The whole lines from byte `start` (up to `limit` bytes), and the offset past the
    last of them. A transcript shorter than `start` was replaced: it is read from 0."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        start = 0 if start > size else start
        handle.seek(start)
        data = handle.read(limit)
    found = list(_whole_lines(data))
    return [line for line, _ in found], start + (found[-1][1] if found else 0)


def read(path: str | Path, start: int = 0, limit: int = MAX_READ_BYTES) -> Chunk:
    """The turns and operation tokens of whole lines from byte `start` (up to `limit`
    bytes), and the offset past them (see `lines`)."""
    found, end = lines(path, start, limit)
    turns, ops = parse(found)
    return Chunk(tuple(turns), tuple(ops), end)


def tail_lines(path: str | Path, tail: int = OPS_TAIL_BYTES) -> list[str]:
    """The whole lines in the last `tail` bytes (a line cut by the start is left out,
    the last one is kept without its newline)."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - tail))
        data = handle.read(tail)
    first = data.find(b"\n") + 1 if size > tail else 0  # a cut first line is not JSON
    return [line for line, _ in _whole_lines(data[first:] + b"\n")]


def recent_ops(path: str | Path, tail: int = OPS_TAIL_BYTES, keep: int = OPS_KEEP) -> list[str]:
    """The newest `keep` distinct operation tokens in the last `tail` bytes, oldest first."""
    _, ops = parse(tail_lines(path, tail))
    newest = list(dict.fromkeys(reversed(ops)))[:keep]
    return list(reversed(newest))


# Tool calls that hand a task to a subagent (Claude Code's Task/Agent, a Codex agent
# spawn), and the input fields that hold the task, most telling first.
_DELEGATING = re.compile(r"^task$|agent", re.IGNORECASE)
_TASK_FIELDS = ("prompt", "message", "task", "description")


def delegated_task(path: str | Path, tail: int = OPS_TAIL_BYTES) -> str | None:
    """The task of the newest subagent call in the last `tail` bytes of a transcript
    (either format); None when there is none."""
    for line in reversed(tail_lines(path, tail)):
        for event in tool_events(line):
            if event.name and _DELEGATING.search(event.name):
                for field in _TASK_FIELDS:
                    task = event.given.get(field)
                    if isinstance(task, str) and task.strip():
                        return task
    return None


class ToolEvent(msgspec.Struct, frozen=True):
    """A tool call (`name`, its `given` input) or its result (`failed`), by call id."""

    key: str
    name: str | None = None  # None: a result
    given: dict[str, Any] = {}
    failed: bool = False


def tool_events(line: str) -> list[ToolEvent]:
    """The tool calls and results of one transcript line (either format): a result
    failed when the host marked it an error (Claude Code's `is_error`) or its exit code
    was not 0 (Codex's function call output)."""
    try:
        entry = json.loads(line)
    except ValueError:
        return []
    if not isinstance(entry, dict):
        return []
    payload = entry.get("payload")
    if entry.get("type") == "response_item" and isinstance(payload, dict):
        return _codex_events(payload)
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    found = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
            found.append(
                ToolEvent(str(block.get("id")), str(block.get("name", "")), block["input"])
            )
        elif block.get("type") == "tool_result":
            failed = block.get("is_error") is True
            found.append(ToolEvent(str(block.get("tool_use_id")), failed=failed))
    return found


def _codex_events(payload: Mapping[str, Any]) -> list[ToolEvent]:
    key = str(payload.get("call_id"))
    kind = payload.get("type")
    field = "arguments" if kind == "function_call" else "output"
    if kind not in ("function_call", "function_call_output"):
        return []
    try:
        value = json.loads(str(payload.get(field) or "{}"))
    except ValueError:
        return []
    value = value if isinstance(value, dict) else {}
    if kind == "function_call":
        return [ToolEvent(key, str(payload.get("name", "")), value)]
    metadata = value.get("metadata")
    code = metadata.get("exit_code") if isinstance(metadata, dict) else None
    return [ToolEvent(key, failed=isinstance(code, int) and code != 0)]
