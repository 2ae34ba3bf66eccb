"""Entities: the named things memories mention, listed, shown and merged."""

from __future__ import annotations

from dataclasses import dataclass, replace

from memlane.errors import Conflict, Invalid, NotFound
from memlane.facade.core import Core, Records
from memlane.graph.entities import normalize_alias
from memlane.model import Entity, EntityKind, Link, LinkType, parse_enum
from memlane.timeutil import utcnow

# The memories `entities show` lists at most (newest first).
SHOW_LIMIT = 50
_SHOW_CAP = 10_000


@dataclass(frozen=True, slots=True)
class EntityMerge:
    """What merging `source` into `target` moves; `done` once it has."""

    source: Entity
    target: Entity
    aliases: tuple[str, ...]
    mentions: int
    done: bool


class GraphOps(Core):
    """The memory graph: typed links between memories, and the entities they name."""

    def link(
        self, source: str, target: str, type: str = "related", reason: str | None = None
    ) -> Link:
        """Link two memories this agent may see (typed; `anchor` links come from
        `update --anchors`). Linking the same pair and type again replaces the reason."""
        kind = parse_enum(LinkType, type, "link type")
        if kind is LinkType.ANCHOR:
            raise Invalid("anchor links are set with update --anchors")
        with self._transaction() as w:
            a, b = self._load(w, source), self._load(w, target)
            if a.id == b.id:
                raise Invalid("a memory cannot be linked to itself")
            link = Link(a.id, b.id, kind, reason=reason, created_at=utcnow())
            w.add_link(link)
            self._journal(w, f"link.{kind.value}", a.id)
        return link

    def entities(self, kind: str | None = None, limit: int | None = 50) -> list[Entity]:
        """Entities named by live memories this agent may see, most mentioned first."""
        chosen = parse_enum(EntityKind, kind, "entity kind").value if kind else None
        if limit is not None and limit < 0:
            raise Invalid("--limit must not be negative")
        self._entities_current()
        return self.store.entities(self.agent, chosen, limit or None)

    def entity(self, name: str) -> Entity:
        """The entity a name (any of its aliases, in any case or spelling) refers to."""
        alias = normalize_alias(name)
        if not alias:
            raise Invalid(f"{name!r} names no entity: it has no letters or digits")
        self._entities_current()
        found = self.store.entity(alias, self.agent)
        if found is None:
            raise NotFound(f"no entity {name!r}")
        return found

    def mentioning(self, name: str, limit: int = SHOW_LIMIT) -> tuple[Entity, Records]:
        """An entity and the live memories this agent may see that name it, newest first."""
        found = self.entity(name)
        [match] = self.store.mentioned([found.aliases[0]], _SHOW_CAP)
        filters = self.filters(scope="all", include_private=self.agent is not None)
        filters = replace(filters, ids=match.memory_ids, limit=limit or None)
        return found, self.store.query(filters)

    def merge_entities(self, source: str, target: str, confirm: bool = False) -> EntityMerge:
        """Fold entity `source` into `target` (aliases and mentions); a dry run unless
        `confirm`. Entities of different kinds are refused."""
        old, new = self.entity(source), self.entity(target)
        if old.id == new.id:
            raise Invalid(f"{source!r} and {target!r} are already one entity ({new.name})")
        if old.kind is not new.kind:
            raise Conflict(
                f"cannot merge {old.kind.value} {old.name!r} into {new.kind.value} {new.name!r}: "
                "entities of different kinds stay apart"
            )
        plan = EntityMerge(old, new, old.aliases, old.mentions, done=False)
        if not confirm:
            return plan
        with self._transaction() as w:
            w.merge_entities(old.id, new.id)
            self._journal(w, "entity.merge", None)
        return replace(plan, done=True)
