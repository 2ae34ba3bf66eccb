"""Embeddings: profiles, the Embedder base class, backends chosen by name, chunking.

    get_embedder("minilm")                  the default: local MiniLM on onnxruntime
    get_embedder("hash")                    deterministic, offline; for tests
    get_embedder("http", base_url=..., model=..., dimension=...)

Importing this package imports numpy only; onnxruntime and tokenizers load when a MiniLM
embedder first embeds (or `load()`s), so choosing a profile stays cheap.
"""

from memlane.embed.base import Embedded, Embedder, Vectors
from memlane.embed.chunk import (
    CHUNK_OVERLAP,
    CHUNK_TOKENS,
    Vector,
    chunk_text,
    entry_vector,
    windows,
    word_spans,
)
from memlane.embed.factory import get_embedder
from memlane.embed.profiles import DEFAULT_PROFILE, PROFILES, Profile, get_profile

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
