"""How well the capture policy screens: secrets redacted whole, injections tagged,
and the look-alikes of both left alone. Pure: labelled cases in, scores out.

The labelled corpora ship in `corpora/` as JSON lines, one case a line:

    {"id": ..., "label": "secret" | "benign", "kind": ..., "text": ...,
     "secrets": [every secret value in the text, whole]}
    {"id": ..., "label": "injection" | "benign", "kind": ..., "lang": ..., "text": ...}

A secret case is caught only when every occurrence of every listed value lies inside
what the redactor replaced (a fragment left behind is a miss); a benign case is
flagged when anything in it is redacted (or, for injections, when it is tagged).
Each corpus file was written by a different hand; scores are given per file too, so
a file nobody tuned on shows how the screen does on text it never saw.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from memlane.errors import Invalid

CORPORA = Path(__file__).parent / "corpora"
POSITIVE = {"secrets": "secret", "injection": "injection"}
# What the screen must reach on its corpora: recall of secrets at a precision, and
# recall of injections with few benign imperatives tagged.
TARGETS = {
    "secrets": {"recall": 0.98, "precision": 0.95},
    "injection": {"recall": 0.95, "benign_flagged": 0.02},
}


class Case(msgspec.Struct, frozen=True):
    id: str
    label: str
    kind: str
    text: str
    secrets: tuple[str, ...] = ()
    lang: str = "en"
    source: str = ""  # the corpus file it came from


class Tally(msgspec.Struct):
    """Cases of one group (a kind, a language, a file): positives caught, benign flagged."""

    positives: int = 0
    caught: int = 0
    benign: int = 0
    flagged: int = 0

    def add(self, positive: bool, hit: bool) -> None:
        if positive:
            self.positives += 1
            self.caught += hit
        else:
            self.benign += 1
            self.flagged += hit

    @property
    def recall(self) -> float | None:
        return self.caught / self.positives if self.positives else None

    @property
    def flagged_share(self) -> float | None:
        return self.flagged / self.benign if self.benign else None

    @property
    def precision(self) -> float | None:
        found = self.caught + self.flagged
        return self.caught / found if found else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "positives": self.positives,
            "caught": self.caught,
            "recall": self.recall,
            "benign": self.benign,
            "flagged": self.flagged,
            "benign_flagged": self.flagged_share,
            "precision": self.precision,
        }


class Report(msgspec.Struct):
    corpus: str
    overall: Tally = msgspec.field(default_factory=Tally)
    by_kind: dict[str, Tally] = msgspec.field(default_factory=dict)
    by_lang: dict[str, Tally] = msgspec.field(default_factory=dict)
    by_source: dict[str, Tally] = msgspec.field(default_factory=dict)
    misses: list[Case] = msgspec.field(default_factory=list)
    false_alarms: list[Case] = msgspec.field(default_factory=list)

    def add(self, case: Case, positive: bool, hit: bool) -> None:
        for tally in (
            self.overall,
            self.by_kind.setdefault(case.kind, Tally()),
            self.by_lang.setdefault(case.lang, Tally()),
            self.by_source.setdefault(case.source, Tally()),
        ):
            tally.add(positive, hit)
        if positive and not hit:
            self.misses.append(case)
        elif hit and not positive:
            self.false_alarms.append(case)

    def meets_targets(self) -> bool:
        target = TARGETS[self.corpus]
        o = self.overall
        if (o.recall or 0.0) < target["recall"]:
            return False
        if "precision" in target and (o.precision or 0.0) < target["precision"]:
            return False
        return (
            "benign_flagged" not in target or (o.flagged_share or 0.0) <= target["benign_flagged"]
        )


def corpus_files(corpus: str) -> list[Path]:
    """The shipped files of a corpus ("secrets" or "injection"), in name order."""
    return sorted(CORPORA.glob(f"{corpus}-*.jsonl"))


def digest(paths: Iterable[Path]) -> str:
    """A digest of these files' names and contents: what a model was trained on."""
    hasher = hashlib.sha256()
    for path in sorted(paths):
        hasher.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return hasher.hexdigest()


def load(paths: Iterable[Path]) -> list[Case]:
    """Every case of these files; Invalid naming the file and line of a bad one."""
    cases = []
    for path in paths:
        for number, line in enumerate(path.read_text("utf-8").split("\n"), start=1):
            if not line.strip():
                continue
            try:
                cases.append(msgspec.convert({**json.loads(line), "source": path.stem}, Case))
            except (ValueError, msgspec.ValidationError) as exc:
                raise Invalid(f"{path}:{number}: {exc}") from None
    return cases


def covered(text: str, value: str, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether every occurrence of `value` in `text` lies inside the redacted spans."""
    start = text.find(value)
    if start < 0:
        return True
    while start >= 0:
        end = start + len(value)
        if not any(s <= start and end <= e for s, e in _merged(spans)):
            return False
        start = text.find(value, start + 1)
    return True


def _merged(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(e, out[-1][1]))
        else:
            out.append((s, e))
    return out


Finder = Callable[[str], Sequence[tuple[int, int]]]


def score_secrets(cases: Iterable[Case], find: Finder) -> Report:
    """`find(text)`: the spans a redactor would replace."""
    report = Report("secrets")
    for case in cases:
        spans = find(case.text)
        if case.label == POSITIVE["secrets"]:
            hit = all(covered(case.text, value, spans) for value in case.secrets)
            report.add(case, True, hit)
        else:
            report.add(case, False, bool(spans))
    return report


def score_injection(cases: Iterable[Case], flags: Callable[[str], bool]) -> Report:
    """`flags(text)`: whether the tagger marks the text `injection-risk`."""
    cases = list(cases)
    return score_verdicts(cases, [flags(case.text) for case in cases])


def score_verdicts(cases: Sequence[Case], verdicts: Sequence[bool]) -> Report:
    """Injection verdicts given case by case (in case order)."""
    report = Report("injection")
    for case, flagged in zip(cases, verdicts, strict=True):
        report.add(case, case.label == POSITIVE["injection"], flagged)
    return report
