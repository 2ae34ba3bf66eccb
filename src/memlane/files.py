"""Files that hold memories are their owner's alone: created 0600, in directories
made 0700 (a directory that exists already keeps its mode)."""

from __future__ import annotations

import fcntl
import os
import random
import stat
import time
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def private_dirs(directory: Path) -> None:
    """Make `directory` and its missing parents, each new one owner-only."""
    missing = [p for p in (directory, *directory.parents) if not p.exists()]
    for new in reversed(missing):
        new.mkdir(mode=PRIVATE_DIR, exist_ok=True)


def open_private(path: Path, flags: int) -> int:
    """`os.open` of `path` with these flags, a file it creates owner-only."""
    private_dirs(path.parent)
    return os.open(path, flags | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE)


def lock_within(fd: int, timeout: float, retry: float) -> bool:
    """Take an exclusive lock on `fd`, trying every `retry` seconds (jittered by half
    either way, so waiters do not try in step) for `timeout` seconds; False when it
    stayed held. A blocking lock cannot time out. The kernel drops it with the process
    (or when `fd` is closed), so a crash holds nothing."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(retry * random.uniform(0.5, 1.5))


def append_private(path: Path, text: str) -> None:
    """Append `text` to `path`, created owner-only."""
    fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with os.fdopen(fd, "a", encoding="utf-8") as out:
        out.write(text)


def replace_file(path: Path, text: str, *, private: bool = True) -> None:
    """Put `text` at `path` whole: written and synced under a hidden name beside it,
    then renamed over it, so a failure (a full disk, `ulimit -f`) leaves the old file
    or nothing, never a part. Created owner-only unless `private` is False (then as the
    umask says). A path that is not a regular file (a device, a FIFO, a symlink, a
    directory) is refused with ValueError: writing there would replace it."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise ValueError(f"{path} is not a regular file; not replaced")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"no directory {path.parent}")
    draft = path.with_name(f".{path.name}.{os.getpid()}.partial")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    try:
        with os.fdopen(
            os.open(draft, flags, PRIVATE_FILE if private else 0o666), "w", encoding="utf-8"
        ) as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(draft, path)
    except BaseException:
        draft.unlink(missing_ok=True)
        raise
