"""Reading through the Python API: list/search filters, scopes, search semantics,
registries, types, tags, stats, id prefixes, and the store's schema."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from conftest import BACKEND, raw_sql, store_schema
from memlane import AmbiguousId, Conflict, Context, Invalid, Memory, NotFound, SchemaTooNew
from memlane.errors import Unavailable
from memlane.model import Filters, Hit, Kind, Link, LinkType, Record
from memlane.services.registries import Registries
from memlane.timeutil import utcnow


def ids(items: Iterable[Record | Hit]) -> list[str]:
    return [i.record.id if isinstance(i, Hit) else i.id for i in items]


def id_set(items: Iterable[Record | Hit]) -> set[str]:
    return set(ids(items))


def add(mem: Memory, body: str, **fields: Any) -> str:
    return mem.add(body, **fields).id


@pytest.fixture
def other(db_path: Path):
    with Memory.open(db_path, agent="other", context=Context("proj", "main")) as memory:
        yield memory


# ---- list filters ---------------------------------------------------------------


@pytest.fixture
def corpus(mem) -> dict[str, str]:
    """Named memories with distinct metadata, all in the default scope."""
    return {
        "lesson": add(mem, "Lesson about retries", kind="lesson", tags=["ops", "ci:flaky"]),
        "fact": add(mem, "Fact about uv", tags=["tooling"], importance=2),
        "decision": add(
            mem, "Decision on docs", type="decision", importance=9, tags=["draft-2", "docs"]
        ),
        "wake": add(mem, "Identity note", wake_phrases=["who am I"], importance=10),
        "foundational": add(mem, "Core value", resonance_type="foundational", importance=6),
        "general": add(mem, "General thing", category="general", tags=["draft"]),
    }


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"category": "lesson"}, {"lesson"}),
        ({"category": "lesson,general"}, {"lesson", "general"}),
        ({"kind": "decision"}, {"decision"}),
        ({"kind": ["lesson", "decision"]}, {"lesson", "decision"}),
        ({"tags": "ops"}, {"lesson"}),
        ({"tags": "tooling,docs"}, {"fact", "decision"}),
        ({"tags": "nope"}, set()),
        ({"exclude_tags": "draft"}, {"lesson", "fact", "wake", "foundational"}),
        ({"exclude_tags": "ci:"}, {"fact", "decision", "wake", "foundational", "general"}),
        ({"exclude_tags": "draft,ops"}, {"fact", "wake", "foundational"}),
        ({"min_importance": 9}, {"decision", "wake"}),
        ({"max_importance": 2}, {"fact"}),
        ({"min_importance": 5, "max_importance": 6}, {"lesson", "foundational", "general"}),
        ({"has_wake_phrase": True}, {"wake"}),
        ({"missing_wake_phrase": True}, {"lesson", "fact", "decision", "foundational", "general"}),
        ({"has_resonance_type": True}, {"decision", "foundational"}),
        ({"missing_resonance_type": True}, {"lesson", "fact", "wake", "general"}),
        ({"resonance_types": "foundational"}, {"foundational"}),
        ({"resonance_types": "ephemeral"}, {"decision"}),
        ({"category": "lesson", "tags": "tooling"}, set()),
    ],
)
def test_list_filters(mem, corpus, options, expected):
    by_id = {v: k for k, v in corpus.items()}
    assert {by_id[i] for i in ids(mem.list(**options))} == expected


def test_list_min_importance_uses_decayed_resonance(mem, corpus):
    """Five weeks on, importance 6 has decayed below 6 unless foundational."""
    later = utcnow() + timedelta(weeks=5)
    found = id_set(mem.list(min_importance=6, as_of=later))
    assert corpus["foundational"] in found
    assert corpus["general"] not in found
    assert corpus["lesson"] not in found


def test_list_anchor_presence(mem):
    source, target = add(mem, "Anchored note"), add(mem, "Anchor target")
    with mem.store.write() as w:
        w.add_link(Link(source, target, LinkType.ANCHOR, score=0.8))
    assert mem.get(source).anchors == (target,)
    assert ids(mem.list(has_anchors=True)) == [source]
    assert ids(mem.list(missing_anchors=True)) == [target]


def test_list_session_filter(mem):
    a = add(mem, "in session", session_id="s1")
    add(mem, "elsewhere", session_id="s2")
    assert ids(mem.list(session_id="s1")) == [a]


def test_list_since_until_use_event_time_half_open(mem):
    jan = add(mem, "January", occurred_at="2020-01-10T00:00:00Z")
    feb = add(mem, "February", occurred_at="2020-02-10T00:00:00Z")
    mar = add(mem, "March", occurred_at="2020-03-10T00:00:00Z")
    now = add(mem, "No event time")
    assert id_set(mem.list(since="2020-02-01")) == {feb, mar, now}
    assert id_set(mem.list(until="2020-02-10T00:00:00Z")) == {jan}
    assert id_set(mem.list(since="2020-02-10T00:00:00Z", until="2020-03-10")) == {feb}
    assert id_set(mem.list(since=utcnow() - timedelta(hours=1))) == {now}


def test_list_limit(mem):
    mem.add_batch({"content": f"bulk note {i}"} for i in range(60))
    assert len(mem.list()) == 50
    assert len(mem.list(limit=5)) == 5
    assert len(mem.list(limit=0)) == 60


def test_list_orders(mem):
    low = add(mem, "low", importance=1)
    high = add(mem, "high", importance=9)
    mid = add(mem, "mid", importance=5)
    assert ids(mem.list(order="importance")) == [high, mid, low]
    assert ids(mem.list(order="oldest")) == [low, high, mid]
    assert ids(mem.list(order="created")) == [mid, high, low]
    assert ids(mem.list()) == [mid, high, low]
    mem.update(low, title="touched")
    assert ids(mem.list())[0] == low


def test_list_include_superseded(mem):
    old = add(mem, "old")
    new = mem.supersede(old, "new").id
    gone = add(mem, "gone")
    mem.invalidate(gone, "wrong")
    assert ids(mem.list()) == [new]
    assert id_set(mem.list(include_superseded=True)) == {old, new, gone}


def test_list_mine_and_include_private(mem, other):
    public = add(mem, "public note")
    mine = add(mem, "my private note", private=True)
    theirs = add(other, "their private note", private=True)
    assert ids(mem.list()) == [public]
    assert ids(mem.list(mine=True)) == [mine]
    assert id_set(mem.list(include_private=True)) == {public, mine}
    assert id_set(other.list(include_private=True)) == {public, theirs}


def test_list_filters_through_a_filters_object(mem, corpus):
    filters = mem.filters(kind="lesson")
    assert ids(mem.list(filters)) == [corpus["lesson"]]
    assert ids(mem.search("retries", filters)) == [corpus["lesson"]]


# ---- scopes ---------------------------------------------------------------------


@pytest.fixture
def scoped(mem) -> dict[str, str]:
    return {
        "branch": add(mem, "scoped note on main"),
        "project": add(mem, "scoped note for the project", scope="project:proj"),
        "global": add(mem, "scoped note everywhere", scope="global"),
        "dev": add(mem, "scoped note on dev", scope="project:proj@dev"),
        "elsewhere": add(mem, "scoped note other project", scope="project:other"),
    }


def names(scoped: dict[str, str], found: Iterable[Record | Hit]) -> set[str]:
    by_id = {v: k for k, v in scoped.items()}
    return {by_id[i] for i in ids(found)}


def test_default_reads_cover_branch_project_and_global(mem, scoped):
    assert names(scoped, mem.list()) == {"branch", "project", "global"}
    assert names(scoped, mem.search("scoped note")) == {"branch", "project", "global"}


def test_scope_all_reads_every_scope(mem, scoped):
    assert names(scoped, mem.list(scope="all")) == set(scoped)
    assert names(scoped, mem.search("scoped", scope="all")) == set(scoped)


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        ("project:other", {"elsewhere"}),
        ("project:proj", {"project"}),
        ("global", {"global"}),
        ("global,project:proj@dev", {"global", "dev"}),
        (["project:proj@main", "project:other"], {"branch", "elsewhere"}),
    ],
)
def test_explicit_scopes_read_exactly_those(mem, scoped, scope, expected):
    assert names(scoped, mem.list(scope=scope)) == expected


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        (Context("proj", "dev"), {"dev", "project", "global"}),
        (Context("other"), {"elsewhere", "global"}),
        (Context(), {"global"}),
    ],
)
def test_default_reads_follow_the_reader_context(db_path, scoped, context, expected):
    with Memory.open(db_path, agent="tester", context=context) as reader:
        assert names(scoped, reader.list()) == expected


def test_explicit_scope_near_miss_is_refused(mem):
    with pytest.raises(Invalid, match="did you mean 'global'"):
        mem.list(scope="globl")


# ---- search -----------------------------------------------------------------------


def test_search_requires_every_word_first(mem):
    both = add(mem, "Use uv for installs", title="Package installs")
    add(mem, "uv is a Python tool")
    assert ids(mem.search("uv installs")) == [both]


def test_search_falls_back_to_any_word(mem):
    a = add(mem, "Use uv for installs")
    b = add(mem, "uv is a Python tool")
    assert id_set(mem.search("uv zebra")) == {a, b}
    assert mem.search("zebra giraffe") == []


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        ("We are running the tests daily", "run test"),
        ("Connections were retried", "retry connection"),
        ("The installer installs packages", "install package"),
        ("Visit the café downstairs", "cafe"),
        ("Installation notes", "instal*"),
    ],
)
def test_search_stems_and_folds_words(mem, stored, query):
    memory_id = add(mem, stored)
    assert ids(mem.search(query)) == [memory_id]


def test_search_matches_tags(mem):
    tagged = add(mem, "Something unrelated", tags=["reliability"])
    assert ids(mem.search("reliability")) == [tagged]


def test_search_ranks_title_matches_higher_and_numbers_hits(mem):
    body_only = add(mem, "Use backoff when retrying failed calls.", title="Retry policy")
    in_title = add(mem, "Details of the retry policy.", title="Backoff")
    hits = mem.search("backoff")
    assert ids(hits) == [in_title, body_only]
    assert [h.rank for h in hits] == [1, 2]
    assert hits[0].score >= hits[1].score


@pytest.mark.parametrize(
    "query", ['"unbalanced', "a OR (b", "NOT", "col:umn", "*", "-x", "AND AND", "'; DROP"]
)
def test_search_never_fails_on_syntax(mem, query):
    add(mem, "harmless content")
    assert isinstance(mem.search(query), list)


def test_search_applies_filters_and_limit(mem):
    for i in range(5):
        add(mem, f"widget note {i}", kind="lesson" if i % 2 else "fact")
    assert len(mem.search("widget", kind="lesson")) == 2
    assert len(mem.search("widget", limit=3)) == 3


def test_search_excludes_tombstoned_unless_asked(mem):
    old = add(mem, "obsolete widget")
    mem.retire(old)
    assert mem.search("widget") == []
    assert ids(mem.search("widget", include_superseded=True)) == [old]


# ---- registries, types, tags ----------------------------------------------------------

DEFAULT_CATEGORIES = {
    "general",
    *(k.value for k in Kind),
}


def test_default_categories_cover_every_kind(mem):
    assert {e.key for e in mem.registries.registry("categories")} == DEFAULT_CATEGORIES


@pytest.mark.parametrize("registry", ["categories", "agents", "projects", "applicability"])
def test_register_lists_and_unregisters(mem, registry):
    entry = mem.registries.register(registry, " newkey ", description="first")
    assert entry.key == "newkey"
    assert mem.registries.registry_entry(registry, "newkey").data == {"description": "first"}
    mem.registries.register(registry, "newkey", description="second")
    assert mem.registries.registry_entry(registry, "newkey").data == {"description": "second"}
    assert [e.key for e in mem.registries.registry(registry)].count("newkey") == 1
    mem.registries.unregister(registry, "newkey")
    with pytest.raises(NotFound):
        mem.registries.registry_entry(registry, "newkey")


@pytest.mark.parametrize("key", ["", "   ", "a,b", "x" * 65, "two\nlines"])
def test_register_refuses_bad_names(mem, key):
    with pytest.raises(Invalid):
        mem.registries.register("agents", key)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.registries.registry("colours"),
        lambda m: m.registries.register("colours", "red"),
        lambda m: m.registries.unregister("colours", "red"),
    ],
)
def test_unknown_registry_is_refused(mem, call):
    with pytest.raises(Invalid, match="unknown registry"):
        call(mem)


def test_unregister_unknown_entry_is_not_found(mem):
    with pytest.raises(NotFound):
        mem.registries.unregister("agents", "nobody")


def test_category_in_use_cannot_be_removed(mem):
    mem.registries.register("categories", "recipes")
    memory_id = add(mem, "Bake at 200C", category="recipes")
    with pytest.raises(Conflict, match="used by 1"):
        mem.registries.unregister("categories", "recipes")
    assert "recipes" in {e.key for e in mem.registries.registry("categories")}
    mem.delete(memory_id)
    mem.registries.unregister("categories", "recipes")
    with pytest.raises(Invalid, match="unknown category"):
        mem.add("Bake again", category="recipes")


def test_removed_category_is_refused_by_another_open_store(mem, db_path):
    """A category removed by one process must not stay writable in another one."""
    mem.registries.register("categories", "recipes")
    mem.delete(add(mem, "Bake at 200C", category="recipes"))  # mem has now seen "recipes"
    with Memory.open(db_path, agent="admin", context=Context()) as admin:
        admin.registries.unregister("categories", "recipes")
    with pytest.raises(Invalid, match="unknown category"):
        mem.add("Bake again", category="recipes")


def test_usage_counts_memories_per_value(mem):
    add(mem, "one", category="lesson")
    add(mem, "two", category="lesson")
    assert mem.registries.usage("category", "lesson") == 2
    assert mem.registries.usage("category", "fact") == 0
    with pytest.raises(Invalid):
        mem.registries.usage("body", "x")


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("kinds", [k.value for k in Kind]),
        (
            "resonance-types",
            ["foundational", "transformative", "relational", "operational", "ephemeral", "session"],
        ),
        (
            "Resonance_Types",
            ["foundational", "transformative", "relational", "operational", "ephemeral", "session"],
        ),
        ("content-types", ["text", "code", "config", "data"]),
        (
            "fact-types",
            [
                "decision",
                "insight",
                "person",
                "quote",
                "thread_opened",
                "commitment",
                "thread_closed",
            ],
        ),
        ("signals", ["test", "compile", "lint", "reviewer", "user", "none"]),
        ("taints", ["trusted_internal", "untrusted_tool", "untrusted_web"]),
        ("memory-classes", ["episodic", "semantic", "procedural"]),
    ],
)
def test_types_lists_valid_values(name, values):
    assert Registries.types(name) == values


@pytest.mark.parametrize(
    "name", ["source-types", "entry-types", "relationship-types", "session-types"]
)
def test_types_every_documented_list_exists(name):
    assert Registries.types(name)


def test_types_unknown_list_is_refused():
    with pytest.raises(Invalid, match="unknown type list"):
        Registries.types("colours")


def test_tags_counts_usage_optionally_per_category(mem):
    add(mem, "one", tags=["a", "b"])
    add(mem, "two", tags=["a"], category="lesson")
    assert mem.registries.tags() == {"a": 2, "b": 1}
    assert mem.registries.tags("lesson") == {"a": 1}
    assert mem.registries.tags("decision") == {}


# ---- stats ---------------------------------------------------------------------------


def test_stats_counts(mem, db_path):
    a = add(mem, "a fact")
    b = add(mem, "a lesson", kind="lesson")
    c = add(mem, "to invalidate")
    d = add(mem, "to retire", scope="global")
    mem.update(a, title="edited")
    mem.supersede(b, "a better lesson")
    mem.invalidate(c, "wrong")
    mem.retire(d)
    stats = mem.stats()
    assert (stats.total, stats.live, stats.superseded, stats.invalidated) == (5, 2, 1, 1)
    assert stats.retired == 1  # ended with no successor: not untrue, no longer kept
    assert (stats.versions, stats.links) == (1, 1)
    assert stats.by_kind == {"fact": 1, "lesson": 1}
    assert stats.by_category == {"fact": 1, "lesson": 1}
    assert stats.by_scope == {"project:proj@main": 2}
    assert stats.by_class == {"semantic": 1, "procedural": 1}
    assert stats.schema_version == store_schema().LATEST
    if BACKEND == "postgres":  # the URL without its password
        shown, url = urlsplit(stats.path), urlsplit(str(db_path))
        assert (shown.scheme, shown.hostname, shown.path, shown.query) == (
            url.scheme, url.hostname, url.path, url.query
        )  # fmt: skip
        assert shown.password in (None, "***")
    else:
        assert Path(stats.path) == db_path


def test_stats_of_an_empty_store(mem):
    stats = mem.stats()
    assert (stats.total, stats.live, stats.superseded, stats.invalidated) == (0, 0, 0, 0)
    assert stats.by_kind == {}


# ---- id prefixes ----------------------------------------------------------------------


@pytest.fixture
def fixed_ids(mem, monkeypatch) -> list[str]:
    """Three memories with chosen ids: two share the prefix `abcd`."""
    chosen = iter(["m-abcd0001", "m-abcd0002", "m-wxyz0003"])
    monkeypatch.setattr("memlane.runtime.new_id", lambda: next(chosen))
    return [add(mem, f"memory number {i}") for i in range(3)]


@pytest.mark.parametrize(
    ("given", "full"),
    [
        ("m-wxyz0003", "m-wxyz0003"),
        ("wxyz0003", "m-wxyz0003"),
        ("m-wx", "m-wxyz0003"),
        ("wx", "m-wxyz0003"),
        ("  w  ", "m-wxyz0003"),
        ("abcd0002", "m-abcd0002"),
    ],
)
def test_id_prefix_resolves_with_and_without_m_dash(mem, fixed_ids, given, full):
    assert mem.resolve(given) == full
    assert mem.get(given).id == full


@pytest.mark.parametrize("prefix", ["abcd", "m-abc", "a"])
def test_ambiguous_prefix_lists_the_candidates(mem, fixed_ids, prefix):
    with pytest.raises(AmbiguousId) as err:
        mem.get(prefix)
    assert isinstance(err.value, Invalid)
    assert err.value.candidates == ["m-abcd0001", "m-abcd0002"]
    assert "m-abcd0001" in str(err.value)
    assert "m-abcd0002" in str(err.value)


def test_ambiguous_prefix_changes_nothing(mem, fixed_ids):
    with pytest.raises(AmbiguousId):
        mem.update("abcd", title="which one?")
    with pytest.raises(AmbiguousId):
        mem.delete("abcd")
    assert [mem.get(i).version for i in fixed_ids] == [1, 1, 1]


def test_a_prefix_resolves_among_the_scopes_given_only(mem, monkeypatch):
    chosen = iter(["m-abcd0001", "m-abcd0002", "m-abcd0003"])
    monkeypatch.setattr("memlane.runtime.new_id", lambda: next(chosen))
    for n, scope in enumerate(("global", "project:alpha", "project:alpha@main")):
        mem.add(f"memory number {n}", scope=scope)
    assert mem.resolve("abcd", ["project:alpha"]) == "m-abcd0002"
    with pytest.raises(AmbiguousId) as err:
        mem.resolve("abcd", ["project:alpha", "project:alpha@main"])
    assert err.value.candidates == ["m-abcd0002", "m-abcd0003"]
    for outside in ("m-abcd0001", "abcd0001"):
        with pytest.raises(NotFound, match=f"no memory with id '{outside}'"):
            mem.resolve(outside, ["project:alpha"])
    with pytest.raises(NotFound):
        mem.resolve("abcd", [])


@pytest.mark.parametrize("given", ["zzz", "m-abcd0009", "m-abcd00011"])
def test_unknown_id_is_not_found(mem, fixed_ids, given):
    with pytest.raises(NotFound):
        mem.get(given)


@pytest.mark.parametrize("given", ["", "   "])
def test_empty_id_is_invalid(mem, given):
    with pytest.raises(Invalid):
        mem.get(given)


# ---- the store's schema ------------------------------------------------------------------


raw = raw_sql


@pytest.mark.sqlite_only
def test_journal_mode_is_wal(mem, db_path):
    assert raw(db_path, "PRAGMA journal_mode") == [("wal",)]


def test_reopening_a_store_is_idempotent(db_path):
    for round_ in range(3):
        with Memory.open(db_path, agent="tester", context=Context()) as memory:
            memory.add(f"round {round_}")
            assert memory.stats().schema_version == store_schema().LATEST
    assert raw(db_path, "SELECT version, name FROM schema_migrations") == [
        (number, name) for number, name, _ in store_schema().MIGRATIONS
    ]
    assert raw(db_path, "SELECT count(*) FROM registry WHERE registry = 'categories'") == [
        (len(DEFAULT_CATEGORIES),)
    ]
    with Memory.open(db_path, context=Context()) as memory:
        assert len(memory.list(scope="all")) == 3


def test_a_store_from_a_newer_memlane_is_refused(db_path):
    with Memory.open(db_path, context=Context()) as memory:
        memory.add("written by this version")
    raw(
        db_path,
        "INSERT INTO schema_migrations(version, name, applied_at) VALUES (99, 'future', 'x')",
    )
    with pytest.raises(SchemaTooNew) as err:
        Memory.open(db_path, context=Context())
    message = str(err.value)
    assert "99" in message
    assert "upgrade memlane" in message
    assert isinstance(err.value, Unavailable)
    assert raw(db_path, "SELECT max(version) FROM schema_migrations") == [(99,)]


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"this is not sqlite at all, just text " * 100)
    with pytest.raises(Unavailable, match="is not a database, or its header is damaged"):
        Memory.open(path, context=Context())


def test_a_natural_language_question_finds_the_memory(mem):
    target = mem.add("The HTTP proxy is configured in settings.toml under [network].")
    mem.add("We configure nothing by hand in production.")
    mem.add("The proxy for the office printer is broken.")
    hits = mem.search("where do we configure the http proxy?")
    assert hits and hits[0].record.id == target.id


def test_a_question_of_only_common_words_still_searches(mem):
    target = mem.add("What is it? It is what it is.")
    assert [h.record.id for h in mem.search("what is it")] == [target.id]


def test_search_prefers_memories_matching_all_but_one_word(mem):
    both = mem.add("Rotate the staging TLS certificate every 90 days.")
    mem.add("Staging has its own database.")
    mem.add("Certificates live in the vault.")
    hits = mem.search("rotate staging certificate quarterly")
    assert [h.record.id for h in hits] == [both.id]


def test_a_filled_keyword_pool_ranks_strict_matches_first_then_looser_ones(mem):
    from memlane.retrieve import lanes

    both = mem.add("Rotate the staging TLS certificate every 90 days.")
    two = mem.add("Staging certificates are rotated by hand.")
    one = mem.add("Certificates live in the vault.")
    mem.add("Lunch is at noon.")
    pool = mem.filters(limit=10)
    found = lanes.keyword(mem.store, "rotate staging TLS certificate", pool, fill=True)
    assert [h.record.id for h in found] == [both.id, two.id, one.id]
    assert [h.rank for h in found] == [1, 2, 3]
    strict = lanes.keyword(mem.store, "rotate staging TLS certificate", pool)
    assert [h.record.id for h in strict] == [both.id]
    stops = lanes.keyword(mem.store, "staging certificate", mem.filters(limit=1), fill=True)
    assert len(stops) == 1


@pytest.mark.parametrize("match", ["all", "most", "any"])
def test_keyword_scores_by_id_are_the_searchs_own(mem, match):
    # The fill ladder reads later steps by id and score only; they must be the
    # search's, now and as of an earlier instant (where scores carry the step).
    mem.add("Rotate the staging TLS certificate every 90 days.")
    mem.add("Staging certificates are rotated by hand.")
    edited = mem.add("Certificates live in the vault.")
    mem.add("Rotate keys yearly.")
    before = utcnow()
    mem.update(edited.id, content="Certificates live in the staging vault.")
    query = "rotate staging TLS certificate"
    for filters in (mem.filters(limit=10), mem.filters(limit=10, as_of=before)):
        hits = mem.store.search(query, filters, match)
        assert hits, (match, filters.as_of)
        scores = mem.store.search_scores(query, filters, match)
        assert scores == [(h.record.id, h.score) for h in hits]


@pytest.mark.sqlite_only  # the SQLite store's two ways to rank a search
def test_a_search_ranked_in_one_walk_finds_what_the_capped_ranking_finds(mem, monkeypatch):
    # An all-words or most-words search of several words that matches few memories is
    # ranked in the walk that finds its matches; one that matches more is capped and
    # widened as before. Both give the same memories with the same scores.
    from memlane.store.sqlite import store as sqlite_store

    rng = random.Random(5)
    words = "deploy cache kestrel ledger proxy queue vault shard".split()
    for i in range(80):
        pool = words[:4] if i % 2 else words
        picked = rng.sample(pool, rng.randint(2, len(pool) - 1))
        mem.add(" ".join(picked), title=f"Note {i}", kind=rng.choice(["fact", "decision"]))
    walks = []
    one_walk = sqlite_store.SQLiteStore._few_matches

    def counted(self, match):
        found = one_walk(self, match)
        walks.append(found is not None)
        return found

    monkeypatch.setattr(sqlite_store.SQLiteStore, "_few_matches", counted)
    monkeypatch.setattr(sqlite_store, "FEW_MATCHES", 12)
    queries = [
        "deploy cache kestrel ledger",
        "proxy queue vault shard",
        "kestrel ledger proxy vault",
    ]
    found = []
    for few in (12, -1):
        monkeypatch.setattr(sqlite_store, "FEW_MATCHES", few)
        found.append(
            [
                [(h.record.id, h.score) for h in mem.store.search(q, f, match)]
                for q in queries
                for match in ("all", "most")
                for f in (mem.filters(limit=3), mem.filters(limit=50, kind="decision"))
            ]
        )
    assert found[0] == found[1]
    assert any(walks) and not all(walks)  # both ways were taken
    assert sum(len(hits) > 1 for hits in found[0]) >= 6


@pytest.mark.sqlite_only  # the SQLite store's most-words query
def test_a_most_words_search_with_words_held_nowhere_finds_and_ranks_as_the_whole_query(
    mem, monkeypatch
):
    # A word no memory holds takes its groups out of the most-words query: with one
    # such word the other words must all match, with two nothing can. The matches and
    # their scores are those of the whole query, also after the last memory holding a
    # word (remembered as held) is deleted.
    from memlane.store.sqlite import store as sqlite_store

    rng = random.Random(11)
    words = "deploy cache kestrel ledger proxy queue vault shard".split()
    for i in range(60):
        picked = rng.sample(words, rng.randint(3, 7))
        mem.add(" ".join(picked), title=f"Note {i}", kind=rng.choice(["fact", "decision"]))
    lone = mem.add("zeppelin deploy cache kestrel", title="Lone").id
    queries = [
        "deploy cache kestrel ledger",  # every word held
        "deploy cache kestrel wombat",  # one held nowhere
        "proxy queue vault shard gazebo",
        "deploy wombat gazebo kestrel",  # two held nowhere
        "zeppelin deploy cache kestrel",
    ]
    whole = sqlite_store.SQLiteStore._most_held

    def search(*, narrowed: bool) -> list[list[tuple[str, float]]]:
        monkeypatch.setattr(
            sqlite_store.SQLiteStore,
            "_most_held",
            whole if narrowed else (lambda self, text, most: most),
        )
        return [
            [(h.record.id, h.score) for h in mem.store.search(q, f, "most")]
            for q in queries
            for f in (mem.filters(limit=5), mem.filters(limit=50, kind="decision"))
        ]

    found = search(narrowed=True)
    assert found == search(narrowed=False)
    assert found[2] and found[4]  # one word held nowhere: the others' matches
    assert found[6] == found[7] == []  # two held nowhere
    most = '"deploy" AND "cache" AND "kestrel"'
    assert whole(mem.store, "deploy cache kestrel wombat", "...") == most
    assert any(i == lone for i, _ in found[8])
    mem.delete(lone)  # "zeppelin" is held nowhere now, though remembered as held
    after = search(narrowed=True)
    assert after == search(narrowed=False)
    assert not any(i == lone for i, _ in after[8])


def test_a_common_word_still_finds_older_matches_that_pass_the_filters(mem, monkeypatch):
    # Ranking starts with the newest matches only; a filtered page it cannot fill
    # widens to every match.
    monkeypatch.setattr("memlane.store.base.RANK_CAP", 3)
    old = mem.add("Deploy from the release branch only.", kind="decision")
    for i in range(8):
        mem.add(f"Deploy note number {i}.")
    assert [h.record.id for h in mem.search("deploy", kind="decision")] == [old.id]
    assert len(mem.search("deploy", limit=5)) == 5
    assert len(mem.search("deploy")) == 9


def test_ranked_ids_match_ranked_records_when_a_large_window_is_ranked_in_halves(mem, monkeypatch):
    # Ids for a fusion pool over the newest RANK_CAP matches are ranked in two halves at
    # once on SQLite (see SQLiteStore._newest): the same ids, scores and order as the
    # records one statement ranks, ties (equal texts score alike) newest first.
    monkeypatch.setattr("memlane.store.base.RANK_CAP", 12)
    for i in range(30):
        words = "deploy cache" if i % 3 else "deploy the cache again and deploy"
        long = " with a longer tail" if i % 4 == 0 else ""
        mem.add(f"{words} item{i}{long}", title="Deploy" if i % 5 == 0 else None)
        mem.add(f"Unrelated ledger entry number {i}.")
    for query in ("deploy", "deploy cache"):
        for limit in (1, 4, 9, 12):
            wanted = Filters(limit=limit)
            records = [(h.record.id, h.score) for h in mem.store.search(query, wanted)]
            assert mem.store.search_scores(query, wanted) == records
            assert len(records) == limit
    if mem.store.location.endswith(".db"):
        assert mem.store._helper is not None  # the halves were ranked apart


def test_any_word_ranks_a_rare_words_older_matches_beside_a_common_words_newer_ones(
    mem, monkeypatch
):
    # A store ranks at most ANY_RANK_CAP matches of an "any word" step at first (here 6,
    # 3 a word); the newest 6 matches of "deploy OR kestrel" are all deploy notes, yet
    # the kestrel notes, older and rarer (BM25 puts them first), must be the ones found.
    monkeypatch.setattr("memlane.store.base.ANY_RANK_CAP", 6)
    rare = [mem.add(f"The kestrel cluster hosts service {i}.").id for i in range(3)]
    for i in range(8):
        mem.add(f"Deploy note number {i}.")
    found = mem.search("deploy kestrel", limit=3)
    assert sorted(h.record.id for h in found) == sorted(rare)
    assert len(mem.search("deploy kestrel", limit=11)) == 11


def test_an_any_word_step_ranks_each_words_newest_share_of_the_cap(mem, monkeypatch):
    # ANY_RANK_CAP 6 shared by three words, fewest matches first: kestrel's 2 matches
    # all (share 6 // 3), then ledger's newest 2 of 6 (share 4 // 2), then deploy's
    # newest 2 of 10 (share 2 // 1). A memory scores the sum of its words' BM25 over the
    # windows that hold it, best first, ties newest first.
    monkeypatch.setattr("memlane.store.base.RANK_CAP", 10**6)
    texts = [f"Deploy step {i} of the rollout{' plan' * (i % 4)}." for i in range(9)]
    texts += [f"Ledger {i}." for i in range(4)] + ["The ledger entry again, deploy"]
    texts += ["Kestrel hosts the ledger.", "The kestrel cluster, newest of all."]
    ids = [mem.add(text).id for text in texts]  # oldest first
    alone = Filters(limit=100)
    expected: dict[str, float] = {}
    for word in ("kestrel", "ledger", "deploy"):
        scores = dict(mem.store.search_scores(word, alone))
        for memory_id in [i for i in reversed(ids) if i in scores][:2]:
            expected[memory_id] = expected.get(memory_id, 0.0) + scores[memory_id]
    ranked = sorted(expected, key=lambda i: (-expected[i], -ids.index(i)))
    monkeypatch.setattr("memlane.store.base.ANY_RANK_CAP", 6)
    page = Filters(limit=len(ranked))  # a page the windows fill: no widening
    found = mem.store.search_scores("deploy ledger kestrel", page, "any")
    assert [i for i, _ in found] == ranked
    assert [s for _, s in found] == pytest.approx([expected[i] for i in ranked], rel=1e-9)


@pytest.mark.sqlite_only  # edits a SQLite file by hand
def test_a_store_whose_migration_fails_is_one_line_and_left_unchanged(db_path, tmp_path):
    """A file recording fewer migrations than its tables show (what a development
    build could leave): opening it says why in one line and changes nothing."""
    with Memory.open(db_path) as memory:
        memory.add("A note that must survive.")
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("DELETE FROM schema_migrations WHERE version >= 4")  # index 4 stays
    conn.close()
    before = db_path.read_bytes()
    result = subprocess.run(
        [sys.executable, "-m", "memlane", "--db", str(db_path), "list"],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("memlane: error: cannot bring ") and "from schema version 3" in line
    assert "memory_session already exists" in line and line.endswith("the file is unchanged")
    assert db_path.read_bytes() == before


@pytest.mark.sqlite_only  # builds an old SQLite file by hand
def test_a_store_from_an_older_schema_is_migrated_keeping_its_memories(db_path):

    from memlane.store.sqlite import schema

    # A store as the first release wrote it: only migration 1 applied.
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at TEXT NOT NULL)"
    )
    schema.m001_initial(conn)
    conn.execute("INSERT INTO schema_migrations VALUES (1, 'initial', '2026-01-01T00:00:00Z')")
    conn.execute("COMMIT")
    conn.close()
    with Memory.open(db_path, context=Context("proj", "main")) as memory:
        added = memory.add("Written right after the upgrade.")
        assert memory.get(added.id).body == "Written right after the upgrade."
        assert memory.stats().schema_version == schema.LATEST
        names = [
            r[0]
            for r in memory.store.conn.execute(
                "SELECT name FROM schema_migrations ORDER BY version"
            )
        ]
        assert names == [name for _, name, _ in schema.MIGRATIONS]


def test_the_registry_methods_old_names_still_work_with_a_warning(mem):
    with pytest.warns(DeprecationWarning, match=r"Memory\.register is now"):
        mem.register("categories", "recipes")
    with pytest.warns(DeprecationWarning, match=r"Memory\.types is now"):
        assert Memory.types("kinds") == Registries.types("kinds")
    assert "recipes" in {e.key for e in mem.registries.registry("categories")}
