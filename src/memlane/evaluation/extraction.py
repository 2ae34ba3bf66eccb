"""Extraction quality: what an extractor kept from a transcript against hand labels.

Labels are a JSON object {"keep": [{"text": TEXT, "kind": KIND}, ...]}: every memory a
careful person would keep from the transcript, as the consecutive whole sentences it
is said in (a correction with the sentences giving its instruction and reason is one
label). Texts are compared sentence by sentence, with spaces and case folded.

- A kept memory is right when one of its sentences is labelled: it says something a
  label keeps. Precision: right / kept.
- A label is found when one kept memory holds every sentence of it; one that some
  kept memory only partly holds is found in part, and counts as missed. Recall:
  found / labelled.

So a correction kept without its reason is right, but its label is missed. Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import msgspec

# Where one sentence ends and the next begins, for comparing: after ".", "!" or "?",
# and at a line break. Labels and kept texts are split alike, so an abbreviation
# splits both the same way.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


class Verdict(msgspec.Struct, frozen=True):
    text: str
    family: str
    role: str
    right: bool


class Score(msgspec.Struct, frozen=True):
    kept: int
    right: int
    labelled: int
    found: int
    precision: float
    recall: float
    verdicts: tuple[Verdict, ...]
    missed: tuple[str, ...]  # labels no kept memory holds whole, in label order
    partial: tuple[str, ...]  # of those, the ones a kept memory holds in part


def units(text: str) -> frozenset[str]:
    """The sentences of a text, each with spaces and case folded."""
    return frozenset(
        " ".join(s.split()).casefold() for s in _SENTENCE_END.split(text.strip()) if s.strip()
    )


def load_labels(text: str) -> list[str]:
    data: Any = json.loads(text)
    return [str(item["text"]) for item in data["keep"]]


def load_split(text: str) -> str:
    """The split a labels file says it belongs to ("dev" or "test"); "dev" when unsaid."""
    data: Any = json.loads(text)
    return str(data.get("split", "dev"))


def score(kept: Sequence[tuple[str, str, str]], labels: Sequence[str]) -> Score:
    """`kept`: (text, family, role) as the extractor kept them, in order."""
    wanted = {units(t): t for t in labels}
    labelled = frozenset().union(*wanted)
    held = [units(t) for t, _, _ in kept]
    verdicts = tuple(
        Verdict(t, f, r, bool(sentences & labelled))
        for (t, f, r), sentences in zip(kept, held, strict=True)
    )
    missed = [(key, t) for key, t in wanted.items() if not any(key <= h for h in held)]
    found = len(wanted) - len(missed)
    right = sum(v.right for v in verdicts)
    return Score(
        kept=len(verdicts),
        right=right,
        labelled=len(wanted),
        found=found,
        precision=right / len(verdicts) if verdicts else 0.0,
        recall=found / len(wanted) if wanted else 0.0,
        verdicts=verdicts,
        missed=tuple(t for _, t in missed),
        partial=tuple(t for key, t in missed if any(key & h for h in held)),
    )


def pooled(scores: Sequence[Score]) -> Score:
    """Several transcripts' scores as one: counts summed, figures from the sums."""
    kept, right = sum(s.kept for s in scores), sum(s.right for s in scores)
    labelled, found = sum(s.labelled for s in scores), sum(s.found for s in scores)
    return Score(
        kept=kept,
        right=right,
        labelled=labelled,
        found=found,
        precision=right / kept if kept else 0.0,
        recall=found / labelled if labelled else 0.0,
        verdicts=tuple(v for s in scores for v in s.verdicts),
        missed=tuple(t for s in scores for t in s.missed),
        partial=tuple(t for s in scores for t in s.partial),
    )
