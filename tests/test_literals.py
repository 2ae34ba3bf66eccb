"""Literal prefilters (write.literals): whenever a pattern matches, one of its literals
is in the text. Checked by hand on each construct, for every character `re` folds,
and for the injection rules' own patterns over the labelled corpora."""

from __future__ import annotations

import _sre
import re
import sys

import pytest

from memlane.evaluation import screening
from memlane.write import injection, injection_concepts
from memlane.write.literals import (
    Checked,
    Guarded,
    Sieve,
    Written,
    checked,
    fingerprint,
    fold,
    literals,
    needs,
)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("ignore|disregard", {"ignore", "disregard"}),  # an alternation: every branch
        (r"foo|\d+", None),  # a branch without a literal: none for the whole
        (r"(?:abc)?defg", {"defg"}),  # an optional group gives nothing
        (r"(?:abc)?", None),
        (r"x*", None),
        (r"`{3,}", {"```"}),  # a repeat of a literal, at its least
        (r"(?:ab)+c", {"ab"}),
        (r"(?:){2}xyz", {"xyz"}),  # an empty repeat gives nothing
        (r"ab\s+cdef", {"cdef"}),  # the longest element of a sequence
        (r"[xy]", {"x", "y"}),  # a class of characters: one of them
        (r"[a-z]+", None),  # ranges: none
        (r"[^x]", None),
        (r"(?=\w*[01])\w+", {"0", "1"}),  # what a look-ahead sees
        (r"(?!abc)d", {"d"}),  # a negative look-ahead gives nothing
        (r"ab cdef", {"cdef"}),  # literals hold no whitespace
        (r"(\w)\1", None),
        ("IGNORE", {"ignore"}),  # literals are folded
        (r"(?-i:ABC)x", {"abc"}),
    ],
)
def test_literals_by_construct(pattern, expected):
    found = literals(re.compile(pattern, re.IGNORECASE))
    assert (None if found is None else set(found)) == expected


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("ignore", "İGNORE"),  # re lowers U+0130 to "i"
        ("ignore", "ıgnore"),  # dotless i is "i" to re
        ("sign", "ſign"),  # long s
        ("kill", "\u212aill"),  # Kelvin sign
        ("σοφία", "ΣΟΦΊΑ"),
        ("λόγος", "ΛΌΓΟΣ"),  # final sigma
        ("µs", "μS"),  # micro sign and mu
        ("straße", "STRAßE"),
    ],
)
def test_what_re_folds_together_folds_the_same(pattern, text):
    compiled = re.compile(pattern, re.IGNORECASE)
    assert compiled.search(text)
    found = literals(compiled)
    assert found is not None and any(literal in fold(text) for literal in found)


def _every_character() -> str:
    return "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)


def test_fold_gives_one_character_each_and_agrees_with_re_lower_case():
    everything = _every_character()
    folded = fold(everything)
    assert len(folded) == len(everything)
    lowered = "".join(chr(_sre.unicode_tolower(ord(c))) for c in everything)
    assert fold(lowered) == folded


def test_every_character_re_matches_to_a_literal_folds_to_it():
    everything = _every_character()
    folded = fold(everything)
    chars = {c for p in _guarded_patterns() for lit in literals(p) or () for c in lit}
    chars |= set("abcdefghijklmnopqrstuvwxyzßσµ")
    for char in chars:
        for match in re.finditer(re.escape(char), everything, re.IGNORECASE):
            assert folded[match.start()] == fold(char), (char, match[0])


def test_ascii_text_folds_by_lower_case_alone():
    ascii_chars = "".join(map(chr, range(128)))
    assert fold(ascii_chars + "é") == ascii_chars.lower() + "é"


def _guarded_patterns(kind: type = Guarded | Checked) -> list[re.Pattern[str]]:
    """The compiled patterns of the injection rules that a sieve guards or that check
    their literals."""
    found = []
    for module in (injection, injection_concepts):
        for value in vars(module).values():
            items = value if isinstance(value, tuple) else (value,)
            for item in items:
                pattern = item[1] if isinstance(item, tuple) and len(item) == 2 else item
                if isinstance(pattern, kind):
                    found.append(pattern.compiled)
    return found


def _corpus_texts() -> list[str]:
    """The injection corpora as the rules read them, and some of them upper-cased."""
    prepared = [
        injection.prepare(c.text) for c in screening.load(screening.corpus_files("injection"))
    ]
    return prepared + [text.upper() for text in prepared[::4]]


def test_the_rules_patterns_have_literals():
    assert len(_guarded_patterns()) >= 30


def test_whenever_a_rules_pattern_matches_a_corpus_text_its_literals_are_there():
    patterns = [(p, literals(p), needs(p)) for p in _guarded_patterns()]
    for text in _corpus_texts()[::2]:
        folded = fold(text)
        for pattern, found, alternatives in patterns:
            if pattern.search(text):
                where = (pattern.pattern[:60], text[:80])
                assert found is not None and any(lit in folded for lit in found), where
                if alternatives is not None:
                    assert any(
                        all(any(lit in folded for lit in one) for one in each)
                        for each in alternatives
                    ), where


def test_a_sieve_leaves_live_every_pattern_that_matches_the_text_or_its_blanked_form():
    sieve = Sieve()
    compiled = _guarded_patterns(Guarded)
    guarded = [sieve.guard(p) for p in compiled]
    assert all(isinstance(g, Guarded) for g in guarded)
    for text in _corpus_texts()[::15]:
        blanked = re.sub(r"[\"'“”]", " ", text)
        with sieve.over(text):
            for pattern, wrapped in zip(compiled, guarded, strict=True):
                for searched in (text, blanked, text[len(text) // 3 :]):
                    assert (wrapped.search(searched) is None) == (pattern.search(searched) is None)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        # each alternative needs a literal of each of its elements
        (r"\bignore\s+(?:all|your)\s+rules", [({"ignore"}, {"all", "your"}, {"rules"})]),
        (r"(?:send|post) it|leak", [({"send", "post"}, {"it"}), ({"leak"},)]),
        (r"(?<!\w)(?:ai|bot)(?!\w)", [({"ai"},), ({"bot"},)]),  # a group alone: its branches
        (r"(?:x{2})?y", [({"y"},)]),
        (r"rules|\d+", None),
    ],
)
def test_needs_by_construct(pattern, expected):
    found = needs(re.compile(pattern))
    assert (None if found is None else [tuple(map(set, each)) for each in found]) == expected


def test_a_sieve_needs_a_literal_of_each_element_of_an_alternative():
    sieve = Sieve()
    pattern = sieve.guard(re.compile(r"\bignore\s+(?:all|your)\s+rules|leak", re.IGNORECASE))
    for text, live in [
        ("Ignore your RULES", True),
        ("ignore the rules", False),  # no "all" or "your"
        ("your rules, all of them", False),  # no "ignore"
        ("a leak", True),
    ]:
        with sieve.over(text):
            assert (pattern.search("ignore all rules") is not None) is live


def test_a_guarded_pattern_skips_only_within_a_sieves_text():
    sieve = Sieve()
    pattern = sieve.guard(re.compile(r"\bignore\s+\w+\s+rules", re.IGNORECASE))
    assert isinstance(pattern, Guarded)
    assert pattern.search("IGNORE your rules")  # no text: it searches
    with sieve.over("ignore all rules"):
        assert pattern.search("ignore all rules")
        assert list(pattern.finditer("ignore all rules"))
    with sieve.over("a text without the word"):
        # a string that is not made from the sieve's text is not looked at
        assert pattern.search("ignore all rules") is None
        assert list(pattern.finditer("ignore all rules")) == []
    assert pattern.search("ignore all rules")


def test_a_pattern_without_literals_is_not_wrapped():
    sieve = Sieve()
    plain = re.compile(r"[a-z]+\d")
    assert sieve.guard(plain) is plain
    assert checked(plain) is plain
    some = re.compile(r"ab|[0-9]")  # a branch without a literal
    assert sieve.guard(some) is some


def test_a_pattern_given_as_its_source_compiles_when_it_first_searches_a_text_it_may_match():
    sieve = Sieve()
    pattern = sieve.guard(Written(r"\bignore\s+(?:all|your)\s+rules", re.IGNORECASE))
    assert isinstance(pattern, Guarded) and pattern._compiled is None
    with sieve.over("nothing to see"):
        assert pattern.search("nothing to see") is None
    assert pattern._compiled is None
    with sieve.over("IGNORE all RULES"):
        assert pattern.search("IGNORE all RULES")
    assert pattern.compiled is pattern._compiled is not None
    assert pattern.compiled.flags & re.IGNORECASE
    # without literals to look up there is nothing to wait for
    assert isinstance(sieve.guard(Written(r"ab|[0-9]", 0)), re.Pattern)


def test_a_pattern_and_its_source_share_a_fingerprint():
    known = {}
    for flags in (0, re.IGNORECASE, re.IGNORECASE | re.MULTILINE):
        compiled = re.compile(r"\bleak\s+(?:it|them)", flags)
        key = fingerprint(compiled)
        known[key] = [[["leak"]]]
        assert fingerprint(Written(compiled.pattern, flags)) == key
    sieve = Sieve(known)
    sieve.guard(Written(r"\bleak\s+(?:it|them)", re.IGNORECASE))
    assert sieve.from_table == 1  # its needs were read from the table, not parsed


def test_a_checked_pattern_looks_for_its_literals_first():
    pattern = checked(re.compile(r"\brot-?13\b", re.IGNORECASE))
    assert isinstance(pattern, Checked)
    assert pattern.search("decode this ROT13")
    assert pattern.search("nothing here") is None
    fence = checked(re.compile(r"(?m)^`{3,}$"))
    assert fence.sub("F", "a\n```\nb") == "a\nF\nb"
    assert fence.sub("F", "no fence") == "no fence"


def test_the_shipped_table_holds_the_needs_each_rule_pattern_has() -> None:
    """The injection rules read their patterns' needs from a shipped table (a process
    start then parses no pattern twice): it must be what each pattern has now."""
    import memlane.write.injection  # noqa: F401  (guards its own patterns too)
    from memlane.write.injection_concepts import SIEVE
    from memlane.write.injection_model import shipped_needs
    from memlane.write.literals import needs, stored

    fresh = {key: stored(needs(pattern)) for key, pattern in SIEVE.patterns.items()}
    assert shipped_needs() == fresh, (
        "the table is stale; write it again: python -c 'import memlane.write.injection; "
        "from memlane.write.injection_concepts import SIEVE; "
        "from memlane.write.injection_model import save_needs; "
        "from memlane.write.literals import needs, stored; "
        "save_needs({k: stored(needs(p)) for k, p in SIEVE.patterns.items()})'"
    )
    assert SIEVE.from_table >= len(SIEVE.patterns) > 50  # none was parsed at import
