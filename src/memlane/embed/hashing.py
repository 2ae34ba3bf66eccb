"""The `hash` profile: deterministic feature hashing, offline and identical in every process.

Features of the lowercased text: words, word bigrams and character trigrams of each word
(padded with a space on both sides, so "sits" and "sitting" share " si", "sit"). Each
feature is hashed with blake2b (never Python's salted `hash`) to a bucket and a sign; the
signed, weighted counts are the vector. Lexical, not semantic: good enough to test ranking
code, no substitute for a model.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections import defaultdict
from functools import lru_cache

import numpy as np

from memlane.embed.base import Embedder
from memlane.embed.chunk import Vectors

_WORD = re.compile(r"\w+")
_PERSON = b"memlane-fh1"

#: Feature weights. Whole words carry the meaning; bigrams add word order; trigrams only
#: bridge inflections, and being many per word they would drown the words at weight 1.
WORD_WEIGHT = 1.0
BIGRAM_WEIGHT = 0.5
TRIGRAM_WEIGHT = 0.25


class HashEmbedder(Embedder):
    batch_size = 256

    def embed_batch(self, texts: list[str]) -> Vectors:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            buckets, values = _parts(text, self.dimension)
            np.add.at(out[row], buckets, values)
            if not out[row].any():
                # Trigger: signed features that cancel exactly. Why: a zero vector has no
                # direction. Outcome: one fixed bucket, still deterministic.
                out[row, _slot("\0", self.dimension)[0]] = 1.0
        return out


def features(text: str) -> dict[str, float]:
    """Weighted features of `text`: `w:` words, `b:` word bigrams, `t:` character trigrams."""
    lowered = text.lower()
    words = _WORD.findall(lowered) or lowered.split()
    counts: defaultdict[str, float] = defaultdict(float)
    for word in words:
        counts[f"w:{word}"] += WORD_WEIGHT
        padded = f" {word} "
        for i in range(len(padded) - 2):
            counts[f"t:{padded[i : i + 3]}"] += TRIGRAM_WEIGHT
    for first, second in itertools.pairwise(words):
        counts[f"b:{first} {second}"] += BIGRAM_WEIGHT
    return counts


def _parts(text: str, dimension: int) -> tuple[list[int], list[float]]:
    """The buckets and signed weights of `features(text)`, each word's own features
    (the word and its trigrams) looked up once per distinct word.

    Trigger: every text embedded. Why: hashing and slotting each trigram of each word
    was most of the embedder's time, and words recur. Outcome: the same vector (every
    weight a multiple of 1/4, so sums in any order are exact), several times faster.
    """
    lowered = text.lower()
    words = _WORD.findall(lowered) or lowered.split()
    buckets: list[int] = []
    values: list[float] = []
    for word in words:
        word_buckets, word_values = _word_parts(word, dimension)
        buckets += word_buckets
        values += word_values
    for first, second in itertools.pairwise(words):
        bucket, sign = _slot(f"b:{first} {second}", dimension)
        buckets.append(bucket)
        values.append(sign * BIGRAM_WEIGHT)
    return buckets, values


@lru_cache(maxsize=1 << 16)
def _word_parts(word: str, dimension: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """The buckets and signed weights of one word's own features."""
    padded = f" {word} "
    slots = [(_slot(f"w:{word}", dimension), WORD_WEIGHT)]
    slots += [
        (_slot(f"t:{padded[i : i + 3]}", dimension), TRIGRAM_WEIGHT) for i in range(len(padded) - 2)
    ]
    return (
        tuple(bucket for (bucket, _), _ in slots),
        tuple(sign * weight for (_, sign), weight in slots),
    )


@lru_cache(maxsize=1 << 16)
def _slot(feature: str, dimension: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8, person=_PERSON).digest()
    value = int.from_bytes(digest, "little")
    return value % dimension, 1.0 if value >> 63 else -1.0
