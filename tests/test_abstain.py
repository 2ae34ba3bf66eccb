"""Recall that says nothing relevant was found: the relevance floor, the names a store
has never seen, and how every interface says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memlane import Memory
from memlane.retrieve import lanes
from memlane.retrieve.abstain import (
    UNKNOWN_NAME_MARGIN,
    Evidence,
    floor_for,
    judge,
)
from memlane.retrieve.explain import VERDICTS

NOTES = (
    "We chose PostgreSQL for billing because invoices need transactions.",
    "Refunds are processed within five business days of the request.",
    "Alice reviews every change to the deploy scripts before release.",
    "The CI pipeline runs pytest with two workers on every push.",
)
OFF_TOPIC = "xylophone quantum banana"


def _fill(mem: Memory) -> list[str]:
    return [mem.add(note).id for note in NOTES]


# ---- the policy (pure) -----------------------------------------------------------


def test_the_floor_rises_by_the_margin_only_for_a_query_naming_what_no_memory_mentions():
    assert floor_for(0.4, ()) == 0.4
    assert floor_for(0.4, ("Maria",)) == pytest.approx(0.4 + UNKNOWN_NAME_MARGIN)
    assert floor_for(None, ("Maria",)) is None and floor_for(0.0, ()) is None
    # A high floor is raised at most halfway to 1, so a named query can still be met.
    assert floor_for(0.8, ("Maria",)) == pytest.approx(0.9)
    assert floor_for(0.7, ("Maria",), margin=0.1) == pytest.approx(0.8)


def test_evidence_is_silent_below_its_floor_and_says_why():
    below = judge(0.31, 0.44, ())
    assert below.silent and below.reason() == (
        "the nearest memory is 0.310 alike, below the floor 0.440"
    )
    named = judge(0.5, 0.44, ("Maria",))
    assert named.silent and "no memory mentions Maria" in named.reason()
    assert not judge(0.5, 0.44, ()).silent
    # Without a vector lane there is nothing to measure: never silent.
    assert not Evidence(None, 0.44).silent and "no vector lane" in Evidence(None, 0.44).reason()
    assert not Evidence(0.1, None).silent


def test_explain_has_a_verdict_for_an_abstained_recall():
    assert "abstained" in VERDICTS


# ---- recall and search through the API (hash embedder) -----------------------------


def test_recall_answers_with_nothing_when_nothing_clears_the_floor(vmem):
    _fill(vmem)
    result = vmem.recall(OFF_TOPIC, min_score=0.3)
    assert result.abstained and result.hits == () and result.extras == ()
    assert result.evidence is not None and result.evidence.similarity is not None
    assert result.evidence.similarity < 0.3 == result.evidence.floor
    # The trace stays for --explain: the candidates were scored, none was shown.
    assert result.candidates
    # Asked to, recall fills its limit as before.
    assert len(vmem.recall(OFF_TOPIC, min_score=0).hits) > 0


def test_recall_still_answers_a_query_its_store_holds(vmem):
    ids = _fill(vmem)
    result = vmem.recall("are refunds processed within five business days", min_score=0.3)
    assert not result.abstained and result.hits[0].record.id == ids[1]
    assert result.evidence is not None and result.evidence.similarity >= 0.3


def test_a_recall_without_a_vector_lane_has_no_floor(mem):
    _fill(mem)
    result = mem.recall("refunds", min_score=0.9)
    assert not result.abstained and result.hits
    assert result.evidence is not None and result.evidence.similarity is None


def test_search_by_meaning_finds_nothing_below_the_floor_and_keyword_search_ignores_it(vmem):
    _fill(vmem)
    assert vmem.search(OFF_TOPIC, mode="vector", min_score=0.3) == []
    assert vmem.search(OFF_TOPIC, mode="hybrid", min_score=0.3) == []
    assert vmem.search(OFF_TOPIC, mode="vector", min_score=0)
    assert vmem.search("refunds", mode="keyword", min_score=0.99)


def test_an_out_of_range_floor_is_refused(vmem):
    from memlane import Invalid

    with pytest.raises(Invalid, match="between 0 and 1"):
        vmem.recall("refunds", min_score=1.5)


def test_unknown_names_are_those_no_visible_memory_holds(vmem):
    _fill(vmem)
    filters = vmem.filters(scope="all")
    assert lanes.unknown_names(vmem.store, "What did Alice say about Maria?", filters) == ("Maria",)
    assert lanes.unknown_names(vmem.store, "Did Alice review the PostgreSQL change?", filters) == ()


def test_a_name_its_entity_alias_knows_is_known_in_another_spelling(vmem):
    vmem.add("`MemoryStore` is a per-process LRU; never use it for locks.")
    filters = vmem.filters(scope="all")
    assert lanes.unknown_names(vmem.store, "Is memory_store shared by workers?", filters) == ()
    assert lanes.unknown_names(vmem.store, "Is DiskStore shared?", filters) == ("DiskStore",)


def test_a_private_memory_does_not_make_a_name_known_to_another_reader(db_path: Path):
    from memlane.scope import Context

    with Memory.open(db_path, agent="ann", context=Context("proj", "main")) as ann:
        ann.add("Zanzibar is the code name of the billing rewrite.", visibility="private")
    with Memory.open(db_path, agent="bob", context=Context("proj", "main")) as bob:
        asked = "What is the status of Zanzibar?"
        assert lanes.unknown_names(bob.store, asked, bob.filters(scope="all")) == ("Zanzibar",)
    with Memory.open(db_path, agent="ann", context=Context("proj", "main")) as ann:
        mine = ann.filters(scope="all", include_private=True)
        assert lanes.unknown_names(ann.store, asked, mine) == ()


def test_the_setting_moves_the_floor():
    from memlane import Invalid
    from memlane.config import recall_settings, resolve

    assert recall_settings(resolve({"MEMLANE_RECALL_MIN_SCORE": "0.3"})).min_score == 0.3
    assert recall_settings(resolve({})).min_score is None
    with pytest.raises(Invalid, match="MEMLANE_RECALL_MIN_SCORE"):
        resolve({"MEMLANE_RECALL_MIN_SCORE": "1.5"})


def test_the_profile_floor_is_the_default_and_an_explicit_zero_turns_it_off(vmem):
    from memlane.embed.profiles import HASH, MINILM

    assert MINILM.relevance_floor is not None and HASH.relevance_floor is None
    _fill(vmem)
    # The hash profile is uncalibrated: no floor unless asked.
    assert vmem.recall(OFF_TOPIC).evidence is None
    vmem.recall_settings = type(vmem.recall_settings)(min_score=0.3)
    assert vmem.recall(OFF_TOPIC).abstained
    assert not vmem.recall(OFF_TOPIC, min_score=0).abstained


# ---- the interfaces ---------------------------------------------------------------


def test_the_cli_says_nothing_relevant_was_found_in_text_and_json(run):
    for note in NOTES:
        assert run("add", note).exit_code == 0
    text = run("recall", OFF_TOPIC, "--min-score", "0.3")
    assert text.exit_code == 0 and "(nothing relevant found: the nearest memory is" in text.stdout
    assert "<memlane-recall>" in text.stdout and "[fact]" not in text.stdout
    data = json.loads(run("recall", OFF_TOPIC, "--min-score", "0.3", "--json").stdout)
    assert data["abstained"] is True and data["results"] == [] and data["count"] == 0
    assert data["evidence"]["floor"] == 0.3 and data["evidence"]["similarity"] < 0.3
    answered = json.loads(run("recall", "refunds processed", "--min-score", "0.3", "--json").stdout)
    assert answered["abstained"] is False and answered["results"]
    searched = json.loads(
        run("search", OFF_TOPIC, "--mode", "vector", "--min-score", "0.3", "--json").stdout
    )
    assert searched["results"] == []


def test_the_cli_explains_an_abstained_recall(run):
    for note in NOTES:
        run("add", note)
    out = run("recall", OFF_TOPIC, "--min-score", "0.3", "--explain", "--target", "refunds")
    assert "abstained" in out.stdout
    plain = run("recall", OFF_TOPIC, "--min-score", "0.3", "--explain")
    assert "  abstained: the nearest memory is" in plain.stdout


def test_the_cli_refuses_a_floor_out_of_range(run):
    bad = run("recall", "refunds", "--min-score", "2")
    assert bad.exit_code == 2 and "--min-score" in bad.stderr


def test_the_setting_reaches_the_cli(run, cli_env, monkeypatch):
    for note in NOTES:
        run("add", note)
    cli_env["MEMLANE_RECALL_MIN_SCORE"] = "0.3"
    data = json.loads(run("recall", OFF_TOPIC, "--json").stdout)
    assert data["abstained"] is True


# ---- the real model's calibrated floor ---------------------------------------------


def test_minilm_answers_a_paraphrase_and_nothing_for_an_unrelated_question(db_path: Path):
    """The default floor (MiniLM's, no setting): the examples an agent should not get
    unrelated memories for, and questions its store does answer in other words."""
    from memlane.embed import get_embedder
    from memlane.scope import Context

    with Memory.open(db_path, context=Context("proj", "main"),
                     embedder=get_embedder("minilm")) as mem:  # fmt: skip
        ids = _fill(mem)
        for asked in (OFF_TOPIC, "quantum chromodynamics lattice", "best pizza in Naples"):
            result = mem.recall(asked)
            assert result.abstained and result.hits == (), (asked, result.evidence)
        paraphrase = mem.recall("how long until a customer gets their money back?")
        assert not paraphrase.abstained and paraphrase.hits[0].record.id == ids[1]
        assert mem.recall("which database do invoices live in?").hits[0].record.id == ids[0]


def test_an_acronym_is_not_an_unknown_name(vmem):
    """ "RDS" names a technology a memory of the same topic need not spell out."""
    vmem.add("Change infrastructure only through Terraform, never by hand.")
    filters = vmem.filters(scope="all")
    assert (
        lanes.unknown_names(vmem.store, "resize the RDS instance in the AWS console", filters) == ()
    )


def test_a_name_raises_the_floor_of_an_explicit_recall_but_not_of_a_hooks_read(vmem):
    """A hook's gate weighs how much of the prompt a memory covers, names included."""
    ids = _fill(vmem)
    asked = "Did Zorblat say refunds are processed within five business days?"
    explicit = vmem.recall(asked, min_score=0.5, count=False)
    assert explicit.evidence is not None and explicit.evidence.unknown == ("Zorblat",)
    assert 0.5 <= explicit.evidence.similarity < 0.5 + UNKNOWN_NAME_MARGIN
    assert explicit.abstained
    passive = vmem.recall(asked, min_score=0.5, passive=True, count=False)
    assert not passive.abstained and passive.hits[0].record.id == ids[1]


def test_a_memory_holding_every_word_of_the_query_is_evidence_whatever_the_cosine(vmem):
    vmem.add("We build the web UI assets with Vite, never webpack.")
    worded = vmem.recall("how do we build the web UI assets?", min_score=0.99, count=False)
    assert not worded.abstained and worded.hits
    assert worded.evidence is not None and worded.evidence.worded
    assert "holds every word" in worded.evidence.reason()
    missing = vmem.recall("how do we build the web UI fonts?", min_score=0.99, count=False)
    assert missing.abstained and not missing.evidence.worded


def test_a_time_window_holding_memories_is_evidence_unless_the_query_names_a_stranger(vmem):
    vmem.add("Shipped the billing rewrite to production.", occurred_at="2025-05-14T10:00:00Z")
    vmem.add("Alice prefers small PRs.", occurred_at="2025-07-01T10:00:00Z")
    dated = vmem.recall("anything notable in May 2025?", min_score=0.99, count=False)
    # Only what lies in the time asked: the rest was below the floor.
    assert not dated.abstained and [h.record.title for h in dated.hits] == [
        "Shipped the billing rewrite to production"
    ]
    assert dated.evidence is not None and dated.evidence.dated
    assert "lie in the time the query names" in dated.evidence.reason()
    # An empty window is no evidence, nor is a window asked about someone unknown.
    empty = vmem.recall("anything notable in May 2019?", min_score=0.99, count=False)
    assert empty.abstained and not empty.evidence.dated
    named = vmem.recall("what did Zorblat ship in May 2025?", min_score=0.99, count=False)
    assert named.abstained and named.evidence.unknown == ("Zorblat",)


def test_a_clitic_is_not_a_keyword(vmem):
    """ "what's" asks for no "s": it must not match every "daughter's"."""
    vmem.add("My daughter's recital is on Friday evening.")
    assert vmem.search("what's new", mode="keyword") == []
    assert vmem.search("daughter's recital", mode="keyword")


def test_a_search_says_why_it_found_nothing_in_text_and_json(run):
    for note in NOTES:
        assert run("add", note).exit_code == 0
    text = run("search", OFF_TOPIC, "--mode", "hybrid", "--min-score", "0.3")
    assert text.exit_code == 0 and "<memlane-search>" in text.stdout
    assert "(nothing relevant found: the nearest memory is" in text.stdout
    data = json.loads(
        run("search", OFF_TOPIC, "--mode", "vector", "--min-score", "0.3", "--json").stdout
    )
    assert data["abstained"] is True and data["results"] == []
    assert data["evidence"]["floor"] == 0.3 and "below the floor" in data["evidence"]["reason"]
    words = json.loads(run("search", "refunds", "--json").stdout)
    assert words["abstained"] is False and words["evidence"] is None and words["results"]


def test_a_hybrid_search_reads_the_time_a_query_names_as_recall_does(vmem):
    vmem.add("Shipped the billing rewrite to production.", occurred_at="2025-05-14T10:00:00Z")
    vmem.add("Alice prefers small PRs.", occurred_at="2025-07-01T10:00:00Z")
    found = vmem.searched("anything notable in May 2025?", mode="hybrid", min_score=0.99)
    assert found.evidence is not None and found.evidence.dated and not found.abstained
    assert [h.record.title for h in found.hits] == ["Shipped the billing rewrite to production"]
    assert vmem.searched("anything notable in May 2019?", mode="hybrid", min_score=0.99).abstained
