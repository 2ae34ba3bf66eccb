"""Entity types and the relations between entities: the pure vocabularies, then the
Graph service over a real store (on PostgreSQL too with MEMLANE_TEST_BACKEND)."""

from __future__ import annotations

import pytest

from memlane import Context, Memory
from memlane.embed import get_embedder
from memlane.errors import Invalid, NotFound
from memlane.graph.relations import merged_relations, read_predicate, read_type, same_relation
from memlane.graph.search import fuzzy_matches
from memlane.model import Entity, EntityKind, EntityType, Predicate, replace
from memlane.timeutil import utcnow

# ---- the vocabularies (pure) -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "predicate", "swapped"),
    [
        ("depends_on", Predicate.DEPENDS_ON, False),
        ("Relies On", Predicate.DEPENDS_ON, False),
        ("relies-on", Predicate.DEPENDS_ON, False),
        ("built with", Predicate.USES, False),
        ("owned by", Predicate.OWNS, True),
        ("contains", Predicate.PART_OF, True),
        ("lives in", Predicate.LOCATED_IN, False),
        ("mentors", Predicate.RELATED_TO, False),
    ],
)
def test_free_wording_maps_onto_the_canonical_predicates(
    text: str, predicate: Predicate, swapped: bool
) -> None:
    read = read_predicate(text)
    assert (read.predicate, read.swapped) == (predicate, swapped)


def test_an_unknown_predicate_keeps_its_words_under_related_to() -> None:
    read = read_predicate("  taught   chess to ")
    assert read.predicate is Predicate.RELATED_TO and read.label == "taught chess to"
    assert same_relation(Predicate.RELATED_TO, "Taught chess to", read.predicate, read.label)
    assert not same_relation(Predicate.RELATED_TO, "mentors", read.predicate, read.label)
    # synonyms of a canonical predicate are one relation whatever the words
    assert same_relation(Predicate.DEPENDS_ON, "relies on", Predicate.DEPENDS_ON, "needs")


@pytest.mark.parametrize(
    ("word", "kind"),
    [
        ("Person", EntityType.PERSON),
        ("organization", EntityType.ORGANISATION),
        ("company", EntityType.ORGANISATION),
        ("library", EntityType.TOOL),
        ("city", EntityType.PLACE),
        ("spaceship", EntityType.UNKNOWN),
    ],
)
def test_entity_type_words_map_onto_the_canonical_types(word: str, kind: EntityType) -> None:
    assert read_type(word) is kind


def test_extraction_types_paths_and_handles_only() -> None:
    assert EntityType.of_kind(EntityKind.PATH) is EntityType.FILE
    assert EntityType.of_kind(EntityKind.HANDLE) is EntityType.PERSON
    assert EntityType.of_kind(EntityKind.PERSON_OR_NAME) is EntityType.UNKNOWN


def _entity(name: str, *aliases: str, mentions: int = 1) -> Entity:
    return Entity(name, name, EntityKind.CODE, aliases or (name.lower(),), mentions, utcnow())


def test_fuzzy_search_finds_names_spelled_roughly_best_first() -> None:
    known = [
        _entity("PostgreSQL", "postgresql", "pg"),
        _entity("Ada Lovelace", "adalovelace"),
        _entity("pip"),
    ]
    hits = fuzzy_matches("postgress", known, 5)
    assert [h.entity.name for h in hits] == ["PostgreSQL"] and hits[0].score >= 80
    assert [h.entity.name for h in fuzzy_matches("ada", known, 5)] == ["Ada Lovelace"]
    assert fuzzy_matches("api", known, 5) == []  # "pip" is not alike enough


# ---- the service over a store --------------------------------------------------------


def test_relate_maps_the_predicate_makes_unknown_ends_and_is_idempotent(mem: Memory) -> None:
    note = mem.add("The billing-api relies on `PostgreSQL` for its orders.").id
    first = mem.graph.relate("billing-api", "relies on", "postgresql", "orders", memory=note)
    assert first.added and first.relation.predicate is Predicate.DEPENDS_ON
    assert (first.relation.subject, first.relation.object) == ("billing-api", "PostgreSQL")
    assert first.relation.memory_id == note and first.relation.context == "orders"
    again = mem.graph.relate("Billing API", "depends_on", "PostgreSQL")
    assert not again.added and again.relation.id == first.relation.id
    passive = mem.graph.relate("billing-api", "owned by", "Team Payments").relation
    assert (passive.subject, passive.predicate, passive.object) == (
        "Team Payments",
        Predicate.OWNS,
        "billing-api",
    )
    shown = mem.graph.relationships("BILLING-API")
    assert [r.id for r in shown.relations] == [first.relation.id, passive.id]
    with pytest.raises(Invalid, match="one entity"):
        mem.graph.relate("postgresql", "uses", "PostgreSQL")
    with pytest.raises(Invalid, match="predicate is empty"):
        mem.graph.relate("a1", "  ", "b1")


def test_unrelate_ends_a_relation_and_all_still_shows_it(mem: Memory) -> None:
    kept = mem.graph.relate("Ada", "mentors", "Grace").relation
    other = mem.graph.relate("Ada", "works on", "Engine").relation
    [ended] = mem.graph.unrelate("ada", "Mentors", "grace")
    assert ended.id == kept.id and ended.valid_to is not None
    assert [r.id for r in mem.graph.relationships("Ada").relations] == [other.id]
    history = mem.graph.relationships("Ada", include_ended=True).relations
    assert [r.id for r in history] == [kept.id, other.id]
    with pytest.raises(NotFound):
        mem.graph.unrelate("Ada", "mentors", "Grace")  # already ended
    again = mem.graph.relate("Ada", "mentors", "Grace")
    assert again.added and again.relation.id != kept.id  # a new period, not the old row


def test_a_relation_from_a_private_memory_is_its_owners_and_goes_when_forgotten(
    db_path,
) -> None:
    def open_as(agent: str) -> Memory:
        return Memory.open(db_path, agent=agent, context=Context("proj", "main"),
                           embedder=get_embedder("hash"))  # fmt: skip

    with open_as("ada") as ada:
        secret = ada.add("`Vault` guards the `Ledger`.", private=True).id
        hidden = ada.graph.relate("Vault", "part of", "Ledger", memory=secret).relation.id
        ada.graph.relate("Ledger", "uses", "Vault")
        assert len(ada.graph.relationships("Vault").relations) == 2
    with open_as("bob") as bob:
        assert [r.predicate for r in bob.graph.relationships("Vault").relations] == [Predicate.USES]
        assert bob.graph.end_relations([hidden]) == []  # not bob's to end
    with open_as("ada") as ada:
        assert len(ada.graph.relationships("Vault").relations) == 2  # still current
        ada.forget(secret)
        left = ada.graph.relationships("Vault", include_ended=True).relations
        assert [r.predicate for r in left] == [Predicate.USES]


def test_types_are_set_by_extraction_and_by_hand(mem: Memory) -> None:
    mem.add("@ghopper edited src/memlane/store.py with `Black`.")
    assert mem.graph.entity("@ghopper").type is EntityType.PERSON
    assert mem.graph.entity("src/memlane/store.py").type is EntityType.FILE
    assert mem.graph.entity("Black").type is EntityType.UNKNOWN
    assert mem.graph.set_type("black", "tool").type is EntityType.TOOL
    assert mem.graph.entity("Black").type is EntityType.TOOL
    with pytest.raises(Invalid):
        mem.graph.set_type("black", "planet")


def test_merging_moves_relations_and_ends_what_would_repeat(mem: Memory) -> None:
    mem.graph.relate("pg", "used by", "api")
    mem.graph.relate("api", "uses", "PostgreSQL")
    mem.graph.relate("pg", "related to", "PostgreSQL")
    mem.graph.merge_entities("pg", "PostgreSQL", confirm=True)
    current = mem.graph.relationships("postgresql").relations
    assert [(r.subject, r.predicate.value, r.object) for r in current] == [
        ("api", "uses", "PostgreSQL")
    ]
    everything = mem.graph.relationships("PostgreSQL", include_ended=True).relations
    assert len(everything) == 3 and sum(r.current for r in everything) == 1


def test_entity_search_reaches_entities_made_by_hand(mem: Memory) -> None:
    mem.add("We moved the cache to `Redis`.")
    mem.graph.relate("api", "uses", "Memcached")
    assert mem.graph.search_entities("redis")[0].entity.name == "Redis"
    assert mem.graph.search_entities("memcache")[0].entity.name == "Memcached"
    with pytest.raises(Invalid):
        mem.graph.search_entities("  ")


def test_merging_ends_relations_between_the_two_and_repeats_and_moves_the_rest() -> None:
    old, new = _entity("postgres", "postgres"), _entity("PostgreSQL", "postgresql")
    between = _relation(old, Predicate.RELATED_TO, "PostgreSQL", 1)
    between = replace(between, object_id=new.id)
    repeat = _relation(old, Predicate.USES, "api", 2, inward=True)
    moved = _relation(old, Predicate.PART_OF, "stack", 3)
    held = replace(repeat, id="r-9", object_id=new.id)  # api uses PostgreSQL already
    assert merged_relations(old.id, new.id, [between, repeat, moved], [between, held]) == (1, 2)
    assert merged_relations(old.id, new.id, [moved], []) == (1, 0)


# ---- entity cards in recall ----------------------------------------------------------


def _relation(subject: Entity, predicate: Predicate, other: str, n: int, *, inward: bool = False):
    from memlane.model import Relation

    ends = [(subject.id, subject.name), (f"x{n}", other)]
    (a, an), (b, bn) = reversed(ends) if inward else ends
    at = utcnow().replace(microsecond=n)
    return Relation(f"r-{n}", a, an, predicate, predicate.value, b, bn, at)


def test_a_card_shows_the_newest_three_relations_both_ways_and_fits_a_budget() -> None:
    from memlane.retrieve.cards import cards

    api = replace(_entity("billing-api", "billingapi", "billing"), type=EntityType.SERVICE)
    said = [
        _relation(api, Predicate.USES, "Redis", 1),
        _relation(api, Predicate.DEPENDS_ON, "PostgreSQL", 2),
        _relation(api, Predicate.OWNS, "Ops Team", 3, inward=True),
        _relation(api, Predicate.PART_OF, "Billing", 4),
    ]
    [card] = cards([api, _entity("lonely")], said, None)
    assert card.text == (
        "billing-api (service; also billing): part_of Billing; owns <- Ops Team; "
        "depends_on PostgreSQL; +1 more"
    )
    assert cards([api], said, card.tokens - 1) == ()
    assert cards([api], said, card.tokens) == (card,)


def test_recall_carries_a_card_for_an_entity_the_query_names_with_relations(mem: Memory) -> None:
    mem.add("The billing-api went live on Monday.")
    mem.add("We keep the invoices in `PostgreSQL`.")
    mem.graph.relate("billing-api", "depends on", "PostgreSQL", context="invoices")
    [card] = mem.recall("when did billing-api go live").entities
    assert card.entity.name == "billing-api" and card.text.endswith("depends_on PostgreSQL")
    assert mem.recall("where are the invoices kept").entities == ()  # names no such entity
    plain = mem.recall("when did billing-api go live", max_tokens=2000)
    tight = mem.recall("when did billing-api go live", max_tokens=plain.tokens_used - 1)
    assert plain.entities and not tight.entities  # the card fits the budget or is left
    assert plain.tokens_used == tight.tokens_used + card.tokens
    mem.graph.unrelate("billing-api", "depends on", "PostgreSQL")
    assert mem.recall("when did billing-api go live").entities == ()  # no current relation


def test_relate_first_thing_on_a_store_whose_mentions_are_stale(db_path) -> None:
    from conftest import raw_sql

    def open_store() -> Memory:
        return Memory.open(db_path, agent="ada", context=Context("proj", "main"),
                           embedder=get_embedder("hash"))  # fmt: skip

    with open_store() as mem:
        mem.add("The `Scheduler` runs every night.")
    raw_sql(db_path, "UPDATE store_meta SET value = '0' WHERE key = 'entity_extractor'")
    with open_store() as mem:  # the mentions are read again before the relation is written
        assert mem.graph.relate("Scheduler", "uses", "cron").relation.subject == "Scheduler"
        assert mem.graph.entity("scheduler").mentions == 1


def test_the_extraction_prompt_offers_the_canonical_predicates() -> None:
    from memlane.hooks.llm import INSTRUCTION

    offered = INSTRUCTION.split("best one of ", 1)[1].split(", else", 1)[0]
    assert offered.split(", ") == [p.value for p in Predicate]
