"""Precision and recall of passive injection (the user-prompt hook and its gate) on the
gold set in tests/hook_gold.py.

Run from the repository root:

    .venv/bin/python bench/hook_gate.py                     # hash embedder
    .venv/bin/python bench/hook_gate.py --profile minilm    # the real model
    .venv/bin/python bench/hook_gate.py --grid              # the tuning grid (dev split)

What it does:

1. Builds a store in a temporary directory with the gold memories (project `proj`),
   embedded with --profile.
2. Runs every case through the real handler (`hooks.events.user_prompt`: pre-gate,
   query with the transcript's tool operations, passive recall, gate, budgeted block);
   a case with tool calls gets a Claude Code transcript holding them. Surfacing is
   not recorded, nor (with no hook dir) what a session was shown, so the cases cannot
   influence each other.
3. Scores, per split and overall, for all cases, then for the prompts that name an
   action (ACTION_CASES) and the others apart:
   - precision: injected memories that the case lists, over all injected memories;
   - recall: should-inject cases where at least one listed memory was injected;
   - false alarms: should-stay-silent cases where anything was injected.
4. With --grid, re-judges the dev cases' recall results under a grid of gate bars and
   prints the best by precision first (then recall), to justify the gate's constants.

Prints tables and writes JSON to --out (default bench/results/hook_gate-<profile>.json).
A script, not a test: tests/test_hooks.py holds the floors.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memlane.model import as_dict, replace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from hook_gold import ACTION_CASES, CASES, DEV, MEMORIES, TEST, Case  # noqa: E402
from memlane import Context, Memory  # noqa: E402
from memlane.hooks import events, gate  # noqa: E402
from memlane.hooks.host import USER_PROMPT, Event  # noqa: E402

PROJECT = "proj"


@dataclass(frozen=True, slots=True)
class Judged:
    case: Case
    injected: tuple[str, ...]  # memory keys
    reason: str


@contextmanager
def gold_store(
    profile: str, directory: Path | None = None
) -> Iterator[tuple[Memory, dict[str, str]]]:
    """A Memory over the gold memories (key -> id), with surfacing switched off."""
    from memlane.embed import get_embedder

    with tempfile.TemporaryDirectory() as tmp:
        where = Path(directory or tmp)
        embedder = None if profile == "none" else get_embedder(profile)
        mem = Memory.open(where / "gold.db", context=Context(PROJECT, "main"), embedder=embedder)
        try:
            ids = {
                key: mem.add(
                    content, kind=kind, importance=importance, scope=f"project:{PROJECT}"
                ).id
                or ""
                for key, kind, importance, content in MEMORIES
            }
            mem.surfaced = lambda memory_ids: None  # type: ignore[method-assign]
            yield mem, ids
        finally:
            mem.close()


def transcript(path: Path, tools: Sequence[str]) -> Path:
    """A Claude Code transcript whose last assistant turn made these tool calls."""
    blocks: list[dict[str, Any]] = []
    for i, call in enumerate(tools):
        name, _, rest = call.partition(":")
        if name == "Edit" and rest:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{i}",
                    "name": "Edit",
                    "input": {
                        "file_path": f"/work/{PROJECT}/{rest}",
                        "old_string": "a",
                        "new_string": "b",
                    },
                }
            )
        else:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{i}",
                    "name": "Bash",
                    "input": {"command": call, "description": "run"},
                }
            )
    lines = [
        {"type": "user", "message": {"role": "user", "content": "get going"}, "sessionId": "gold"},
        {
            "type": "assistant",
            "sessionId": "gold",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "On it."}, *blocks],
            },
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def event_for(case: Case, scratch: Path, index: int) -> Event:
    path = transcript(scratch / f"case-{index}.jsonl", case.tools) if case.tools else None
    return Event(
        USER_PROMPT,
        "claude-code",
        session_id="gold",
        cwd=str(scratch),
        transcript_path=str(path) if path else None,
        prompt=case.prompt,
    )


def run_cases(mem: Memory, ids: dict[str, str], cases: Sequence[Case] = CASES) -> list[Judged]:
    """Every case through the real handler; what it injected, as memory keys."""
    keys = {memory_id: key for key, memory_id in ids.items()}
    judged = []
    with tempfile.TemporaryDirectory() as scratch:
        for i, case in enumerate(cases):
            outcome = events.user_prompt(
                event_for(case, Path(scratch), i), lambda: mem, events.Options()
            )
            judged.append(Judged(case, tuple(keys[m] for m in outcome.injected), outcome.reason))
    return judged


def score(judged: Sequence[Judged]) -> dict[str, Any]:
    injected = sum(len(j.injected) for j in judged)
    right = sum(sum(k in j.case.expected for k in j.injected) for j in judged)
    wanted = [j for j in judged if j.case.expected]
    found = sum(any(k in j.case.expected for k in j.injected) for j in wanted)
    silent = [j for j in judged if not j.case.expected]
    alarms = sum(bool(j.injected) for j in silent)
    return {
        "cases": len(judged),
        "should_inject": len(wanted),
        "should_stay_silent": len(silent),
        "injected": injected,
        "precision": round(right / injected, 4) if injected else 1.0,
        "recall": round(found / len(wanted), 4) if wanted else 1.0,
        "false_alarms": alarms,
    }


def by_split(judged: Sequence[Judged]) -> dict[str, dict[str, Any]]:
    return {
        DEV: score([j for j in judged if j.case.split == DEV]),
        TEST: score([j for j in judged if j.case.split == TEST]),
        "all": score(judged),
    }


# ---- the tuning grid -------------------------------------------------------------------

GRID = {
    "min_evidence": (1.0, 1.5, 2.0, 2.5, 3.0),
    "min_coverage": (0.0, 0.15, 0.25, 0.34, 0.5),
    "min_relative": (0.0, 0.5, 0.6, 0.7, 0.8),
    "min_share": (0.5, 0.75, 1.0),
    "min_action_coverage": (0.4, 0.5, 0.6, 0.67, 0.75),
    "min_action_relative": (0.0, 0.5, 0.6, 0.7, 0.8),
}


def grid(mem: Memory, ids: dict[str, str], cases: Sequence[Case]) -> list[dict[str, Any]]:
    """Each bar of GRID over the cases' recall results (recall run once per case)."""
    keys = {memory_id: key for key, memory_id in ids.items()}
    prepared: list[tuple[Case, Callable[[gate.Bar], tuple[str, ...]]]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for i, case in enumerate(cases):
            prepared.append((case, _judge_later(mem, event_for(case, Path(scratch), i), keys)))
        rows = []
        for values in itertools.product(*GRID.values()):
            bar = replace(gate.BAR, **dict(zip(GRID, values, strict=True)))
            judged = [Judged(case, judge(bar), "") for case, judge in prepared]
            rows.append({**dict(zip(GRID, values, strict=True)), **score(judged)})
    # Precision first, then recall; among equals the strictest bar (it has the most
    # room left before a new near-miss gets through).
    rows.sort(
        key=lambda r: (
            -r["precision"],
            -r["recall"],
            r["false_alarms"],
            -r["min_evidence"],
            -r["min_coverage"],
            -r["min_relative"],
            -r["min_share"],
            -r["min_action_coverage"],
            -r["min_action_relative"],
        )
    )
    return rows


def _judge_later(
    mem: Memory, event: Event, keys: dict[str, str]
) -> Callable[[gate.Bar], tuple[str, ...]]:
    """The handler's steps up to the gate, done once; the gate, for any bar."""
    text = (event.prompt or "").strip()[: events.PROMPT_CHARS]
    asked, named = gate.terms(text), gate.requested(text)
    ops = events.recent_ops(event)
    hints = gate.terms(" ".join(ops)) - asked
    result = None
    if (
        text
        and not text.startswith("/")
        and gate.could_clear(asked, hints, replace(gate.BAR, min_evidence=0), named)
    ):
        result = mem.recall(
            events.query(text, ops),
            passive=True,
            count=False,
            limit=events.RECALL_LIMIT,
            max_tokens=events.Options().budget,
        )

    def judge(bar: gate.Bar) -> tuple[str, ...]:
        if result is None or not gate.could_clear(asked, hints, bar, named):
            return ()
        verdict = gate.judge(asked, hints, result, bar, named)
        return tuple(keys[h.record.id] for h in verdict.admitted)

    return judge


def _table(title: str, scores: dict[str, dict[str, Any]]) -> None:
    print(title)
    print(
        f"  {'split':<6} {'cases':>5} {'inject':>6} {'silent':>6} {'precision':>9} "
        f"{'recall':>7} {'false alarms':>12}"
    )
    for split, s in scores.items():
        print(
            f"  {split:<6} {s['cases']:>5} {s['should_inject']:>6} {s['should_stay_silent']:>6} "
            f"{s['precision']:>9.3f} {s['recall']:>7.3f} {s['false_alarms']:>12}"
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="hash", help="embedding profile (hash, minilm, none)")
    parser.add_argument("--grid", action="store_true", help="print the tuning grid on dev")
    parser.add_argument("--out", help="JSON file (default bench/results/hook_gate-<profile>.json)")
    args = parser.parse_args(argv)
    with gold_store(args.profile) as (mem, ids):
        judged = run_cases(mem, ids)
        scores = by_split(judged)
        _table(f"passive injection, profile {args.profile}, bar {as_dict(gate.BAR)}", scores)
        named = set(ACTION_CASES)
        groups = {
            "action": by_split([j for j in judged if j.case in named]),
            "other": by_split([j for j in judged if j.case not in named]),
        }
        _table("  of which prompts naming an action (ACTION_CASES)", groups["action"])
        _table("  and the other prompts", groups["other"])
        misses = [
            j
            for j in judged
            if set(j.injected) - set(j.case.expected)
            or (j.case.expected and not set(j.injected) & set(j.case.expected))
        ]
        for j in misses:
            print(
                f"  [{j.case.split}] {j.case.prompt!r}: expected {list(j.case.expected)}, "
                f"injected {list(j.injected)} ({j.reason})"
            )
        report: dict[str, Any] = {
            "profile": args.profile,
            "bar": as_dict(gate.BAR),
            "scores": scores,
            "groups": groups,
        }
        if args.grid:
            rows = grid(mem, ids, [c for c in CASES if c.split == DEV])
            print("tuning grid on dev, best 15 (precision first, then recall):")
            for row in rows[:15]:
                print("  " + "  ".join(f"{k}={v}" for k, v in row.items()))
            report["grid_top"] = rows[:30]
    out = Path(args.out or ROOT / "bench" / "results" / f"hook_gate-{args.profile}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
