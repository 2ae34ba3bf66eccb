"""The server on stdin/stdout: the SDK's stdio transport, reading lines of at most a
set size, and answering the lines it cannot read instead of dropping them.

Trigger: a line on stdin the SDK's strict JSON parser refuses (a lone surrogate such
as "\\ud800", which Python's own parser accepts; a truncated or garbled message), or
one longer than the cap. Why: the SDK drops such a line without a word, so the
client waits for a reply that never comes; and it reads a line whole, however long.
Outcome: the client gets a JSON-RPC error (`invalid: ...`) for the request's id when
it can be read, else for id null; a line over the cap is skipped without being held
in memory; the server goes on serving either way.

Given its own stdin, the SDK leaves fd 0 where it is rather than pointing it at
/dev/null while it serves (its own fallback when it cannot); nothing the server runs
reads stdin.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, Self, cast

import anyio
import anyio.to_thread
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from memlane.errors import Invalid
from memlane.server.admit import check_texts
from memlane.write import inputs

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from mcp.shared._stream_protocols import ReadStream, WriteStream

    Inbound = SessionMessage | Exception

log = logging.getLogger(__name__)
# What the reader hands on in place of a line over the cap: not JSON, so the SDK
# passes it on as a parse failure, and nothing a client could send (a NUL is not
# allowed unescaped in JSON).
SKIPPED = "\0memlane: line over the cap\0"


async def serve(server: Server[Any], max_line_bytes: int) -> None:
    """Serve `server` on this process's stdin and stdout until stdin closes."""
    lines = BoundedLines(sys.stdin.buffer, max_line_bytes)
    # The transport only iterates its stdin: lines of text, as an AsyncFile yields.
    async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (inbound, outbound):
        answering = Answering(inbound, outbound, max_line_bytes)
        await server.run(answering, outbound, server.create_initialization_options())


class BoundedLines:
    """The lines of a binary stream as text, each read only up to `cap` bytes (see
    write.inputs.lines): SKIPPED stands for a longer one, whose rest was thrown away."""

    def __init__(self, raw: BinaryIO, cap: int) -> None:
        self._lines = inputs.lines(raw, cap)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> str:
        line = await anyio.to_thread.run_sync(self._read_line, abandon_on_cancel=True)
        if line is None:
            raise StopAsyncIteration
        return line

    def _read_line(self) -> str | None:
        line = next(self._lines, None)
        if line is None:
            return None
        if isinstance(line, inputs.Overlong):
            return SKIPPED
        return line.decode("utf-8", "replace")  # as the SDK's own reader decodes


class Answering:
    """The SDK's inbound stream, with each line it could not read answered on the
    outbound stream and kept from the server (which would only log it)."""

    def __init__(
        self, inbound: ReadStream[Inbound], outbound: WriteStream[SessionMessage], cap: int
    ) -> None:
        self._inbound = inbound
        self._outbound = outbound
        self._cap = cap

    @property
    def last_context(self) -> Any:
        """The sender context of the item received last (the dispatcher runs its
        handler in it)."""
        return getattr(self._inbound, "last_context", None)

    async def receive(self) -> Inbound:
        while True:
            item = await self._inbound.receive()
            if not isinstance(item, Exception):
                return item
            await self._answer(item)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Inbound:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inbound.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _answer(self, failure: Exception) -> None:
        reply = refusal(failure, self._cap)
        if reply is None:
            log.info("skipped an unreadable message: %r", type(failure).__name__)
            return
        # A closed outbound stream: the client has gone, and nobody is left to answer.
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._outbound.send(SessionMessage(reply))


def refusal(failure: Exception, cap: int) -> JSONRPCError | None:
    """The error reply to a line the SDK could not read; None when there is nothing to
    answer (a blank line, a notification, a message the parser read but the SDK's
    types did not fit: no line is left to read its id from)."""
    line = _line_of(failure)
    if line is None or not line.strip():
        return None
    if line == SKIPPED:
        return _error(None, PARSE_ERROR, f"a message over {cap} bytes was skipped")
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return _error(None, PARSE_ERROR, "a line that is not JSON was skipped")
    if not isinstance(message, dict) or "id" not in message:
        return None
    request_id = _id_of(message["id"])
    try:
        check_texts(message.get("params"), cap, root="params")
    except Invalid as exc:
        return _error(request_id, INVALID_PARAMS, str(exc))
    return _error(request_id, INVALID_REQUEST, "the message is not strict JSON")


def _id_of(value: Any) -> str | int | None:
    """A request's id as the reply may carry it: a number, or a string that is text."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a surrogate in the id itself: the reply could not hold it
            return None
        return value
    return None


def _line_of(failure: Exception) -> str | None:
    """The raw line behind a parse failure (pydantic keeps it as the error's input)."""
    if not isinstance(failure, ValidationError):
        return None
    errors = failure.errors(include_url=False)
    if not errors or errors[0]["type"] != "json_invalid":
        return None
    line = errors[0].get("input")
    return line if isinstance(line, str) else None


def _error(request_id: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(
        jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=f"invalid: {message}")
    )
