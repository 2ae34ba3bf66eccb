"""Near-duplicates and contradictions among a new memory's neighbours: pure decisions.

The caller gathers the neighbours (same scope, kind and visibility; live) with their
cosine when vectors exist; this module only decides.

- A neighbour is a near-duplicate when the texts are alike (string similarity >=
  `string`) or their vectors are (cosine >= `vector`).
- A near-duplicate whose negation polarity agrees is the same fact restated: the
  existing memory is refreshed instead of a row being added.
- One whose polarity disagrees ("always X" / "never X") is a contradiction: both stay.
- Otherwise neighbours with cosine in [`conflict`, `vector`) are potential conflicts,
  reported with the new memory.

Numbers spelled out compare as the figures they name: "retry five times" restates
"retry 5 times", and "retry 3 times" still says something else.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from enum import StrEnum

import msgspec

from memlane.write.settings import Thresholds

DEFAULTS = Thresholds()


class Neighbour(msgspec.Struct, frozen=True):
    """A live memory a new one may duplicate or contradict."""

    id: str
    text: str  # what its vectors describe: title (when not just the opening) and body
    cosine: float | None = None  # to the new memory; None without vectors


class Verdict(StrEnum):
    NEW = "new"
    REFRESH = "refresh"
    CONTRADICTION = "contradiction"


class Decision(msgspec.Struct, frozen=True):
    verdict: Verdict
    target: str | None = None  # the memory refreshed or contradicted
    similarity: float = 0.0  # how alike the target is (the larger of text and cosine)
    conflicts: tuple[tuple[str, float], ...] = ()  # (id, cosine) in the band, best first


NEW = Decision(Verdict.NEW)

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_FIGURE = re.compile(r"\d+(?:[.,:/]\d+)*")
# Words that turn a statement around. "n't" endings count too (see is_negative).
NEGATIONS = frozenset("not no never none nothing nobody nowhere neither nor cannot without".split())
# Words whose presence changes no fact ("use uv for all installs" restates "use uv for
# installs").
_FUNCTION_WORDS = frozenset(
    "a an the of to for in on at by with from as and or but so it its it's is are was were "
    "be been this that these those all any some very just also really".split()
)
# Words that only say how firmly a statement holds: "always run X" restates "run X".
# Left out of the polarity-neutral text so "always X" and "never X" compare as alike.
_EMPHASIS = frozenset("always do does did must should".split())


# Spelled-out whole numbers read as figures: the clear cases only. "a dozen", "couple",
# ordinals and fractions stay words: their value depends on who says them.
_UNITS = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    word: 10 * value
    for value, word in enumerate(
        "twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2
    )
}
_SCALES = {"hundred": 100, "thousand": 1000}
_SMALL = (
    rf"(?:(?:{'|'.join(_TENS)})(?:[- ](?:{'|'.join(list(_UNITS)[1:10])}))?"
    rf"|{'|'.join(sorted(_UNITS, key=len, reverse=True))})"
)
_SPELLED = re.compile(
    rf"\b(?:(?P<count>{_SMALL}|an?)\s+(?P<scale>{'|'.join(_SCALES)})"
    rf"(?:\s+(?:and\s+)?(?P<rest>{_SMALL}))?|(?P<small>{_SMALL}))\b(?![-'’]\w)",
    re.IGNORECASE,
)
# "the one in jobs", "which one", "no one": a pronoun after these, not a count.
_BEFORE_PRONOUN_ONE = frozenset("the this that which each every any no another some".split())


def words(text: str) -> list[str]:
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


@functools.lru_cache(maxsize=4096)  # a batch compares each text with many others
def numerals(text: str) -> str:
    """The text with its spelled-out whole numbers as digits ("five times" gives
    "5 times", "twenty-five" 25, "a hundred" 100, "two thousand" 2000)."""
    return _SPELLED.sub(lambda m: _figure(m, text), text)


def _figure(match: re.Match[str], text: str) -> str:
    if match["small"] is not None:
        before = words(text[: match.start()])[-1:]
        pronoun = match["small"].lower() == "one" and set(before) & _BEFORE_PRONOUN_ONE
        return match[0] if pronoun else str(_small(match["small"]))
    count = match["count"].lower()
    value = (1 if count in ("a", "an") else _small(count)) * _SCALES[match["scale"].lower()]
    return str(value + (_small(match["rest"]) if match["rest"] else 0))


def _small(spelled: str) -> int:
    """The value of a number below a hundred, spelled out ("forty-two" is 42)."""
    return sum(_TENS.get(w, _UNITS.get(w, 0)) for w in re.split(r"[- ]", spelled.lower()))


@functools.lru_cache(maxsize=4096)
def is_negative(text: str) -> bool:
    """Whether the statement is negated: an odd number of negations ("not never" is
    a double negative and reads as positive)."""
    count = sum(1 for w in words(text) if w in NEGATIONS or w.endswith("n't"))
    return count % 2 == 1


@functools.lru_cache(maxsize=4096)
def neutral(text: str) -> str:
    """The text without its negations and emphasis: what it is about, not which way."""
    kept = (w for w in words(text) if w not in NEGATIONS and w not in _EMPHASIS)
    return " ".join(w[:-3] if w.endswith("n't") else w for w in kept)


def text_similarity(a: str, b: str) -> float:
    """0..1: rapidfuzz's normalized Indel similarity of the lowercased, punctuation-free
    texts (the shape of difflib's ratio, computed faster).
    Imported here: loading rapidfuzz is slow enough that no read should pay for it."""
    from rapidfuzz import fuzz
    from rapidfuzz.utils import default_process

    return fuzz.ratio(a, b, processor=default_process) / 100.0


@functools.lru_cache(maxsize=4096)
def figures(text: str) -> tuple[str, ...]:
    """The numbers a text states, in order ("30s", "v1.2", "10:30" give 30, 1.2, 10:30)."""
    return tuple(_FIGURE.findall(text))


def decide(
    text: str, neighbours: Sequence[Neighbour], thresholds: Thresholds = DEFAULTS
) -> Decision:
    """What to do with a new memory of `text` among its neighbours. Both sides are
    compared with their numbers as figures (see numerals)."""
    text = numerals(text)
    negative, stated = is_negative(text), figures(text)
    best: tuple[float, bool, Neighbour] | None = None
    changed: list[tuple[str, float]] = []
    for n in (msgspec.structs.replace(n, text=numerals(n.text)) for n in neighbours):
        flipped = negative != is_negative(n.text)
        alike = _alike(text, n, flipped, thresholds)
        if alike is None:
            continue
        similarity, says_more = alike
        # Trigger: a near-duplicate that states other numbers ("timeout 30s" / "timeout
        # 60s": 0.96 alike) or, alike only as a string, other words ("target a" /
        # "target b": 0.88). Why: a refresh keeps the old text, so what the new one
        # says would be lost. Outcome: both stay; the old one is a potential conflict.
        if figures(n.text) != stated or says_more:
            changed.append((n.id, round(similarity, 4)))
        elif best is None or (similarity, not flipped) > best[:2]:
            best = (similarity, not flipped, n)  # ties go to the same polarity: a refresh
    if best is not None:
        similarity, agrees, target = best
        verdict = Verdict.REFRESH if agrees else Verdict.CONTRADICTION
        return Decision(verdict, target.id, round(similarity, 4))
    best_of: dict[str, float] = {}
    for memory_id, similarity in (*changed, *_conflicts(neighbours, thresholds)):
        best_of[memory_id] = max(similarity, best_of.get(memory_id, 0.0))
    conflicts = sorted(best_of.items(), key=lambda pair: -pair[1])
    return Decision(Verdict.NEW, conflicts=tuple(conflicts))


def _alike(text: str, n: Neighbour, flipped: bool, t: Thresholds) -> tuple[float, bool] | None:
    """How alike a near-duplicate is, and whether it is one only as a string while the
    new text has words the old lacks (None: not a near-duplicate).

    Trigger: the polarities disagree. Why: "always run migrations before tests" and
    "never run migrations before tests" differ in the very word that matters, so
    their raw similarity (0.84) falls short of 0.85 and their cosine often does too.
    Outcome: they are compared without negations and emphasis, where they are equal.
    """
    cosine = n.cosine if n.cosine is not None else 0.0
    ours, theirs = (neutral(text), neutral(n.text)) if flipped else (text, n.text)
    string = text_similarity(ours, theirs)
    if cosine >= t.vector:
        return max(string, cosine), False
    if string >= t.string:
        return string, bool(new_words(ours, theirs))
    return None


def new_words(text: str, old: str) -> frozenset[str]:
    """The words of `text` that `old` lacks, compared by crude stem ("deploys" is
    "deploy"), function words aside."""
    return _stems(text) - _stems(old)


@functools.lru_cache(maxsize=4096)
def _stems(text: str) -> frozenset[str]:
    out = set()
    for word in words(text):
        word = word.removesuffix("'s")
        if word in _FUNCTION_WORDS:
            continue
        for suffix in ("ing", "ed", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        out.add(word.removesuffix("e"))  # "freezes", "freeze", "freezing": "freez"
    return frozenset(out)


def _conflicts(neighbours: Sequence[Neighbour], t: Thresholds) -> tuple[tuple[str, float], ...]:
    band = [
        (n.id, round(n.cosine, 4))
        for n in neighbours
        if n.cosine is not None and t.conflict <= n.cosine < t.vector
    ]
    return tuple(sorted(band, key=lambda pair: -pair[1]))


# Trust moves: restating or supporting a memory raises its trust,
# contradicting it lowers it (both sides of a contradiction).
TRUST_CORROBORATED = 0.05
TRUST_CONTRADICTED = -0.10


def clamp(value: float) -> float:
    """Trust stays in [0, 1] whatever is added or taken."""
    return min(1.0, max(0.0, value))
