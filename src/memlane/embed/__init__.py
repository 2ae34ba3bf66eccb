"""Embeddings: profiles, the Embedder base class, backends chosen by name, chunking.

    get_embedder("minilm")                  the default: local MiniLM on onnxruntime
    get_embedder("hash")                    deterministic, offline; for tests
    get_embedder("http", base_url=..., model=..., dimension=...)

Importing this package, or naming `Embedder` in a type, imports no numpy: the vector
helpers (memlane.embed.chunk) load on first use, and onnxruntime and tokenizers when a
MiniLM embedder first embeds (or `load()`s), so choosing a profile stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memlane.embed.base import CHUNK_OVERLAP, CHUNK_TOKENS, Embedded, Embedder
from memlane.embed.factory import get_embedder
from memlane.embed.profiles import DEFAULT_PROFILE, PROFILES, Profile, get_profile

if TYPE_CHECKING:
    from memlane.embed.chunk import (
        Vector,
        Vectors,
        chunk_text,
        entry_vector,
        windows,
        word_spans,
    )

# Names of memlane.embed.chunk (numpy), loaded when first asked for.
_CHUNK = frozenset(
    {
        "Vector",
        "Vectors",
        "chunk_text",
        "entry_vector",
        "windows",
        "word_spans",
    }
)


def __getattr__(name: str) -> Any:
    if name in _CHUNK:
        from memlane.embed import chunk

        return getattr(chunk, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CHUNK_OVERLAP",
    "CHUNK_TOKENS",
    "DEFAULT_PROFILE",
    "PROFILES",
    "Embedded",
    "Embedder",
    "Profile",
    "Vector",
    "Vectors",
    "chunk_text",
    "entry_vector",
    "get_embedder",
    "get_profile",
    "windows",
    "word_spans",
]
