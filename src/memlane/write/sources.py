"""Code-aware sources: a memory about a file remembers the file's content
hash, so a read can say when the file changed or vanished since.

Every ref is stored as given. For a `file:<path>[#fragment]` ref the memory also keeps
`sha256:<hex> <absolute path>`: the file's hash at write time and the file it was taken
from (a relative path is resolved against the writer's directory), so a later read in
any directory checks the same file. `commit:<sha>` and other refs get nothing more.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from pathlib import Path

from memlane.errors import Invalid
from memlane.write.inputs import open_file

FILE_PREFIX = "file:"
HASH_PREFIX = "sha256:"
# A memory whose source file changed or vanished is trusted half as much on read.
STALE_CONFIDENCE = 0.5
_READ_CHUNK = 1 << 20
# A source file past this size is not pinned: hashing it would slow every read that
# checks it, and a memory about a file that large names a part of it, not its bytes.
HASH_CAP = 256 << 20


class SourceState(StrEnum):
    FRESH = "fresh"
    CHANGED = "changed"
    VANISHED = "vanished"


def file_path(ref: str | None) -> Path | None:
    """The path a `file:` ref names, without its `#fragment` (None for other refs)."""
    if not ref or not ref.startswith(FILE_PREFIX):
        return None
    text = ref[len(FILE_PREFIX) :].split("#", 1)[0].strip()
    return Path(text).expanduser() if text else None


def pinned(ref: str | None, cwd: Path) -> str | None:
    """What to keep with a `file:` ref: "sha256:<hex> <absolute path>" (None for other
    refs, or when the file cannot be read now)."""
    path = file_path(ref)
    if path is None:
        return None
    absolute = Path((path if path.is_absolute() else cwd / path).resolve(strict=False))
    digest = file_hash(absolute)
    return None if digest is None else f"{digest} {absolute}"


def file_hash(path: Path) -> str | None:
    """sha256 of the file's bytes, named ("sha256:..."); None when it cannot be read,
    is not a regular file (a device or a FIFO would never end) or is past HASH_CAP."""
    digest = hashlib.sha256()
    try:
        with open_file(path, "source") as stream:
            while chunk := stream.read(_READ_CHUNK):
                digest.update(chunk)
                if stream.tell() > HASH_CAP:
                    return None
    except (Invalid, OSError):
        return None
    return HASH_PREFIX + digest.hexdigest()


def source_state(recorded: str | None) -> SourceState | None:
    """Whether the file a memory was written about is as it was then (None: nothing was
    recorded: no file ref, or the file was unreadable at write time)."""
    if not recorded or " " not in recorded:
        return None
    digest, path = recorded.split(" ", 1)
    now = file_hash(Path(path))
    if now is None:
        return SourceState.VANISHED
    return SourceState.FRESH if now == digest else SourceState.CHANGED
