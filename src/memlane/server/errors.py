"""memlane's error tree as MCP tool errors: one table, one function.

    ScopeNotAllowed   scope_not_allowed   the token may not touch that scope (fail closed)
    AmbiguousId       ambiguous_id        an id prefix matches several memories
    NotFound          not_found           no such memory, entity or version
    Invalid           invalid             input refused; nothing was written
    Conflict          conflict            the request contradicts the store's state
    PolicyRefused     policy_refused      a write policy refused the content
    SchemaTooNew      schema_too_new      the store was written by a newer memlane
    Unavailable       unavailable         the store or a component cannot serve it

A tool error reads "<code>: <message>"; the code is stable, the message is for the
model. Tool errors are results the model sees (isError), not protocol errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memlane.errors import (
    AmbiguousId,
    Conflict,
    Invalid,
    MemlaneError,
    NotFound,
    PolicyRefused,
    SchemaTooNew,
    ScopeNotAllowed,
    Unavailable,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver.exceptions import ToolError

# Most specific first: the first class an error is an instance of names its code.
CODES: tuple[tuple[type[MemlaneError], str], ...] = (
    (ScopeNotAllowed, "scope_not_allowed"),
    (AmbiguousId, "ambiguous_id"),
    (NotFound, "not_found"),
    (Invalid, "invalid"),
    (Conflict, "conflict"),
    (PolicyRefused, "policy_refused"),
    (SchemaTooNew, "schema_too_new"),
    (Unavailable, "unavailable"),
)


def code_of(exc: MemlaneError) -> str:
    return next((code for cls, code in CODES if isinstance(exc, cls)), "error")


def tool_error(exc: MemlaneError) -> ToolError:
    from mcp.server.mcpserver.exceptions import ToolError  # the SDK: only when serving

    return ToolError(f"{code_of(exc)}: {exc}")
