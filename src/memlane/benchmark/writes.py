"""Timed add-batch: memories per second overall and for the first and last tenth."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec

from memlane.memory import Memory
from memlane.runtime import BATCH_CHUNK

# Items handed to add-batch between two counts told to a watcher: rare enough that
# telling costs nothing the timing would see.
COUNT_EVERY = 500


class AddResult(msgspec.Struct):
    path: str
    count: int
    added: int
    failed: int
    seconds: float
    per_second: float
    first_tenth_per_second: float | None = None
    last_tenth_per_second: float | None = None
    db_bytes: int | None = None
    first_error: str | None = None


def _marked(
    items: Iterable[Any],
    every: int,
    marks: list[tuple[int, float]],
    counted: Callable[[int], None] | None = None,
) -> Iterator[Any]:
    """Yield items, noting the time whenever `every` more have been handed out, and
    telling `counted` how many were handed out every COUNT_EVERY.

    With `every` a multiple of BATCH_CHUNK, each mark is a commit boundary one chunk
    back: add_batch reads a chunk ahead of the one it writes, so when it asks for item
    i it has committed the items before i - BATCH_CHUNK.
    """
    for i, item in enumerate(items):
        if i and i % every == 0:
            marks.append((i, time.perf_counter()))
        if counted is not None and i % COUNT_EVERY == 0:
            counted(i)
        yield item


def store_bytes(path: Path) -> int:
    """The store file with its -wal and -shm companions."""
    files = (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"))
    return sum(p.stat().st_size for p in files if p.exists())


def timed_add_batch(
    mem: Memory,
    items: Sequence[dict[str, Any]] | Sequence[str],
    label: str,
    counted: Callable[[int], None] | None = None,
) -> tuple[AddResult, list[str]]:
    """Write `items` through `Memory.add_batch`; the rate, and the ids that landed.
    `counted` is told how many items add_batch has taken, now and then."""
    from memlane.write import injection, secrets

    # The screens remember what they found in short texts: a run after another of the
    # same texts in this process would time the memory, not the screens.
    injection.forget_remembered()
    secrets.forget_remembered()
    every = max(2 * BATCH_CHUNK, len(items) // 10 // BATCH_CHUNK * BATCH_CHUNK)
    marks: list[tuple[int, float]] = []
    start = time.perf_counter()
    result = mem.add_batch(_marked(items, every, marks, counted))
    seconds = time.perf_counter() - start
    if counted is not None:
        counted(len(items))
    committed = [(i - BATCH_CHUNK, at) for i, at in marks]  # see _marked
    points = [(0, start), *committed, (len(items), start + seconds)]
    rates = [(b[0] - a[0]) / (b[1] - a[1]) for a, b in itertools.pairwise(points)]
    outcome = AddResult(
        path=label,
        count=len(items),
        added=result.added,
        failed=len(result.failed),
        seconds=seconds,
        per_second=len(items) / seconds if seconds else float("nan"),
        first_tenth_per_second=rates[0] if len(rates) > 1 else None,
        last_tenth_per_second=rates[-1] if len(rates) > 1 else None,
        first_error=result.failed[0].error if result.failed else None,
    )
    return outcome, [i for i in result.ids if i is not None]
