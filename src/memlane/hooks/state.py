"""The hooks' own files in their directory (the `hook_dir` setting, by default
`<data dir>/hooks`): a log of every run, each session's capture cursors, and what each
session was shown.

The log is JSON lines: when, which event and host, the outcome (`reason`), ids and
counts, and for a failure the error and its traceback. Never a prompt, a transcript or
a memory's text: the log is a plain file and those may hold secrets. Nothing here may
raise into a hook: a log that cannot be written is skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memlane.files import append_private, lock_within, open_private, private_dirs
from memlane.write.secrets import redact

LOG_NAME = "hooks.log"
# The log is rotated to hooks.log.1 past this size, so it never grows without bound.
MAX_LOG_BYTES = 1024 * 1024
CURSOR_DIR = "cursors"
SHOWN_DIR = "shown"
SHOWN_LOCK = ".lock"
# A hook waits this long for another hook's update of a session's record to finish; past
# it the showing goes unrecorded (the memory may be shown again), since a host waits
# for its hook and a lost note costs less than a held prompt. An update takes
# milliseconds.
SHOWN_LOCK_WAIT_S = 2.0
SHOWN_LOCK_RETRY_S = 0.005
# The session start (its `source`) after which the model still has what was injected
# earlier in the session: a resumed conversation comes back whole. After any other
# (startup, clear, compact) its context is new, and what it was shown starts over.
RESUMED = "resume"


def log(directory: Path, entry: Mapping[str, Any]) -> None:
    """Append one JSON line (with the time) to the log; failures are swallowed."""
    with contextlib.suppress(OSError, TypeError, ValueError):
        path = directory / LOG_NAME
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, path.with_name(LOG_NAME + ".1"))
        line = json.dumps({"at": _now(), **entry}, ensure_ascii=False, default=str)
        line, _ = redact(line)  # an error or a trace may quote what a person typed
        append_private(path, line + "\n")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def safe_file(directory: Path, key: str) -> Path:
    """A JSON file in `directory` for `key`: a readable prefix of it and a hash, so any
    key (slashes, dots, a thousand characters) is a safe, unique file name."""
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    safe = re.sub(r"[^\w.-]", "_", key)[:40]
    return directory / f"{safe}-{digest}.json"


def cursor_file(directory: Path, session_id: str) -> Path:
    """Where a session's cursors live."""
    return safe_file(directory / CURSOR_DIR, session_id)


def load_cursors(directory: Path, session_id: str, transcript: str) -> dict[str, int]:
    """How far each capture mode has read this session's transcript (bytes); a cursor
    of another transcript file, or none, starts at 0."""
    try:
        data = json.loads(cursor_file(directory, session_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("transcript") != transcript:
        return {}
    offsets = data.get("offsets")
    if not isinstance(offsets, dict):
        return {}
    return {k: v for k, v in offsets.items() if isinstance(v, int) and v >= 0}


def save_cursors(
    directory: Path, session_id: str, transcript: str, offsets: Mapping[str, int]
) -> None:
    """Write the cursors atomically (a crash leaves the old file or the new one)."""
    payload = json.dumps({"transcript": transcript, "offsets": dict(offsets)})
    write_atomic(cursor_file(directory, session_id), payload)


def write_atomic(path: Path, text: str) -> None:
    """Replace the file's text whole: a crash leaves the old file or the new one."""
    private_dirs(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".write-")  # made 0600
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def shown_file(directory: Path, session_id: str) -> Path:
    """Where the record of what a session was shown lives."""
    return safe_file(directory / SHOWN_DIR, session_id)


def shown(directory: Path | None, session_id: str | None) -> dict[str, str]:
    """What this session was shown: memory id -> its stamp then (`context.stamp`). No
    hook dir, no session, or a missing or unreadable record: nothing yet."""
    if directory is None or not session_id:
        return {}
    try:
        data = json.loads(shown_file(directory, session_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    stamps = data.get("shown") if isinstance(data, dict) else None
    if not isinstance(stamps, dict):
        return {}
    return {k: v for k, v in stamps.items() if isinstance(v, str)}


def note_shown(
    directory: Path | None,
    session_id: str | None,
    stamps: Mapping[str, str],
    *,
    reset: bool = False,
) -> bool:
    """Add `stamps` to what the session was shown (to nothing when `reset`): read,
    merged and replaced whole under a lock, so hooks of one session running at once
    each add theirs and none leaves a torn file. False when nothing was recorded (no
    hook dir or session, the lock not had in time, the file not writable)."""
    if directory is None or not session_id or not (stamps or reset):
        return False
    path = shown_file(directory, session_id)
    try:
        with _locked(path.parent / SHOWN_LOCK):
            merged = {**({} if reset else shown(directory, session_id)), **stamps}
            write_atomic(path, json.dumps({"session": session_id, "shown": merged}))
    except OSError:  # the lock's TimeoutError too
        return False
    return True


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (made owner-only); TimeoutError past
    SHOWN_LOCK_WAIT_S. The kernel drops it with the process, so a crash holds nothing."""
    fd = open_private(path, os.O_RDWR | os.O_CREAT)
    try:
        if not lock_within(fd, SHOWN_LOCK_WAIT_S, SHOWN_LOCK_RETRY_S):
            raise TimeoutError(f"{path} held for {SHOWN_LOCK_WAIT_S:g} s")
        yield
    finally:
        os.close(fd)  # closing the descriptor releases its lock
