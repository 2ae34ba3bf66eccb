"""`memlane entities list|show|merge` through the real CLI."""

from __future__ import annotations

import pytest


def test_entities_list_show_and_merge(run):
    run("add", "Ask @ghopper about `MemoryStore` in src/memlane/store.py.")
    run("add", "Ask @grace-h why memory_store is slow.")
    listed = run("entities", "list", "--json").json()
    assert {(e["name"], e["kind"], e["mentions"]) for e in listed} >= {
        ("MemoryStore", "code", 2),
        ("@ghopper", "handle", 1),
    }
    text = run("entities", "list", "--kind", "handle")
    assert text.exit_code == 0 and "@ghopper" in text.stdout and "MemoryStore" not in text.stdout

    shown = run("entities", "show", "memory-store", "--json").json()
    assert shown["name"] == "MemoryStore" and len(shown["memories"]) == 2

    dry = run("entities", "merge", "@ghopper", "@grace-h")
    assert dry.exit_code == 0 and dry.stdout.startswith("Would merge '@ghopper' into '@grace-h'")
    assert "--confirm" in dry.stderr
    merged = run("entities", "merge", "@ghopper", "@grace-h", "--confirm", "--json").json()
    assert merged["status"] == "merged" and merged["mentions"] == 1
    handles = run("entities", "list", "--kind", "handle", "--json").json()
    assert [(e["name"], e["mentions"]) for e in handles] == [("@grace-h", 2)]


def test_entities_errors_are_one_line(run):
    run("add", "Ask @ghopper about `MemoryStore`.")
    unknown = run("entities", "show", "Nobody")
    assert unknown.exit_code == 1 and unknown.stderr.count("\n") == 1
    mismatch = run("entities", "merge", "@ghopper", "MemoryStore", "--confirm")
    assert mismatch.exit_code == 2 and "pass --yes" in mismatch.stderr
    assert "@ghopper" in run("entities", "list").stdout  # nothing merged
    bad_kind = run("entities", "list", "--kind", "planet")
    assert bad_kind.exit_code == 2


def test_relate_relationships_and_unrelate(run):
    run("add", "The billing-api relies on `PostgreSQL`; @ada owns it.")
    made = run("relate", "billing-api", "relies on", "postgresql", "--context", "orders", "--json")
    relation = made.json()
    assert made.exit_code == 0 and relation["status"] == "added"
    assert (relation["subject"], relation["predicate"], relation["object"]) == (
        "billing-api",
        "depends_on",
        "PostgreSQL",
    )
    again = run("relate", "billing-api", "depends on", "PostgreSQL")
    assert again.exit_code == 0 and "already related" in again.stderr
    run("relate", "@ada", "mentors", "Grace")
    shown = run("relationships", "PostgreSQL")
    assert shown.stdout.splitlines() == [
        "PostgreSQL (unknown)",
        f'  {relation["id"]}  billing-api -depends_on-> PostgreSQL  "relies on"  (orders)',
    ]
    ada = run("relationships", "ada", "--json").json()
    assert ada["type"] == "person"
    assert [(r["predicate"], r["label"], r["object"]) for r in ada["relations"]] == [
        ("related_to", "mentors", "Grace")
    ]
    ended = run("unrelate", "billing-api", "needs", "postgresql", "--json").json()
    assert [r["current"] for r in ended] == [False]
    assert run("relationships", "PostgreSQL", "--json").json()["relations"] == []
    everything = run("relationships", "PostgreSQL", "--all", "--json").json()["relations"]
    assert [r["id"] for r in everything] == [relation["id"]]


@pytest.mark.sqlite_only
def test_the_graph_reads_create_no_store(run, db_path):
    missing = run("relationships", "Nobody")
    assert missing.exit_code == 1 and missing.stderr.count("\n") == 1
    assert run("entities", "search", "anything").exit_code == 0
    assert not db_path.exists()


def test_relation_commands_refuse_bad_input_with_one_line(run):
    missing = run("relationships", "Nobody")
    assert missing.exit_code == 1 and missing.stderr.count("\n") == 1
    run("add", "Ask @ghopper about `MemoryStore`.")
    for args in (
        ("relate", "@ghopper", " ", "MemoryStore"),
        ("relate", "---", "uses", "MemoryStore"),
        ("relate", "@ghopper", "uses", "ghopper"),
        ("relate", "@ghopper", "uses", "MemoryStore", "--memory", "m-nothere"),
    ):
        refused = run(*args)
        assert refused.exit_code in (1, 2) and refused.stderr.count("\n") == 1, args
    assert run("relationships", "@ghopper", "--all", "--json").json()["relations"] == []
    gone = run("unrelate", "@ghopper", "uses", "MemoryStore")
    assert gone.exit_code == 1 and "no current relation" in gone.stderr


def test_entities_search_type_and_merge_across_types(run):
    run("add", "We moved the cache from `Memcached` to `Redis`; ask @ghopper.")
    found = run("entities", "search", "redis", "--json").json()
    assert found[0]["name"] == "Redis" and found[0]["score"] == 100
    text = run("entities", "search", "memcache")
    assert text.stdout.splitlines()[1].startswith("Memcached")
    typed = run("entities", "type", "redis", "service", "--json").json()
    assert typed["type"] == "service"
    assert run("entities", "type", "redis", "planet").exit_code == 2
    assert "service" in run("entities", "list").stdout
    services = run("entities", "list", "--type", "service", "--json").json()
    assert [e["name"] for e in services] == ["Redis"]
    crossing = run("entities", "merge", "@ghopper", "Redis", "--confirm")
    assert crossing.exit_code == 2 and "person" in crossing.stderr
    asked = run("entities", "merge", "Memcached", "Redis", "--yes", "--json").json()
    assert asked["status"] == "merged"
    assert run("entities", "show", "memcached", "--json").json()["name"] == "Redis"


def test_recall_shows_entity_cards_in_text_and_json(run):
    run("add", "The billing-api went live on Monday.")
    run("relate", "billing-api", "depends on", "PostgreSQL")
    run("entities", "type", "billing-api", "service")
    text = run("recall", "when did billing-api go live").stdout
    assert (
        "<memlane-entities>\n- billing-api (service): depends_on PostgreSQL\n</memlane-entities>"
        in text
    )
    [card] = run("recall", "when did billing-api go live", "--json").json()["entities"]
    assert (card["name"], card["type"], card["more"]) == ("billing-api", "service", 0)
    assert [(r["predicate"], r["object"]) for r in card["relations"]] == [
        ("depends_on", "PostgreSQL")
    ]
    assert run("recall", "what went live", "--json").json()["entities"] == []


def test_a_merge_reports_relations_moved_and_ended(run):
    run("relate", "api", "uses", "PostgreSQL")
    run("relate", "postgres", "same as", "PostgreSQL")
    run("relate", "worker", "uses", "postgres")
    dry = run("entities", "merge", "postgres", "PostgreSQL")
    assert dry.stdout == (
        "Would merge 'postgres' into 'PostgreSQL': 1 aliases (postgres), 0 mentions, "
        "1 relations moved, 1 ended\n"
    )
    merged = run("entities", "merge", "postgres", "PostgreSQL", "--yes", "--json").json()
    assert (merged["relations_moved"], merged["relations_ended"]) == (1, 1)
    shown = run("relationships", "PostgreSQL", "--json").json()["relations"]
    assert sorted((r["subject"], r["object"]) for r in shown) == [
        ("api", "PostgreSQL"), ("worker", "PostgreSQL")]  # fmt: skip
    assert "(also postgres)" in run("entities", "show", "postgresql").stdout


def test_declining_a_merge_at_the_prompt_says_not_merged(run, monkeypatch):
    run("add", "We moved the cache to `Redis`; ask @ghopper.")
    monkeypatch.setattr("memlane.cli.entities._at_terminal", lambda: True)
    declined = run("entities", "merge", "@ghopper", "Redis", "--confirm", input="n\n")
    assert declined.exit_code == 0 and "not merged" in declined.stderr
    assert "dry run" not in declined.stderr
    assert run("entities", "show", "ghopper", "--json").json()["name"] == "@ghopper"


def test_entities_list_has_those_only_relate_made_and_type_shows_the_type(run):
    run("add", "Ask @ghopper about `MemoryStore`.")
    run("relate", "api", "uses", "PostgreSQL")
    run("entities", "type", "PostgreSQL", "service")
    listed = run("entities", "list", "--json").json()
    assert {(e["name"], e["mentions"]) for e in listed} >= {("api", 0), ("PostgreSQL", 0)}
    assert [e["mentions"] for e in listed][-2:] == [0, 0]  # after the named ones
    services = run("entities", "list", "--type", "service", "--json").json()
    assert [e["name"] for e in services] == ["PostgreSQL"]
    assert len(run("entities", "list", "--limit", "1", "--json").json()) == 1
    shown = run("entities", "type", "postgresql")
    assert shown.exit_code == 0 and shown.stdout.split()[:3] == ["PostgreSQL", "code", "service"]
    assert run("entities", "type", "Nobody").exit_code == 1
