"""Modules that load when first used, so every command does not pay for every feature.

`memlane recall` from a hook must start fast; the lifecycle services (wake, pack,
consolidate) need their pure modules only when their own commands run.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module `name`, loaded on first attribute access (importlib's LazyLoader);
    the module itself when something has loaded it already."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {name!r}")
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
