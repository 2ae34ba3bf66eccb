"""The official MCP memory server's knowledge graph, kept as memlane memories.

    entity       a card: one memory titled with the entity's name, body "NAME (TYPE)"
    observation  one memory per observation: titled with the entity's name, its body
                 the observation, anchored to the card
    relation     a relation of memlane's entity graph between the cards' entities
                 (`memlane relationships NAME`), its type kept as written

Entities no memory names that have a current relation (made by `memlane relate`)
are part of the graph too, with their canonical type as entityType and no
observations, so the tools see what the CLI relates; adding an observation to one
gives it a card, deleting one ends its relations.

Every memory is tagged `mcp-memory` (the graph is read with one query) and
`entity:NAME` for each entity it is about (so memlane's entities list them, and a
relation has its ends), and its source_ref, `mcp-memory:` + a JSON object shaped like
a line of the official server's memory.jsonl, says exactly what it stands for. So
names and types read back as given, whatever memlane's text handling does to titles,
and the memories recall, link and decay like any other. A relation memory ("FROM
RELATION TO", anchored to both cards, source_ref type "relation"), as stores written
by older versions hold them, reads as a relation too, and deleting it deletes it.

The operations keep the official server's semantics (names unique, observations
unique per entity, relations unique per triple, deleting an entity ends its
relations) with one difference: relation types that mean the same in memlane's
vocabulary ("uses" and "utilizes") make one relation. Deleting a relation ends it:
`memlane relationships NAME --all` still shows it. Texts are stored as memlane
stores text (trimmed, NFC, secrets redacted). Compat writes skip memlane's
near-duplicate policy: two entities may well share an observation, and each must
keep its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import msgspec

from memlane.errors import Invalid, NotFound
from memlane.graph.entities import normalize_alias
from memlane.graph.relations import read_predicate, read_type
from memlane.memory import Memory
from memlane.model import EntityType, Record
from memlane.model import Relation as Stored
from memlane.write.normalize import clean_text

MARKER = "mcp-memory"
SOURCE_PREFIX = f"{MARKER}:"
ENTITY_TAG = "entity:"
T = TypeVar("T", "Entity", "Relation")


class Entity(msgspec.Struct, frozen=True):
    name: str
    entity_type: str
    observations: tuple[str, ...] = ()


class Relation(msgspec.Struct, frozen=True):
    source: str
    target: str
    relation_type: str

    def touches(self, names: Iterable[str]) -> bool:
        return not {self.source, self.target}.isdisjoint(names)


class Graph(msgspec.Struct):
    """The graph as stored: cards by name (oldest first), their observation memories,
    and the relation memories."""

    cards: dict[str, tuple[str, Record]] = msgspec.field(
        default_factory=dict
    )  # name -> (type, card)
    observations: dict[str, list[Record]] = msgspec.field(default_factory=dict)
    # Entities of the entity graph without a card: name -> canonical type.
    uncarded: dict[str, str] = msgspec.field(default_factory=dict)
    # A stored relation's id, or the memory an older store kept a relation as.
    relations: dict[Relation, str | Record] = msgspec.field(default_factory=dict)

    def entity(self, name: str) -> Entity:
        if name in self.uncarded:
            return Entity(name, self.uncarded[name])
        kind, _ = self.cards[name]
        return Entity(name, kind, tuple(r.body for r in self.observations.get(name, [])))

    def names(self) -> list[str]:
        """The cards' names (oldest first), then the uncarded entities' (by name)."""
        return [*self.cards, *self.uncarded]

    def entities(self, names: Iterable[str] | None = None) -> list[Entity]:
        wanted = set(self.names() if names is None else names)
        return [self.entity(name) for name in self.names() if name in wanted]

    def relations_touching(self, names: Iterable[str]) -> list[Relation]:
        chosen = set(names)
        return [r for r in self.relations if r.touches(chosen)]


class KnowledgeGraph:
    """The nine operations of the official memory server over one Memory: the graph
    is read from `read_scopes` and written to `write_scope`."""

    def __init__(self, memory: Memory, write_scope: str, read_scopes: Sequence[str]) -> None:
        self.memory = memory
        self.write_scope = write_scope
        self.read_scopes = list(read_scopes)

    def read(self) -> Graph:
        graph = Graph()
        records = self.memory.list(tags=[MARKER], scope=self.read_scopes, limit=0, order="oldest")
        for record in records:
            described = _described(record)
            if described is not None:
                _place(graph, record, described)
        carded = {normalize_alias(name) for name in graph.cards}
        uncarded = {
            e.name: e.type.value
            for e in self.memory.graph.unnamed_entities()
            if carded.isdisjoint(e.aliases)
        }
        for stored in self.memory.graph.relations_named([*graph.cards, *uncarded]):
            relation = _as_given(stored)
            graph.relations.setdefault(relation, stored.id)
            for end in (relation.source, relation.target):
                if end in uncarded:  # one with no current relation is not in the graph
                    graph.uncarded[end] = uncarded[end]
        graph.uncarded = dict(sorted(graph.uncarded.items()))
        return graph

    def create_entities(self, entities: Sequence[Entity]) -> list[Entity]:
        """The entities whose names were new, created with their observations."""
        graph, new = self.read(), dict[str, Entity]()
        for given in entities:
            entity = _entity(given)
            if entity.name not in graph.cards and entity.name not in new:
                new[entity.name] = entity
        cards_lines = [self._card(e) for e in new.values()]
        for text in (o for e in new.values() for o in e.observations):
            self._fit(text)  # before anything is written
        cards = dict(zip(new, self._add(cards_lines), strict=True))
        observed = [(e.name, cards[e.name], o) for e in new.values() for o in e.observations]
        self._add([self._observation(name, card, text) for name, card, text in observed])
        for entity in new.values():
            self._typed(entity)
        return list(new.values())

    def _typed(self, entity: Entity) -> None:
        """Give the card's entity the canonical type its entityType names, if any and if
        it has none yet (a type someone set stays)."""
        kind = read_type(entity.entity_type)
        graph = self.memory.graph
        try:
            if (
                kind is not EntityType.UNKNOWN
                and graph.entity(entity.name).type is EntityType.UNKNOWN
            ):
                graph.set_type(entity.name, kind.value)
        except (NotFound, Invalid):  # a name past the tag limit, or of no letters: no entity
            return

    def create_relations(self, relations: Sequence[Relation]) -> list[Relation]:
        """The relations that were new; NotFound (nothing written) when an end is."""
        graph, new = self.read(), dict[Relation, None]()
        for given in relations:
            relation = _relation(given)
            for end in (relation.source, relation.target):
                _known(graph, end)
            if relation not in graph.relations:
                new[relation] = None
        made = []
        for relation in new:
            said = self.memory.graph.relate(
                relation.source, relation.relation_type, relation.target
            )
            if said.added:
                made.append(relation)
        return made

    def add_observations(
        self, items: Sequence[tuple[str, Sequence[str]]]
    ) -> list[tuple[str, list[str]]]:
        """Per item, the observations that were new to the entity; NotFound (nothing
        written) when an entity is."""
        graph = self._carded([_text(name, "entity name") for name, _ in items])
        seen = {name: {r.body for r in rs} for name, rs in graph.observations.items()}
        results, lines = [], []
        for given_name, contents in items:
            name = _text(given_name, "entity name")
            card = _card_of(graph, name)
            known = seen.setdefault(name, set())
            added = [
                t
                for t in dict.fromkeys(_text(c, "observation") for c in contents)
                if t not in known
            ]
            known.update(added)
            lines += [self._observation(name, card.id, text) for text in added]
            results.append((name, added))
        self._add(lines)
        return results

    def _carded(self, names: Sequence[str]) -> Graph:
        """The graph, once the uncarded entities of these names have a card (of their
        type) for observations to anchor to."""
        graph = self.read()
        uncarded = [
            Entity(n, graph.uncarded[n]) for n in dict.fromkeys(names) if n in graph.uncarded
        ]
        if not uncarded:
            return graph
        self.create_entities(uncarded)
        return self.read()

    def delete_entities(self, names: Sequence[str]) -> tuple[list[str], list[str]]:
        """(deleted, not found): each entity with its observations and relations."""
        graph = self.read()
        wanted = [clean_text(n) for n in names]
        deleted = [n for n in wanted if n in graph.cards or n in graph.uncarded]
        doomed = [graph.cards[n][1] for n in dict.fromkeys(deleted) if n in graph.cards]
        doomed += [r for n in dict.fromkeys(deleted) for r in graph.observations.get(n, [])]
        self._end([graph.relations[r] for r in graph.relations_touching(deleted)])
        self._delete(doomed)
        return deleted, [n for n in wanted if n not in deleted]

    def delete_observations(
        self, items: Sequence[tuple[str, Sequence[str]]]
    ) -> tuple[int, list[str]]:
        """(observations deleted, entities not found)."""
        graph, doomed, missing = self.read(), dict[str, Record](), []
        for given_name, texts in items:
            name = clean_text(given_name)
            if name not in graph.cards:
                missing.append(name)
                continue
            gone = {clean_text(t) for t in texts}
            doomed.update((r.id, r) for r in graph.observations.get(name, []) if r.body in gone)
        self._delete(list(doomed.values()))
        return len(doomed), missing

    def delete_relations(self, relations: Sequence[Relation]) -> int:
        graph = self.read()
        doomed = {_relation(r) for r in relations} & set(graph.relations)
        self._end([graph.relations[r] for r in doomed])
        return len(doomed)

    def search(self, query: str) -> tuple[list[Entity], list[Relation]]:
        """Entities whose name, type or an observation contains `query` (any case), and
        the relations touching them: the official server's substring match."""
        graph, needle = self.read(), query.casefold()
        found = [e for e in graph.entities() if _contains(e, needle)]
        return found, graph.relations_touching(e.name for e in found)

    def open(self, names: Sequence[str]) -> tuple[list[Entity], list[Relation]]:
        graph = self.read()
        found = graph.entities(clean_text(n) for n in names)
        return found, graph.relations_touching(e.name for e in found)

    def load(
        self,
        entities: Sequence[Entity],
        relations: Sequence[Relation],
        progress: Callable[[int, int | None, str], None] = lambda done, total, what: None,
    ) -> dict[str, int]:
        """Import a whole graph (a memory.jsonl): new entities, observations new to
        their entity, new relations. Relation ends must be entities of the file or of
        the graph already; otherwise nothing is written. `progress` is told each of the
        three phases as it starts."""
        known = set(self.read().cards) | {_text(e.name, "entity name") for e in entities}
        for relation in relations:
            for end in (relation.source, relation.target):
                if clean_text(end) not in known:
                    raise NotFound(f"Entity with name {end} not found")
        progress(0, 3, "entities")
        created = self.create_entities([Entity(e.name, e.entity_type) for e in entities])
        progress(1, 3, "observations")
        added = self.add_observations([(e.name, e.observations) for e in entities])
        progress(2, 3, "relations")
        linked = self.create_relations(relations)
        progress(3, 3, "relations")
        return {
            "entities": len(created),
            "observations": sum(len(a) for _, a in added),
            "relations": len(linked),
        }

    # ---- writing -------------------------------------------------------------------

    def _card(self, entity: Entity) -> dict[str, Any]:
        described = {"type": "entity", "name": entity.name, "entityType": entity.entity_type}
        return self._line(
            f"{entity.name} ({entity.entity_type})", entity.name, described, [entity.name]
        )

    def _observation(self, name: str, card_id: str, text: str) -> dict[str, Any]:
        described = {"type": "observation", "entityName": name}
        return {**self._line(text, name, described, [name]), "anchors": [card_id]}

    def _line(
        self, content: str, title: str | None, described: Mapping[str, str], names: list[str]
    ) -> dict[str, Any]:
        """One add-batch line. Trigger: a title or an `entity:` tag past memlane's
        limits. Why: the source_ref keeps the name whole anyway. Outcome: the title is
        derived from the body; the tag is left out."""
        limits = self.memory.limits
        self._fit(content)
        tags = [MARKER, *(ENTITY_TAG + n for n in dict.fromkeys(names))]
        return {
            "content": content,
            "title": title if title and len(title) <= limits.title_chars else None,
            "tags": [t for t in tags if len(t) <= limits.tag_chars],
            "scope": self.write_scope,
            "source_ref": SOURCE_PREFIX + json.dumps(described, ensure_ascii=False),
            "allow_duplicate": True,  # see the module docstring
        }

    def _fit(self, content: str) -> None:
        limit = self.memory.limits.body_bytes
        if len(content.encode("utf-8")) > limit:
            raise Invalid(f"{content[:40]!r}… is longer than {limit} bytes")

    def _add(self, lines: list[dict[str, Any]]) -> list[str]:
        """Add the lines in batch transactions; their ids, in order."""
        if not lines:
            return []
        result = self.memory.add_batch(lines)
        failed = result.failed
        if failed:  # the texts were checked first, so this is rare: say which
            raise Invalid(f"{len(failed)} write(s) refused, first: {failed[0].error}")
        return [ln.result.id for ln in result.lines if ln.result and ln.result.id]

    def _delete(self, records: Sequence[Record]) -> None:
        for record in records:
            self.memory.delete(record.id)

    def _end(self, relations: Sequence[str | Record]) -> None:
        """End stored relations; delete an older store's relation memories."""
        self._delete([r for r in relations if isinstance(r, Record)])
        ids = [r for r in relations if isinstance(r, str)]
        if ids:
            self.memory.graph.end_relations(ids)


def parse_jsonl(text: str) -> tuple[list[Entity], list[Relation]]:
    """The entities and relations of an official memory.jsonl; Invalid naming the
    first bad line (the official server would skip it; an import refuses)."""
    entities: list[Entity] = []
    relations: list[Relation] = []
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise Invalid(f"line {number}: not valid JSON ({exc})") from None
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "entity":
            entities.append(_read(number, item, Entity, "name", "entityType", "observations"))
        elif kind == "relation":
            relations.append(_read(number, item, Relation, "from", "to", "relationType"))
        else:
            raise Invalid(f'line {number}: expected an object with "type" entity or relation')
    return entities, relations


def _read(number: int, item: dict[str, Any], cls: type[T], *keys: str) -> T:
    """One entity or relation line: its string fields (and observations) by key."""
    values: list[Any] = [item.get(key) for key in keys]
    for key, value in zip(keys, values, strict=True):
        if key == "observations":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise Invalid(f"line {number}: {key!r} is missing or not a list of strings")
        elif not isinstance(value, str):
            raise Invalid(f"line {number}: {key!r} is missing or not a string")
    if cls is Entity:
        values[2] = tuple(values[2])
    return cls(*values)


# ---- reading -------------------------------------------------------------------------


def _described(record: Record) -> dict[str, Any] | None:
    """What a graph memory stands for, from its source_ref (None: not one of ours)."""
    ref = record.source_ref or ""
    if not ref.startswith(SOURCE_PREFIX):
        return None
    try:
        found = json.loads(ref.removeprefix(SOURCE_PREFIX))
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _place(graph: Graph, record: Record, described: dict[str, Any]) -> None:
    """Put one memory where it belongs in the graph. The list is oldest first and a
    card is always written before what names it, so cards are placed first; an
    observation or relation whose card is gone is left out."""
    kind = described.get("type")
    if kind == "entity":
        name, entity_type = str(described.get("name")), str(described.get("entityType"))
        graph.cards.setdefault(name, (entity_type, record))
    elif kind == "observation":
        name = str(described.get("entityName"))
        if name in graph.cards:
            graph.observations.setdefault(name, []).append(record)
    elif kind == "relation":
        relation = Relation(
            str(described.get("from")), str(described.get("to")), str(described.get("relationType"))
        )
        if relation.source in graph.cards and relation.target in graph.cards:
            graph.relations.setdefault(relation, record)


def _as_given(stored: Stored) -> Relation:
    """A stored relation as the client wrote it: a passive type ("owned_by") was
    stored with its ends swapped."""
    ends = (stored.subject, stored.object)
    if read_predicate(stored.label).swapped:
        ends = (stored.object, stored.subject)
    return Relation(ends[0], ends[1], stored.label)


def _known(graph: Graph, name: str) -> None:
    if name not in graph.cards and name not in graph.uncarded:
        raise NotFound(f"Entity with name {name} not found")


def _card_of(graph: Graph, name: str) -> Record:
    if name not in graph.cards:
        raise NotFound(f"Entity with name {name} not found")
    return graph.cards[name][1]


def _contains(entity: Entity, needle: str) -> bool:
    texts = (entity.name, entity.entity_type, *entity.observations)
    return any(needle in text.casefold() for text in texts)


def _text(value: str, what: str) -> str:
    text = clean_text(value, what)
    if not text:
        raise Invalid(f"{what} is empty")
    return text


def _entity(given: Entity) -> Entity:
    observations = tuple(dict.fromkeys(_text(o, "observation") for o in given.observations))
    return Entity(
        _text(given.name, "entity name"), _text(given.entity_type, "entity type"), observations
    )


def _relation(given: Relation) -> Relation:
    return Relation(
        _text(given.source, "relation from"),
        _text(given.target, "relation to"),
        _text(given.relation_type, "relation type"),
    )
