"""memlane: long-term memory for AI agents.

Everything a `Memory` method takes or returns can be imported from here.
"""

from typing import TYPE_CHECKING

from memlane.embed.base import Embedder
from memlane.errors import (
    AmbiguousId,
    Conflict,
    EmbeddingFailed,
    Invalid,
    MemlaneError,
    NotFound,
    PolicyRefused,
    SchemaOutdated,
    SchemaTooNew,
    StoreDamaged,
    Unavailable,
)
from memlane.graph.search import EntityHit
from memlane.lifecycle.promote import Verdict
from memlane.memory import Memory
from memlane.model import (
    CLEAR,
    BatchLine,
    BatchResult,
    Cadence,
    Cascade,
    Check,
    EmbedOutcome,
    Entity,
    EntityType,
    Filters,
    Hit,
    JournalEntry,
    Link,
    Patch,
    Predicate,
    Record,
    RegistryEntry,
    Relation,
    Reminder,
    Session,
    Stats,
    Version,
    Vitals,
    WakeGuess,
    WriteResult,
)
from memlane.retrieve.cards import EntityCard
from memlane.retrieve.explain import Explanation
from memlane.retrieve.result import RecallResult, Searched
from memlane.runtime import Runtime
from memlane.scope import Context
from memlane.services.backup import BackupReport, RestoreReport
from memlane.services.forget import Forgotten
from memlane.services.transfer import ImportReport, MigrationReport, Transfer
from memlane.store import SchemaStatus

if TYPE_CHECKING:
    from memlane.lifecycle.llm import Model
    from memlane.lifecycle.pack import Pack
    from memlane.lifecycle.prune import Pruned, PruneRules
    from memlane.lifecycle.reflect import Proposal
    from memlane.services.admin import Admin
    from memlane.services.graph import (
        EntityMerge,
        Graph,
        Linked,
        Neighbourhood,
        Related,
        Relationships,
    )
    from memlane.services.lifecycle import Lifecycle
    from memlane.services.maintenance import Maintenance, MaintenanceReport
    from memlane.services.pack import ClosedSession, Packs, Summarizer
    from memlane.services.reflect import Applied, Reflection, Reflector, Writes
    from memlane.services.registries import Registries
    from memlane.services.scoping import Move, Moves, Scoping
    from memlane.services.wake import Wake
    from memlane.write.anchors import AnchorPlan

# What loads with its module on first use: a model's numpy, or a module a read never
# needs, the feature namespaces among them (importing memlane for a read stays fast).
_LATER = {
    "AnchorPlan": "memlane.write.anchors",
    "Pack": "memlane.lifecycle.pack",
    "Proposal": "memlane.lifecycle.reflect",
    "PruneRules": "memlane.lifecycle.prune",
    "Pruned": "memlane.lifecycle.prune",
    "Model": "memlane.lifecycle.llm",
    "Admin": "memlane.services.admin",
    "EntityMerge": "memlane.services.graph",
    "Graph": "memlane.services.graph",
    "Linked": "memlane.services.graph",
    "Neighbourhood": "memlane.services.graph",
    "Related": "memlane.services.graph",
    "Relationships": "memlane.services.graph",
    "Lifecycle": "memlane.services.lifecycle",
    "Maintenance": "memlane.services.maintenance",
    "MaintenanceReport": "memlane.services.maintenance",
    "ClosedSession": "memlane.services.pack",
    "Packs": "memlane.services.pack",
    "Summarizer": "memlane.services.pack",
    "Applied": "memlane.services.reflect",
    "Reflection": "memlane.services.reflect",
    "Reflector": "memlane.services.reflect",
    "Writes": "memlane.services.reflect",
    "Registries": "memlane.services.registries",
    "Move": "memlane.services.scoping",
    "Moves": "memlane.services.scoping",
    "Scoping": "memlane.services.scoping",
    "Wake": "memlane.services.wake",
}

__all__ = [
    "CLEAR",
    "Admin",
    "AmbiguousId",
    "AnchorPlan",
    "Applied",
    "BackupReport",
    "BatchLine",
    "BatchResult",
    "Cadence",
    "Cascade",
    "Check",
    "ClosedSession",
    "Conflict",
    "Context",
    "EmbedOutcome",
    "Embedder",
    "EmbeddingFailed",
    "Entity",
    "EntityCard",
    "EntityHit",
    "EntityMerge",
    "EntityType",
    "Explanation",
    "Filters",
    "Forgotten",
    "Graph",
    "Hit",
    "ImportReport",
    "Invalid",
    "JournalEntry",
    "Lifecycle",
    "Link",
    "Linked",
    "Maintenance",
    "MaintenanceReport",
    "MemlaneError",
    "Memory",
    "MigrationReport",
    "Model",
    "Move",
    "Moves",
    "Neighbourhood",
    "NotFound",
    "Pack",
    "Packs",
    "Patch",
    "PolicyRefused",
    "Predicate",
    "Proposal",
    "PruneRules",
    "Pruned",
    "RecallResult",
    "Record",
    "Reflection",
    "Reflector",
    "Registries",
    "RegistryEntry",
    "Related",
    "Relation",
    "Relationships",
    "Reminder",
    "RestoreReport",
    "Runtime",
    "SchemaOutdated",
    "SchemaStatus",
    "SchemaTooNew",
    "Scoping",
    "Searched",
    "Session",
    "Stats",
    "StoreDamaged",
    "Summarizer",
    "Transfer",
    "Unavailable",
    "Verdict",
    "Version",
    "Vitals",
    "Wake",
    "WakeGuess",
    "WriteResult",
    "Writes",
]


def __getattr__(name: str) -> object:
    """The names in _LATER, imported with their module on first use."""
    if name in _LATER:
        import importlib

        return getattr(importlib.import_module(_LATER[name]), name)
    raise AttributeError(f"module 'memlane' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
