"""Chunking windows and the entry vector: pure functions, no model."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlane.embed import CHUNK_OVERLAP, CHUNK_TOKENS, chunk_text, entry_vector, windows
from memlane.embed import word_spans as spans_of


def test_the_design_numbers() -> None:
    assert (CHUNK_TOKENS, CHUNK_OVERLAP) == (400, 100)


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (0, [(0, 0)]),
        (1, [(0, 1)]),
        (400, [(0, 400)]),
        (401, [(0, 400), (300, 401)]),
        (700, [(0, 400), (300, 700)]),
        (701, [(0, 400), (300, 700), (600, 701)]),
        (1000, [(0, 400), (300, 700), (600, 1000)]),
    ],
)
def test_windows(count: int, expected: list[tuple[int, int]]) -> None:
    assert windows(count) == expected


@given(st.integers(0, 5000), st.integers(1, 500), st.data())
def test_windows_cover_everything_with_the_overlap(
    count: int, size: int, data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    found = windows(count, size, overlap)
    assert found[0][0] == 0 and found[-1][1] == count
    assert all(0 < end - start <= size for start, end in found if count)
    for (a_start, a_end), (b_start, _) in itertools.pairwise(found):
        assert a_end - b_start == overlap
        assert b_start > a_start


@pytest.mark.parametrize(("size", "overlap"), [(10, 10), (10, -1), (0, 0)])
def test_bad_window_shapes_are_refused(size: int, overlap: int) -> None:
    with pytest.raises(ValueError, match="overlap"):
        windows(100, size, overlap)


def test_short_text_is_one_unchanged_chunk() -> None:
    text = "  Some   words,\n kept exactly as written.  "
    assert chunk_text(text, spans_of(text)) == [text]


def test_long_text_windows_share_one_hundred_words() -> None:
    words = [f"w{i}" for i in range(900)]
    text = "\n".join(" ".join(words[i : i + 7]) for i in range(0, len(words), 7))
    chunks = chunk_text(text, spans_of(text))
    assert [c.split() for c in chunks] == [words[0:400], words[300:700], words[600:900]]
    assert all(c in text for c in chunks)
    assert len(set(chunks[0].split()) & set(chunks[1].split())) == 100


def test_custom_window_and_overlap() -> None:
    text = "a b c d e f g"
    assert chunk_text(text, spans_of(text), size=3, overlap=1) == ["a b c", "c d e", "e f g"]


def test_entry_vector_is_the_normalised_mean() -> None:
    vectors = np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float32)
    entry = entry_vector(vectors)
    assert entry.dtype == np.float32
    assert np.allclose(entry, [2**-0.5, 2**-0.5, 0])
    assert np.allclose(entry_vector(vectors[:1]), [1, 0, 0])


def test_entry_vector_of_opposite_chunks_falls_back_to_the_first() -> None:
    vectors = np.array([[1, 0], [-1, 0]], dtype=np.float32)
    assert np.array_equal(entry_vector(vectors), [1, 0])


def test_entry_vector_needs_vectors() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        entry_vector(np.zeros((0, 3), dtype=np.float32))
