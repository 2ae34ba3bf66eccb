"""sha256 verification of model files, remembered by (path, size, mtime).

Hashing the 23 MB MiniLM file costs tens of milliseconds; a process that creates several
sessions, or a CLI that starts many times, should pay it once per file version. Results
are kept in process and, when a cache file is given, in a small JSON file. A cached entry
only skips the hashing while the file's path, size and modification time are unchanged;
it cannot stop someone who can rewrite the model and restore its mtime, but such a
person can rewrite the cache file as well.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from pathlib import Path

from memlane.errors import Unavailable

_CHUNK = 1 << 20
_CACHE_VERSION = 1

FileKey = tuple[str, int, int]

_seen: dict[FileKey, str] = {}
_lock = threading.Lock()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def verify_sha256(path: Path, expected: str, cache_file: Path | None = None) -> None:
    """Return if `path` hashes to `expected`; otherwise raise Unavailable and load nothing."""
    key = _key(path)
    with _lock:
        actual = _seen.get(key) or _cached(cache_file, key)
        if actual is None:
            actual = _hash(path)
            if actual == expected:
                _remember(cache_file, key, actual)
        _seen[key] = actual
    if actual != expected:
        raise Unavailable(
            f"model file {path} has sha256 {actual}, expected {expected}: refusing to load a "
            "modified or different model (reinstall the package that ships it)"
        )


def forget_verified() -> None:
    """Drop the in-process results (tests use it to force a fresh hash)."""
    with _lock:
        _seen.clear()


def _key(path: Path) -> FileKey:
    try:
        resolved = path.resolve(strict=True)
        stat = resolved.stat()
    except OSError as exc:
        raise Unavailable(f"model file {path} cannot be read: {exc.strerror or exc}") from None
    return (str(resolved), stat.st_size, stat.st_mtime_ns)


def _hash(path: Path) -> str:
    try:
        return sha256_file(path)
    except OSError as exc:
        raise Unavailable(f"model file {path} cannot be read: {exc.strerror or exc}") from None


def _load(cache_file: Path) -> dict[str, list[object]]:
    try:
        data = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != _CACHE_VERSION:
        return {}
    files = data.get("files")
    return files if isinstance(files, dict) else {}


def _cached(cache_file: Path | None, key: FileKey) -> str | None:
    if cache_file is None:
        return None
    entry = _load(cache_file).get(key[0])
    if isinstance(entry, list) and len(entry) == 3 and entry[:2] == [key[1], key[2]]:
        digest = entry[2]
        return digest if isinstance(digest, str) else None
    return None


def _remember(cache_file: Path | None, key: FileKey, digest: str) -> None:
    if cache_file is None:
        return
    files = _load(cache_file)
    files[key[0]] = [key[1], key[2], digest]
    temporary = cache_file.with_name(f"{cache_file.name}.{os.getpid()}.tmp")
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(json.dumps({"version": _CACHE_VERSION, "files": files}), "utf-8")
        os.replace(temporary, cache_file)
    except OSError:
        # Why: the cache only saves time; a read-only or full disk must not fail a model load.
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
