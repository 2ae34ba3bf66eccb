"""`memlane web` against a hostile browser: it answers only the host names it serves,
every response carries its Content-Security-Policy and frame headers (refusals and
errors too), a GET leaves the store as it was, and a body past the cap is refused."""

from __future__ import annotations

import base64
import hashlib
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient
from starlette.types import Receive, Scope, Send

from conftest import AGENT, CliResult, raw_sql
from memlane import Context, Memory, config
from memlane.server import pages, webguard
from memlane.server.web import build_app

LOCAL = "http://127.0.0.1:8765"
TOKEN = "s3cret-token"
SECURITY_HEADERS = {
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def opener(db_path: Path) -> Callable[[], Memory]:
    return lambda: Memory.open(db_path, agent=AGENT, context=Context("proj", "main"))


@pytest.fixture
def seeded(mem: Memory) -> dict[str, str]:
    deploy = mem.add("We deploy with blue-green releases on Fridays via `deployctl`.",
                     title="Deploy", kind="decision").id  # fmt: skip
    tooling = mem.add("Use `uv` for installs, never pip.", title="Tooling").id
    mem.graph.link(deploy, tooling, "related")
    return {"deploy": deploy, "tooling": tooling}


@pytest.fixture
def client(db_path: Path, seeded: dict[str, str]) -> Iterator[TestClient]:
    with TestClient(build_app(opener(db_path)), base_url=LOCAL) as c:
        yield c


# ---- host names --------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["attacker.example:8765", "attacker.example", "localhost.attacker.example:8765",
             "127.0.0.1.nip.io:8765", "[::2]:8765", ""],
)  # fmt: skip
def test_a_request_naming_another_host_is_refused(client: TestClient, host: str) -> None:
    page = client.get("/", params={"q": "deploy"}, headers={"Host": host})
    assert page.status_code == 400
    assert page.headers["content-type"].startswith("text/plain")
    assert page.text == "Invalid host header"


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8765", "localhost:8765", "LOCALHOST:8765", "[::1]:8765", "localhost",
             "localhost:9000"],
)  # fmt: skip
def test_the_loopback_names_are_served_on_any_port(client: TestClient, host: str) -> None:
    # Any port: an SSH tunnel reaches the view on its own.
    page = client.get("/", params={"q": "deploy"}, headers={"Host": host})
    assert page.status_code == 200 and "Deploy" in page.text


@pytest.mark.parametrize(
    ("bound", "token", "extra", "expected"),
    [
        ("127.0.0.1", False, (), ["localhost", "127.0.0.1", "[::1]"]),
        ("127.0.0.2", False, (), ["localhost", "127.0.0.1", "[::1]", "127.0.0.2"]),
        ("::1", True, (), ["localhost", "127.0.0.1", "[::1]"]),
        ("localhost", False, (), ["localhost", "127.0.0.1", "[::1]"]),
        ("192.168.1.5", True, (), ["192.168.1.5"]),
        ("fd00::5", True, (), ["[fd00::5]"]),
        ("Box.LAN", True, ("Memlane.Example.org",), ["box.lan", "memlane.example.org"]),
        ("0.0.0.0", True, ("x.example",), ["*"]),
        ("::", True, (), ["*"]),
        ("0.0.0.0", False, ("x.example",), ["localhost", "127.0.0.1", "[::1]", "x.example"]),
    ],
)
def test_the_names_served_follow_the_bound_address(
    bound: str, token: bool, extra: tuple[str, ...], expected: list[str]
) -> None:
    assert webguard.allowed_hosts(bound, token_required=token, extra=extra) == expected


def test_bound_to_every_address_with_a_token_any_name_with_the_token_is_served(
    db_path: Path, seeded: dict[str, str]
) -> None:
    app = build_app(opener(db_path), host="0.0.0.0", token=TOKEN)
    with TestClient(app, base_url="http://memlane-box.lan:8765") as c:
        assert c.get("/").status_code == 401
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert c.get("/", params={"q": "deploy"}, headers=auth).status_code == 200


def test_a_bound_address_serves_its_own_name_and_the_allowed_ones(
    db_path: Path, seeded: dict[str, str]
) -> None:
    app = build_app(opener(db_path), host="192.168.1.5", token=TOKEN,
                    allowed_hosts=("memlane.example.org", "*.tail.example"))  # fmt: skip
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(app, base_url="http://192.168.1.5:8765", headers=auth) as c:
        for host, status in [("192.168.1.5:8765", 200), ("memlane.example.org", 200),
                             ("box.tail.example:443", 200), ("localhost:8765", 400),
                             ("memlane.example.org.evil.example", 400)]:  # fmt: skip
            assert c.get("/", headers={"Host": host}).status_code == status, host


def test_the_allowed_hosts_setting_takes_names_and_refuses_a_port_or_anything() -> None:
    parse = config.BY_NAME["web_allowed_hosts"].parse
    assert parse(" Memlane.Example.org, *.tail.example ,[::1],") == (
        "memlane.example.org", "*.tail.example", "[::1]",
    )  # fmt: skip
    assert config.BY_NAME["web_allowed_hosts"].default() == ()
    for bad in ("*", "memlane.example.org:443", "a b", "*.", "ex*ample.org", "http://x.org"):
        with pytest.raises(ValueError, match="not a host name"):
            parse(bad)


def test_web_refuses_to_start_on_a_bad_allowed_host(
    run: Callable[..., CliResult], cli_env: dict[str, str]
) -> None:
    cli_env["MEMLANE_WEB_ALLOWED_HOSTS"] = "memlane.example.org:443"
    out = run("web")
    assert out.exit_code == 2
    assert "MEMLANE_WEB_ALLOWED_HOSTS='memlane.example.org:443' is not valid" in out.stderr


# ---- headers -------------------------------------------------------------------


def style_hash(html: str) -> str:
    [style] = re.findall(r"<style>(.*?)</style>", html, re.DOTALL)
    return "'sha256-" + base64.b64encode(hashlib.sha256(style.encode()).digest()).decode() + "'"


def assert_secured(response: Response | object) -> None:
    headers = response.headers  # type: ignore[attr-defined]
    for name, value in SECURITY_HEADERS.items():
        assert headers[name] == value, name
    directives = [d.strip() for d in headers["content-security-policy"].split(";")]
    assert directives == [
        "default-src 'none'", f"style-src {style_hash(pages.layout('x', ''))}",
        "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'",
    ]  # fmt: skip


def test_every_page_and_every_refusal_carries_the_security_headers(
    db_path: Path, client: TestClient, seeded: dict[str, str]
) -> None:
    deploy = seeded["deploy"]
    responses = [
        client.get("/"),
        client.get("/", params={"q": "deploy fridays"}),
        client.get(f"/memory/{deploy}"),
        client.get("/graph", params=[("id", deploy), ("open", "e:deployctl")]),
        client.get("/memory/m-nothere"),  # 404 page
        client.get("/graph"),  # 400 page
        client.get("/no/such/route"),  # Starlette's 404
        client.post("/", content=b"q=deploy"),  # 405
        client.post("/", content=b"x" * (webguard.MAX_BODY_BYTES + 1)),  # 413
        client.get("/", headers={"Host": "attacker.example"}),  # 400, wrong host
    ]
    with TestClient(build_app(opener(db_path), token=TOKEN), base_url=LOCAL) as gated:
        responses.append(gated.get("/"))  # 401 page
        responses.append(gated.get("/", params={"token": TOKEN}, follow_redirects=False))
    statuses = [r.status_code for r in responses]
    assert statuses == [200, 200, 200, 200, 404, 400, 404, 405, 413, 400, 401, 303]
    for response in responses:
        assert_secured(response)


def test_the_policy_names_the_style_each_page_carries_and_pages_need_nothing_else(
    client: TestClient, seeded: dict[str, str]
) -> None:
    for path in ("/?q=deploy", f"/memory/{seeded['deploy']}", f"/graph?id={seeded['deploy']}"):
        page = client.get(path)
        assert style_hash(page.text) in page.headers["content-security-policy"]
        # What the policy would block: scripts, inline style attributes, event handlers.
        assert "<script" not in page.text and "style=" not in page.text
        assert not re.search(r"\son[a-z]+=", page.text)


# ---- reading writes nothing --------------------------------------------------------


def counters(db_path: Path) -> list[tuple[object, ...]]:
    return raw_sql(db_path, "SELECT id, retrieval_count, last_retrieved, surfaced_count, "
                   "last_surfaced FROM memory ORDER BY id")  # fmt: skip


def dump(db_path: Path) -> list[str]:
    """Every row of every table of the store file, as SQL."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def browse(client: TestClient, seeded: dict[str, str]) -> None:
    found = client.get("/", params={"q": "deploy fridays"})
    assert f"/memory/{seeded['deploy']}" in found.text  # a recall that found something
    for path in (f"/memory/{seeded['deploy']}", f"/memory/{seeded['tooling']}"):
        assert client.get(path).status_code == 200
    graph = client.get("/graph", params=[("id", seeded["deploy"]), ("open", "e:deployctl"),
                                         ("open", f"m:{seeded['tooling']}")])  # fmt: skip
    assert graph.status_code == 200


def test_browsing_records_no_retrieval(
    mem: Memory, client: TestClient, seeded: dict[str, str], db_path: Path
) -> None:
    before = counters(db_path)
    browse(client, seeded)
    assert counters(db_path) == before
    mem.recall("deploy fridays")  # what the view must not do: a counted recall
    assert counters(db_path) != before


@pytest.mark.sqlite_only
def test_browsing_leaves_the_store_file_as_it_was(
    client: TestClient, seeded: dict[str, str], db_path: Path
) -> None:
    before = dump(db_path)
    browse(client, seeded)
    assert dump(db_path) == before


# ---- request bodies -----------------------------------------------------------------


async def echo_length(request: Request) -> Response:
    return PlainTextResponse(str(len(await request.body())))


async def raw_echo(scope: Scope, receive: Receive, send: Send) -> None:
    """An app of its own (not Starlette) that reads the whole body."""
    size, more = 0, True
    while more:
        message = await receive()
        size, more = size + len(message.get("body", b"")), message.get("more_body", False)
    await PlainTextResponse(str(size))(scope, receive, send)


def chunks(total: int) -> Iterator[bytes]:
    """A body sent without a Content-Length, a kilobyte at a time."""
    for _ in range(total // 1024):
        yield b"x" * 1024


@pytest.mark.parametrize("inner", ["starlette", "raw"])
def test_a_body_is_read_up_to_the_cap_and_refused_past_it(inner: str) -> None:
    app = Starlette(routes=[Route("/", echo_length, methods=["POST"])])
    capped = webguard.BodyCap(app if inner == "starlette" else raw_echo, limit=4096)
    c = TestClient(capped)  # no lifespan: the raw app serves HTTP only
    assert c.post("/", content=b"x" * 4096).text == "4096"
    assert c.post("/", content=chunks(4096)).text == "4096"
    declared = c.post("/", content=b"x" * 4097)
    streamed = c.post("/", content=chunks(8192))
    assert "content-length" not in c.build_request("POST", "/", content=chunks(1)).headers
    for refused in (declared, streamed):
        assert refused.status_code == 413
        assert refused.text == "request body too large: at most 4096 bytes"


def test_the_view_refuses_a_large_body_before_reading_it(client: TestClient) -> None:
    big = client.post("/", content=b"x" * (webguard.MAX_BODY_BYTES + 1))
    assert big.status_code == 413
    assert client.post("/", content=b"x" * webguard.MAX_BODY_BYTES).status_code == 405
