"""The deterministic entity extractor (graph/entities.py) on hand-made texts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlane.graph.entities import (
    MAX_MENTIONS,
    extract,
    mentions_of,
    normalize_alias,
    query_aliases,
)
from memlane.model import EntityKind, Kind, Mention, Record

CODE, PATH, HANDLE, NAME, TAG = (
    EntityKind.CODE,
    EntityKind.PATH,
    EntityKind.HANDLE,
    EntityKind.PERSON_OR_NAME,
    EntityKind.TAG,
)


def found(text: str, tags: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    return [(m.name, m.kind.value) for m in extract(text, tags)]


# ---- aliases ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["MemoryStore", "memory_store", "memory-store", "Memory Store", "MEMORY_STORE", "memory.store"],
)
def test_spellings_of_one_identifier_share_an_alias(name):
    assert normalize_alias(name) == "memorystore"


@pytest.mark.parametrize(
    ("name", "alias"),
    [("José Núñez", "josenunez"), ("@simonw", "simonw"), ("./scripts/", "scripts"), ("", "")],
)
def test_alias_drops_accents_and_punctuation(name, alias):
    assert normalize_alias(name) == alias


# ---- each rule ----------------------------------------------------------------------


def test_backticked_identifiers_are_code_or_paths():
    text = "Call `Store.search()` with `limit` then read `docs/recall.md` and `pyproject.toml`."
    assert found(text) == [
        ("Store.search", "code"),
        ("limit", "code"),
        ("docs/recall.md", "path"),
        ("pyproject.toml", "path"),
    ]


def test_backticked_commands_with_spaces_are_read_by_the_other_rules():
    assert found("Run `pytest tests/test_x.py -q` first.") == [
        ("tests/test_x.py", "path"),
        ("test_x.py", "path"),
    ]


def test_paths_and_their_file_names():
    text = "Edit src/memlane/model.py, ./scripts/run.sh and ~/notes then /etc/hosts."
    assert found(text) == [
        ("src/memlane/model.py", "path"),
        ("model.py", "path"),
        ("./scripts/run.sh", "path"),
        ("run.sh", "path"),
        ("~/notes", "path"),
        ("/etc/hosts", "path"),
    ]


def test_bare_file_names_with_a_known_extension_are_paths():
    assert found("See README.md and setup.cfg.") == [("README.md", "path"), ("setup.cfg", "path")]


@pytest.mark.parametrize("text", ["and/or", "km/h", "08/05/2023", "1/2", "w/o"])
def test_slashed_words_and_dates_are_not_paths(text):
    assert found(text) == []


def test_a_directory_needs_a_root_a_trailing_slash_or_three_parts():
    assert found("src/memlane/ and a/b/c but not src/memlane") == [
        ("src/memlane/", "path"),
        ("a/b/c", "path"),
    ]


def test_dotted_identifiers_but_not_abbreviations():
    assert found("pkg.module.func() e.g. os.path i.e. done") == [
        ("pkg.module.func", "code"),
        ("os.path", "code"),
    ]


def test_handles():
    assert found("ask @simonw or @ada-l.") == [("@simonw", "handle"), ("@ada-l", "handle")]


def test_urls_and_emails_are_not_mined_for_entities():
    assert found("See https://example.com/a/b.py or mail ada@example.com") == []


def test_camel_and_snake_case_are_code():
    text = "MemoryStore HTTPServer getUser SQLite memory_store MAX_TOKENS __init__"
    assert found(text) == [
        ("MemoryStore", "code"),
        ("HTTPServer", "code"),
        ("getUser", "code"),
        ("SQLite", "code"),
        ("MAX_TOKENS", "code"),
        ("__init__", "code"),
    ]


def test_capitalised_runs_are_names():
    assert found("Ada Lovelace met Charles Babbage in London.") == [
        ("Ada Lovelace", "person_or_name"),
        ("Charles Babbage", "person_or_name"),
        ("London", "person_or_name"),
    ]


def test_sentence_initial_common_words_are_not_names():
    text = "The deploy failed. When it works, we ship. Don't panic. I think so. It's fine."
    assert found(text) == []


def test_stopwords_split_a_capitalised_run_and_possessives_are_dropped():
    assert found("Yesterday Caroline's talk; The Ada Lovelace Institute") == [
        ("Caroline", "person_or_name"),
        ("Ada Lovelace Institute", "person_or_name"),
    ]


def test_a_possessive_ends_a_name():
    assert found("ask Ada's Friend") == [("Ada", "person_or_name"), ("Friend", "person_or_name")]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Painting is fun.", []),
        ("It rained. Painting is fun.", []),
        ("- Painting is fun", []),
        ('"Painting" is fun', []),
        ("We do Painting at home.", ["Painting"]),
        ("Grace approved it.", []),
        ("Grace Hopper approved it.", ["Grace Hopper"]),
        ("note: Grace Hopper approved it", ["Grace Hopper"]),
    ],
)
def test_one_capitalised_word_opening_a_sentence_is_not_a_name(text, names):
    assert [name for name, _ in found(text)] == names


def test_months_weekdays_and_greetings_are_not_names():
    assert found("Hey Mel! Good to see you on Monday in May 2023.") == [("Mel", "person_or_name")]


def test_entity_tags_come_first_and_win_the_kind():
    assert extract("Ada wrote it", ("entity:Ada", "Entity:rg", "project-x", "entity:  ")) == (
        Mention("Ada", TAG, "ada"),
        Mention("rg", TAG, "rg"),
    )


def test_an_entity_tag_may_be_one_character():
    assert extract("", ("entity:R",)) == (Mention("R", TAG, "r"),)


def test_one_mention_per_alias_the_first_seen():
    text = "MemoryStore wraps memory_store; see `memory-store` and Memory Store."
    assert extract(text) == (Mention("MemoryStore", CODE, "memorystore"),)


def test_single_character_aliases_are_dropped():
    assert found("./x and ~/y and A B") == []


def test_mentions_are_capped():
    text = " ".join(f"name_{i}" for i in range(MAX_MENTIONS + 10))
    mentions = extract(text)
    assert len(mentions) == MAX_MENTIONS
    assert mentions[-1].name == f"name_{MAX_MENTIONS - 1}"


def test_empty_text_has_no_mentions():
    assert extract("") == ()


def test_the_extractor_is_deterministic():
    text = "Ada Lovelace edited src/a.py and `MemoryStore` with @simonw."
    assert extract(text) == extract(text)


def test_mentions_of_a_record_reads_title_body_and_tags():
    t = datetime(2026, 1, 1, tzinfo=UTC)
    record = Record(
        id="m-1",
        scope="global",
        title="Ripgrep is fast",
        body="Use `rg` from ~/bin/tools for search.",
        kind=Kind.FACT,
        category="general",
        created_at=t,
        updated_at=t,
        valid_from=t,
        version_from=t,
        dedup_hash="dh1:x",
        tags=("entity:ripgrep", "cli"),
    )
    assert mentions_of(record) == (
        Mention("ripgrep", TAG, "ripgrep"),
        Mention("rg", CODE, "rg"),
        Mention("~/bin/tools", PATH, "bintools"),
    )


# ---- the query side -----------------------------------------------------------------


def test_query_aliases_keeps_pairs_as_names_and_single_words_apart():
    asked = query_aliases("how does the memory store use rg?")
    assert asked.names == ("memorystore",)
    assert asked.words == ("memory", "store", "rg")
    assert asked.all == ("memorystore", "memory", "store", "rg")


def test_query_aliases_finds_a_name_written_in_lower_case():
    assert "adalovelace" in query_aliases("what did ada lovelace say").names


def test_query_aliases_match_extracted_aliases():
    stored = {m.alias for m in extract("The `MemoryStore` class; ping @simonw.")}
    assert stored <= set(query_aliases("memory-store simonw").all)


def test_query_aliases_of_an_empty_or_stopword_query_is_empty():
    assert query_aliases("").all == ()
    assert query_aliases("what is the 42?").all == ()


def test_query_aliases_puts_extracted_entities_first():
    asked = query_aliases("Ada Lovelace wrote notes")
    assert asked.names[:1] == ("adalovelace",)
    assert "adalovelace" not in asked.words


def test_kinds_have_the_documented_values():
    assert {k.value for k in EntityKind} == {"code", "path", "handle", "person_or_name", "tag"}
    assert tuple(EntityKind) == (CODE, PATH, HANDLE, NAME, TAG)
