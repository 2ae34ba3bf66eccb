"""What a tool call must be before the SDK validates its arguments and the tool runs:
a tool the server has, one the request's token may call, with only arguments that
tool takes, and every string in them text no longer than a memory may be.

Trigger: any tool call. Why: the checks cost a walk over the arguments, while what
they refuse would otherwise reach the store's thread (a 50 MB query is tokenized and
searched before anything says it is too long), and text holding a lone surrogate
cannot be written out as UTF-8 at all (the reply, a log line, SQLite). Outcome: such
a call fails at once, and nothing was read or written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memlane.errors import Invalid, NotFound

if TYPE_CHECKING:
    from mcp.server.mcpserver.tools import Tool

    from memlane.server.auth import Grant

# The largest request read whole: the SDK's own default for HTTP bodies (4 MiB), or,
# when the content limit is higher, one body at that limit with every byte escaped
# (a JSON `\u00e9` escape: six bytes each) plus ENVELOPE_BYTES for the rest of the request.
MIN_REQUEST_BYTES = 4 * 1024 * 1024
JSON_ESCAPED_BYTES_PER_BYTE = 6
ENVELOPE_BYTES = 4096
# Characters of an argument's name shown when it is refused.
NAME_SHOWN_CHARS = 40


def max_request_bytes(max_text_bytes: int) -> int:
    """The cap on one request (an HTTP body, a line on stdin)."""
    return max(MIN_REQUEST_BYTES, JSON_ESCAPED_BYTES_PER_BYTE * max_text_bytes + ENVELOPE_BYTES)


def admit(
    tool: Tool | None, name: str, arguments: dict[str, Any], grant: Grant, max_text_bytes: int
) -> None:
    """Nothing when the call may go on; else the MemlaneError that says why."""
    if tool is None:
        raise NotFound(f"no tool named '{_shown(name)}'")
    if tool.annotations is None or tool.annotations.read_only_hint is not True:
        grant.check_write(tool.name)
    check_texts(arguments, max_text_bytes)
    takes = list(tool.parameters.get("properties", {}))
    unknown = [key for key in arguments if key not in takes]
    if unknown:
        named = "; ".join(f"{_shown(key)}: not an argument of this tool" for key in unknown)
        raise Invalid(f"{named} (it takes: {', '.join(takes) or 'no arguments'})")


def check_texts(value: Any, max_bytes: int, root: str = "") -> None:
    """Invalid when a string in `value` (a key or a value, however deep) is not text or
    is over `max_bytes` in UTF-8; the message names where (by its path below `root`),
    never what."""
    pending: list[tuple[str, Any]] = [(root, value)]
    while pending:  # a loop, not recursion: nesting depth is the caller's to choose
        path, item = pending.pop()
        if isinstance(item, str):
            _check_text(path, item, max_bytes)
        elif isinstance(item, dict):
            for key, inner in item.items():
                _check_text(path or "arguments", str(key), max_bytes)
                pending.append((f"{path}.{key}" if path else str(key), inner))
        elif isinstance(item, list | tuple):
            pending.extend((f"{path}[{i}]", inner) for i, inner in enumerate(item))


def _check_text(path: str, text: str, max_bytes: int) -> None:
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        half = text[exc.start]
        raise Invalid(
            f"{_shown(path)}: holds a lone surrogate ({half!r} at character {exc.start}), "
            "half of a UTF-16 pair and not text"
        ) from None
    if size > max_bytes:
        raise Invalid(
            f"{_shown(path)}: {size} bytes, over the {max_bytes}-byte limit on any text "
            "(MEMLANE_MAX_BODY_BYTES)"
        )


def _shown(name: str) -> str:
    """A name as a message shows it: escaped (a surrogate, a line break) and cut short."""
    escaped = name.encode("unicode_escape").decode("ascii")
    return escaped if len(escaped) <= NAME_SHOWN_CHARS else escaped[:NAME_SHOWN_CHARS] + "…"
