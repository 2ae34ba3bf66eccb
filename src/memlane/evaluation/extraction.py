"""Extraction quality: what an extractor kept from a transcript against hand labels.

Labels are a JSON object {"keep": [{"text": SENTENCE, "kind": KIND}, ...]}: every
statement a careful person would keep from the transcript, as the sentence it is said
in. A kept sentence is right when it is one of them (compared with spaces and case
folded). Precision: right / kept; recall: right / labelled. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import msgspec


class Verdict(msgspec.Struct, frozen=True):
    text: str
    family: str
    role: str
    right: bool


class Score(msgspec.Struct, frozen=True):
    kept: int
    right: int
    labelled: int
    precision: float
    recall: float
    verdicts: tuple[Verdict, ...]
    missed: tuple[str, ...]


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def load_labels(text: str) -> list[str]:
    data: Any = json.loads(text)
    return [str(item["text"]) for item in data["keep"]]


def score(kept: Sequence[tuple[str, str, str]], labels: Sequence[str]) -> Score:
    """`kept`: (sentence, family, role) as the extractor kept them, in order."""
    wanted = {_key(t): t for t in labels}
    verdicts = tuple(Verdict(t, f, r, _key(t) in wanted) for t, f, r in kept)
    right = sum(v.right for v in verdicts)
    found = {_key(v.text) for v in verdicts}
    missed = tuple(t for k, t in wanted.items() if k not in found)
    return Score(
        kept=len(verdicts),
        right=right,
        labelled=len(wanted),
        precision=right / len(verdicts) if verdicts else 0.0,
        recall=right / len(wanted) if wanted else 0.0,
        verdicts=verdicts,
        missed=missed,
    )
