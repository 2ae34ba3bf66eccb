"""What each secret detector needs before it can fire. Pure functions.

A detector fires only on a text that holds something it reads: a label word, a vendor
prefix, `://` or `@`, a long run of token characters, a `:` or `=` after a key. A `Need`
writes that down as patterns, every one of which such a text matches somewhere; a text
that misses one cannot give the detector a finding, so the detector is not run on it.
`one_scan` joins the detectors' first patterns into one, so that a text none of them
can fire on (most memories) is ruled out by a single search.

Each need is derived from its detector's patterns and written beside them: a literal
every match holds, read with the detector's own flags. Where a detector lower-cases
words with `str.lower` instead (labels, key names), its need reads the same literals
with IGNORECASE, which folds every character `str.lower` maps to a letter of them
(tests check this over all of Unicode).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

Span = tuple[int, int, str]


class AtWord(str):
    r"""A pattern that matches only where no word character (`[^\W_]`) stands before it,
    written without that lookbehind: one scan tries such patterns at word starts only."""


_AT_WORD = r"(?<![^\W_])"


def _compile(pattern: Pattern) -> re.Pattern[str]:
    return re.compile("|".join(_alone(alternative) for alternative in _alternatives(pattern)))


Pattern = str | tuple[str, ...]  # a tuple: any of its patterns


def _alternatives(pattern: Pattern) -> tuple[str, ...]:
    return pattern if isinstance(pattern, tuple) else (pattern,)


def _alone(pattern: str) -> str:
    return f"{_AT_WORD}(?:{pattern})" if isinstance(pattern, AtWord) else pattern


class Need:
    """Patterns that a text must all match somewhere for a detector to fire on it."""

    __slots__ = ("_compiled", "patterns")

    def __init__(self, *patterns: Pattern) -> None:
        self.patterns = patterns
        self._compiled = tuple(_compile(pattern) for pattern in patterns)

    def met(self, text: str) -> bool:
        return all(pattern.search(text) is not None for pattern in self._compiled)


class Detector(NamedTuple):
    find: Callable[[str], Iterator[Span]]
    need: Need


def one_scan(needs: Iterable[Need]) -> re.Pattern[str]:
    """One pattern that matches a text wherever some need's first pattern does: a text
    it misses meets no need.

    Trigger: a search tries every alternative at every character. Why: most characters
    stand inside words, where a pattern that starts a word fails on its lookbehind.
    Outcome: the patterns that start words share one lookbehind; the others (most of
    them led by a literal, which a search skips at once) stand beside it."""
    firsts = [alt for need in needs for alt in _alternatives(need.patterns[0])]
    at_word = [pattern for pattern in firsts if isinstance(pattern, AtWord)]
    anywhere = [pattern for pattern in firsts if not isinstance(pattern, AtWord)]
    return re.compile("|".join([f"{_AT_WORD}(?:{'|'.join(at_word)})", *anywhere]))


def run(detectors: Iterable[Detector], text: str) -> Iterator[Span]:
    """The findings of the detectors whose needs the text meets."""
    for detector in detectors:
        if detector.need.met(text):
            yield from detector.find(text)


def any_of(words: Iterable[str]) -> str:
    """An alternation of literal words, as a prefix tree: `pass(?:word|wd)?` rather than
    `pass|password|passwd`, so that a search tries a few branches at each character, not
    every word."""
    return any_sequence([re.escape(char) for char in word] for word in words)


def any_sequence(sequences: Iterable[Sequence[str]]) -> str:
    """An alternation of sequences of patterns, as a prefix tree (see `any_of`)."""
    tree: _Tree = {}
    for sequence in sequences:
        node = tree
        for atom in sequence:
            node = node.setdefault(atom, {})
        node[""] = {}
    return _branches(tree)


_Tree = dict[str, "_Tree"]


def _branches(node: _Tree) -> str:
    ends = "" in node
    parts = [atom + _branches(child) for atom, child in sorted(node.items()) if atom]
    if not parts:
        return ""
    body = parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"
    return f"(?:{body})?" if ends else body


# The characters IGNORECASE folds into each ASCII letter: its two cases, and for `i`, `k`
# and `s` also `İ` and `ı`, the Kelvin sign, the long `ſ`.
_FOLDS = {letter: letter + letter.upper() for letter in "abcdefghijklmnopqrstuvwxyz"}
_FOLDS |= {"i": "iI\u0130\u0131", "k": "kK\u212a", "s": "sS\u017f"}


def led(word: str) -> str:
    """A word that IGNORECASE reads, as alternatives each led by a literal character
    (`c(?i:ookie)|C(?i:ookie)`): a search skips a literal at once, and steps into an
    IGNORECASE group at every character."""
    first, rest = word[0], re.escape(word[1:])
    if first.lower() not in _FOLDS:
        return f"(?i:{re.escape(word)})"
    return "|".join(f"{re.escape(case)}(?i:{rest})" for case in _FOLDS[first.lower()])
