"""memlane: long-term memory for AI agents."""

from memlane.errors import (
    AmbiguousId,
    Conflict,
    Invalid,
    MemlaneError,
    NotFound,
    PolicyRefused,
    SchemaTooNew,
    Unavailable,
)
from memlane.memory import Memory
from memlane.model import BatchResult, Filters, Hit, Record, Version, WriteResult
from memlane.scope import Context
from memlane.write.patch import CLEAR, Patch

__all__ = [
    "CLEAR",
    "AmbiguousId",
    "BatchResult",
    "Conflict",
    "Context",
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
    "Unavailable",
    "Version",
    "WriteResult",
]
