"""Texts as sets of words, and how much two such sets share: one definition for MMR
diversity, session neighbours and anchors without vectors."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\w+")


def tokens(text: str) -> frozenset[str]:
    """The casefolded words of a text, as a set."""
    return frozenset(_TOKEN.findall(text.casefold()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared tokens over all tokens; two empty texts share nothing, so 0.0."""
    shared = len(a & b)
    union = len(a) + len(b) - shared  # without building the union (MMR asks hundreds)
    return shared / union if union else 0.0
