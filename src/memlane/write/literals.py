"""Literal prefilters for regular expressions: strings a text must hold for a
pattern to match in it. Pure.

A pattern's literals are read from its parse tree. A match of an alternation is a
match of one of its branches: the union of the branches' literals. A match of a
sequence holds a match of each element: each element's literals are needed (one
set of them is what `literals` gives: the longest, as the rarest). A repeat of at
least n times needs its body's (a literal body, n times over); a class of single
characters, one of them; a look-ahead or look-behind, what it sees (which is in the
string searched). Anything else (a class with ranges or categories, a repeat that
may be empty, a negative look-around, a back reference) gives none, and so does an
alternation with a branch that gives none. `needs` keeps a pattern's alternatives
apart, each with every set it needs one of: the alternatives one of which has a
literal of each of its sets in a text.

Literals and texts are compared folded as `re` folds case under IGNORECASE (lower case,
with the letters `re` treats as one, such as "ı" and "i" or "ſ" and "s", made one), so
a literal found in the folded text is there whatever the case and whichever flags the
pattern has. Literals hold no whitespace: blanking characters out of a text (with
spaces) never makes one appear.

`checked(pattern)` looks for its own literals in each string it is given. A `Sieve`
holds many patterns. Within `sieve.over(text)`, a pattern it guards searches only
when `text` holds what one of its alternatives needs, and otherwise matches nothing;
every string searched there must be `text` or made from it by taking parts of it or
blanking characters. Outside, a guarded pattern always searches.
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from re import _casefix, _parser  # type: ignore[attr-defined]
from re._constants import (  # type: ignore[import-not-found]
    ASSERT,
    ASSERT_NOT,
    AT,
    ATOMIC_GROUP,
    BRANCH,
    IN,
    LITERAL,
    MAX_REPEAT,
    MIN_REPEAT,
    POSSESSIVE_REPEAT,
    SUBPATTERN,
)
from typing import Any, NamedTuple, Protocol

# `re` lowers U+0130 to "i"; str.lower() gives two characters for it.
_BEFORE_LOWER = {0x130: "i"}
# Letters `re` matches to each other beyond their lower case, made the smallest of them.
_AFTER_LOWER = {
    code: chr(min(lo, *others))
    for lo, others in _casefix._EXTRA_CASES.items()
    for code in (lo, *others)
}


def fold(text: str) -> str:
    """The text as literals are compared: one character for each of `text`'s."""
    if text.isascii():
        return text.lower()
    return text.translate(_BEFORE_LOWER).lower().translate(_AFTER_LOWER)


Literals = frozenset[str]


class Source(Protocol):
    """A pattern as written: its source and flags (a compiled pattern is one)."""

    @property
    def pattern(self) -> str: ...

    @property
    def flags(self) -> int: ...


def literals(pattern: Source) -> Literals | None:
    """Folded strings one of which a string holds wherever `pattern` matches in it (in
    the match, or where a look-around sees); None when there are none to name."""
    return _sequence(list(_parser.parse(pattern.pattern, pattern.flags)))


# Alternatives one of which every match is, each as the sets of literals it needs one
# of each of.
Needs = list[tuple[Literals, ...]]


def needs(pattern: Source) -> Needs | None:
    """`pattern`'s alternatives, each as the sets of literals a string holds one of
    each of wherever that alternative matches in it; None when an alternative has
    none."""
    return _alternatives(list(_parser.parse(pattern.pattern, pattern.flags)))


def _alternatives(items: list[tuple[Any, Any]]) -> Needs | None:
    consuming = [(op, av) for op, av in items if op not in (AT, ASSERT_NOT)]
    branches = _branches(*consuming[0]) if len(consuming) == 1 else None
    if branches is not None:  # a group or an alternation alone: its own alternatives
        found = [_alternatives(list(branch)) for branch in branches]
        if any(f is None for f in found):
            return None
        return [alternative for f in found for alternative in f or ()]
    each = tuple(_each(items))
    return [each] if each else None


def _branches(op: Any, av: Any) -> list[Any] | None:
    """What a group holds, or an alternation's branches; None for other elements."""
    if op is BRANCH:
        return list(av[1])
    if op is SUBPATTERN:
        return [av[3]]
    if op is ATOMIC_GROUP:
        return [av]
    return None


def _sequence(items: list[tuple[Any, Any]]) -> Literals | None:
    return max(_each(items), key=_telling, default=None)


def _each(items: list[tuple[Any, Any]]) -> Iterator[Literals]:
    """The literals of each element of a sequence that has some (a run of literal
    characters is one element)."""
    run: list[str] = []
    for op, av in items:
        if op is LITERAL and not chr(av).isspace():
            run.append(chr(av))
            continue
        if run:
            yield frozenset({fold("".join(run))})
            run = []
        found = _element(op, av)
        if found is not None:
            yield found
    if run:
        yield frozenset({fold("".join(run))})


def _element(op: Any, av: Any) -> Literals | None:
    if op is IN:  # a class of single characters: one of them
        chars = [chr(c) for kind, c in av if kind is LITERAL]
        if len(chars) < len(av) or any(c.isspace() for c in chars):
            return None
        return frozenset(map(fold, chars))
    if op is BRANCH:
        branches = [_sequence(list(branch)) for branch in av[1]]
        if any(b is None for b in branches):
            return None
        return frozenset().union(*branches)  # type: ignore[arg-type]
    if op is SUBPATTERN:
        return _sequence(list(av[3]))
    if op is ATOMIC_GROUP:
        return _sequence(list(av))
    if op is ASSERT:  # what a look-around sees is in the string searched too
        return _sequence(list(av[1]))
    if op in (MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT) and av[0] >= 1:
        body = list(av[2])
        if body and all(kind is LITERAL and not chr(c).isspace() for kind, c in body):
            once = "".join(chr(c) for _, c in body)
            return frozenset({fold(once * min(av[0], REPEATS))})
        return _sequence(body)
    return None


REPEATS = 8  # times a repeated literal is written out in the literal it gives


def _telling(found: Literals) -> tuple[int, int]:
    """How much a set of literals says: the shortest long (a long literal is rare),
    then few of them."""
    return min(map(len, found), default=0), -len(found)


GRAM = 3  # the longest key a literal is found by


# Letters by how often English uses them: a key of rare letters finds few literals.
_COMMON = "etaoinsrhldcumfpgwybvkxjqz"
_RARITY = {char: rank for rank, char in enumerate(_COMMON)}


@functools.cache  # patterns share literals: a sieve keys each once
def _key(literal: str) -> str:
    """What a sieve finds a literal by: its first character beyond ASCII, else
    itself when short, else its rarest GRAM characters (the first of equals)."""
    for char in literal:
        if not char.isascii():
            return char
    if len(literal) <= GRAM:
        return literal
    rarity = [_RARITY.get(char, len(_COMMON) - 1) for char in literal]
    sums = [sum(rarity[i : i + GRAM]) for i in range(len(literal) - GRAM + 1)]
    start = sums.index(max(sums))
    return literal[start : start + GRAM]


# What a pattern needs, as a sieve looks it up: the literals any of which is enough
# (from its alternatives of one set), and, by each literal of one set of each other
# alternative, the sets that alternative needs besides.
Lookup = tuple[Literals, dict[str, list[tuple[Literals, ...]]]]


def fingerprint(pattern: Source) -> str:
    """What a pattern's needs depend on: its source, its flags (as `re` completes
    them: a str pattern is UNICODE unless ASCII), and the Python whose `re` parses and
    folds it."""
    flags = int(pattern.flags if pattern.flags & re.ASCII else pattern.flags | re.UNICODE)
    source = f"{sys.version_info[:2]}\0{flags}\0{pattern.pattern}"
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()[:24]


# Needs as JSON holds them: each alternative's sets as sorted lists (null: none).
Stored = list[list[list[str]]] | None


def stored(found: Needs | None) -> Stored:
    return None if found is None else [[sorted(one) for one in each] for each in found]


def _loaded(data: Stored) -> Needs | None:
    return None if data is None else [tuple(frozenset(one) for one in each) for each in data]


class Sieve:
    """Literal prefilters for many patterns, over one text at a time.

    Trigger: a process that screens text. Why: reading every pattern's parse tree
    costs a fair share of a short command's start. Outcome: the needs come from
    `known` (by `fingerprint`: a table written beforehand) where it has them, read
    from the pattern otherwise; `patterns` keeps every pattern guarded, by
    fingerprint, so such a table can be checked and written again.

    Trigger: a pattern given as its source (`Written`). Why: compiling the rules'
    patterns costs a short command's start more than reading their needs did, and
    a short text leaves most of them dead. Outcome: each is compiled when it first
    searches a text that holds its literals.
    """

    def __init__(self, known: Mapping[str, Stored] | None = None) -> None:
        self._keys: dict[str, set[str]] = {}
        self._lookups: list[Lookup] = []
        self._present: ContextVar[Present | None] = ContextVar("present", default=None)
        self._known = known or {}
        self.patterns: dict[str, Source] = {}
        self.from_table = 0  # how many patterns' needs came from `known`

    def guard(self, pattern: re.Pattern[str] | Written) -> Pattern:
        """`pattern`, searching only when its literals occur in the sieve's text (one
        `Written`, compiled when it first searches); the pattern itself, compiled, when
        it has no literals to look up."""
        ident = self._watch(pattern)
        if ident is not None:
            return Guarded(pattern, ident, self._present.get)
        return pattern if isinstance(pattern, re.Pattern) else re.compile(*pattern)

    def _watch(self, pattern: Source) -> int | None:
        """The pattern's place among the sieve's lookups (None: it has no literals)."""
        key = fingerprint(pattern)
        self.patterns[key] = pattern
        if key in self._known:
            found = _loaded(self._known[key])
            self.from_table += 1
        else:
            found = needs(pattern)
        if found is None:
            return None
        singles = frozenset[str]().union(*(each[0] for each in found if len(each) == 1))
        besides: dict[str, list[tuple[Literals, ...]]] = {}
        for each in (each for each in found if len(each) > 1):
            first = max(each, key=_telling)  # the rarest set: the fewest alternatives to try
            rest = tuple(one for one in each if one is not first)
            for literal in first:
                besides.setdefault(literal, []).append(rest)
        self._lookups.append((singles, besides))
        for literal in frozenset[str]().union(*(lit for each in found for lit in each)):
            self._keys.setdefault(_key(literal), set()).add(literal)
        return len(self._lookups) - 1

    def present(self, text: str) -> Present:
        """Which of the guarded patterns' literals occur in `text`."""
        folded = fold(text)
        keys = {folded[i : i + n] for n in range(1, GRAM + 1) for i in range(len(folded) - n + 1)}
        found = {
            lit for key in keys & self._keys.keys() for lit in self._keys[key] if lit in folded
        }
        return Present(found, self._lookups)

    @contextmanager
    def over(self, text: str) -> Iterator[None]:
        """Guarded patterns search only when their literals occur in `text`."""
        token = self._present.set(self.present(text))
        try:
            yield
        finally:
            self._present.reset(token)


class Present:
    """The literals found in a text, and which patterns they leave alive."""

    def __init__(self, found: set[str], lookups: list[Lookup]) -> None:
        self._found = found
        self._lookups = lookups
        self._alive: dict[int, bool] = {}

    def alive(self, ident: int) -> bool:
        """Whether some alternative of the pattern has a literal of each set it needs."""
        known = self._alive.get(ident)
        if known is None:
            known = self._needed(*self._lookups[ident])
            self._alive[ident] = known
        return known

    def _needed(self, singles: Literals, besides: dict[str, list[tuple[Literals, ...]]]) -> bool:
        if not self._found.isdisjoint(singles):
            return True
        found = self._found
        return any(
            all(not found.isdisjoint(one) for one in rest)
            for literal in found & besides.keys()
            for rest in besides[literal]
        )


class Written(NamedTuple):
    """A pattern's source and flags, not compiled yet."""

    pattern: str
    flags: int


class Guarded:
    """A pattern that skips its search where a sieve knows it cannot match."""

    def __init__(
        self,
        pattern: re.Pattern[str] | Written,
        ident: int,
        present: Callable[[], Present | None],
    ) -> None:
        self._compiled = pattern if isinstance(pattern, re.Pattern) else None
        self.pattern = pattern.pattern
        self.flags = pattern.flags
        self._ident = ident
        self._present = present

    @property
    def compiled(self) -> re.Pattern[str]:
        """The pattern compiled (the first time it is asked for)."""
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def _dead(self) -> bool:
        present = self._present()
        return present is not None and not present.alive(self._ident)

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return None if self._dead() else self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return None if self._dead() else self.compiled.match(string, pos, endpos)

    def fullmatch(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[str] | None:
        return None if self._dead() else self.compiled.fullmatch(string, pos, endpos)

    def finditer(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        return iter(()) if self._dead() else self.compiled.finditer(string, pos, endpos)


class Checked:
    """A compiled pattern that first looks for its literals in the string it is given."""

    def __init__(self, pattern: re.Pattern[str], found: Literals) -> None:
        self.compiled = pattern
        self.pattern = pattern.pattern
        self._literals = found

    def _dead(self, string: str) -> bool:
        folded = fold(string)
        return not any(literal in folded for literal in self._literals)

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return None if self._dead(string) else self.compiled.search(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return [] if self._dead(string) else self.compiled.findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str) -> str:
        return string if self._dead(string) else self.compiled.sub(repl, string)


def checked(pattern: re.Pattern[str]) -> re.Pattern[str] | Checked:
    """`pattern`, looking for its literals in a string before searching it; the
    pattern itself when it has none."""
    found = literals(pattern)
    return pattern if found is None else Checked(pattern, found)


Pattern = re.Pattern[str] | Guarded
