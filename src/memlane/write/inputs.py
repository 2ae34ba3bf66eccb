"""Reading what a user hands memlane, with limits applied while reading.

Every input is read with a cap and refused once past it, never read whole and
measured after: `/dev/zero` or a 200 MB stdin costs at most the cap. Only regular
files are opened as files: a device or a FIFO is refused without waiting on it (it is
opened non-blocking, then looked at). A JSONL stream is read a line at a time, each
line capped; an overlong line is skipped to its end and reported as a bad line.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from memlane.errors import Invalid

# A JSONL line holds one record: a memory's body (64 KiB by default), its fields and
# perhaps its vector as text. Four MiB leaves room for all of that under any sane
# body limit while bounding what one line can cost.
LINE_CAP = 4 << 20
# A file of many records parsed whole (the MCP memory server's memory.jsonl): far past
# any real graph of notes, short of what would exhaust memory.
FILE_CAP = 256 << 20
_CHUNK = 1 << 16


class Overlong(bytes):
    """The start of a line that ran past its cap (the rest was skipped unread)."""


def open_file(path: str | Path, what: str) -> BinaryIO:
    """A regular file opened for binary reading; Invalid for anything else.

    Trigger: a path naming a FIFO, a device or a directory. Why: reading a FIFO waits
    for a writer forever and a device never ends. Outcome: opened with O_NONBLOCK (so
    a FIFO returns at once), checked with fstat, refused unless it is a regular file.
    """
    where = Path(path).expanduser()
    try:
        fd = os.open(where, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise Invalid(f"{what} file not found: {path}") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise Invalid(
            f"cannot read {what} file {path!r}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Invalid(f"{what} {path} is not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_capped(stream: BinaryIO, cap: int, what: str) -> bytes:
    """All of `stream`, or Invalid as soon as it holds more than `cap` bytes."""
    data = bytearray()
    while chunk := stream.read(min(_CHUNK, cap + 1 - len(data))):
        data += chunk
        if len(data) > cap:
            raise Invalid(f"{what} is larger than the limit of {cap} bytes")
    return bytes(data)


def decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid(f"{what} is not valid UTF-8") from None


def read_text(path: str | Path, cap: int, what: str) -> str:
    """A regular file's UTF-8 text, at most `cap` bytes."""
    with open_file(path, what) as stream:
        return decode(read_capped(stream, cap, what), what)


def lines(stream: BinaryIO, cap: int = LINE_CAP) -> Iterator[bytes]:
    """`stream`'s lines, each read with a cap: a longer one comes as `Overlong`, its
    rest skipped in chunks so memory stays bounded."""
    while line := stream.readline(cap + 1):
        if len(line) <= cap or line.endswith(b"\n"):
            yield line
            continue
        while (rest := stream.readline(_CHUNK)) and not rest.endswith(b"\n"):
            pass
        yield Overlong(line[:80])


def json_object(item: Mapping[str, Any] | str | bytes) -> Mapping[str, Any]:
    """One JSONL line (or an object already parsed) as a mapping; Invalid otherwise."""
    if isinstance(item, Overlong):
        raise Invalid(f"line is longer than the limit of {LINE_CAP} bytes")
    if isinstance(item, bytes):
        item = decode(item, "line")
    if isinstance(item, str):
        try:
            item = json.loads(item.removeprefix("\ufeff"))  # a BOM from Windows editors
        except ValueError as exc:
            raise Invalid(f"not valid JSON: {exc.args[0] if exc.args else exc}") from None
        except RecursionError:
            raise Invalid("JSON nested too deeply") from None
    if not isinstance(item, Mapping):
        raise Invalid("each line must be a JSON object")
    return item


def inside(directory: Path, file: Path) -> None:
    """Invalid unless `file`, its links followed, lies inside `directory`.

    Trigger: a symlink in an imported folder (or a linked folder) pointing elsewhere.
    Why: importing a folder must not read what lies outside it (`/etc/passwd`).
    Outcome: the file is refused as a bad file; the folder's other files still land.
    """
    if not file.resolve().is_relative_to(directory.resolve()):
        raise Invalid(f"{file} links outside {directory}; not read")
