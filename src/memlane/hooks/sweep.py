"""`memlane sweep`: the hooks' files that outlived their sessions, removed.

The hooks leave a file per session in their directory: what the session was shown
(`shown/`) and how far its capture read the transcript (`cursors/`); a review queue per
scope (`queue/`); and, after a crash mid-write, a `.write-*` draft. A session's files
mean nothing once the session is over, so those untouched (by mtime) for longer than
the retention go. A queue goes only once emptied: its items wait for a person, and
`queue clear --drop-stale` is how they leave. The capture log (`captures/`) is the
record of what the hooks captured: it goes only when asked, by its own age.

A session still running rewrites its files, so they stay fresh; what is shown is
removed under the lock its writers take (hooks.state), so a file being rewritten is
never removed under a hook, and a lock held past the wait leaves that folder for the
next sweep (reported `busy`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import msgspec

from memlane.files import lock_within, open_private
from memlane.hooks import captures, queue, state

DRAFT_PREFIX = ".write-"  # state.write_atomic's drafts
SESSION_DIRS = (state.SHOWN_DIR, state.CURSOR_DIR)


class Swept(msgspec.Struct, frozen=True):
    """A file the sweep removed (or, dry, would remove)."""

    path: str
    kind: str  # shown | cursors | queue | draft | captures
    bytes: int
    modified: datetime


class SweepReport(msgspec.Struct, frozen=True):
    dry_run: bool
    removed: tuple[Swept, ...] = ()
    busy: tuple[str, ...] = ()  # folders left alone: a hook held their lock

    @property
    def bytes(self) -> int:
        return sum(s.bytes for s in self.removed)


def sweep(
    directory: Path,
    now: datetime,
    retention_days: float,
    *,
    captures_days: float | None = None,
    dry_run: bool = False,
) -> SweepReport:
    """Remove the stale files in the hook dir `directory` (see the module docstring);
    with `captures_days`, also capture logs older than that. Creates nothing."""
    cutoff = now - timedelta(days=retention_days)
    removed: list[Swept] = []
    busy: list[str] = []
    for name in (*SESSION_DIRS, queue.QUEUE_DIR):
        folder = directory / name
        with _held(folder, name, dry_run) as had:
            if not had:
                busy.append(str(folder))
                continue
            for found in _stale(folder, name, cutoff):
                removed.append(found)
                if not dry_run:
                    _remove(Path(found.path))
    if captures_days is not None:
        old = now - timedelta(days=captures_days)
        for found in _files(directory / captures.CAPTURE_DIR, "captures", old):
            removed.append(found)
            if not dry_run:
                _remove(Path(found.path))
    return SweepReport(dry_run, tuple(removed), tuple(busy))


@contextlib.contextmanager
def _held(folder: Path, name: str, dry_run: bool) -> Iterator[bool]:
    """The writers' lock of what is shown, held while it is swept (a dry run and the
    other folders take none); False when it stayed held past the hooks' own wait."""
    if name != state.SHOWN_DIR or dry_run or not folder.is_dir():
        yield True
        return
    fd = open_private(folder / state.SHOWN_LOCK, os.O_RDWR | os.O_CREAT)
    try:
        yield lock_within(fd, state.SHOWN_LOCK_WAIT_S, state.SHOWN_LOCK_RETRY_S)
    finally:
        os.close(fd)


def _stale(folder: Path, name: str, cutoff: datetime) -> Iterator[Swept]:
    for found in _files(folder, name, cutoff):
        if Path(found.path).name.startswith(DRAFT_PREFIX):
            yield msgspec.structs.replace(found, kind="draft")
        elif found.path.endswith(".json") and (name != queue.QUEUE_DIR or _emptied(found)):
            yield found


def _emptied(found: Swept) -> bool:
    return not queue.items_in(Path(found.path))


def _files(folder: Path, kind: str, cutoff: datetime) -> Iterator[Swept]:
    """The regular files directly in `folder` last changed before `cutoff` (never a
    link, a folder or the lock)."""
    if not folder.is_dir():
        return
    for path in sorted(folder.iterdir()):
        try:
            info = path.lstat()
        except OSError:
            continue
        modified = datetime.fromtimestamp(info.st_mtime, cutoff.tzinfo)
        if stat.S_ISREG(info.st_mode) and path.name != state.SHOWN_LOCK and modified < cutoff:
            yield Swept(str(path), kind, info.st_size, modified)


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):  # gone already: what the sweep wanted
        path.unlink()
