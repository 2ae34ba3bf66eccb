"""When recall says that nothing relevant was found instead of filling its limit.

Fusion scores are relative (each lane's min-max over its own pool), so the best of an
unrelated store still scores 1. The vector lane's cosine is absolute: a query whose
nearest memory is far from it has no answer in the store. A query that names someone
or something no memory mentions (another person, another project's file) is more
likely asked of the wrong store, and must be nearer still to be answered (an
explicit read: a hook's gate weighs the prompt's names itself, see services.recall).

Measured with `memlane eval locomo`, where each conversation's store is also asked
every other conversation's questions (see `off_topic` there).
"""

from __future__ import annotations

import msgspec

# How much nearer the best match must be when the query names what no memory mentions.
# On LoCoMo (`memlane eval locomo --grid unknown_name_margin=0.3,0.4,0.5 --objective
# silence`) every held-out fold chose the largest: conversations of one genre are alike
# in meaning, and their people's names are what tells another conversation's questions
# apart. A coding agent's questions name tools, cards and places their memories need
# not ("Can I store a Visa card number?" against a rule on card numbers),
# so the margin is the grid's smallest, which answers those and still silences most of
# LoCoMo's off-topic questions.
UNKNOWN_NAME_MARGIN = 0.3


class Evidence(msgspec.Struct, frozen=True):
    """How sure recall is that the store holds an answer, and the floor it had to reach.

    `similarity`: the cosine of the query's nearest memory the filters let through
    (None: no vector lane, so no floor applies). `unknown`: names the query gives
    that no memory it may see mentions. `floor`: what `similarity` had to reach
    (None: no floor).
    """

    similarity: float | None
    floor: float | None
    unknown: tuple[str, ...] = ()
    # A memory holds every word of the query: evidence whatever the cosine ("how do we
    # build the web UI assets?" and a note on building the web UI's assets with Vite).
    worded: bool = False
    # The query names a time ("anything notable in May 2025?") and memories lie in it:
    # evidence too, unless the query also names what no memory mentions.
    dated: bool = False

    @property
    def below(self) -> bool:
        """True when the nearest memory is less alike than the floor."""
        if self.similarity is None or self.floor is None:
            return False
        return self.similarity < self.floor

    @property
    def silent(self) -> bool:
        """True when nothing in the store is near enough to answer."""
        return self.below and not (self.worded or self.dated)

    def reason(self) -> str:
        """One line saying why recall answered with nothing (or how near it came)."""
        if self.similarity is None:
            return "no vector lane: no relevance floor applies"
        line = f"the nearest memory is {self.similarity:.3f} alike"
        if self.floor is not None:
            relation = "below" if self.below else "at or above"
            line += f", {relation} the floor {self.floor:.3f}"
        if self.worded:
            line += ", but a memory holds every word of the query"
        elif self.dated:
            line += ", but memories lie in the time the query names"
        if self.unknown:
            line += f" (raised: no memory mentions {', '.join(self.unknown)})"
        return line

    def to_json(self) -> dict[str, object]:
        """The evidence as JSON: the nearest memory's similarity, the floor, the names no
        memory mentions, the other evidence found below the floor, and the verdict."""
        return {
            "similarity": None if self.similarity is None else round(self.similarity, 6),
            "floor": None if self.floor is None else round(self.floor, 6),
            "unknown_names": list(self.unknown),
            "worded": self.worded,
            "dated": self.dated,
            "reason": self.reason(),
        }


def floor_for(
    min_score: float | None, unknown: tuple[str, ...], margin: float = UNKNOWN_NAME_MARGIN
) -> float | None:
    """The similarity the nearest memory must reach: `min_score` (None or 0: no floor),
    `raised` when the query names what no memory mentions."""
    if not min_score:
        return None
    return raised(min_score, margin) if unknown else min_score


def raised(min_score: float, margin: float = UNKNOWN_NAME_MARGIN) -> float:
    """The floor for a query naming what no memory mentions: `min_score` plus `margin`,
    but never past halfway from `min_score` to 1 (a floor of 1 would refuse every such
    query, whatever the store holds)."""
    return min(min_score + margin, (1.0 + min_score) / 2)


def judge(
    similarity: float | None,
    min_score: float | None,
    unknown: tuple[str, ...],
    margin: float = UNKNOWN_NAME_MARGIN,
) -> Evidence:
    """The evidence of one query (see Evidence)."""
    return Evidence(similarity, floor_for(min_score, unknown, margin), unknown)
