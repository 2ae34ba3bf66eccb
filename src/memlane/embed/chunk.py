"""Chunking long texts into overlapping token windows, and the entry vector of a memory.

Pure functions of values: a text and its token spans in, chunk texts out. The spans come
from the profile's own tokenizer (MiniLM's WordPiece) or from whitespace words (hash,
http), so the caller decides what a "token" is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from memlane.embed.base import CHUNK_OVERLAP, CHUNK_TOKENS

Span = tuple[int, int]
Vector = npt.NDArray[np.float32]
Vectors = npt.NDArray[np.float32]  # (n, dimension) rows

_WORD = re.compile(r"\S+")


def word_spans(text: str) -> list[Span]:
    """Character spans of the whitespace-separated words of `text`."""
    return [m.span() for m in _WORD.finditer(text)]


def windows(count: int, size: int = CHUNK_TOKENS, overlap: int = CHUNK_OVERLAP) -> list[Span]:
    """Token index ranges [start, end) covering `count` tokens, `size` wide, `overlap` shared.

    The last window ends at `count` and may be shorter; one window when `count <= size`.
    """
    if not 0 <= overlap < size:
        raise ValueError(f"need 0 <= overlap < size, got overlap={overlap}, size={size}")
    spans: list[Span] = []
    start = 0
    while True:
        end = min(start + size, count)
        spans.append((start, end))
        if end >= count:
            return spans
        start += size - overlap


def chunk_text(
    text: str, spans: Sequence[Span], size: int = CHUNK_TOKENS, overlap: int = CHUNK_OVERLAP
) -> list[str]:
    """The chunk texts of `text` given its token `spans` (character offsets, in order).

    A text of at most `size` tokens is its own single chunk, unchanged; a longer one is cut
    into windows of `size` tokens sharing `overlap`, each from its first token's start to its
    last token's end.
    """
    if len(spans) <= size:
        return [text]
    return [text[spans[a][0] : spans[b - 1][1]] for a, b in windows(len(spans), size, overlap)]


def entry_vector(vectors: npt.NDArray[np.float32]) -> Vector:
    """A memory's one vector: the L2-normalised mean of its chunk vectors (n, dim) -> (dim,)."""
    if vectors.ndim != 2 or vectors.shape[0] == 0:
        raise ValueError(f"need a non-empty (n, dim) array, got shape {vectors.shape}")
    mean: Vector = vectors.astype(np.float32).mean(axis=0, dtype=np.float32)
    norm = float(np.linalg.norm(mean))
    if not norm > 0.0:
        # Trigger: chunk vectors that cancel out exactly. Why: dividing by zero would store
        # NaNs. Outcome: fall back to the first chunk, which is already a unit vector.
        first: Vector = vectors[0].astype(np.float32)
        return first
    return mean / np.float32(norm)
