"""What `memlane web` asks of every request and adds to every response: a Host it
serves, a bounded body, and headers that keep its pages from being framed, sniffed or
made to load anything.

Host names. Trigger: a page elsewhere can point its own name at 127.0.0.1 (DNS
rebinding) and then read the view through the visitor's browser. Why: such a request
carries that other name in its Host header. Outcome: the view answers only the names
it is reached by (Starlette's TrustedHostMiddleware, 400 otherwise):

- bound to loopback: localhost, 127.0.0.1, [::1] and the bound address;
- bound to another address or name: that one;
- bound to every address (0.0.0.0, ::): any name when a token is required (the token,
  which a rebound page never has, is the guard), else the loopback names;
- plus the names in MEMLANE_WEB_ALLOWED_HOSTS (a reverse proxy's, say).

The port is not compared: a rebound page keeps the view's port, so it adds nothing, and
an SSH tunnel (`ssh -L 9000:localhost:8765`) reaches the view on another one.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
from collections.abc import Iterable, Mapping, Sequence

from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
EVERY_ADDRESS = ("0.0.0.0", "::", "")
ANY_HOST = "*"
# No page takes a body (every route is a GET): the cap only bounds what a client can
# make the server read, with room for a small form.
MAX_BODY_BYTES = 16 * 1024


def host_name(host: str) -> str:
    """`host` as a Host header names it: an IPv6 address in brackets, lower case."""
    name = host.lower()
    return f"[{name}]" if ":" in name and not name.startswith("[") else name


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def allowed_hosts(host: str, *, token_required: bool, extra: Iterable[str] = ()) -> list[str]:
    """The Host names the view bound to `host` answers (the module docstring says why);
    `["*"]` is any."""
    if host in EVERY_ADDRESS:
        if token_required:
            return [ANY_HOST]
        names = [*LOOPBACK_NAMES]
    elif _loopback(host):
        names = [*LOOPBACK_NAMES, host_name(host)]
    else:
        names = [host_name(host)]
    return list(dict.fromkeys([*names, *(name.lower() for name in extra)]))


def content_security_policy(styles: Sequence[str]) -> str:
    """Nothing loads (no script, image, font, frame or fetch); the pages' own inline
    `<style>` blocks apply, named by hash; forms submit only to the view."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in styles
    )
    return "; ".join(
        (
            "default-src 'none'",
            f"style-src {hashes}",
            "form-action 'self'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
        )
    )


def security_headers(styles: Sequence[str]) -> dict[str, str]:
    return {
        "Content-Security-Policy": content_security_policy(styles),
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }


class SecurityHeaders:
    """Adds `headers` to every HTTP response the wrapped app sends, errors included."""

    def __init__(self, app: ASGIApp, headers: Mapping[str, str]) -> None:
        self.app, self.headers = app, headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyTooLarge(HTTPException):
    """A request body grew past the cap while the app read it: an HTTPException, so a
    Starlette app answers it as 413 itself (and BodyCap does for any other app)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body too large: at most {limit} bytes")


class BodyCap:
    """Refuses (413) a request whose body is longer than `limit` bytes: at once when its
    Content-Length says so, else as soon as the app has read past it."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    def _refusal(self) -> PlainTextResponse:
        return PlainTextResponse(BodyTooLarge(self.limit).detail, 413)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._refusal()(scope, receive, send)
            return
        read, started = 0, False

        async def capped_receive() -> Message:
            nonlocal read
            message = await receive()
            read += len(message.get("body", b""))
            if read > self.limit:
                raise BodyTooLarge(self.limit)
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, capped_receive, watched_send)
        except BodyTooLarge:
            if started:
                raise
            await self._refusal()(scope, receive, send)


def harden(app: ASGIApp, hosts: Sequence[str], styles: Sequence[str]) -> ASGIApp:
    """`app` answering only `hosts`, reading at most MAX_BODY_BYTES of a body, every
    response (a refusal too) carrying the security headers for pages with `styles`."""
    capped = BodyCap(app)
    named = TrustedHostMiddleware(capped, allowed_hosts=hosts, www_redirect=False)
    return SecurityHeaders(named, security_headers(styles))
