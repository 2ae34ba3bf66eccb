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

    def nearer(best: int, left: list[int], nearest: list[float]) -> None:
        for i in left:
            nearest[i] = max(nearest[i], similarity(items[i], items[best]))

    picks = _picks([score(item) for item in items], nearer, lambda_, limit)
    return [items[i] for i in picks]


# Told each pick (its position), the positions left and each one's highest similarity
# to anything picked so far, it raises those to their similarity to the new pick.
Nearer = Callable[[int, list[int], list[float]], None]


def _picks(scores: Sequence[float], nearer: Nearer, lambda_: float, limit: int | None) -> list[int]:
    """The positions MMR picks, in order, from candidates with these `scores`."""
    if not 0.0 <= lambda_ <= 1.0:
        raise Invalid(f"MMR lambda must lie in [0, 1], not {lambda_!r}")
    wanted = len(scores) if limit is None else min(max(0, limit), len(scores))
    left = list(range(len(scores)))
    # Each candidate's highest similarity to anything picked so far: updated with
    # the newest pick only, so a pass costs one similarity per candidate.
    nearest = [0.0] * len(scores)
    picked: list[int] = []
    while len(picked) < wanted:
        value = [lambda_ * scores[i] - (1.0 - lambda_) * nearest[i] for i in left]
        best = left.pop(value.index(max(value)))
        picked.append(best)
        if len(picked) < wanted:  # the last pick leaves nothing to compare
            nearer(best, left, nearest)
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


def _by_words(scored: Sequence[Scored]) -> Nearer:
    """`Nearer` by Jaccard on the words of each candidate's title and body.

    Trigger: recall diversifies by text (it has no vectors at hand). Why: a recall
    compares each pick with every candidate left, hundreds of pairs, and a pair
    through the callbacks and id lookups of `mmr` and `similarity_by_id` cost more than
    the sets' overlap. Outcome: each candidate's words are read once, and a pair
    costs one `jaccard`.
    """
    words = [tokens(f"{s.record.title}\n{s.record.body}") for s in scored]

    def nearer(best: int, left: list[int], nearest: list[float]) -> None:
        chosen = words[best]
        for i in left:
            similarity = jaccard(words[i], chosen)
            if similarity > nearest[i]:
                nearest[i] = similarity

    return nearer
