"""Progress of long jobs, and their warnings summarised: both on stderr.

A bar is drawn only when stderr is a terminal and the command is not quiet (--json, a
dry run): piped, a job prints nothing it would not print anyway. The library reports
progress through the callbacks these yield; it never prints. rich is imported only
when a bar is drawn, so no other command pays for it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, BinaryIO, Protocol

import click

if TYPE_CHECKING:
    from rich.console import Console


class Tell(Protocol):
    """A job's progress: DONE of TOTAL (None while not known: a stream read as it
    comes), and WHAT it does now when it goes through several phases."""

    def __call__(self, done: int, total: int | None, what: str | None = None) -> None: ...


class Step(Protocol):
    """What a job does now, in WORDS (a benchmark's step, an upkeep's), with DONE of
    TOTAL when that step is counted."""

    def __call__(self, words: str, done: int | None = None, total: int | None = None) -> None: ...


# Trigger: a batch of 10,000 lines can raise a warning on every line.
# Why: thousands of notes bury the summary and the errors; --json keeps every one.
# Outcome: the first few are printed as they come, then one line with the count.
SHOWN_NOTES = 5


def _terminal() -> Console | None:
    """stderr as a rich console when it is a terminal; None when it is piped."""
    if not sys.stderr.isatty():
        return None
    from rich.console import Console

    return Console(stderr=True)


def _untold(done: int, total: int | None, what: str | None = None) -> None:
    """The progress of a quiet or piped job."""


def _unshown(words: str, done: int | None = None, total: int | None = None) -> None:
    """The steps of a quiet or piped job."""


@contextmanager
def progress_bar(label: str, quiet: bool = False) -> Iterator[Tell]:
    """A callback `tell(done, total, what)` drawing a bar labelled LABEL on a terminal's stderr;
    one that does nothing when QUIET or when stderr is piped."""
    console = None if quiet else _terminal()
    if console is None:
        yield _untold
        return
    from rich import progress

    columns = (
        progress.TextColumn("{task.description}", markup=False),
        progress.BarColumn(),
        progress.MofNCompleteColumn(),
        progress.TaskProgressColumn(),
        progress.TimeElapsedColumn(),
        progress.TimeRemainingColumn(),
    )
    # Lines a job prints on stdout go above the bar, when stdout is the same terminal;
    # piped, they stay on stdout.
    with progress.Progress(*columns, console=console, redirect_stdout=sys.stdout.isatty()) as bar:
        task = bar.add_task(label, total=None)

        def tell(done: int, total: int | None, what: str | None = None) -> None:
            shown = f"{label}: {what}" if what else label
            bar.update(task, completed=done, total=total, description=shown)

        yield tell


@contextmanager
def progress_steps(label: str, quiet: bool = False, *, leave: bool = True) -> Iterator[Step]:
    """A callback `step(words, done, total)` showing, after LABEL, what a long job does
    now (how far into it, when counted), with a spinner and the time it has run; each
    step done stays as a line unless not LEAVE (the command reports them itself), the
    spinner goes at the end. Nothing when QUIET or piped."""
    console = None if quiet else _terminal()
    if console is None:
        yield _unshown
        return
    from rich import progress

    columns = (
        progress.SpinnerColumn(),
        progress.TextColumn("{task.description}", markup=False),
        progress.TextColumn("{task.fields[count]}", markup=False),
        progress.TimeElapsedColumn(),
    )
    with progress.Progress(*columns, console=console, redirect_stdout=False, transient=True) as bar:
        task = bar.add_task(label, total=None, count="")

        def finished(now: str | None) -> None:
            """The step shown so far as a line of its own, when NOW is another."""
            shown = bar.tasks[0]
            if leave and shown.description not in (label, now):
                line = f"done: {shown.description} {shown.fields['count']}".rstrip()
                bar.console.print(line, markup=False, highlight=False)

        def step(words: str, done: int | None = None, total: int | None = None) -> None:
            finished(words)
            count = "" if done is None else f"{done:,}" + ("" if total is None else f"/{total:,}")
            bar.update(task, description=words, count=count)

        yield step
        finished(None)


def count_lines(stream: BinaryIO) -> int | None:
    """How many lines a file holds, read ahead and rewound: a bar's total. None for a
    stream that cannot be read twice (a pipe)."""
    if not stream.seekable():
        return None
    start, count, last = stream.tell(), 0, b"\n"
    while block := stream.read(1 << 20):
        count, last = count + block.count(b"\n"), block[-1:]
    stream.seek(start)
    return count + (last != b"\n")


class Notes:
    """Warnings on stderr: the first SHOWN_NOTES as they come, then one line saying how
    many there were in all and that --json lists every one."""

    def __init__(self) -> None:
        self.count = 0

    def add(self, message: str) -> None:
        self.count += 1
        if self.count <= SHOWN_NOTES:
            click.echo(message, err=True)

    def close(self, what: str) -> None:
        """The count of WHAT (e.g. "notes") when some were left out."""
        if self.count > SHOWN_NOTES:
            click.echo(
                f"note: {self.count} {what} in all, the first {SHOWN_NOTES} shown "
                "(--json lists all)",
                err=True,
            )
