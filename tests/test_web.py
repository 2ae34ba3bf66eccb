"""`memlane web`: the pages over HTTP in-process (Starlette's client), the graph drawing,
the token gate, and one end-to-end run of the real server in headless Chromium (Debian's
`chromium`, driven by Playwright; never a browser download)."""

from __future__ import annotations

import io
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from conftest import AGENT, CliResult
from memlane import Context, Memory
from memlane.server import graphview
from memlane.server.web import build_app, explore

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Where the in-process client says it is: a name the view bound to loopback serves.
LOCAL = "http://127.0.0.1:8765"


def opener(db_path: Path, agent: str = AGENT) -> Callable[[], Memory]:
    return lambda: Memory.open(db_path, agent=agent, context=Context("proj", "main"))


@pytest.fixture
def seeded(mem: Memory) -> dict[str, str]:
    deploy = mem.add("We deploy with blue-green releases on Fridays via `deployctl`.",
                     title="Deploy", kind="decision").id  # fmt: skip
    tooling = mem.add("Use `uv` for installs, never pip.", title="Tooling").id
    day = mem.add("We deploy on Tuesdays now.", title="Deploy day").id
    mem.graph.link(deploy, tooling, "related")
    mem.graph.contradict(deploy, day, "the day differs")
    mem.update(deploy, content="We deploy with blue-green releases on Fridays via `deployctl` v2.")
    return {"deploy": deploy, "tooling": tooling, "day": day}


@pytest.fixture
def client(db_path: Path, seeded: dict[str, str]) -> Iterator[TestClient]:
    with TestClient(build_app(opener(db_path)), base_url=LOCAL) as c:
        yield c


def test_search_lists_recall_results_with_their_score_parts(
    client: TestClient, seeded: dict[str, str]
) -> None:
    page = client.get("/", params={"q": "deploy fridays"})
    assert page.status_code == 200
    assert f'href="/memory/{seeded["deploy"]}"' in page.text
    assert "bm25" in page.text and "recency" in page.text and "found by" in page.text
    assert client.get("/").status_code == 200


def test_a_memory_page_has_its_history_links_and_entities(
    client: TestClient, seeded: dict[str, str]
) -> None:
    page = client.get(f"/memory/{seeded['deploy']}")
    assert page.status_code == 200
    text = page.text
    assert "<h2>History</h2>" in text and "v1" in text and "v2" in text
    assert (
        '<span class="add">+We deploy with blue-green releases on Fridays via `deployctl` v2.'
        in text
    )
    assert f'href="/memory/{seeded["tooling"]}"' in text
    assert 'class="contradicts"' in text  # the contradiction is marked
    assert "deployctl" in text and f"/graph?id={seeded['deploy']}" in text
    assert '<a href="/graph?entity=deployctl">deployctl</a>' in text  # its relations


def test_text_from_the_store_is_escaped(client: TestClient, db_path: Path) -> None:
    with opener(db_path)() as mem:
        evil = mem.add("<script>alert(1)</script> and [x](javascript:alert(2))",
                       title="<img src=x onerror=alert(3)>").id  # fmt: skip
    page = client.get(f"/memory/{evil}").text
    assert "<script>" not in page and "<img src=x" not in page
    assert 'href="javascript:' not in page  # markdown-it leaves such a link as text
    assert "&lt;script&gt;" in page


def test_the_graph_draws_kinds_link_types_and_contradictions(
    client: TestClient, seeded: dict[str, str]
) -> None:
    page = client.get("/graph", params={"id": seeded["deploy"]}).text
    assert page.count('class="node memory') == 3 and 'class="node entity' in page
    assert 'class="edge edge-related"' in page and 'class="edge edge-contradicts"' in page
    assert 'stroke="#d62728"' in page  # contradictions in red
    assert "⚠ Deploy day" in page
    # A node not yet open links to the graph with it opened.
    assert "open=e%3Adeployctl" in page


def test_opening_an_entity_adds_the_memories_naming_it(
    mem: Memory, client: TestClient, seeded: dict[str, str]
) -> None:
    other = mem.add("Rolled back with `deployctl` once.", title="Rollback").id
    closed = client.get("/graph", params={"id": seeded["tooling"]}).text
    assert other not in closed
    opened = client.get(
        "/graph", params=[("id", seeded["tooling"]), ("open", f"m:{seeded['deploy']}"),
                          ("open", "e:deployctl")],
    ).text  # fmt: skip
    assert f'data-key="m:{other}"' in opened and "Rollback" in opened


def test_explore_keeps_one_node_per_memory_and_one_edge_per_link(
    mem: Memory, seeded: dict[str, str]
) -> None:
    _, graph = explore(mem, seeded["deploy"], [f"m:{seeded['tooling']}", f"m:{seeded['day']}"])
    assert len(graph.nodes) == len(set(graph.nodes))
    pairs = [(frozenset((e.source, e.target)), e.type) for e in graph.edges]
    assert len(pairs) == len(set(pairs))
    assert graph.nodes[f"m:{seeded['deploy']}"].contradicted
    at = graphview.layout(graph)
    assert len(set(at.values())) == len(at)  # no two nodes on one spot


def test_unknown_memories_and_bad_requests_are_pages_not_crashes(client: TestClient) -> None:
    assert client.get("/memory/m-nothere").status_code == 404
    assert client.get("/graph").status_code == 400
    assert client.get("/graph", params={"id": "m-nothere"}).status_code == 404


def test_a_private_memory_shows_only_to_its_owner(db_path: Path, seeded: dict[str, str]) -> None:
    with opener(db_path, "other")() as theirs:
        secret = theirs.add("Salary bands for the deploy team.", title="Bands",
                            visibility="private").id  # fmt: skip
    with TestClient(build_app(opener(db_path)), base_url=LOCAL) as mine:
        assert mine.get(f"/memory/{secret}").status_code == 404
        assert secret not in mine.get("/", params={"q": "deploy team salary"}).text
    with TestClient(build_app(opener(db_path, "other")), base_url=LOCAL) as owner:
        assert owner.get(f"/memory/{secret}").status_code == 200


def test_with_a_token_every_request_needs_it(db_path: Path, seeded: dict[str, str]) -> None:
    with TestClient(build_app(opener(db_path), token="s3cret-token"), base_url=LOCAL) as c:
        assert c.get("/").status_code == 401
        assert c.get("/", params={"token": "wrong"}).status_code == 401
        first = c.get("/", params={"q": "deploy", "token": "s3cret-token"}, follow_redirects=False)
        assert first.status_code == 303 and "token" not in first.headers["location"]
        assert "q=deploy" in first.headers["location"]
        assert c.get("/", params={"q": "deploy"}).status_code == 200  # the cookie now
    with TestClient(build_app(opener(db_path), token="s3cret-token"), base_url=LOCAL) as c:
        auth = {"Authorization": "Bearer s3cret-token"}
        assert c.get(f"/memory/{seeded['deploy']}", headers=auth).status_code == 200


def test_binding_beyond_loopback_without_a_token_is_refused(
    run: Callable[..., CliResult],
) -> None:
    out = run("web", "--host", "0.0.0.0")
    assert out.exit_code == 2
    assert (
        out.stderr.strip()
        == "memlane: error: binding to 0.0.0.0 needs a token: set MEMLANE_WEB_TOKEN"
    )


# ---- end to end: the real server in headless Chromium ----------------------


# A name the real server is told to serve besides its loopback ones.
ALSO_SERVED = "memlane.test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(cli_env: dict[str, str], tmp_path: Path, seeded: dict[str, str]) -> Iterator[str]:
    """`memlane web` as a real process on a free port: its URL."""
    port = free_port()
    env = {**os.environ, **cli_env, "MEMLANE_WEB_ALLOWED_HOSTS": ALSO_SERVED}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memlane", "web", "--port", str(port)],
        env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"memlane web did not start: {proc.stderr!r}") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def fetch(url: str, host: str) -> int:
    """The status of a GET of `url` naming `host` in its Host header."""
    request = urllib.request.Request(url, headers={"Host": host})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as refused:
        return refused.code


@pytest.mark.integration
def test_the_real_server_answers_only_the_names_it_serves(server: str) -> None:
    port = server.rstrip("/").rsplit(":", 1)[1]
    assert fetch(server, f"localhost:{port}") == 200
    assert fetch(server, ALSO_SERVED) == 200
    assert fetch(server, f"attacker.example:{port}") == 400  # a rebound name


@pytest.mark.integration
def test_in_chromium_search_open_a_memory_and_expand_a_graph_node(
    server: str, seeded: dict[str, str], tmp_path: Path
) -> None:
    from PIL import Image, ImageChops
    from playwright.sync_api import sync_playwright

    assert CHROMIUM, "Debian's chromium is not installed (scripts/test installs it)"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page(viewport={"width": 1200, "height": 1000})
        # Every page records what its Content-Security-Policy blocked.
        page.add_init_script(
            "window.blocked = []; document.addEventListener('securitypolicyviolation',"
            " e => window.blocked.push(e.violatedDirective + ' ' + e.blockedURI));"
        )
        page.goto(server)
        assert "default-src 'none'" in (page.context.request.get(server).headers
                                        ["content-security-policy"])  # fmt: skip
        # The page's own stylesheet applies under the policy.
        header = page.eval_on_selector("header", "e => getComputedStyle(e).backgroundColor")
        assert header == "rgb(31, 45, 61)"
        assert page.evaluate("window.blocked") == []
        page.fill("input[name=q]", "deploy fridays")
        page.press("input[name=q]", "Enter")
        page.wait_for_selector("table.results")
        page.click(f'a[href="/memory/{seeded["deploy"]}"]')
        page.wait_for_selector("h2:has-text('History')")
        page.click("text=graph view")
        page.wait_for_selector("svg.graph")
        before = page.locator("svg.graph a.node").count()
        page.click('svg.graph a[data-key="m:' + seeded["tooling"] + '"]')  # expand it
        page.wait_for_load_state()
        assert "open=m%3A" in page.url
        after = page.locator("svg.graph a.node").count()
        assert after > before  # Tooling's entity (uv) joined
        assert page.locator('svg.graph a[data-key="e:uv"]').count() == 1
        assert page.evaluate("window.blocked") == []
        shot = page.locator("svg.graph").screenshot(path=str(tmp_path / "graph.png"))
        # An SVG attribute, not a style: the policy lets no added style apply.
        page.locator("svg.graph .label").evaluate_all(
            "labels => labels.forEach(l => l.setAttribute('visibility', 'hidden'))"
        )
        unlabelled = page.locator("svg.graph").screenshot()
        browser.close()
    image = Image.open(io.BytesIO(shot)).convert("RGB")
    assert image.width > 200 and image.height > 200
    assert len(image.getcolors(1 << 20) or ()) > 10  # not a blank image
    # The labels are drawn: hiding them changes the picture where they stand.
    changed = ImageChops.difference(image, Image.open(io.BytesIO(unlabelled)).convert("RGB"))
    assert changed.getbbox() is not None


def test_search_says_that_nothing_relevant_was_found(db_path: Path, seeded: dict[str, str]) -> None:
    from memlane.embed import get_embedder
    from memlane.retrieve.recall import RecallOptions

    def floored() -> Memory:
        memory = Memory.open(
            db_path, agent=AGENT, context=Context("proj", "main"), embedder=get_embedder("hash")
        )
        memory.embed(all=True)
        memory.recall_settings = RecallOptions(min_score=0.3)
        return memory

    with TestClient(build_app(floored), base_url=LOCAL) as c:
        page = c.get("/", params={"q": "xylophone quantum banana"})
        assert page.status_code == 200
        assert "Nothing relevant found" in page.text and "below the floor 0.300" in page.text
        assert 'href="/memory/' not in page.text
        assert f'href="/memory/{seeded["deploy"]}"' in c.get("/", params={"q": "deploy"}).text


def test_an_entity_graph_shows_its_relations_both_ways(
    mem: Memory, client: TestClient, seeded: dict[str, str]
) -> None:
    mem.graph.relate("deployctl", "depends on", "Kubernetes", context="rollouts",
                     memory=seeded["deploy"])  # fmt: skip
    mem.graph.relate("Ops Team", "owns", "deployctl")
    mem.graph.relate("deployctl", "mentors", "uv")
    mem.graph.unrelate("deployctl", "mentors", "uv")  # ended: not drawn
    page = client.get("/graph", params={"entity": "DEPLOYCTL"})
    assert page.status_code == 200
    text = page.text
    assert "<h1>deployctl <small>(unknown)</small></h1>" in text
    assert text.count('class="node entity') == 3 and "uv</text>" not in text
    assert 'class="edge edge-depends_on"' in text and 'class="edge edge-owns"' in text
    assert "/graph?entity=Kubernetes" in text and "<small>(rollouts)</small>" in text
    assert f'href="/memory/{seeded["deploy"]}">source' in text
    assert (
        f'<h2>Memories naming it (1)</h2><ul><li><a href="/memory/{seeded["deploy"]}">Deploy'
        in text
    )
    assert "No memory names it." in client.get("/graph", params={"entity": "Ops Team"}).text
    # the memory graph's entity nodes lead to their entity graph
    assert "/graph?entity=deployctl" in client.get("/graph", params={"id": seeded["deploy"]}).text
    assert client.get("/graph", params={"entity": "nobody"}).status_code == 404
    for name in ("<script>", "<>"):
        page = client.get("/graph", params={"entity": name})
        assert page.status_code in (400, 404) and name not in page.text
