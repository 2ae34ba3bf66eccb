"""Maximal Marginal Relevance: a diverse order of ranked candidates. Pure.

After scoring, the best candidate goes first; each next pick maximizes
    λ · score(c) − (1 − λ) · max similarity(c, already picked)
so a cluster of paraphrases cannot crowd out a distinct fact. λ = 1 keeps the
score order; λ = 0 only seeks difference.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from memlane.errors import Invalid
from memlane.retrieve.score import Scored
from memlane.words import jaccard, tokens

T = TypeVar("T")

# Mostly relevance, enough diversity to break up paraphrase clusters.
MMR_LAMBDA = 0.7


def mmr(
    items: Sequence[T],
    score: Callable[[T], float],
    similarity: Callable[[T, T], float],
    lambda_: float = MMR_LAMBDA,
    limit: int | None = None,
) -> list[T]:
    """Re-order `items` (scores in [0, 1]) by MMR, keeping the first `limit` picks.

    Ties go to the item given first, so a score-sorted input stays stable.
    """
    if not 0.0 <= lambda_ <= 1.0:
        raise Invalid(f"MMR lambda must lie in [0, 1], not {lambda_!r}")
    wanted = len(items) if limit is None else min(max(0, limit), len(items))
    left = list(range(len(items)))
    # Each candidate's highest similarity to anything picked so far: updated with
    # the newest pick only, so a pass costs one similarity per candidate.
    nearest = [0.0] * len(items)
    picked: list[T] = []
    while len(picked) < wanted:
        value = [lambda_ * score(items[i]) - (1.0 - lambda_) * nearest[i] for i in left]
        best = left.pop(value.index(max(value)))
        picked.append(items[best])
        for i in left:
            nearest[i] = max(nearest[i], similarity(items[i], items[best]))
    return picked


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0.0 when either vector is all zeros."""
    if len(a) != len(b):
        raise Invalid(f"cannot compare vectors of {len(a)} and {len(b)} dimensions")
    norm = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def similarity_by_id(
    vectors: Mapping[str, Sequence[float]], texts: Mapping[str, str]
) -> Callable[[str, str], float]:
    """Cosine when both memories have a vector, else Jaccard on their tokens.

    Token sets are computed once per id, on first use.
    """
    token_sets: dict[str, frozenset[str]] = {}

    def token_set(memory_id: str) -> frozenset[str]:
        if memory_id not in token_sets:
            token_sets[memory_id] = tokens(texts.get(memory_id, ""))
        return token_sets[memory_id]

    def similarity(a: str, b: str) -> float:
        va, vb = vectors.get(a), vectors.get(b)
        if va is not None and vb is not None:
            return cosine(va, vb)
        return jaccard(token_set(a), token_set(b))

    def by_text(a: str, b: str) -> float:
        return jaccard(token_set(a), token_set(b))

    return similarity if vectors else by_text


def diversify(
    scored: Sequence[Scored],
    vectors: Mapping[str, Sequence[float]] | None = None,
    lambda_: float = MMR_LAMBDA,
    limit: int | None = None,
) -> list[Scored]:
    """MMR over scored recall candidates: entry vectors where known, else title and body."""
    texts = {s.record.id: f"{s.record.title}\n{s.record.body}" for s in scored}
    similar = similarity_by_id(vectors or {}, texts)
    return mmr(
        scored, lambda s: s.score, lambda a, b: similar(a.record.id, b.record.id), lambda_, limit
    )
