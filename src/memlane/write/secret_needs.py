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
    written without that lookbehind: a scan tries such patterns at word starts only."""

    behind = r"(?<![^\W_])"


class AtToken(str):
    """A pattern that matches only where no ASCII letter or digit stands before it (as
    a vendor token starts), written without that lookbehind."""

    behind = r"(?<![A-Za-z0-9])"


def _joined(alternatives: Iterable[str]) -> str:
    """Alternatives as one pattern: those that start words (or tokens) share one
    lookbehind, as a group; the others stand beside it, each led by what it starts with.

    Trigger: a search tries every alternative at every character. Why: most characters
    stand inside words, where a pattern that starts a word fails on its lookbehind, and a
    search skips an alternative led by a literal at once. Outcome: a few steps a
    character."""
    alternatives = list(alternatives)
    out = []
    for kind in (AtWord, AtToken):
        group = [pattern for pattern in alternatives if isinstance(pattern, kind)]
        out += [f"{kind.behind}(?:{'|'.join(group)})"] if group else []
    return "|".join(out + [p for p in alternatives if not isinstance(p, (AtWord, AtToken))])


def _source(pattern: Pattern) -> str:
    source = _joined(_alternatives(pattern))
    return _SOURCES.setdefault(source, source)


def _compiled(source: str) -> re.Pattern[str]:
    found = _COMPILED.get(source)
    if found is None:
        found = _COMPILED[source] = re.compile(source)
    return found


# Needs that share a pattern (a label, a key name) share one source string and its
# compiled form, so that a text is searched for it once (see `run`). A pattern is
# compiled when a need first searches with it: a process that screens a few texts
# never compiles most of them.
_SOURCES: dict[str, str] = {}
_COMPILED: dict[str, re.Pattern[str]] = {}


Pattern = str | tuple[str, ...]  # a tuple: any of its patterns


def _alternatives(pattern: Pattern) -> tuple[str, ...]:
    return pattern if isinstance(pattern, tuple) else (pattern,)


class Need:
    """Patterns that a text must all match somewhere for a detector to fire on it."""

    __slots__ = ("_sources", "patterns")

    def __init__(self, *patterns: Pattern) -> None:
        self.patterns = patterns
        self._sources = tuple(_source(pattern) for pattern in patterns)

    def met(self, text: str, seen: dict[int, bool] | None = None) -> bool:
        """Whether the text meets the need; `seen` remembers, for this text, what each
        pattern searched already found (by the id of the pattern's shared source)."""
        seen = {} if seen is None else seen
        for source in self._sources:
            found = seen.get(id(source))
            if found is None:
                found = seen[id(source)] = _compiled(source).search(text) is not None
            if not found:
                return False
        return True


class Detector(NamedTuple):
    find: Callable[[str], Iterator[Span]]
    need: Need


def one_scan(needs: Iterable[Need]) -> re.Pattern[str]:
    """One pattern that matches a text wherever some need's first pattern does: a text
    it misses meets no need."""
    return re.compile(_joined(alt for need in needs for alt in _alternatives(need.patterns[0])))


def run(detectors: Iterable[Detector], text: str) -> Iterator[Span]:
    """The findings of the detectors whose needs the text meets."""
    seen: dict[int, bool] = {}
    for detector in detectors:
        if detector.need.met(text, seen):
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


def led(*words: str, ascii: bool = False) -> str:
    """Words that IGNORECASE reads, as a prefix tree whose branches are each led by a
    literal character (`c(?i:ookie)|C(?i:ookie)`): a search skips a literal at once, and
    steps into an IGNORECASE group at every character. `ascii`: ASCII IGNORECASE."""
    return led_sequences(([re.escape(char) for char in word] for word in words), ascii)


def led_sequences(sequences: Iterable[Sequence[str]], ascii: bool = False) -> str:
    """Sequences of patterns (see `any_sequence`) that IGNORECASE reads, each led by a
    character written alone, as `led` writes words."""
    flags = "ai" if ascii else "i"
    by_first: dict[str, list[Sequence[str]]] = {}
    for sequence in sequences:
        by_first.setdefault(sequence[0], []).append(sequence[1:])
    branches = []
    for atom, rests in sorted(by_first.items()):
        rest = any_sequence(rests) if any(rests) else ""
        char = atom.replace("\\", "") if len(atom) == 2 and atom[0] == "\\" else atom
        if rest and not all(rests):
            rest = f"(?:{rest})?"
        folds = _FOLDS.get(char) if len(char) == 1 else None
        if ascii and folds is not None:
            folds = char + char.upper()
        if folds is None:
            branches.append(f"(?{flags}:{atom}{rest})")
            continue
        branches += [f"{re.escape(case)}(?{flags}:{rest})" for case in folds]
    return "|".join(branches)
