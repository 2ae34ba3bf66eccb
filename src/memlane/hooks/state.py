"""The hooks' own files in their directory (the `hook_dir` setting, by default
`<data dir>/hooks`): a log of every run, and each session's capture cursors.

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
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memlane.files import append_private, private_dirs
from memlane.write.secrets import redact

LOG_NAME = "hooks.log"
# The log is rotated to hooks.log.1 past this size, so it never grows without bound.
MAX_LOG_BYTES = 1024 * 1024
CURSOR_DIR = "cursors"


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
