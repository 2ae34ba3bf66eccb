"""The capture log's files: a JSON-lines file per UTC day in `captures/` of the hook
dir, to which each hook run appends the memories it wrote (write.capturelog says what a
line holds). A line is appended whole, under an exclusive lock on the file, so hooks
writing at once never interleave. A log that cannot be written is skipped: the
memories are in the store either way.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from memlane.files import lock_within, open_private
from memlane.write.capturelog import day_name

CAPTURE_DIR = "captures"
# A hook waits this long for another's append; past it, it appends anyway (an append
# of one write() to a file opened O_APPEND lands whole on a local file system).
LOCK_WAIT_S = 1.0
LOCK_RETRY_S = 0.005


def append(directory: Path, at: datetime, lines: Sequence[Mapping[str, Any]]) -> bool:
    """Append `lines` to the day's file in `directory`/captures; False when it could
    not be written."""
    if not lines:
        return True
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    try:
        fd = open_private(
            directory / CAPTURE_DIR / day_name(at), os.O_WRONLY | os.O_CREAT | os.O_APPEND
        )
    except OSError:
        return False
    try:
        lock_within(fd, LOCK_WAIT_S, LOCK_RETRY_S)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return True
