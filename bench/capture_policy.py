"""Precision and recall of the capture policy over the test corpora, and its throughput.

Run from the repository root:

    .venv/bin/python bench/capture_policy.py

What it does:

1. Loads the corpora from tests/capture_corpus.py (secrets, benign lookalikes,
   injections, benign instructions).
2. Prints one row per detector: the secret detector overall (a hit is a text whose
   secret no longer appears after `redact`), then per kind (a hit is a text reported with
   exactly that kind; every other corpus text is a negative for it); the injection
   detector overall and per family, the same way.
3. Times `redact` and `injection_signals` over every corpus text and prints texts/second,
   the median of 5 runs.

This is a script, not a test: tests/test_capture_policy.py holds the assertions.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from capture_corpus import (
    BENIGN_INSTRUCTIONS,
    BENIGN_LOOKALIKES,
    INJECTIONS,
    SECRETS,
)
from memlane.write.injection import FAMILIES, injection_signals
from memlane.write.secrets import KINDS, find_secrets, redact

RUNS = 5
PASSES = 20  # corpus passes per timed run, so one run lasts long enough to measure


@dataclass(frozen=True, slots=True)
class Row:
    detector: str
    tp: int
    fn: int
    fp: int
    tn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def score(detector: str, positives: Sequence[bool], negatives: Sequence[bool]) -> Row:
    """A row from the verdicts on texts that should fire and on texts that should not."""
    tp, fp = sum(positives), sum(negatives)
    return Row(detector, tp, len(positives) - tp, fp, len(negatives) - fp)


def secret_rows() -> list[Row]:
    reported = [[r.kind for r in find_secrets(text)] for text, _, _ in SECRETS]
    benign = [[r.kind for r in find_secrets(text)] for text in BENIGN_LOOKALIKES]
    rows = [
        score(
            "secrets",
            [secret not in redact(text)[0] for text, _, secret in SECRETS],
            [bool(kinds) for kinds in benign],
        )
    ]
    for kind in KINDS:
        expected = [k == kind for _, k, _ in SECRETS]
        rows.append(
            score(
                f"  {kind}",
                [found == [kind] for found, want in zip(reported, expected, strict=True) if want],
                [kind in found for found, want in zip(reported, expected, strict=True) if not want]
                + [kind in found for found in benign],
            )
        )
    return rows


def injection_rows() -> list[Row]:
    flagged = [injection_signals(text) for text, _ in INJECTIONS]
    benign = [injection_signals(text) for text in BENIGN_INSTRUCTIONS]
    rows = [
        score(
            "injection",
            [bool(signals) for signals in flagged],
            [bool(signals) for signals in benign],
        )
    ]
    for family in FAMILIES:
        mine = [f == family for _, f in INJECTIONS]
        rows.append(
            score(
                f"  {family}",
                [family in s for s, want in zip(flagged, mine, strict=True) if want],
                [family in s for s, want in zip(flagged, mine, strict=True) if not want]
                + [family in s for s in benign],
            )
        )
    return rows


def texts_per_second(function: Callable[[str], object], texts: Sequence[str]) -> float:
    """Median over RUNS of PASSES passes of `function` over every text."""
    seconds = []
    for _ in range(RUNS):
        start = time.perf_counter()
        for _ in range(PASSES):
            for text in texts:
                function(text)
        seconds.append(time.perf_counter() - start)
    return len(texts) * PASSES / statistics.median(seconds)


def print_table(rows: list[Row]) -> None:
    print(f"{'detector':<22}{'TP':>5}{'FN':>5}{'FP':>5}{'TN':>6}{'precision':>11}{'recall':>8}")
    for r in rows:
        print(
            f"{r.detector:<22}{r.tp:>5}{r.fn:>5}{r.fp:>5}{r.tn:>6}"
            f"{r.precision:>11.3f}{r.recall:>8.3f}"
        )


def main() -> None:
    texts = [t for t, _, _ in SECRETS] + BENIGN_LOOKALIKES
    texts += [t for t, _ in INJECTIONS] + BENIGN_INSTRUCTIONS
    print(
        f"corpora: {len(SECRETS)} secrets, {len(BENIGN_LOOKALIKES)} benign lookalikes, "
        f"{len(INJECTIONS)} injections, {len(BENIGN_INSTRUCTIONS)} benign instructions\n"
    )
    print_table(secret_rows() + injection_rows())
    chars = sum(map(len, texts)) / len(texts)
    print(f"\nthroughput over {len(texts)} texts (mean {chars:.0f} chars), median of {RUNS} runs:")
    print(f"  redact             {texts_per_second(redact, texts):>10,.0f} texts/s")
    print(f"  injection_signals  {texts_per_second(injection_signals, texts):>10,.0f} texts/s")


if __name__ == "__main__":
    main()
