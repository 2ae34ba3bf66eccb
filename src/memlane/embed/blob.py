"""The stored form of a vector: float32 little-endian bytes."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def to_blob(vector: npt.NDArray[np.float32]) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blobs(blobs: list[bytes], dim: int) -> npt.NDArray[np.float32]:
    """Blobs of `dim` float32 values each -> an (n, dim) matrix."""
    raw = np.frombuffer(b"".join(blobs), dtype="<f4").astype(np.float32, copy=False)
    return raw.reshape(len(blobs), dim)
