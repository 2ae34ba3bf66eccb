"""The `hash` profile: deterministic, normalised, lexically sensible; the unit-test embedder."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from memlane.embed import Embedder, get_embedder
from memlane.embed.hashing import features

TEXTS = [
    "The cat sits on the mat",
    "A kitten is sitting on a rug",
    "Quarterly revenue grew 5%",
    "Ünïcödé テキスト and emoji 🐈",
    "!!!",
]


@pytest.fixture(scope="module")
def hasher() -> Embedder:
    return get_embedder("hash")


def test_dimension_dtype_and_unit_norm(hasher: Embedder) -> None:
    vectors = hasher.embed_many(TEXTS)
    assert vectors.shape == (len(TEXTS), 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert hasher.dimension == hasher.profile.dimension == 384
    assert hasher.profile.signature == "hash/fh1-blake2b/384"


def test_embed_is_embed_many_row(hasher: Embedder) -> None:
    single = hasher.embed(TEXTS[1])
    assert single.shape == (384,)
    assert np.array_equal(single, hasher.embed_many(TEXTS)[1])


def test_same_vectors_in_another_process(hasher: Embedder) -> None:
    script = (
        "import json, sys\n"
        "from memlane.embed import get_embedder\n"
        "texts = json.loads(sys.stdin.read())\n"
        "print(json.dumps(get_embedder('hash').embed_many(texts).tolist()))\n"
    )
    # A different hash seed proves nothing depends on Python's salted hash().
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(TEXTS),
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    other = np.asarray(json.loads(done.stdout), dtype=np.float32)
    assert np.array_equal(other, hasher.embed_many(TEXTS))


def test_similar_texts_are_closer_than_unrelated(hasher: Embedder) -> None:
    cat, cat_again, revenue = hasher.embed_many(
        ["The cat sits on the mat", "the cat sat on the mat", "Quarterly revenue grew 5%"]
    )
    assert float(cat @ cat_again) > 0.5
    assert float(cat @ cat_again) > float(cat @ revenue) + 0.3


def test_case_does_not_matter_but_words_do(hasher: Embedder) -> None:
    upper, lower, other = hasher.embed_many(["Deploy on FRIDAY", "deploy on friday", "x y z"])
    assert np.allclose(upper, lower)
    assert float(upper @ other) < 0.5


def test_features_cover_words_bigrams_and_trigrams() -> None:
    found = features("Cat sits")
    assert found["w:cat"] == 1.0
    assert found["b:cat sits"] == 0.5
    assert found["t: si"] == found["t:sit"] == 0.25
    assert features("!!!")["w:!!!"] == 1.0


def test_vectors_are_the_signed_sums_of_the_features(hasher: Embedder) -> None:
    """Each feature's weight lands in its bucket with its sign: the vector the features
    define, however the embedder adds them up."""
    from memlane.embed.hashing import _slot

    texts = [*TEXTS, "the the the cat cat", "sitting sits sit", "a b c d e f g"]
    expected = np.zeros((len(texts), 384), dtype=np.float32)
    for row, text in enumerate(texts):
        for feature, weight in features(text).items():
            bucket, sign = _slot(feature, 384)
            expected[row, bucket] += sign * weight
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.array_equal(hasher.embed_many(texts), expected)
