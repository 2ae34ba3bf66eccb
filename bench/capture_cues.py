"""Precision and recall of the cue extractor (what `extract --no-llm` and the capture
hooks keep) on the labelled transcripts in tests/transcripts, per split.

Run from the repository root:

    .venv/bin/python bench/capture_cues.py                 # the table
    .venv/bin/python bench/capture_cues.py --misses        # and the dev split's errors
    .venv/bin/python bench/capture_cues.py --misses test   # the test split's errors

Each `NAME.jsonl` there has hand labels in `NAME.labels.json`, which say their split:
`dev` transcripts are the ones the extractor is tuned on, `test` ones are held out
(read their errors only to report them, never to change a rule). Scoring is
memlane.evaluation.extraction's: a kept memory is right when it says a labelled
sentence; a label is found when one kept memory holds all of its sentences.

Prints a row per transcript and per split, and writes JSON to --out (default
bench/results/capture_cues.json). A script, not a test: tests/test_capture_cues.py
holds the floors.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from memlane.evaluation import extraction
from memlane.hooks import extract
from memlane.hooks import transcript as reading

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = ROOT / "tests" / "transcripts"
DEV, TEST = "dev", "test"


@dataclass(frozen=True, slots=True)
class Scored:
    name: str
    split: str
    turns: int
    score: extraction.Score


def scored(transcript: Path) -> Scored:
    """One labelled transcript, read and extracted as a capture would, then scored."""
    labels = transcript.with_name(transcript.stem + ".labels.json").read_text("utf-8")
    turns = reading.read(transcript).turns
    kept = [(c.content, c.family, c.role) for c in extract.extract(turns)]
    score = extraction.score(kept, extraction.load_labels(labels))
    return Scored(transcript.stem, extraction.load_split(labels), len(turns), score)


def run(directory: Path = TRANSCRIPTS) -> list[Scored]:
    return [scored(p) for p in sorted(directory.glob("*.jsonl"))]


def by_split(results: Sequence[Scored]) -> dict[str, extraction.Score]:
    """Each split's transcripts pooled, and all of them as "all"."""
    splits = sorted({r.split for r in results})
    out = {s: extraction.pooled([r.score for r in results if r.split == s]) for s in splits}
    out["all"] = extraction.pooled([r.score for r in results])
    return out


def _row(name: str, split: str, s: extraction.Score) -> str:
    return (
        f"{name:<22}{split:<6}{s.kept:>6}{s.right:>7}{s.labelled:>9}{s.found:>7}"
        f"{len(s.partial):>9}{s.precision:>11.3f}{s.recall:>8.3f}"
    )


def _errors(results: Sequence[Scored], split: str) -> None:
    for r in (r for r in results if r.split == split):
        print(f"\n{r.name} ({r.split}):")
        for v in r.score.verdicts:
            if not v.right:
                print(f"  WRONG   {v.family:<10} {v.text}")
        for text in r.score.missed:
            print(f"  {'partly' if text in r.score.partial else 'missed'}  {text}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument(
        "--misses", nargs="?", const=DEV, choices=(DEV, TEST), help="print a split's errors"
    )
    parser.add_argument("--out", help="JSON file (default bench/results/capture_cues.json)")
    args = parser.parse_args(argv)
    results = run()
    splits = by_split(results)
    print(f"{'transcript':<22}{'split':<6}{'kept':>6}{'right':>7}{'labelled':>9}"
          f"{'found':>7}{'partly':>9}{'precision':>11}{'recall':>8}")  # fmt: skip
    for r in results:
        print(_row(r.name, r.split, r.score))
    for split, s in splits.items():
        print(_row(f"= {split}", "", s))
    if args.misses:
        _errors(results, args.misses)
    out = Path(args.out or ROOT / "bench" / "results" / "capture_cues.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    figures = {
        name: {k: v for k, v in msgspec.to_builtins(s).items() if k not in ("verdicts",)}
        for name, s in splits.items()
    }
    out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
