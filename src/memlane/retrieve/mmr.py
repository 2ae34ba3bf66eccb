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
    picks = _picks(
        [score(item) for item in items],
        lambda i, j: similarity(items[i], items[j]),
        lambda_,
        limit,
    )
    return [items[i] for i in picks]


def _picks(
    scores: Sequence[float],
    similarity: Callable[[int, int], float],
    lambda_: float,
    limit: int | None,
) -> list[int]:
    """The positions MMR picks, in order, from candidates with these `scores` and
    `similarity` between two positions.

    Trigger: each pick. Why: a candidate's highest similarity to the picks only grows,
    so its MMR value worked out against some of them is a bound its true value cannot
    exceed; at λ near 1 the candidates far down the scores never come near the best,
    and comparing each of them with every pick (and reading their words) was most of
    the work. Outcome: the candidate with the best value (the first of equal ones) is
    brought up to date with the picks it has not met, until the best is up to date:
    then no other can beat or tie it from before it, and it is the very pick the full
    comparison makes (`max` is exact, whatever the order it meets the picks in).
    """
    if not 0.0 <= lambda_ <= 1.0:
        raise Invalid(f"MMR lambda must lie in [0, 1], not {lambda_!r}")
    wanted = len(scores) if limit is None else min(max(0, limit), len(scores))
    left = list(range(len(scores)))
    nearest = [0.0] * len(scores)  # highest similarity to the picks it has met
    met = [0] * len(scores)  # how many of the first picks that is
    picked: list[int] = []
    while len(picked) < wanted:
        while True:
            value = [lambda_ * scores[i] - (1.0 - lambda_) * nearest[i] for i in left]
            at = value.index(max(value))
            best = left[at]
            if met[best] == len(picked):
                break
            for pick in picked[met[best] :]:
                nearest[best] = max(nearest[best], similarity(best, pick))
            met[best] = len(picked)
        del left[at]
        picked.append(best)
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
    if vectors:
        texts = {s.record.id: f"{s.record.title}\n{s.record.body}" for s in scored}
        similar = similarity_by_id(vectors, texts)
        return mmr(
            scored,
            lambda s: s.score,
            lambda a, b: similar(a.record.id, b.record.id),
            lambda_,
            limit,
        )
    picks = _picks([s.score for s in scored], _by_words(scored), lambda_, limit)
    return [scored[i] for i in picks]


def _by_words(scored: Sequence[Scored]) -> Callable[[int, int], float]:
    """Jaccard on the words of two candidates' titles and bodies, by position.

    Trigger: recall diversifies by text (it has no vectors at hand). Why: a pair
    through the callbacks and id lookups of `mmr` and `similarity_by_id` cost more than
    the sets' overlap. Outcome: a candidate's words are read once, when first compared.
    """
    words: dict[int, frozenset[str]] = {}

    def of(i: int) -> frozenset[str]:
        found = words.get(i)
        if found is None:
            record = scored[i].record
            found = words[i] = tokens(f"{record.title}\n{record.body}")
        return found

    return lambda i, j: jaccard(of(i), of(j))
