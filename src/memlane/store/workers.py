"""The process's worker threads for reads that overlap: a hybrid recall's vector lane
(retrieve.lanes.Lookahead) and the older half of a large keyword ranking
(SQLiteStore._newest).

Trigger: a read that hands work to another thread on every call. Why: starting a
thread per call costs a hand-over of the GIL before the caller may go on (a share of
a recall that `memlane bench` shows); a kept worker takes the work from a queue. Outcome: one pool, started on first use, made again in a forked
child (its parent's threads do not come with it).
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a keyword-only read never pays for the thread pool's import
    from concurrent.futures import ThreadPoolExecutor

# Tasks that may run at once in a process (reads on several threads); more wait.
WORKERS = 4

_pool: tuple[int, ThreadPoolExecutor] | None = None
_lock = threading.Lock()


def workers() -> ThreadPoolExecutor:
    """The pool of this process (see the module's docstring)."""
    from concurrent.futures import ThreadPoolExecutor

    global _pool
    with _lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(WORKERS, thread_name_prefix="memlane-read"))
        return _pool[1]
