"""Entities: mentions kept current on every write, listing, show, merge, the entity lane."""

from __future__ import annotations

import pytest

from conftest import raw_sql
from memlane import Context, Memory
from memlane.errors import Invalid, NotFound
from memlane.model import EntityType
from memlane.retrieve import lanes


def names(memory: Memory, kind: str | None = None) -> dict[str, int]:
    return {e.name: e.mentions for e in memory.graph.entities(kind)}


def test_every_write_records_what_a_memory_names(mem):
    mem.add("Ada Lovelace fixed `MemoryStore.flush` in src/memlane/store.py; ping @grace.")
    mem.add("The memory_store lock is held by @grace.", tags=["entity:Postgres"])
    found = {e.name: (e.kind.value, e.mentions) for e in mem.graph.entities()}
    assert found["@grace"] == ("handle", 2)
    assert found["Ada Lovelace"] == ("person_or_name", 1)
    assert found["src/memlane/store.py"] == ("path", 1)
    assert found["Postgres"] == ("tag", 1)
    assert names(mem, "handle") == {"@grace": 2}


def test_an_update_replaces_the_mentions_and_a_delete_drops_them(mem):
    first = mem.add("Grace Hopper owns the `Scheduler`.").id
    mem.add("The `Scheduler` runs every minute.")
    mem.update(first, title="New owner", content="Linus Torvalds owns the `Scheduler` now.")
    assert "Grace Hopper" not in names(mem)
    assert names(mem)["Linus Torvalds"] == 1
    assert names(mem)["Scheduler"] == 2
    mem.delete(first)
    assert "Linus Torvalds" not in names(mem)
    assert names(mem)["Scheduler"] == 1


def test_tombstoned_and_private_memories_do_not_show_their_entities(mem, db_path):
    gone = mem.add("`OldCache` was replaced.").id
    mem.invalidate(gone, reason="obsolete")
    mem.add("Credentials live in `VaultClient`.", visibility="private")
    assert "OldCache" not in names(mem)
    assert "VaultClient" in names(mem)  # its owner sees it
    with Memory.open(db_path, agent="someone-else", context=Context("proj", "main")) as other:
        assert "VaultClient" not in names(other)
        with pytest.raises(NotFound):
            other.graph.entity("VaultClient")


def test_show_finds_an_entity_by_any_spelling_with_its_memories(mem):
    ids = {mem.add(text).id for text in ("`MemoryStore` caches rows.", "memory_store is slow.")}
    mem.add("Unrelated note about lunch.")
    entity, records = mem.graph.mentioning("Memory Store")
    assert entity.name == "MemoryStore"
    assert {r.id for r in records} == ids
    with pytest.raises(NotFound):
        mem.graph.entity("NoSuchThing")
    with pytest.raises(Invalid):
        mem.graph.entity("!!!")


def test_merge_is_a_dry_run_until_confirmed_and_moves_aliases_and_mentions(mem):
    mem.add("Ask @ghopper about COBOL.")
    mem.add("Ask @grace-h about the compiler.")
    plan = mem.graph.merge_entities("@ghopper", "@grace-h")
    assert not plan.done and plan.aliases == ("ghopper",) and plan.mentions == 1
    assert names(mem) == {"@ghopper": 1, "@grace-h": 1, "COBOL": 1}
    done = mem.graph.merge_entities("@ghopper", "@grace-h", confirm=True)
    assert done.done
    assert names(mem) == {"@grace-h": 2, "COBOL": 1}
    assert set(mem.graph.entity("ghopper").aliases) == {"ghopper", "graceh"}
    # A later mention of the old alias lands on the merged entity.
    mem.add("@ghopper approved the release.")
    assert names(mem)["@grace-h"] == 3


def test_a_merge_across_kinds_says_it_crosses_and_refuses_self(mem):
    mem.add("Ask @cobol about the `Cobol` parser and `Compiler`.")
    mem.add("The `Compiler` is slow.")
    plan = mem.graph.merge_entities("@cobol", "Compiler")
    assert plan.crosses and not plan.done
    with pytest.raises(Invalid, match="already one entity"):
        mem.graph.merge_entities("Compiler", "compiler")
    assert names(mem)["Compiler"] == 2
    done = mem.graph.merge_entities("@cobol", "Compiler", confirm=True)
    assert done.done and mem.graph.entity("cobol").name == "Compiler"
    # the target had no type: it takes the source's (an @handle is a person)
    assert mem.graph.entity("Compiler").type is EntityType.PERSON


def test_the_entity_lane_finds_what_keywords_cannot(mem):
    target = mem.add("`RetryPolicy` caps backoff at thirty seconds.").id
    mem.add("Network timeouts are logged at warning level.")
    query = "retry policy limits"
    assert mem.search(query) == []  # no word of the query is a word of the memory
    result = mem.recall(query)
    assert [h.record.id for h in result.hits] == [target]
    assert result.hits[0].ranks == {"entity": 1}


def test_the_entity_lane_passes_through_the_filters(mem):
    gone = mem.add("`RetryPolicy` caps backoff at thirty seconds.").id
    mem.invalidate(gone, reason="changed")
    other = mem.add("`RetryPolicy` lives in the global config.", scope="global").id
    found = lanes.entity(mem.store, "retry policy", mem.filters(scope="project:proj"))
    assert found == []
    found = lanes.entity(mem.store, "retry policy", mem.filters(scope="all"))
    assert [h.record.id for h in found] == [other]


def test_the_entity_lane_skips_names_too_common_to_tell_memories_apart(mem):
    mem.add_batch({"content": f"`Worker` handled job {i}."} for i in range(60))
    rare = mem.add("`Worker` and `Scheduler` share a queue.").id
    found = lanes.entity(mem.store, "Worker", mem.filters(limit=10))
    assert found == []  # 61 memories name Worker: more than the lane's pool
    found = lanes.entity(mem.store, "Worker Scheduler", mem.filters(limit=10))
    assert [h.record.id for h in found] == [rare]


def test_rarer_names_weigh_more_in_the_entity_lane(mem):
    common = [mem.add(f"`Parser` note {i}.").id for i in range(5)]
    rare = mem.add("`Lexer` feeds tokens.").id
    found = lanes.entity(mem.store, "Parser Lexer", mem.filters(limit=10))
    assert found[0].record.id == rare
    assert {h.record.id for h in found[1:]} == set(common)


def test_single_query_words_do_not_match_lone_capitalised_words(mem):
    mem.add("Melanie does Painting on weekends.")
    assert "Painting" in names(mem)
    assert lanes.entity(mem.store, "what about painting", mem.filters()) == []
    assert lanes.entity(mem.store, "What about Painting", mem.filters()) != []


def test_a_store_without_mentions_fills_them_in_on_first_entity_read(db_path):
    with Memory.open(db_path, context=Context("proj", "main")) as memory:
        memory.add("`LegacyThing` predates entities.")
    # A store from before mentions existed: no mention rows, extractor version "0".
    raw_sql(db_path, "DELETE FROM mention")
    raw_sql(db_path, "UPDATE store_meta SET value = '0' WHERE key = 'entity_extractor'")
    with Memory.open(db_path, context=Context("proj", "main")) as memory:
        assert names(memory) == {"LegacyThing": 1}
        assert memory.store.meta("entity_extractor") == "1"


def test_a_title_cut_from_the_body_does_not_split_a_name(mem):
    long = "Local setup for alpha: `make dev` starts the database, Redis and the " + (
        "Stripe CLI in docker compose, with the seed data loaded from fixtures/dev.json."
    )
    record = mem.get(mem.add(long).id)
    assert record.title.endswith("the Stripe…")  # the cut splits the name
    assert {"Redis", "Stripe CLI"} <= set(names(mem))
    assert "Stripe" not in names(mem)
