"""Who may call the HTTP server, which scopes each request may touch, and whether it
may write.

Tokens come from the settings: MEMLANE_MCP_TOKEN is an operator token (every scope,
read and write); the file MEMLANE_MCP_TOKEN_FILE names holds a bare token (the same)
or

    {"token": "<secret>", "namespaces": ["project:memlane", "global"], "access": "read"}

where `namespaces` confines that token to those scopes (each namespace is a scope)
and `access` is "write" (the default) or "read"; either key may be left out (every
scope; write). A malformed file, an empty
list, a scope that is not one ("globl") or another access level is refused before
the server starts. No message ever shows a token.

The SDK's bearer middleware checks the token (`TokenTable` is its TokenVerifier). The
server refuses a read token any tool that is not read-only (`read_only`) before the
tool runs; each tool then asks the request's `Grant` which scopes it may read and
write, and a request outside them fails with `scope_not_allowed`. A memory in a scope
the grant does not hold is, to that request, a memory that does not exist.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from memlane.errors import Invalid, ReadOnly, ScopeNotAllowed
from memlane.scope import ALL, GLOBAL, parse_scope

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken

# The AccessToken claims carrying a token's scopes (absent or None: every scope) and
# its access level (absent: write).
SCOPES_CLAIM = "memlane_scopes"
ACCESS_CLAIM = "memlane_access"
_FILE_KEYS = frozenset({"token", "namespaces", "access"})
Access = Literal["read", "write"]
ACCESS_LEVELS: tuple[Access, ...] = ("read", "write")


class Grant(msgspec.Struct, frozen=True):
    """What a request may touch: `scopes` None is every scope (an operator token,
    stdio); otherwise only those scopes, exactly. `access` "read" may call only the
    read-only tools."""

    scopes: tuple[str, ...] | None = None
    access: Access = "write"

    def check_write(self, tool: str) -> None:
        """ReadOnly unless this grant may write."""
        if self.access != "write":
            raise ReadOnly(f"this token may only read; {tool} writes")

    def write_scope(self, asked: str | None) -> str | None:
        """Where a write lands: the scope asked for, else the server's default (None)
        or a confined token's first scope."""
        if self.scopes is None:
            return asked
        return self.scopes[0] if asked is None else self.allow(parse_scope(asked))

    def read_scopes(self, asked: str | None) -> list[str] | None:
        """What a read covers: the scopes asked for (comma-separated, `all` for every
        one), else the server's default chain (None) or all of a confined token's.

        Trigger: a confined token reads without naming a scope. Why: the default
        chain may reach scopes it does not hold. Outcome: it reads its own scopes.
        """
        names = [n.strip() for n in (asked or "").split(",") if n.strip()]
        scopes = [n if n == ALL else parse_scope(n) for n in names]
        if self.scopes is None:
            return scopes or None
        return [self.allow(s) for s in scopes] if scopes else list(self.scopes)

    def graph_scopes(self) -> tuple[str, list[str]]:
        """Where the memory-server tools keep their graph: (write scope, read scopes).
        The official server keeps one graph per user, so memlane keeps it in `global`;
        a confined token keeps it in its first scope and reads all of its own."""
        if self.scopes is None:
            return GLOBAL, [GLOBAL]
        return self.scopes[0], list(self.scopes)

    def allow(self, scope: str) -> str:
        """`scope`, or ScopeNotAllowed when the grant does not cover it."""
        if self.scopes is not None and scope not in self.scopes:
            held = ", ".join(self.scopes)
            raise ScopeNotAllowed(f"this token may not use scope {scope!r} (it may use: {held})")
        return scope


EVERY_SCOPE = Grant()


def load_tokens(token: str | None, token_file: str | None) -> dict[str, Grant]:
    """The accepted tokens and their grants; a token in both places takes the file's
    (narrower) grant. Invalid when the file is malformed."""
    tokens: dict[str, Grant] = {}
    if token and token.strip():
        tokens[token.strip()] = EVERY_SCOPE
    if token_file:
        secret, grant = read_token_file(Path(token_file).expanduser())
        tokens[secret] = grant
    return tokens


def read_token_file(path: Path) -> tuple[str, Grant]:
    """A token file: a bare token, or a JSON object (see the module docstring)."""
    where = f"MEMLANE_MCP_TOKEN_FILE {path}"
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise Invalid(f"cannot read {where}: {getattr(exc, 'strerror', None) or exc}") from None
    if not text.startswith("{"):
        return _secret(text, where), EVERY_SCOPE
    try:
        data = json.loads(text)
    except ValueError as exc:  # the message names a position, never the text
        raise Invalid(f"{where} is not valid JSON: {exc}") from None
    unknown = sorted(set(data) - _FILE_KEYS)
    if unknown:
        keys = ", ".join(sorted(_FILE_KEYS))
        raise Invalid(f"{where}: unknown key(s) {', '.join(unknown)}; use {keys}")
    scopes = _scopes(data.get("namespaces"), where)
    return _secret(data.get("token"), where), Grant(scopes, _access(data.get("access"), where))


def _secret(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"{where} holds no token")
    if len(value.split()) != 1:
        raise Invalid(f"{where}: a token is one word, without spaces or line breaks")
    return value.strip()


def _scopes(names: Any, where: str) -> tuple[str, ...] | None:
    if names is None:
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise Invalid(f"{where}: namespaces must be a list of scopes")
    if not names:
        raise Invalid(f"{where}: namespaces is empty; list the token's scopes or leave it out")
    try:
        return tuple(dict.fromkeys(parse_scope(n) for n in names))
    except Invalid as exc:
        raise Invalid(f"{where}: {exc}") from None


def _access(value: Any, where: str) -> Access:
    if value is None:
        return "write"
    for level in ACCESS_LEVELS:
        if value == level:
            return level
    raise Invalid(f"{where}: access must be {' or '.join(ACCESS_LEVELS)}")


class TokenTable:
    """The SDK's TokenVerifier over the configured tokens, compared in constant time."""

    def __init__(self, tokens: Mapping[str, Grant]) -> None:
        self._tokens = [(secret.encode(), grant) for secret, grant in tokens.items()]

    async def verify_token(self, token: str) -> AccessToken | None:
        from mcp.server.auth.provider import AccessToken  # the SDK: only when serving

        given = token.encode("utf-8", "surrogateescape")
        found = None
        for secret, grant in self._tokens:  # every one compared: no timing by position
            if hmac.compare_digest(secret, given):
                found = grant
        if found is None:
            return None
        scopes = list(found.scopes) if found.scopes is not None else None
        return AccessToken(
            token=token,
            client_id="memlane-scoped" if scopes is not None else "memlane-operator",
            scopes=scopes or [],
            claims={SCOPES_CLAIM: scopes, ACCESS_CLAIM: found.access},
        )


def request_grant(request: object) -> Grant | None:
    """The grant of an authenticated HTTP request; None when it carries none."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    user = getattr(request, "scope", {}).get("user") if request is not None else None
    if not isinstance(user, AuthenticatedUser):
        return None
    claims = user.access_token.claims or {}
    scopes, access = claims.get(SCOPES_CLAIM), claims.get(ACCESS_CLAIM)
    # Fail closed: a claim this module did not write reads as read-only.
    level: Access = "write" if access == "write" else "read"
    return Grant(None if scopes is None else tuple(scopes), level)
