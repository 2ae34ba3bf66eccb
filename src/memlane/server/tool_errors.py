"""Every failure of a tool call as the one-line tool error a model reads: one table,
one function.

    ScopeNotAllowed   scope_not_allowed   the token may not touch that scope (fail closed)
    ReadOnly          read_only           the token may only read; the tool writes
    AmbiguousId       ambiguous_id        an id prefix matches several memories
    NotFound          not_found           no such memory, entity, version or tool
    Invalid           invalid             input refused (bad arguments too); nothing was written
    Conflict          conflict            the request contradicts the store's state
    PolicyRefused     policy_refused      a write policy refused the content
    SchemaTooNew      schema_too_new      the store was written by a newer memlane
    Unavailable       unavailable         the store or a component cannot serve it

A tool error reads "<code>: <message>" on one line; the code is stable, the message
is for the model. Arguments the SDK refuses before the tool runs (a wrong type, a
missing or unknown argument, a value out of range) are `invalid`, each named by its
path (`entities[0].name: expected a string`), never with the value given. A tool
that crashed is `unavailable`, its details left in the server's log. Tool errors are
results the model sees (isError), not protocol errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from memlane.errors import (
    AmbiguousId,
    Conflict,
    Invalid,
    MemlaneError,
    NotFound,
    PolicyRefused,
    ReadOnly,
    SchemaTooNew,
    ScopeNotAllowed,
    Unavailable,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver.exceptions import ToolError

# Most specific first: the first class an error is an instance of names its code.
CODES: tuple[tuple[type[MemlaneError], str], ...] = (
    (ScopeNotAllowed, "scope_not_allowed"),
    (ReadOnly, "read_only"),
    (AmbiguousId, "ambiguous_id"),
    (NotFound, "not_found"),
    (Invalid, "invalid"),
    (Conflict, "conflict"),
    (PolicyRefused, "policy_refused"),
    (SchemaTooNew, "schema_too_new"),
    (Unavailable, "unavailable"),
)
# Problems named in one validation error; a model fixes the first few, then asks again.
MAX_PROBLEMS_SHOWN = 3
CRASHED = "the tool failed unexpectedly; the server's log has the details"

# pydantic's error types in a model's words; any other keeps pydantic's own message.
_EXPECTED = {
    "missing": "required, but not given",
    "extra_forbidden": "not an argument of this tool",
    "string_type": "expected a string",
    "int_type": "expected an integer",
    "int_parsing": "expected an integer",
    "int_from_float": "expected an integer",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "list_type": "expected a list",
    "dict_type": "expected an object",
    "model_type": "expected an object",
    "model_attributes_type": "expected an object",
    "none_required": "expected null",
}
_BOUNDS = {
    "greater_than_equal": "must be at least {ge}",
    "less_than_equal": "must be at most {le}",
    "greater_than": "must be more than {gt}",
    "less_than": "must be less than {lt}",
    "string_too_long": "at most {max_length} characters",
    "string_too_short": "at least {min_length} characters",
    "too_long": "at most {max_length} items",
    "too_short": "at least {min_length} items",
    "enum": "expected one of {expected}",
    "literal_error": "expected one of {expected}",
}


def code_of(exc: MemlaneError) -> str:
    return next((code for cls, code in CODES if isinstance(exc, cls)), "unavailable")


def tool_error(exc: Exception) -> ToolError:
    """The one-line tool error for anything a tool call raised: a MemlaneError (from
    the tool, or from the checks before it), or the SDK's ToolError around a
    validation failure, an unknown tool or a crash (its cause says which)."""
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

    cause = exc.__cause__ if isinstance(exc, ToolError) and exc.__cause__ else exc
    if isinstance(cause, MemlaneError):
        return ToolError(one_line(f"{code_of(cause)}: {cause}"))
    if isinstance(exc, UnexpectedToolError) or not isinstance(exc, ToolError):
        # Still a crash to the SDK, which logs it with its traceback.
        return UnexpectedToolError(f"unavailable: {CRASHED}")
    if isinstance(cause, ValidationError):
        return ToolError(f"invalid: {validation_problems(cause)}")
    return ToolError(one_line(f"invalid: {exc}"))


def validation_problems(exc: ValidationError) -> str:
    """pydantic's errors as `path: problem; ...`, the first MAX_PROBLEMS_SHOWN of them."""
    errors = exc.errors(include_url=False, include_input=False)
    shown = [f"{_path(e['loc'])}: {_problem(e)}" for e in errors[:MAX_PROBLEMS_SHOWN]]
    more = len(errors) - len(shown)
    return "; ".join(shown) + (f" (and {more} more)" if more else "")


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out or "arguments"


def _problem(error: Any) -> str:
    kind, context = error["type"], error.get("ctx") or {}
    if kind in _EXPECTED:
        return _EXPECTED[kind]
    if kind in _BOUNDS:
        try:
            return _BOUNDS[kind].format(**context)
        except KeyError:  # a bound pydantic reports without its value
            pass
    message = one_line(str(error["msg"]))
    return message[:1].lower() + message[1:]


def one_line(text: str) -> str:
    """`text` with its line breaks (and the blanks around them) as single spaces."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())
