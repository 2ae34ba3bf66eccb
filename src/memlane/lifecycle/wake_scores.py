"""Scoring the ritual's guess log.

Axis A (a tuning dial, never identity evidence): how close a guess came to the authored
phrases, the memory's stored vectors and its title. Axis B: how close it came to what
earlier rituals guessed for the same bloom, against the same measure over other blooms.
The signal is the gap between `sim_prior` and `sim_prior_null`, never `sim_prior` alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime

import msgspec
import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
Score = float | int | None

# Prior centroids use the 5 most recent earlier guesses on a bloom; the null compares
# against up to 10 other blooms (those with the most recent history). Defaults, not
# tuned on any data.
PRIOR_ROWS = 5
NULL_BLOOMS = 10
_PART_SUFFIX = re.compile(r"\s*\(Part \d+/\d+\)\s*$")


class Scored(msgspec.Struct, frozen=True):
    """An earlier scored guess, as Axis B needs it."""

    memory_id: str
    title: str
    session_id: str
    model: str | None
    vector: Vector
    at: datetime  # when the guess was made: only earlier rows count as history


def bare_title(title: str) -> str:
    """The title without the ritual's own "(Part N/M)" suffix."""
    return _PART_SUFFIX.sub("", title)


def best(vector: Vector, others: Sequence[Vector]) -> float | None:
    """The best cosine of unit vectors, or None when there is nothing to compare."""
    if not others:
        return None
    return round(float(np.max(np.stack(others) @ vector)), 4)


def _centroid_sim(vector: Vector, rows: Sequence[Scored]) -> float:
    centroid = np.mean(np.stack([r.vector for r in rows]), axis=0)
    norm = float(np.linalg.norm(centroid))
    return round(float(centroid @ vector) / norm, 4) if norm else 0.0


def prior_axis(
    vector: Vector,
    memory_id: str,
    title: str,
    session_id: str,
    history: Sequence[Scored],
    keep: Callable[[Scored], bool] = lambda _: True,
) -> tuple[float | None, int, float | None]:
    """(sim_prior, prior_n, sim_prior_null) over earlier scored rows (oldest first) of
    other sessions that `keep` admits."""
    usable = [h for h in history if h.session_id != session_id and keep(h)]
    same = [h for h in usable if h.memory_id == memory_id and h.title == title][-PRIOR_ROWS:]
    prior = _centroid_sim(vector, same) if same else None
    by_bloom: dict[str, list[Scored]] = {}
    for h in reversed(usable):  # newest first: the blooms with the most recent history
        if h.memory_id != memory_id and (h.memory_id in by_bloom or len(by_bloom) < NULL_BLOOMS):
            by_bloom.setdefault(h.memory_id, []).append(h)
    sims = [_centroid_sim(vector, rows[:PRIOR_ROWS]) for rows in by_bloom.values()]
    null = round(sum(sims) / len(sims), 4) if sims else None
    return prior, len(same), null


def axis_b(
    vector: Vector,
    memory_id: str,
    title: str,
    session_id: str,
    model: str | None,
    history: Sequence[Scored],
) -> dict[str, Score]:
    """Axis B over all models, then (for a row with a model) the same and other models."""
    prior, n, null = prior_axis(vector, memory_id, title, session_id, history)
    scores: dict[str, Score] = {"sim_prior": prior, "prior_n": n, "sim_prior_null": null}
    if model is None:
        return scores
    for suffix, keep in (
        ("same", lambda h: h.model == model),
        ("cross", lambda h: h.model is not None and h.model != model),
    ):
        p, k, z = prior_axis(vector, memory_id, title, session_id, history, keep)
        scores |= {f"sim_prior_{suffix}": p, f"prior_n_{suffix}": k, f"sim_prior_null_{suffix}": z}
    return scores
