"""Writers of one store file take turns: an OS file lock beside the store, taken
before BEGIN IMMEDIATE and given up after COMMIT.

Trigger: several processes writing one store at once (agents, hooks, `memlane add`
from scripts). Why: SQLite's busy handler sleeps longer the longer a writer has
waited (1, 2, 5 ... then 100 ms between tries), so the lock goes to a writer that has
only just arrived, or to the one that just committed and writes again, and the
writer that has waited longest tries least often: under eight writers one write can
wait minutes (`memlane bench writers`). Outcome: a writer that finds the store busy
tries again every millisecond or so however long it has waited, so each waiting writer
is as likely as any other to be next and no wait grows without bound. The kernel drops
the lock with its process, so a crash leaves nothing held.

A blocking flock would wake a waiter at once, but it cannot time out, and waiting in a
helper thread so that it can costs more context switches a turn: under 8 writers on a
2-core machine the lock then stands idle longer between turns than with polling every
millisecond, and a turn itself lasts only milliseconds.

The file stays beside the store, as its `-wal` and `-shm` do: a writer that removed it
on leaving could do so while another waits on the open file, and the next writer would
create a new file and lock that, so two writers would each hold a turn. Only a command
that writes opens it; one that only reads, or changes only what is already stored in a
store that does not exist, creates neither the store nor this file.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from memlane.errors import Unavailable
from memlane.files import lock_within

SUFFIX = "-writer.lock"
# Seconds between a waiting writer's tries (files.lock_within jitters them); the
# lock may stand free this long before a waiter sees it.
RETRY_S = 0.001


def lock_path(location: str) -> Path | None:
    """The turn file of a store at `location`; None for an in-memory database."""
    if location in ("", ":memory:"):
        return None
    path = Path(location).expanduser()
    return path.with_name(path.name + SUFFIX)


class Turns:
    """This connection's place among the store's writers (one turn held at a time)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._fd: int | None = None

    def _file(self) -> int:
        """The lock file, opened on the first write (owner-only, like the store)."""
        if self._fd is None:
            self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        return self._fd

    def take(self, timeout: float) -> None:
        """Wait for this writer's turn; Unavailable after `timeout` seconds."""
        if not lock_within(self._file(), timeout, RETRY_S):
            store = self._path.name.removesuffix(SUFFIX)
            raise Unavailable(f"{store}: another writer held the store for {timeout:g} s")

    def give(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
