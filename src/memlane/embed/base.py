"""The Embedder base class: a backend implements `embed_batch`; everything else is here.

The base class owns the guarantees callers rely on, whatever the backend: inputs are
non-empty text, batches stay within `batch_size`, every returned row has the profile's
dimension, is finite float32 and has unit L2 norm.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

from memlane.embed.profiles import Profile
from memlane.errors import Invalid, Unavailable

#: Window and overlap in tokens. The overlap keeps a sentence that straddles
#: a boundary whole in at least one chunk.
CHUNK_TOKENS = 400
CHUNK_OVERLAP = 100

if TYPE_CHECKING:  # numpy loads with the first embedding: naming the type needs none
    from memlane.embed.chunk import Span, Vector, Vectors


class Embedded(msgspec.Struct, frozen=True, eq=False):
    """One text embedded for storage: its chunks, one vector per chunk, and the entry vector."""

    chunks: tuple[str, ...]
    vectors: Vectors
    entry: Vector


class Embedder(ABC):
    """Turns text into unit vectors of `profile.dimension` float32 values."""

    #: Most texts handed to one `embed_batch` call.
    batch_size: int = 32

    def __init__(self, profile: Profile) -> None:
        self.profile = profile

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.profile.signature}>"

    @property
    def dimension(self) -> int:
        return self.profile.dimension

    @abstractmethod
    def embed_batch(self, texts: list[str]) -> Vectors:
        """Embed 1..batch_size checked texts: an (n, dimension) array, row i for texts[i].

        Rows need not be normalised; the base class normalises and checks them.
        """

    def load(self) -> None:
        """Load what the first call would load (a no-op unless the backend has a model).

        Lets a caller fail fast on a missing or refused model, or pay the cold start early.
        """
        return None

    def embed(self, text: str) -> Vector:
        """One text -> one unit vector of shape (dimension,)."""
        row: Vector = self.embed_many([text])[0]
        return row

    def embed_many(self, texts: Sequence[str]) -> Vectors:
        """Texts -> an (n, dimension) array of unit rows, in the order given."""
        import numpy as np

        checked = _check_texts(texts)
        out = np.empty((len(checked), self.dimension), dtype=np.float32)
        # Trigger: any multi-text call. Why: a batch is padded to its longest text, so
        # batching texts of similar length wastes less work. Outcome: rows are computed in
        # length order and written back to their original positions.
        order = sorted(range(len(checked)), key=lambda i: len(checked[i]))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = self._checked(self.embed_batch([checked[i] for i in rows]), len(rows))
        return out

    def token_spans(self, text: str) -> list[Span]:
        """Character spans of the tokens chunking counts: whitespace words by default."""
        from memlane.embed.chunk import word_spans

        return word_spans(text)

    @property
    def chunk_tokens(self) -> int:
        """Window size for chunking: CHUNK_TOKENS, or less when the model reads fewer."""
        limit = self.profile.max_tokens
        return CHUNK_TOKENS if limit is None else min(CHUNK_TOKENS, limit)

    def chunks(self, text: str) -> list[str]:
        """`text` cut into overlapping windows of `chunk_tokens` tokens (itself if short)."""
        from memlane.embed.chunk import chunk_text

        size = self.chunk_tokens
        return chunk_text(text, self.token_spans(text), size, min(CHUNK_OVERLAP, size // 2))

    def embed_document(self, text: str) -> Embedded:
        """Chunk `text`, embed every chunk, and derive the entry vector."""
        from memlane.embed.chunk import entry_vector

        chunks = self.chunks(text)
        vectors = self.embed_many(chunks)
        return Embedded(tuple(chunks), vectors, entry_vector(vectors))

    def _checked(self, vectors: object, count: int) -> Vectors:
        import numpy as np

        expected = (count, self.dimension)
        if not isinstance(vectors, np.ndarray) or vectors.shape != expected:
            shape = getattr(vectors, "shape", type(vectors).__name__)
            raise Unavailable(
                f"embedder {self.profile.signature} returned {shape}, expected {expected}"
            )
        rows = vectors.astype(np.float32, copy=False)
        if not np.isfinite(rows).all():
            raise Unavailable(f"embedder {self.profile.signature} returned non-finite values")
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        if not (norms > 0.0).all():
            raise Unavailable(f"embedder {self.profile.signature} returned a zero vector")
        unit: Vectors = (rows / norms).astype(np.float32, copy=False)
        return unit


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise Invalid("embed_many takes a list of texts, not one string")
    checked = list(texts)
    for i, text in enumerate(checked):
        if not isinstance(text, str):
            raise Invalid(f"text {i} to embed is {type(text).__name__}, not str")
        if not text.strip():
            raise Invalid(f"text {i} to embed is empty")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise Invalid(f"text {i} to embed is not valid Unicode (lone surrogate)") from None
    return checked
