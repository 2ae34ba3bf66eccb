"""Files that hold memories are their owner's alone: created 0600, in directories
made 0700 (a directory that exists already keeps its mode)."""

from __future__ import annotations

import os
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


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` (replacing what it held), created owner-only."""
    fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


def append_private(path: Path, text: str) -> None:
    """Append `text` to `path`, created owner-only."""
    fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with os.fdopen(fd, "a", encoding="utf-8") as out:
        out.write(text)
