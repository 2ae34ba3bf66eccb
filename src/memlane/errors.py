"""The one exception tree of memlane.

    MemlaneError                 anything memlane raises on purpose
    ├── NotFound                 an id, version, registry entry or file does not exist   (exit 1)
    ├── Invalid                  input refused at the boundary: bad value, limit, usage  (exit 2)
    │   └── AmbiguousId          an id prefix matches several memories; lists them
    ├── Conflict                 the request contradicts the store's state:              (exit 2)
    │                            a second tombstone, removing a category still in use
    ├── ScopeNotAllowed          a scoped MCP token reaches outside its scopes           (exit 2)
    ├── ReadOnly                 a read-only MCP token calls a tool that writes          (exit 2)
    ├── PolicyRefused            a write policy refused the content                      (exit 2)
    └── Unavailable              the store or a component cannot serve the request:     (exit 1)
        │                        a full disk, a read-only file, a lost connection
        ├── StoreDamaged         the store file is damaged or is not a database
        ├── SchemaTooNew         the database was written by a newer memlane
        ├── SchemaOutdated       the database needs migrations and auto_migrate is off
        └── EmbeddingFailed      the embedder failed on a text: an endpoint gone, a
                                 model's runtime error

Interfaces map this tree to exit codes (CLI) and tool errors (MCP) in one place
each; the core never prints and never exits.
"""

from __future__ import annotations

from typing import Any


class MemlaneError(Exception):
    """Base of every error memlane raises on purpose."""

    exit_code = 1


class NotFound(MemlaneError):
    """Something named by the caller does not exist."""

    exit_code = 1


class Invalid(MemlaneError):
    """Input refused at the boundary; nothing was written."""

    exit_code = 2


class AmbiguousId(Invalid):
    """An id prefix matches more than one memory."""

    def __init__(self, prefix: str, candidates: list[str]) -> None:
        self.prefix = prefix
        self.candidates = candidates
        shown = ", ".join(candidates)
        super().__init__(f"id prefix {prefix!r} is ambiguous: matches {shown}")


class Conflict(MemlaneError):
    """The request contradicts the current state of the store."""

    exit_code = 2


class ScopeNotAllowed(MemlaneError):
    """A request reaches outside the scopes its token was confined to (fail closed)."""

    exit_code = 2


class ReadOnly(MemlaneError):
    """A request whose token may only read asks for a write (fail closed)."""

    exit_code = 2


class PolicyRefused(MemlaneError):
    """A write policy refused the content."""

    exit_code = 2


class Unavailable(MemlaneError):
    """The store or a component cannot serve the request."""

    exit_code = 1


class StoreDamaged(Unavailable):
    """The store file is damaged (a page, an index or a text) or is not a database."""


class SchemaTooNew(Unavailable):
    """The database schema is newer than this version of memlane understands."""


class SchemaOutdated(Unavailable):
    """The database schema is older than this memlane's and may not be migrated on open
    (`memlane migrate` applies the pending migrations)."""


class EmbeddingFailed(Unavailable):
    """The embedder failed on a text (an endpoint gone, a model's runtime error)."""


def shown(value: Any, limit: int = 80) -> str:
    """A value as a one-line message names it: its repr (escapes and all), cut short
    past `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Malformed(ValueError):
    """A model's answer that does not follow its schema (lifecycle.llm); the message
    says where and why. Not a MemlaneError: the adapter asks again or gives up."""
