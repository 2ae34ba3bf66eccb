"""The public API: every type a `Memory` method (or one of its feature namespaces)
takes or returns can be imported from `memlane`, and the type hints resolve at run
time."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import typing

import pytest

import memlane
from memlane import (
    Admin,
    Graph,
    Lifecycle,
    Maintenance,
    Memory,
    Packs,
    Reflector,
    Registries,
    Scoping,
    Transfer,
    Wake,
)
from memlane.services.recall import Recall

# Recall is private on Memory (`Memory._recall`): its flat read methods stand for it.
NAMESPACES = (
    Memory,
    Graph,
    Recall,
    Registries,
    Transfer,
    Wake,
    Lifecycle,
    Packs,
    Maintenance,
    Reflector,
    Admin,
    Scoping,
)


def _public(cls: type) -> list[tuple[str, typing.Callable[..., object]]]:
    return [
        (name, fn)
        for name, fn in inspect.getmembers(cls, predicate=inspect.isfunction)
        if not name.startswith("_") or name in ("__init__", "__call__")
    ]


def _names(annotation: str) -> set[str]:
    return set(re.findall(r"\b[A-Z]\w+", annotation))


@pytest.mark.parametrize("cls", NAMESPACES, ids=lambda c: c.__name__)
def test_every_hint_resolves_at_run_time(cls: type) -> None:
    failed = {}
    for name, fn in _public(cls):
        try:
            typing.get_type_hints(fn)
        except NameError as exc:
            failed[name] = str(exc)
    assert not failed


@pytest.mark.parametrize("cls", NAMESPACES, ids=lambda c: c.__name__)
def test_every_type_a_method_names_is_importable_from_memlane(cls: type) -> None:
    builtin = {
        "Any",
        "None",
        "Self",
        "Iterator",
        "Iterable",
        "Mapping",
        "Sequence",
        "Callable",
        "AbstractContextManager",
        "Path",
        "datetime",
        "Records",
        "Hits",
        "Links",
        "Entries",
        "Names",
        "Journal",
        "Versions",
        "Due",
        "Response",
        "BatchItem",
        "Progress",
        "Store",
        "Limits",
        "Collection",
        # lists of exported types (AnchorPlan, Check), named outside the Memory class
        "AnchorPlans",
        "Checks",
    }
    missing = {
        f"{cls.__name__}.{name}: {word}"
        for name, fn in _public(cls)
        for word in _names(" ".join(map(str, fn.__annotations__.values())))
        if word not in builtin and not hasattr(memlane, word)
    }
    assert not missing


def test_the_exports_are_what_all_lists_and_importing_memlane_stays_light() -> None:
    assert sorted(memlane.__all__) == sorted(set(memlane.__all__))
    for name in memlane.__all__:
        assert getattr(memlane, name) is not None
    # Naming the embedder's type in a hint loads no numpy either.
    script = (
        "import sys, typing, memlane; typing.get_type_hints(memlane.Memory.open); "
        "print('numpy' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False"


def test_the_memory_class_hints_resolve_too() -> None:
    """Its attributes (the runtime's, read through it) resolve, though the class has a
    `list` method that would shadow the builtin in a hint."""
    hints = typing.get_type_hints(Memory)
    assert {"store", "agent", "recall_settings", "redactions"} <= set(hints)
