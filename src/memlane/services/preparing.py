"""Batch lines made ready for the write policy (write.prepare) on the machine's other
cores while this process writes.

Trigger: an add-batch chunk of at least POOL_MIN lines on a machine with more than one
core. Why: the capture policy's screens are pure Python, about as slow as the rest of
a line's write and bound to one core by the interpreter's lock; in another process
they run beside the write policy and the store. Outcome: the chunk's lines are queued
in parts of PART lines for worker processes (`main` below, each fed by a thread of
this process), which take them in order; this process takes parts back from the end
of the queue while it would otherwise wait (as it does while the workers start), and
prepares every line itself when it has one core or a worker fails.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, wait
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from memlane.write.prepare import Item, Prepared, prepare_lines

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from memlane.write.draft import WriteContext

# Lines per part: large enough that sending them costs little, small enough that a
# chunk's parts share out evenly and a part taken back is soon done.
PART = 100
# Lines a chunk holds before workers start: a worker takes about as long to start
# (importing the screens) as this process takes to prepare this many lines.
POOL_MIN = 1_000
# Worker processes at most, however many cores: the write itself stays on one.
MAX_WORKERS = 4

Lines = Sequence[tuple[int, Item]]


class WorkerFailed(Exception):
    """A worker process ended or answered what it should not: go on without workers."""


def worker_count(cores: int | None = None) -> int:
    """Workers for a machine of `cores` cores (those this process may run on, by
    default): all but the one this process writes on, at most MAX_WORKERS."""
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(0, min(MAX_WORKERS, (cores or 1) - 1))


class Part(NamedTuple):
    """Lines of a chunk, and the future of their preparation by a worker (None: they
    are prepared here)."""

    lines: Lines
    future: Future[list[Prepared]] | None = None


class Preparer:
    """Prepares the chunks of one batch (see the module); leaving it ends the workers."""

    def __init__(self, mode: str, context: WriteContext, workers: int | None = None) -> None:
        self.mode = mode
        self.context = context
        self.workers = worker_count() if workers is None else workers
        self._feeders: ThreadPoolExecutor | None = None
        self._starting: list[Future[_Process]] = []
        self._processes: list[_Process] = []
        self._local = threading.local()
        self._lock = threading.Lock()
        self._failed = False

    def __enter__(self) -> Preparer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._feeders is not None:
            self._feeders.shutdown(wait=True, cancel_futures=True)
        for process in self._processes:
            process.close()

    def start(self, lines: Lines) -> list[Part]:
        """The chunk's parts, queued for the workers when it is large enough."""
        parts = [lines[i : i + PART] for i in range(0, len(lines), PART)]
        feeders = self._feeders_for(len(lines))
        if feeders is None:
            return [Part(part) for part in parts]
        return [Part(part, feeders.submit(self._at_worker, part)) for part in parts]

    def finish(self, parts: Sequence[Part]) -> list[Prepared]:
        """Every line of the chunk prepared, in order (see `each`)."""
        return [line for lines in self.each(parts) for line in lines]

    def each(self, parts: Sequence[Part]) -> Iterator[list[Prepared]]:
        """Each part's lines prepared, in order, as soon as they are: from its worker
        or, when no worker has it, here (a part while this process would wait for
        another, the last one queued)."""
        done: list[list[Prepared] | None] = [None] * len(parts)
        for i, part in enumerate(parts):
            while done[i] is None:
                if part.future is None or part.future.cancel():
                    done[i] = self._here(part.lines)
                elif part.future.done() or not self._take_back(parts, done, i):
                    done[i] = self._result(part)
            yield done[i] or []

    def _take_back(
        self, parts: Sequence[Part], done: list[list[Prepared] | None], first: int
    ) -> bool:
        """Prepare here the last part after `first` that no worker has taken; False
        when there is none."""
        for j in range(len(parts) - 1, first, -1):
            future = parts[j].future
            if done[j] is None and future is not None and future.cancel():
                done[j] = self._here(parts[j].lines)
                return True
        return False

    def _here(self, lines: Lines) -> list[Prepared]:
        return prepare_lines(lines, self.mode, self.context)

    def _result(self, part: Part) -> list[Prepared]:
        assert part.future is not None
        try:
            return part.future.result()
        except WorkerFailed:
            self._failed = True
            return self._here(part.lines)

    def _feeders_for(self, size: int) -> ThreadPoolExecutor | None:
        """The threads that feed the workers, started with the first chunk of at least
        POOL_MIN lines (None: a smaller chunk first, one core, or a worker failed)."""
        if self._failed or (self._feeders is None and (size < POOL_MIN or self.workers < 1)):
            return None
        if self._feeders is None:
            from concurrent.futures import ThreadPoolExecutor

            self._feeders = ThreadPoolExecutor(self.workers, thread_name_prefix="memlane-prepare")
            # Trigger: workers starting. Why: a part a feeder takes is its worker's
            # until done, and a worker spends its first second or two importing.
            # Outcome: each feeder first waits for its worker to say it is ready; until
            # then every part stays queued, for this process to take.
            self._starting = [self._feeders.submit(self._worker) for _ in range(self.workers)]
        return self._feeders

    def warm(self) -> int:
        """Start the workers now and wait until they are ready; how many are."""
        if self._feeders_for(POOL_MIN) is None:
            return 0
        wait(self._starting)
        return sum(1 for f in self._starting if f.exception() is None)

    def _at_worker(self, lines: Lines) -> list[Prepared]:
        """On a feeder thread: `lines` prepared by this thread's worker process."""
        try:
            return self._worker().ask(lines, self.mode, self.context)
        except WorkerFailed:
            self._failed = True
            raise

    def _worker(self) -> _Process:
        """This feeder thread's worker process, started and ready."""
        if self._failed:
            raise WorkerFailed("a worker failed before")
        process: _Process | None = getattr(self._local, "process", None)
        if process is None:
            process = self._local.process = _Process()
            with self._lock:
                self._processes.append(process)
            try:
                process.ready()
            except WorkerFailed:
                self._failed = True
                raise
        return process


class _Process:
    """One worker process and the pipes to it."""

    def __init__(self) -> None:
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
        self.popen = subprocess.Popen(
            [sys.executable, "-c", "from memlane.services.preparing import main; main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": path},
        )

    def ready(self) -> None:
        """Wait for the worker to say it has imported what it needs."""
        if self._answer() != ("ready", None):
            raise WorkerFailed("the worker process did not start")

    def ask(self, lines: Lines, mode: str, context: WriteContext) -> list[Prepared]:
        assert self.popen.stdin is not None
        try:
            pickle.dump((list(lines), mode, context), self.popen.stdin)
            self.popen.stdin.flush()
        except OSError as exc:
            raise WorkerFailed(f"the worker process ended: {exc}") from None
        status, value = self._answer()
        if status == "raised":
            raise value
        if status != "prepared" or not isinstance(value, list):
            raise WorkerFailed(f"the worker process answered {status!r}")
        return value

    def _answer(self) -> tuple[str, Any]:
        assert self.popen.stdout is not None
        try:
            answer = pickle.load(self.popen.stdout)
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            raise WorkerFailed(f"the worker process ended: {exc}") from None
        if not isinstance(answer, tuple) or len(answer) != 2:
            raise WorkerFailed("the worker process answered something else")
        return answer

    def close(self) -> None:
        if self.popen.stdin is not None:
            self.popen.stdin.close()
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
        if self.popen.stdout is not None:
            self.popen.stdout.close()


def serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """A worker's loop: each request (lines, mode, context) answered with the lines
    prepared, or the exception preparing them raised; ends when requests do."""
    while True:
        try:
            lines, mode, context = pickle.load(requests)
        except EOFError:
            return
        answer: tuple[str, Any]
        try:
            answer = ("prepared", prepare_lines(lines, mode, context))
        except Exception as exc:  # raised again by the process that asked
            answer = ("raised", exc)
        pickle.dump(answer, answers)
        answers.flush()


def main() -> None:
    """A worker process: answers go to the pipe it was given as stdout; anything else
    printed goes to stderr."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    pickle.dump(("ready", None), answers)
    answers.flush()
    serve(sys.stdin.buffer, answers)
