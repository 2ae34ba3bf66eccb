"""The `http` profile against a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from memlane import Unavailable
from memlane.embed import Embedder, get_embedder
from memlane.embed.http import endpoint_url

DIM = 8
Reply = Callable[[dict[str, Any]], tuple[int, bytes]]


def vector_for(text: str) -> list[float]:
    return [float(len(text)), 1.0, *([0.5] * (DIM - 2))]


def good_reply(request: dict[str, Any]) -> tuple[int, bytes]:
    data = [
        {"object": "embedding", "index": i, "embedding": vector_for(t)}
        for i, t in enumerate(request["input"])
    ]
    # Answer out of order: the client must use `index`, as OpenAI's API allows.
    return 200, json.dumps(
        {"object": "list", "data": data[::-1], "model": request["model"]}
    ).encode()


@dataclass
class FakeServer:
    url: str
    reply: Reply = good_reply
    requests: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            fake.requests.append((self.path, dict(self.headers), body))
            status, answer = fake.reply(body)
            # A client that timed out has gone: its answer has nowhere to go.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def embedder_for(server: FakeServer, **options: object) -> Embedder:
    settings: dict[str, object] = {
        "base_url": server.url,
        "model": "nomic-embed-text",
        "dimension": DIM,
    }
    return get_embedder("http", **{**settings, **options})


def test_success_normalises_and_keeps_order(server: FakeServer) -> None:
    texts = ["one", "three three", "two two"]
    vectors = embedder_for(server, api_key="sk-test-secret").embed_many(texts)
    expected = np.array([vector_for(t) for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected)
    path, headers, body = server.requests[0]
    assert path == "/v1/embeddings"
    assert body["model"] == "nomic-embed-text"
    assert sorted(body["input"]) == sorted(texts)
    assert headers["Authorization"] == "Bearer sk-test-secret"


def test_batches_respect_batch_size(server: FakeServer) -> None:
    vectors = embedder_for(server, batch_size=2).embed_many([f"text {i}" for i in range(5)])
    assert vectors.shape == (5, DIM)
    assert [len(body["input"]) for _, _, body in server.requests] == [2, 2, 1]


def test_no_key_no_authorization_header(server: FakeServer) -> None:
    embedder_for(server).embed("hello")
    assert "Authorization" not in server.requests[0][1]


def test_http_error_is_unavailable_with_the_reason(server: FakeServer) -> None:
    error = {
        "error": {"message": "model 'nomic-embed-text' not found", "type": "invalid_request_error"}
    }
    server.reply = lambda _: (404, json.dumps(error).encode())
    with pytest.raises(Unavailable, match="answered HTTP 404: model 'nomic-embed-text' not found"):
        embedder_for(server, api_key="sk-test-secret").embed("hello")


def test_server_error_with_a_plain_body(server: FakeServer) -> None:
    server.reply = lambda _: (500, b"<html>Internal   Server\nError</html>")
    with pytest.raises(Unavailable, match=r"HTTP 500: <html>Internal Server Error</html>"):
        embedder_for(server).embed("hello")


@pytest.mark.parametrize(
    "answer",
    [
        b"not json at all",
        b'{"data": "nope"}',
        b'{"object": "list"}',
        b'{"data": [{"index": 0}]}',
        b"[1, 2]",
    ],
)
def test_malformed_json_is_unavailable(server: FakeServer, answer: bytes) -> None:
    server.reply = lambda _: (200, answer)
    with pytest.raises(Unavailable, match="malformed JSON"):
        embedder_for(server).embed("hello")


def test_non_numeric_vectors_are_unavailable(server: FakeServer) -> None:
    server.reply = lambda _: (
        200,
        json.dumps({"data": [{"index": 0, "embedding": ["x"] * DIM}]}).encode(),
    )
    with pytest.raises(Unavailable, match="non-numeric"):
        embedder_for(server).embed("hello")


def test_wrong_dimension_is_unavailable_and_says_what_came_back(server: FakeServer) -> None:
    with pytest.raises(Unavailable, match="returned 8-d vectors, the profile expects 768"):
        embedder_for(server, dimension=768).embed("hello")


def test_wrong_count_is_unavailable(server: FakeServer) -> None:
    server.reply = lambda _: (
        200,
        json.dumps({"data": [{"index": 0, "embedding": [1.0] * DIM}]}).encode(),
    )
    with pytest.raises(Unavailable, match="returned 1 vectors for 2"):
        embedder_for(server).embed_many(["a", "b"])


def test_unreachable_endpoint_is_unavailable(server: FakeServer) -> None:
    url = server.url
    server_port_closed = url.rsplit(":", 1)[0] + ":9"  # discard port: nothing listens
    with pytest.raises(Unavailable, match="unreachable"):
        get_embedder("http", base_url=server_port_closed, model="m", dimension=DIM).embed("x")


def test_slow_endpoint_times_out(server: FakeServer) -> None:
    release = threading.Event()

    def slow(request: dict[str, Any]) -> tuple[int, bytes]:
        release.wait(5)
        return good_reply(request)

    server.reply = slow
    try:
        with pytest.raises(Unavailable, match=r"did not answer within 0\.2 s"):
            embedder_for(server, timeout=0.2).embed("hello")
    finally:
        release.set()


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("http://localhost:11434", "http://localhost:11434/v1/embeddings"),
        ("http://localhost:11434/", "http://localhost:11434/v1/embeddings"),
        ("https://api.openai.com/v1", "https://api.openai.com/v1/embeddings"),
        ("https://host/v1/embeddings", "https://host/v1/embeddings"),
        ("https://host/proxy/", "https://host/proxy/v1/embeddings"),
    ],
)
def test_endpoint_url(base: str, url: str) -> None:
    assert endpoint_url(base) == url
