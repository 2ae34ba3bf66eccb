"""The graph feature: typed links between memories, and the entities they name,
listed, shown and merged (the pure parts are memlane.graph)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

from memlane.errors import Invalid, NotFound
from memlane.graph import relations as vocabulary
from memlane.graph.entities import extract, normalize_alias
from memlane.graph.search import EntityHit, fuzzy_matches
from memlane.lazy import lazy_module
from memlane.model import (
    SYMMETRIC_LINKS,
    UNREINFORCING_LINKS,
    Entity,
    EntityKind,
    EntityType,
    Filters,
    Link,
    LinkType,
    Predicate,
    Record,
    Relation,
    parse_enum,
    reinforced,
    replace,
)
from memlane.runtime import Links, Records, Runtime
from memlane.store import Writer
from memlane.timeutil import utcnow

if TYPE_CHECKING:
    from memlane.write import dedup
else:  # the write policy loads with the first write: a read never runs it
    dedup = lazy_module("memlane.write.dedup")


# What a relation's id starts with ("r-3fa9c1d2e0"): unrelate and journals name it.
RELATION_PREFIX = "r-"
# The memories `entities show` lists at most (newest first).
SHOW_LIMIT = 50
_SHOW_CAP = 10_000


class EntityMerge(msgspec.Struct, frozen=True):
    """What merging `source` into `target` moves; `done` once it has."""

    source: Entity
    target: Entity
    aliases: tuple[str, ...]
    mentions: int
    done: bool
    # Current relations that move to `target`, and those ended (between the two, or
    # repeating one `target` has).
    relations_moved: int = 0
    relations_ended: int = 0

    @property
    def crosses(self) -> bool:
        """Whether the two differ in kind or type (a person into a project...)."""
        a, b = self.source, self.target
        return a.kind is not b.kind or a.type is not b.type


class Related(msgspec.Struct, frozen=True):
    """A relation `relate` made, or the current one it already was (`added` False)."""

    relation: Relation
    added: bool


class Relationships(msgspec.Struct, frozen=True):
    """An entity and its relations, both directions, oldest first."""

    entity: Entity
    relations: tuple[Relation, ...]


class Linked(msgspec.Struct, frozen=True):
    """A link of a memory, with the memory at its other end (live or not)."""

    link: Link
    other: Record

    @property
    def outgoing(self) -> bool:
        return self.link.target == self.other.id

    @property
    def arrow(self) -> str:
        """Which way the link points: both ways for symmetric types (related...)."""
        if self.link.type in SYMMETRIC_LINKS:
            return "<->"
        return "->" if self.outgoing else "<-"


class Neighbourhood(msgspec.Struct, frozen=True):
    """A memory one hop out: its typed links and the entities it names."""

    record: Record
    links: tuple[Linked, ...]
    entities: tuple[Entity, ...]

    @property
    def contradicted(self) -> bool:
        return any(n.link.type is LinkType.CONTRADICTS for n in self.links)


class Graph:
    """The memory graph: typed links between memories, and the entities they name
    (`Memory.graph`)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def link(
        self,
        source: str,
        target: str,
        type: str = "related",
        reason: str | None = None,
        *,
        reinforce: bool = True,
    ) -> Link:
        """Link two memories this agent may see (`anchor` links come from `--anchors`).

        Symmetric types (related, contradicts) are stored both ways. Linking the same
        pair and type again changes nothing. A new link raises the target's importance
        by 1 (at most 10) unless it contradicts or supersedes it, or `reinforce` is
        False; `supports` raises the target's trust, `contradicts` lowers both sides'.
        """
        kind = parse_enum(LinkType, type, "link type")
        if kind is LinkType.ANCHOR:
            raise Invalid("anchor links are set with --anchors, or found by auto-anchor")
        with self.rt.transaction() as w:
            a, b = self.rt.read(w, source), self.rt.read(w, target)
            if a.id == b.id:
                raise Invalid("a memory cannot be linked to itself")
            for existing in self.rt.store.links(a.id):
                if (existing.source, existing.target, existing.type) == (a.id, b.id, kind):
                    return existing  # re-adding is a no-op
            at = utcnow()
            w.add_link(Link(a.id, b.id, kind, reason=reason, created_at=at))
            if kind in SYMMETRIC_LINKS:
                w.add_link(Link(b.id, a.id, kind, reason=reason, created_at=at))
            self._linked(w, a, b, kind, reinforce)
            self.rt.journal(w, f"link.{kind.value}", a.id)
        return next(
            x
            for x in self.rt.store.links(a.id)
            if (x.source, x.target, x.type) == (a.id, b.id, kind)
        )

    def _linked(self, w: Writer, a: Record, b: Record, kind: LinkType, reinforce: bool) -> None:
        """What a new link does to the memories it joins (trust, importance)."""
        if kind is LinkType.CONTRADICTS:
            for side in (a, b):
                w.replace(
                    replace(
                        side, trust_score=dedup.clamp(side.trust_score + dedup.TRUST_CONTRADICTED)
                    ),
                    None,
                )
            return
        changed = b
        if kind is LinkType.SUPPORTS:
            changed = replace(
                changed, trust_score=dedup.clamp(b.trust_score + dedup.TRUST_CORROBORATED)
            )
        if reinforce and kind not in UNREINFORCING_LINKS:
            changed = reinforced(changed, utcnow())
        if changed != b:
            w.replace(changed, None)

    def contradict(self, a: str, b: str, reason: str) -> Link:
        """Record that two memories disagree: linked both ways, each trusted less."""
        if not reason or not reason.strip():
            raise Invalid("say why they contradict each other (--reason)")
        return self.link(a, b, "contradicts", reason.strip())

    def links(self, memory_id: str) -> Links:
        """A memory's links, both directions, leaving out memories this agent may not see."""
        record = self.rt.read(self.rt.store, memory_id)
        out = []
        for link in self.rt.store.links(record.id):
            other = link.target if link.source == record.id else link.source
            if self.rt.visible_id(other):
                out.append(link)
        return out

    def neighbourhood(self, memory_id: str) -> Neighbourhood:
        """A memory, the memories it links to or from (ended ones too: a link to a
        superseded memory is history) and the entities it names, all as this agent
        may see them."""
        record = self.rt.read(self.rt.store, memory_id)
        found = self.rt.store.links(record.id)
        ends = tuple({link.target if link.source == record.id else link.source for link in found})
        others = (
            {
                r.id: r
                for r in self.rt.store.query(
                    Filters(
                        ids=ends,
                        viewer=self.rt.agent,
                        include_private=self.rt.agent is not None,
                        include_superseded=True,
                        limit=None,
                    )
                )
            }
            if ends
            else {}
        )
        linked: dict[tuple[str, ...], Linked] = {}
        for link in found:
            other = link.target if link.source == record.id else link.source
            # A symmetric link is stored both ways: it is one edge.
            way = () if link.type in SYMMETRIC_LINKS else (link.source,)
            if other in others:
                linked.setdefault((other, link.type.value, *way), Linked(link, others[other]))
        return Neighbourhood(record, tuple(linked.values()), tuple(self._named_by(record)))

    def unlink(self, link_id: str) -> Link:
        """Delete a link by its id (both directions of a symmetric one)."""
        with self.rt.transaction() as w:
            gone = w.delete_link(link_id) if self._link_ends(link_id) else None
            if gone is None:
                raise NotFound(f"no link with id {link_id!r}")
            if gone.type in SYMMETRIC_LINKS:
                w.remove_link(gone.target, gone.source, gone.type)
            self.rt.journal(w, f"unlink.{gone.type.value}", gone.source)
        return gone

    def _link_ends(self, link_id: str) -> list[str]:
        """The ends of a link both of which this agent may see (else nothing)."""
        number = link_id.strip().removeprefix("l-")
        row = self.rt.store.link_ends(int(number)) if number.isdigit() else None
        if row is None or not all(self.rt.visible_id(end) for end in row):
            return []
        return list(row)

    def entities(
        self, kind: str | None = None, limit: int | None = 50, type: str | None = None
    ) -> list[Entity]:
        """Entities named by live memories this agent may see (of a kind, of a type),
        most mentioned first, then those no memory names (made by `relate`), by name."""
        chosen = parse_enum(EntityKind, kind, "entity kind").value if kind else None
        typed = parse_enum(EntityType, type, "entity type").value if type else None
        if limit is not None and limit < 0:
            raise Invalid("--limit must not be negative")
        self.rt.entities_current()
        found = self.rt.store.entities.listing(self.rt.agent, chosen, limit or None, typed)
        found += [
            e
            for e in self.unnamed_entities()
            if (chosen is None or e.kind.value == chosen)
            and (typed is None or e.type.value == typed)
        ]
        return found[:limit] if limit else found

    def entity(self, name: str) -> Entity:
        """The entity a name (any of its aliases, in any case or spelling) refers to:
        one a visible live memory names, or one made by hand or by a relation."""
        found = self._known(name)
        if found is None:
            raise NotFound(f"no entity {name!r}")
        return found

    def _known(self, name: str) -> Entity | None:
        self.rt.entities_current()
        return self._lookup(name)

    def _lookup(self, name: str) -> Entity | None:
        """`_known` without bringing mentions up to date (inside a write, where that
        would open a second transaction)."""
        return self.rt.store.entities.known(_alias(name), self.rt.agent)

    def set_type(self, name: str, type: str) -> Entity:
        """Say what an entity is (person, project, service, tool, file, organisation,
        place, concept, unknown)."""
        chosen = parse_enum(EntityType, type, "entity type")
        found = self.entity(name)
        with self.rt.transaction() as w:
            w.set_entity_type(found.id, chosen)
            self.rt.journal(w, "entity.type", None)
        return replace(found, type=chosen)

    def unnamed_entities(self) -> list[Entity]:
        """The entities no memory names that a relation this agent may see touches
        (made by `relate` or the MCP tools), by name. One a memory named once, and no
        relation, is a leftover name: left out."""
        found = self.rt.store.entities.unnamed()
        ids = [e.id for e in found]
        touched = self.rt.store.entities.relations(ids, self.rt.agent, False) if ids else []
        ends = {end for r in touched for end in (r.subject_id, r.object_id)}
        return [e for e in found if e.id in ends]

    def search_entities(self, query: str, limit: int = 10) -> list[EntityHit]:
        """Entities whose name or an alias is like `query` (fuzzy), best first."""
        if not query.strip():
            raise Invalid("say what to look for: the query is empty")
        if limit < 1:
            raise Invalid("--limit must be at least 1")
        self.rt.entities_current()
        found = self.rt.store.entities.listing(self.rt.agent, None, None)
        known = {e.id for e in found}
        found += [e for e in self.rt.store.entities.unnamed() if e.id not in known]
        return fuzzy_matches(query, found, limit)

    # ---- relations between entities ----------------------------------------------

    def relate(
        self,
        subject: str,
        predicate: str,
        object: str,
        context: str | None = None,
        memory: str | None = None,
    ) -> Related:
        """Say that `subject` `predicate` `object` ("api depends on postgres").

        The predicate maps onto the canonical set (memlane.graph.relations); a
        passive one ("owned by") swaps the ends. A name no entity has yet becomes one.
        Saying a current relation again changes nothing.
        """
        phrase = vocabulary.read_predicate(_text(predicate, "predicate"))
        if phrase.swapped:
            subject, object = object, subject
        clean = context.strip() or None if context else None
        self.rt.entities_current()
        with self.rt.transaction() as w:
            source = self.rt.read(w, memory).id if memory else None
            a, b = self._entity_for(w, subject), self._entity_for(w, object)
            if a.id == b.id:
                raise Invalid(f"{subject!r} and {object!r} are one entity: relate two")
            same = self._current(a.id, b.id, phrase.predicate, phrase.label)
            if same is not None:
                return Related(same, added=False)
            at = utcnow()
            relation = Relation(
                id=RELATION_PREFIX + secrets.token_hex(5),
                subject_id=a.id,
                subject=a.name,
                predicate=phrase.predicate,
                label=phrase.label,
                object_id=b.id,
                object=b.name,
                valid_from=at,
                context=clean,
                memory_id=source,
            )
            w.add_relation(relation)
            self.rt.journal(w, f"relate.{phrase.predicate.value}", source)
        return Related(relation, added=True)

    def unrelate(self, subject: str, predicate: str, object: str) -> list[Relation]:
        """End the current relation `subject` `predicate` `object` (it stays, ended)."""
        phrase = vocabulary.read_predicate(_text(predicate, "predicate"))
        if phrase.swapped:
            subject, object = object, subject
        a, b = self.entity(subject), self.entity(object)
        found = self._current(a.id, b.id, phrase.predicate, phrase.label)
        if found is None:
            raise NotFound(f"no current relation {subject} {predicate} {object}")
        return self.end_relations([found.id])

    def end_relations(self, relation_ids: list[str]) -> list[Relation]:
        """End these current relations; the ones ended. One learned from a memory this
        agent may not see is left as it is."""
        at, ended = utcnow(), []
        with self.rt.transaction() as w:
            for relation_id in relation_ids:
                if self._may_end(relation_id) and w.end_relation(relation_id, at):
                    ended.append(relation_id)
                    self.rt.journal(w, "unrelate", None)
        return [r for r in map(self.rt.store.entities.relation, ended) if r is not None]

    def _may_end(self, relation_id: str) -> bool:
        found = self.rt.store.entities.relation(relation_id)
        return found is not None and (
            found.memory_id is None or self.rt.visible_id(found.memory_id)
        )

    def relationships(self, name: str, include_ended: bool = False) -> Relationships:
        """An entity and its relations both ways (the current ones unless
        `include_ended`), as this agent may see them, oldest first."""
        found = self.entity(name)
        relations = self.rt.store.entities.relations([found.id], self.rt.agent, not include_ended)
        return Relationships(found, tuple(relations))

    def relations_named(self, names: Sequence[str]) -> list[Relation]:
        """The current relations between the entities of these names (each name an
        alias; unknown ones skipped) that this agent may see, oldest first, with each
        end named as given here rather than by its entity's name."""
        given: dict[str, str] = {}
        aliases = {normalize_alias(n): n for n in reversed(names) if normalize_alias(n)}
        owners = self.rt.store.entities.owners(list(aliases)) if aliases else {}
        for alias, name in reversed(aliases.items()):  # the first name given wins
            if alias in owners:
                given.setdefault(owners[alias], name)
        found = self.rt.store.entities.relations(list(given), self.rt.agent) if given else []
        return [
            replace(r, subject=given[r.subject_id], object=given[r.object_id])
            for r in found
            if r.subject_id in given and r.object_id in given
        ]

    def _current(
        self, subject_id: str, object_id: str, predicate: Predicate, label: str
    ) -> Relation | None:
        for r in self.rt.store.entities.relations([subject_id], self.rt.agent):
            if (r.subject_id, r.object_id) == (subject_id, object_id) and (
                vocabulary.same_relation(r.predicate, r.label, predicate, label)
            ):
                return r
        return None

    def _entity_for(self, w: Writer, name: str) -> Entity:
        """The entity a name refers to, made when there is none (kind as the extractor
        reads the name, else a tag: it was declared)."""
        alias = _alias(name)
        found = self._lookup(name)
        if found is not None:
            return found
        clean = _text(name, "entity name")
        read = [m.kind for m in extract(clean) if m.alias == alias]
        kind = read[0] if read else EntityKind.TAG
        made = Entity(
            secrets.token_hex(8), clean, kind, (alias,), 0, utcnow(), EntityType.of_kind(kind)
        )
        owner = w.put_entity(made, alias)
        return made if owner == made.id else replace(made, id=owner)

    def entities_of(self, memory_id: str) -> list[Entity]:
        """The entities a memory names (most named first), each counted over the live
        memories this agent may see."""
        return self._named_by(self.rt.read(self.rt.store, memory_id))

    def _named_by(self, record: Record) -> list[Entity]:
        self.rt.entities_current()
        return self.rt.store.entities.of_memory(record.id, self.rt.agent)

    def mentioning(self, name: str, limit: int = SHOW_LIMIT) -> tuple[Entity, Records]:
        """An entity and the live memories this agent may see that name it, newest first."""
        found = self.entity(name)
        [match] = self.rt.store.entities.mentioned([found.aliases[0]], _SHOW_CAP)
        filters = self.rt.filters(scope="all", include_private=self.rt.agent is not None)
        filters = replace(filters, ids=match.memory_ids, limit=limit or None)
        return found, self.rt.store.query(filters)

    def merge_entities(self, source: str, target: str, confirm: bool = False) -> EntityMerge:
        """Fold entity `source` into `target` (aliases, mentions, relations); a dry run
        unless `confirm`. Across kinds or types too (`EntityMerge.crosses` says so, for
        an interface to ask first); `target` keeps its type unless it has none."""
        old, new = self.entity(source), self.entity(target)
        if old.id == new.id:
            raise Invalid(f"{source!r} and {target!r} are already one entity ({new.name})")
        mine, theirs = (self.rt.store.entities.relations([e.id], self.rt.agent) for e in (old, new))
        moved, ended = vocabulary.merged_relations(old.id, new.id, mine, theirs)
        plan = EntityMerge(old, new, old.aliases, old.mentions, False, moved, ended)
        if not confirm:
            return plan
        with self.rt.transaction() as w:
            w.merge_entities(old.id, new.id)
            if new.type is EntityType.UNKNOWN and old.type is not EntityType.UNKNOWN:
                w.set_entity_type(new.id, old.type)
            self.rt.journal(w, "entity.merge", None)
        return replace(plan, done=True)


def _alias(name: str) -> str:
    alias = normalize_alias(name)
    if not alias:
        raise Invalid(f"{name!r} names no entity: it has no letters or digits")
    return alias


def _text(value: str, what: str) -> str:
    text = " ".join(value.split())
    if not text:
        raise Invalid(f"the {what} is empty")
    return text
