"""memlane: long-term memory for AI agents."""

from typing import TYPE_CHECKING

from memlane.errors import (
    AmbiguousId,
    Conflict,
    EmbeddingFailed,
    Invalid,
    MemlaneError,
    NotFound,
    PolicyRefused,
    SchemaTooNew,
    StoreDamaged,
    Unavailable,
)
from memlane.memory import Memory
from memlane.model import BatchResult, Filters, Hit, Record, Version, WriteResult
from memlane.scope import Context

if TYPE_CHECKING:
    from memlane.write.patch import CLEAR, Patch

__all__ = [
    "CLEAR",
    "AmbiguousId",
    "BatchResult",
    "Conflict",
    "Context",
    "EmbeddingFailed",
    "Filters",
    "Hit",
    "Invalid",
    "MemlaneError",
    "Memory",
    "NotFound",
    "Patch",
    "PolicyRefused",
    "Record",
    "SchemaTooNew",
    "StoreDamaged",
    "Unavailable",
    "Version",
    "WriteResult",
]


def __getattr__(name: str) -> object:
    """`Patch` and `CLEAR` load with their module on first use: importing memlane for a
    read does not load the write policy (a cold `memlane recall` stays fast)."""
    if name in ("CLEAR", "Patch"):
        from memlane.write import patch

        return getattr(patch, name)
    raise AttributeError(f"module 'memlane' has no attribute {name!r}")
