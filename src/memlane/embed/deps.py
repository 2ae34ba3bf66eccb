"""Optional packages: found without importing them, imported only when a model is used."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable
from types import ModuleType

from memlane.errors import Unavailable


def install_hint(extra: str) -> str:
    return f"pip install 'memlane[{extra}]'"


def ensure_installed(modules: Iterable[str], extra: str, what: str) -> None:
    """Refuse early, naming the install command, when any of `modules` is not installed.

    Looks the modules up without importing them, so choosing a profile stays cheap.
    """
    missing = [m for m in modules if _find(m) is False]
    if missing:
        raise Unavailable(
            f"{what} needs the Python package(s) {', '.join(missing)}: {install_hint(extra)}"
        )


def require(module: str, extra: str) -> ModuleType:
    """Import `module`, or raise Unavailable naming the install command."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise Unavailable(
            f"the Python package {module} cannot be imported ({exc}): {install_hint(extra)}"
        ) from None


def _find(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
