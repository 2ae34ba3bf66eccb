"""The `http` profile: any OpenAI-compatible `/v1/embeddings` endpoint (Ollama, OpenAI, ...).

Standard library only (urllib). Every failure of the endpoint (unreachable, timeout, an
HTTP error, a malformed answer, vectors of the wrong size) is Unavailable, so a write can
land with its embedding deferred. The API key is sent as a bearer token and never appears
in a message or a repr.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import numpy as np

from memlane.embed.base import Embedder
from memlane.embed.chunk import Vectors
from memlane.embed.profiles import Profile
from memlane.errors import Invalid, Unavailable

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_BATCH = 64
#: Larger answers are refused rather than parsed: 64 texts x 4,096 dims as JSON is ~6 MB.
MAX_RESPONSE_BYTES = 64 << 20
_DETAIL_CHARS = 200


class HttpEmbedder(Embedder):
    def __init__(
        self,
        profile: Profile,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        batch_size: int = DEFAULT_BATCH,
    ) -> None:
        super().__init__(profile)
        self.url = endpoint_url(base_url)
        self.batch_size = batch_size
        self._api_key = api_key
        self._timeout = timeout

    def embed_batch(self, texts: list[str]) -> Vectors:
        payload = json.dumps({"model": self.profile.model, "input": texts}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.url, data=payload, headers=headers, method="POST")
        return parse_embeddings(self._send(request), len(texts), self.dimension, self.url)

    def _send(self, request: urllib.request.Request) -> bytes:
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                body: bytes = response.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            detail = _error_detail(exc.read(4096) if exc.fp else b"")
            raise Unavailable(
                f"embedding endpoint {self.url} answered HTTP {exc.code}{detail}"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", None) or exc
            if isinstance(reason, TimeoutError):
                raise Unavailable(
                    f"embedding endpoint {self.url} did not answer within {self._timeout:g} s"
                ) from None
            raise Unavailable(f"embedding endpoint {self.url} is unreachable: {reason}") from None
        if len(body) > MAX_RESPONSE_BYTES:
            raise Unavailable(f"embedding endpoint {self.url} answered more than 64 MiB")
        return body


def endpoint_url(base_url: str) -> str:
    """The embeddings URL for a base URL given with or without `/v1` or `/v1/embeddings`.

    `http://localhost:11434` (Ollama), `https://api.openai.com/v1` (the OpenAI SDK's
    base URL) and a full `.../v1/embeddings` all work.
    """
    parts = urllib.parse.urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise Invalid(f"embedding base URL {base_url!r} is not an http(s) URL")
    path = parts.path.rstrip("/")
    if not path.endswith("/embeddings"):
        path = f"{path}/embeddings" if path.endswith("/v1") else f"{path}/v1/embeddings"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def parse_embeddings(body: bytes, count: int, dimension: int, url: str) -> Vectors:
    """The (count, dimension) array in an OpenAI-style answer, or Unavailable saying why."""
    try:
        data = json.loads(body)
        items = data["data"]
        if not isinstance(items, list):
            raise TypeError("data is not a list")
        ordered = sorted(items, key=lambda item: int(item.get("index", 0)))
        rows = [item["embedding"] for item in ordered]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise Unavailable(
            f"embedding endpoint {url} answered malformed JSON ({type(exc).__name__}: {exc})"
        ) from None
    if len(rows) != count:
        raise Unavailable(f"embedding endpoint {url} returned {len(rows)} vectors for {count}")
    sizes = {len(row) if isinstance(row, list) else -1 for row in rows}
    if sizes != {dimension}:
        got = ", ".join(str(s) for s in sorted(sizes))
        raise Unavailable(
            f"embedding endpoint {url} returned {got}-d vectors, the profile expects "
            f"{dimension}: set the embedding dimension to match the model"
        )
    return _as_array(rows, url)


def _as_array(rows: list[Any], url: str) -> Vectors:
    try:
        return np.asarray(rows, dtype=np.float32)
    except (TypeError, ValueError):
        raise Unavailable(f"embedding endpoint {url} returned non-numeric vectors") from None


def _error_detail(body: bytes) -> str:
    """A short reason from an error body: OpenAI's error.message, else the text itself."""
    text = body.decode("utf-8", "replace").strip()
    try:
        error = json.loads(text).get("error")
        text = str(error.get("message", error) if isinstance(error, dict) else error or text)
    except (ValueError, AttributeError):
        pass
    text = " ".join(text.split())[:_DETAIL_CHARS]
    return f": {text}" if text else ""
