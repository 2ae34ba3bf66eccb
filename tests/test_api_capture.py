"""Capture through the Python API: add, add_batch, fact routing, validation, limits, dedup."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memlane import Conflict, Context, Invalid, Memory, NotFound
from memlane.model import (
    ContentType,
    EntryType,
    Kind,
    LinkType,
    MemoryClass,
    Record,
    ResonanceType,
    Signal,
    SourceType,
    State,
    Taint,
    Visibility,
    WriteStatus,
)
from memlane.write.draft import Limits

# Every input field of a memory, with values other than the defaults.
FULL_INPUT: dict[str, Any] = {
    "content": "Retry with exponential backoff and jitter.\nCap the delay at 30 s.",
    "title": "Retry with backoff",
    "kind": "procedure",
    "category": "lesson",
    "tags": ["reliability", "networking"],
    "importance": 12,
    "resonance_type": "operational",
    "scope": "project:other@dev",
    "source_agent": "tester",
    "source_ref": "file:src/retry.py#abc123",
    "source_type": "agent_session",
    "entry_type": "synthesis",
    "content_type": "code",
    "session_id": "sess-1",
    "private": True,
    "owner": "tester",
    "wake_phrases": ["backoff", "jitter"],
    "wake_order": 3,
    "applicability": ["python", "http"],
    "domain": "infra/network",
    "occurred_at": "2026-03-01T14:30:00+02:00",
    "ephemeral": True,
    "signal": "test",
    "confidence": 0.75,
    "taint": "untrusted_tool",
    "state": "open",
}
FULL_EXPECTED: dict[str, Any] = {
    "body": FULL_INPUT["content"],
    "title": "Retry with backoff",
    "kind": Kind.PROCEDURE,
    "memory_class": MemoryClass.PROCEDURAL,
    "category": "lesson",
    "tags": ("reliability", "networking"),
    "importance": 12,
    "resonance_type": ResonanceType.OPERATIONAL,
    "scope": "project:other@dev",
    "project": "other",
    "branch": "dev",
    "source_agent": "tester",
    "source_ref": "file:src/retry.py#abc123",
    "source_type": SourceType.AGENT_SESSION,
    "entry_type": EntryType.SYNTHESIS,
    "content_type": ContentType.CODE,
    "session_id": "sess-1",
    "visibility": Visibility.PRIVATE,
    "owner": "tester",
    "wake_phrases": ("backoff", "jitter"),
    "wake_order": 3,
    "applicability": ("python", "http"),
    "domain": "infra/network",
    "occurred_at": datetime(2026, 3, 1, 12, 30, tzinfo=UTC),
    "ephemeral": True,
    "signal": Signal.TEST,
    "confidence": 0.75,
    "taint": Taint.UNTRUSTED_TOOL,
    "state": State.OPEN,
    "version": 1,
    "live": True,
}


def assert_fields(record: Record, expected: dict[str, Any]) -> None:
    actual = {name: getattr(record, name) for name in expected}
    assert actual == expected


def total(mem: Memory) -> int:
    return mem.stats().total


@pytest.fixture
def other(db_path: Path):
    """A second agent on the same store and context."""
    with Memory.open(db_path, agent="other", context=Context("proj", "main")) as memory:
        yield memory


@pytest.fixture
def anonymous(db_path: Path):
    """A caller without an identity."""
    with Memory.open(db_path, context=Context("proj", "main")) as memory:
        yield memory


# ---- add: fields -------------------------------------------------------------


def test_add_reports_added_with_id_title_and_version(mem):
    result = mem.add("Use uv for installs. It is faster.")
    assert result.status is WriteStatus.ADDED
    assert result.id.startswith("m-")
    assert result.title == "Use uv for installs"
    assert result.version == 1
    assert not result.skipped
    assert mem.get(result.id).body == "Use uv for installs. It is faster."


def test_add_every_field_round_trips_through_get(mem):
    result = mem.add(**FULL_INPUT)
    record = mem.get(result.id)
    assert_fields(record, FULL_EXPECTED)
    assert record.created_at == record.updated_at == record.valid_from
    assert record.dedup_hash.startswith("dh1:")


def test_add_defaults(mem):
    record = mem.get(mem.add("Plain note about the build").id)
    assert_fields(
        record,
        {
            "title": "Plain note about the build",
            "kind": Kind.FACT,
            "category": "fact",
            "memory_class": MemoryClass.SEMANTIC,
            "importance": 5,
            "resonance_type": None,
            "content_type": ContentType.TEXT,
            "scope": "project:proj@main",
            "project": "proj",
            "branch": "main",
            "visibility": Visibility.PUBLIC,
            "owner": None,
            "source_agent": "tester",
            "source_type": SourceType.MANUAL,
            "entry_type": EntryType.PRIMARY,
            "taint": Taint.TRUSTED_INTERNAL,
            "trust_score": 1.0,
            "confidence": 0.6,
            "signal": None,
            "state": None,
            "session_id": None,
            "occurred_at": None,
            "tags": (),
            "wake_phrases": (),
            "anchors": (),
            "valid_until": None,
            "superseded_by": None,
        },
    )


def test_add_anchors_round_trip(mem):
    """Anchors are among a memory's fields; add accepts them (--anchors)."""
    target = mem.add("The anchor target").id
    record = mem.get(mem.add("Points at the target", anchors=[target]).id)
    assert record.anchors == (target,)


@pytest.mark.parametrize(
    ("signal", "confidence"), [("test", 0.9), ("lint", 0.85), ("user", 0.6), ("none", 0.2)]
)
def test_add_signal_sets_the_default_confidence(mem, signal, confidence):
    assert mem.get(mem.add("Grounded note", signal=signal).id).confidence == confidence


def test_add_kind_routes_the_default_category_and_class(mem):
    record = mem.get(mem.add("Never deploy on Friday", kind="constraint").id)
    assert (record.category, record.memory_class) == ("constraint", MemoryClass.PROCEDURAL)


def test_add_comma_separated_tags_are_split_and_deduplicated(mem):
    record = mem.get(mem.add("tagged", tags=" a, b ,a,, c").id)
    assert record.tags == ("a", "b", "c")


def test_add_naive_occurred_at_is_taken_as_utc(mem):
    record = mem.get(mem.add("An event", occurred_at=datetime(2026, 2, 3, 4, 5)).id)
    assert record.occurred_at == datetime(2026, 2, 3, 4, 5, tzinfo=UTC)


def test_add_private_owner_defaults_to_the_agent(mem):
    record = mem.get(mem.add("Mine alone", private=True).id)
    assert (record.visibility, record.owner) == (Visibility.PRIVATE, "tester")


@pytest.mark.parametrize(
    ("scope", "project", "branch"),
    [
        ("global", "proj", "main"),
        ("project:proj", "proj", None),
        ("project:other@feature/x", "other", "feature/x"),
    ],
)
def test_add_scope_sets_scope_project_and_branch(mem, scope, project, branch):
    record = mem.get(mem.add("Scoped", scope=scope).id)
    assert (record.scope, record.project, record.branch) == (scope, project, branch)


@pytest.mark.parametrize(
    ("context", "scope"),
    [
        (Context("proj", "main"), "project:proj@main"),
        (Context("proj"), "project:proj"),
        (Context(), "global"),
    ],
)
def test_add_default_scope_is_the_most_specific_context(db_path, context, scope):
    with Memory.open(db_path, agent="a", context=context) as memory:
        assert memory.get(memory.add("where am I").id).scope == scope


def test_open_creates_missing_parent_directories(tmp_path):
    path = tmp_path / "a" / "b" / "store.db"
    with Memory.open(path, context=Context()) as memory:
        memory.add("hello")
    assert path.exists()


# ---- add: validation ----------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("kind", "factoid"),
        ("content_type", "binary"),
        ("resonance_type", "eternal"),
        ("signal", "ci"),
        ("taint", "dirty"),
        ("visibility", "secret"),
        ("source_type", "web"),
        ("entry_type", "draft"),
        ("state", "pending"),
        ("type", "thread_open"),
    ],
)
def test_add_refuses_a_bad_enum_value_listing_the_choices(mem, field, value):
    with pytest.raises(Invalid, match="choose from"):
        mem.add("content", **{field: value})
    assert total(mem) == 0


def test_add_bad_enum_names_the_nearest_choice(mem):
    with pytest.raises(Invalid, match="did you mean 'lesson'"):
        mem.add("content", kind="lessn")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"importance": 0}, "importance"),
        ({"importance": 101}, "importance"),
        ({"importance": "high"}, "importance"),
        ({"importance": True}, "importance"),
        ({"importance": 5.5}, "importance"),
        ({"confidence": 1.5}, "confidence"),
        ({"confidence": "sure"}, "confidence"),
        ({"private": "yes"}, "private"),
        ({"tags": 5}, "tags"),
        ({"tags": ["ok", 3]}, "tags"),
        ({"wake_order": "first"}, "wake order"),
        ({"occurred_at": "the blue moon"}, "occurred_at"),
        ({"occurred_at": 1700000000}, "occurred_at"),
        ({"title": ["a list"]}, "title"),
        ({"colour": "red"}, "unknown field"),
        ({"owner": "bob"}, "owner"),
        ({"private": True, "visibility": "public"}, "contradict"),
        ({"category": "nonexistent"}, "unknown category"),
        ({"scope": "globl"}, "did you mean 'global'"),
        ({"scope": "project:"}, "scope"),
        ({"thread_id": "m-whatever"}, "fact type"),
        ({"type": "decision", "thread_id": "m-whatever"}, "thread_closed"),
        ({"session": "s1"}, "fact type"),
    ],
)
def test_add_refuses_bad_input_and_writes_nothing(mem, fields, message):
    with pytest.raises(Invalid, match=message):
        mem.add("content", **fields)
    assert total(mem) == 0


@pytest.mark.parametrize("scope", [5, ["global"]])
def test_add_non_string_scope_is_refused_as_invalid(mem, scope):
    with pytest.raises(Invalid, match="scope"):
        mem.add("content", scope=scope)


@pytest.mark.parametrize("content", ["", "   \n\t ", None, 42])
def test_add_refuses_empty_or_non_text_content(mem, content):
    with pytest.raises(Invalid, match="content"):
        mem.add(content)
    assert total(mem) == 0


def test_add_unknown_category_hints_the_nearest_and_how_to_add(mem):
    with pytest.raises(Invalid) as err:
        mem.add("content", category="lessons")
    assert "did you mean 'lesson'" in str(err.value)
    assert "categories add lessons" in str(err.value)


def test_add_registered_category_is_accepted(mem):
    mem.registries.register("categories", "recipes", description="How-tos")
    assert mem.get(mem.add("Bake at 200C", category="recipes").id).category == "recipes"


def test_add_private_without_any_identity_is_refused(anonymous):
    with pytest.raises(Invalid, match="owner"):
        anonymous.add("secret plan", private=True)


# ---- add: limits --------------------------------------------------------------

LIMIT_CASES = [
    ({"title": "t" * 300}, True),
    ({"title": "t" * 301}, False),
    ({"content": "b" * 65536}, True),
    ({"content": "b" * 65537}, False),
    ({"content": "€" * 21845}, True),  # 65535 bytes
    ({"content": "€" * 21846}, False),  # 65538 bytes: the limit counts UTF-8 bytes
    ({"tags": [f"t{i}" for i in range(50)]}, True),
    ({"tags": [f"t{i}" for i in range(51)]}, False),
    ({"tags": [*(f"t{i}" for i in range(50)), "t0", "t1"]}, True),  # repeats collapse
    ({"tags": ["x" * 64]}, True),
    ({"tags": ["x" * 65]}, False),
]


@pytest.mark.parametrize(("fields", "accepted"), LIMIT_CASES)
def test_add_limits(mem, fields, accepted):
    payload = {"content": "body", **fields}
    if accepted:
        assert mem.add(**payload).status is WriteStatus.ADDED
        assert total(mem) == 1
    else:
        with pytest.raises(Invalid, match="limit"):
            mem.add(**payload)
        assert total(mem) == 0


def test_add_custom_limits_apply(db_path):
    with Memory.open(db_path, context=Context(), limits=Limits(body_bytes=10)) as memory:
        memory.add("0123456789")
        with pytest.raises(Invalid, match="10 bytes"):
            memory.add("0123456789a")


# ---- fact-type routing ----------------------------------------------------------


@pytest.mark.parametrize(
    ("fact_type", "kind", "category", "state"),
    [
        ("decision", Kind.DECISION, "decision", None),
        ("insight", Kind.INSIGHT, "insight", None),
        ("person", Kind.PERSON, "person", None),
        ("quote", Kind.QUOTE, "quote", None),
        ("thread_opened", Kind.THREAD, "thread", State.OPEN),
        ("commitment", Kind.COMMITMENT, "commitment", State.OPEN),
        ("thread_closed", Kind.EVENT, "thread", None),
    ],
)
def test_fact_type_routes_kind_category_state_and_ephemeral(mem, fact_type, kind, category, state):
    result = mem.add("Chose Typst over mdBook for docs. Faster builds.", type=fact_type)
    record = mem.get(result.id)
    assert_fields(
        record,
        {
            "kind": kind,
            "category": category,
            "state": state,
            "resonance_type": ResonanceType.EPHEMERAL,
            "title": "Chose Typst over mdBook for docs",
        },
    )


def test_fact_type_explicit_fields_override_the_route(mem):
    record = mem.get(
        mem.add(
            "Chose Typst", type="decision", category="general", resonance_type="foundational"
        ).id
    )
    assert (record.kind, record.category, record.resonance_type) == (
        Kind.DECISION,
        "general",
        ResonanceType.FOUNDATIONAL,
    )


def test_fact_session_alias_sets_the_session(mem):
    record = mem.get(mem.add("Chose Rust", type="decision", session="abc-123").id)
    assert record.session_id == "abc-123"


def open_thread(mem: Memory, text: str = "Should we move to uv?") -> str:
    return mem.add(text, type="thread_opened").id


def test_thread_closed_closes_the_thread_keeping_a_version(mem):
    thread = open_thread(mem)
    closer = mem.add("Moved to uv.", type="thread_closed", thread_id=thread)
    record = mem.get(thread)
    assert record.state is State.CLOSED
    assert record.live
    assert [v.fields["state"] for v in mem.history(thread)] == [State.OPEN, State.CLOSED]
    links = mem.graph.links(thread)
    assert [(ln.source, ln.target, ln.type) for ln in links] == [
        (closer.id, thread, LinkType.UPDATES)
    ]


def test_thread_closed_accepts_an_id_prefix(mem):
    thread = open_thread(mem)
    mem.add("Done.", type="thread_closed", thread_id=thread.removeprefix("m-")[:6])
    assert mem.get(thread).state is State.CLOSED


def test_thread_closed_twice_is_a_conflict_and_writes_nothing(mem):
    thread = open_thread(mem)
    mem.add("Moved to uv.", type="thread_closed", thread_id=thread)
    with pytest.raises(Conflict, match="already closed"):
        mem.add("Really closed now.", type="thread_closed", thread_id=thread)
    assert total(mem) == 2


def test_thread_closed_retried_in_the_same_session_is_already_persisted(mem):
    """An agent re-sending the same close is a duplicate-skip (success), not a conflict."""
    thread = open_thread(mem)
    first = mem.add("Moved to uv.", type="thread_closed", thread_id=thread, session_id="s1")
    again = mem.add("Moved to uv.", type="thread_closed", thread_id=thread, session_id="s1")
    assert again.status is WriteStatus.ALREADY_PERSISTED
    assert again.duplicate_of == first.id


def test_thread_closed_on_a_non_thread_is_refused(mem):
    fact = mem.add("Not a thread").id
    with pytest.raises(Invalid, match="not a thread"):
        mem.add("Closing", type="thread_closed", thread_id=fact)
    assert total(mem) == 1


def test_thread_closed_on_a_missing_thread_is_not_found(mem):
    with pytest.raises(NotFound):
        mem.add("Closing", type="thread_closed", thread_id="m-zzzzzzzz")
    assert total(mem) == 0


def test_thread_closed_on_a_retired_thread_is_a_conflict(mem):
    thread = open_thread(mem)
    mem.retire(thread)
    with pytest.raises(Conflict):
        mem.add("Closing", type="thread_closed", thread_id=thread)


# ---- exact dedup ----------------------------------------------------------------

ORIGINAL = ("Use uv for installs", "Always prefer uv; it's faster than pip -- by far...")
VARIANTS = {
    "identical": ORIGINAL,
    "recased": ("USE UV FOR INSTALLS", "ALWAYS PREFER UV; IT'S FASTER THAN PIP -- BY FAR..."),
    "repunctuated": ("Use uv, for installs!", "Always prefer uv: it's faster than pip, by far."),
    "smart quotes, dashes, ellipsis": (
        "Use “uv” for installs",
        "Always prefer uv; it’s faster than pip — by far…",
    ),
    "whitespace": (
        "  Use uv   for\tinstalls ",
        "Always prefer uv;\n it's faster than pip -- by far...",
    ),
}


def add_original(mem: Memory, **fields: Any):
    title, body = ORIGINAL
    return mem.add(body, title=title, session_id="s1", **fields)


@pytest.mark.parametrize("variant", VARIANTS, ids=list(VARIANTS))
def test_dedup_skips_a_variant_in_the_same_session(mem, variant):
    first = add_original(mem)
    title, body = VARIANTS[variant]
    again = mem.add(body, title=title, session_id="s1")
    assert again.status is WriteStatus.ALREADY_PERSISTED
    assert again.skipped
    assert again.id == again.duplicate_of == first.id
    assert total(mem) == 1
    assert mem.get(first.id).title == ORIGINAL[0]


def test_dedup_ignores_tags(mem):
    first = add_original(mem, tags=["a"])
    title, body = ORIGINAL
    again = mem.add(body, title=title, session_id="s1", tags=["b", "c"])
    assert again.duplicate_of == first.id


def test_dedup_title_derived_or_echoed_is_the_same_entry(mem):
    body = "Use uv for installs. It is faster."
    first = mem.add(body, session_id="s1")
    again = mem.add(body, title="use uv for installs", session_id="s1")
    assert again.duplicate_of == first.id


def test_dedup_applies_to_fact_types(mem):
    first = mem.add("Chose Rust for the CLI", type="decision", session_id="s1")
    again = mem.add("chose rust for the CLI!", type="decision", session_id="s1")
    assert again.duplicate_of == first.id


@pytest.mark.parametrize("change", [{"session_id": "s2"}, {"category": "lesson"}])
def test_outside_the_exact_gate_the_same_text_refreshes_the_memory(mem, change):
    # The exact gate is one session, owner, author and category; past
    # it, the near-duplicate policy still sees the same fact restated.
    first = add_original(mem)
    title, body = ORIGINAL
    again = mem.add(body, title=title, **{"session_id": "s1", **change})
    assert (again.status, again.id, again.similarity) == (WriteStatus.REFRESHED, first.id, 1.0)
    assert total(mem) == 1


def test_the_same_text_of_another_kind_is_a_new_entry(mem):
    add_original(mem)
    title, body = ORIGINAL
    again = mem.add(body, title=title, session_id="s1", kind="lesson")
    assert again.status is WriteStatus.ADDED
    assert total(mem) == 2


def test_another_author_restating_a_fact_corroborates_it(mem, other):
    first = add_original(mem)
    title, body = ORIGINAL
    again = other.add(body, title=title, session_id="s1")
    assert (again.status, again.id) == (WriteStatus.REFRESHED, first.id)
    assert total(mem) == 1


def test_dedup_private_and_public_are_different_owners(mem):
    """Owner is part of the dedup scope: a private (owned) entry does not swallow a public one."""
    private = add_original(mem, private=True)
    title, body = ORIGINAL
    public = mem.add(body, title=title, session_id="s1")
    assert public.status is WriteStatus.ADDED
    assert public.id != private.id
    assert [r.id for r in mem.list()] == [public.id]


def test_dedup_different_owners_of_private_entries_are_new_entries(mem, other):
    add_original(mem, private=True)
    title, body = ORIGINAL
    again = other.add(body, title=title, session_id="s1", private=True, source_agent="tester")
    assert again.status is WriteStatus.ADDED


def test_the_exact_gate_is_bypassed_without_a_session_and_says_so(mem):
    title, body = ORIGINAL
    first = mem.add(body, title=title)
    assert first.dedup == "bypassed_no_session"
    again = mem.add(body, title=title)  # the near-duplicate policy still applies
    assert (again.status, again.id) == (WriteStatus.REFRESHED, first.id)
    forced = mem.add(body, title=title, allow_duplicate=True)
    assert forced.status is WriteStatus.ADDED and forced.dedup == "bypassed_no_session"
    assert total(mem) == 2


def test_dedup_with_a_session_reports_no_bypass(mem):
    assert add_original(mem).dedup is None


def test_allow_duplicate_forces_a_second_entry(mem):
    first = add_original(mem)
    title, body = ORIGINAL
    forced = mem.add(body.upper(), title=title, session_id="s1", allow_duplicate=True)
    assert forced.status is WriteStatus.ADDED
    assert forced.id != first.id
    assert total(mem) == 2


def test_dedup_ignores_an_invalidated_entry(mem):
    first = add_original(mem)
    mem.invalidate(first.id, "no longer true")
    assert add_original(mem).status is WriteStatus.ADDED


def test_different_content_is_not_a_duplicate(mem):
    add_original(mem)
    assert mem.add("Use pip for installs", session_id="s1").status is WriteStatus.ADDED


# ---- add_batch ------------------------------------------------------------------


def test_add_batch_ids_in_input_order_with_none_for_bad_lines(mem):
    items = [
        {"content": "first"},
        {"content": "typo", "colour": "red"},
        '{"content": "third, a JSON line"}',
        b'{"content": "fourth, bytes"}\n',
        "{not json",
        b"\xff\xfe",
        "[1, 2, 3]",
        {"content": "eighth", "kind": "factoid"},
        {"content": "ninth"},
    ]
    result = mem.add_batch(items)
    ids = result.ids
    assert [i is not None for i in ids] == [
        True,
        False,
        True,
        True,
        False,
        False,
        False,
        False,
        True,
    ]
    assert [mem.get(i).body for i in ids if i] == [
        "first",
        "third, a JSON line",
        "fourth, bytes",
        "ninth",
    ]
    assert result.added == 4
    assert result.already_saved == 0
    assert [line.line for line in result.failed] == [2, 5, 6, 7, 8]
    assert total(mem) == 4


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"content": "x", "colour": "red"}, "unknown field"),
        ("{not json", "JSON"),
        (b"\xff", "UTF-8"),
        ("[1]", "JSON object"),
        ("null", "JSON object"),
        ({"content": ""}, "content"),
        ({"content": "x", "category": "nope"}, "category"),
        ({"content": "x", "type": "thread_closed", "thread_id": "m-zzzzzzzz"}, "no memory"),
    ],
)
def test_add_batch_reports_why_a_line_failed(mem, item, message):
    result = mem.add_batch([{"content": "good"}, item])
    assert result.added == 1
    (failed,) = result.failed
    assert failed.line == 2
    assert message in failed.error


def test_add_batch_a_non_string_scope_fails_only_its_line(mem):
    result = mem.add_batch([{"content": "a"}, {"content": "b", "scope": 5}, {"content": "c"}])
    assert result.added == 2
    assert [line.line for line in result.failed] == [2]


def test_add_batch_blank_lines_are_ignored_but_keep_line_numbers(mem):
    result = mem.add_batch(["", '{"content": "a"}', "  \n", b"\n", "bad"])
    assert [line.line for line in result.lines] == [2, 5]
    assert result.added == 1


def test_add_batch_reads_a_jsonl_file_opened_as_bytes(mem, tmp_path):
    path = tmp_path / "entries.jsonl"
    lines = [{"content": "one", "tags": ["x"]}, {"type": "decision", "content": "chose Rust"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with path.open("rb") as handle:
        result = mem.add_batch(handle)
    assert result.added == 2
    assert mem.get(result.ids[1]).kind is Kind.DECISION


def test_add_batch_accepts_a_generator(mem):
    result = mem.add_batch({"content": f"note {i}"} for i in range(3))
    assert result.added == 3


def test_add_batch_every_field_round_trips(mem):
    line = json.dumps(dict(FULL_INPUT, allow_duplicate=True))  # the same text twice
    result = mem.add_batch(
        [dict(FULL_INPUT, session_id="sess-a"), line.replace("sess-1", "sess-b")]
    )
    assert result.added == 2
    for memory_id, session in zip(result.ids, ["sess-a", "sess-b"], strict=True):
        assert_fields(mem.get(memory_id), {**FULL_EXPECTED, "session_id": session})


def test_add_batch_accepts_reference_field_aliases(mem):
    line = {
        "body": "Retry with backoff",
        "resonance": 8,
        "type": "decision",
        "session": "abc",
        "wake_phrase": "retry",
    }
    memory_id = mem.add_batch([line]).ids[0]
    assert_fields(
        mem.get(memory_id),
        {"importance": 8, "kind": Kind.DECISION, "session_id": "abc", "wake_phrases": ("retry",)},
    )


def test_add_batch_field_and_alias_disagreeing_fail_the_line(mem):
    result = mem.add_batch([{"content": "a", "body": "b"}])
    assert "twice" in result.failed[0].error


def test_add_batch_duplicates_count_as_already_saved_not_failed(mem):
    result = mem.add_batch(
        [
            {"content": "Same fact", "session_id": "s"},
            {"content": "same fact!", "session_id": "s"},
            {"content": "same fact!", "session_id": "s", "allow_duplicate": True},
        ]
    )
    assert (result.added, result.already_saved, len(result.failed)) == (2, 1, 0)
    assert result.ids[1] == result.ids[0]
    assert result.ids[2] != result.ids[0]


def test_add_batch_dedups_against_earlier_adds(mem):
    first = mem.add("Earlier fact", session_id="s")
    result = mem.add_batch([{"content": "EARLIER FACT.", "session_id": "s"}])
    assert result.ids == [first.id]
    assert result.already_saved == 1


def test_add_batch_can_close_a_thread(mem):
    thread = open_thread(mem)
    mem.add_batch([{"type": "thread_closed", "content": "Closed.", "thread_id": thread}])
    assert mem.get(thread).state is State.CLOSED


def test_add_batch_empty_input(mem):
    result = mem.add_batch([])
    assert (result.ids, result.added, result.already_saved, result.failed) == ([], 0, 0, [])


def test_a_taken_random_id_is_replaced_not_an_error(mem, monkeypatch):
    first = mem.add("The staging database is called stg-main.")
    # The id generator hands out an id that is already taken, then a free one.
    ids = iter([first.id, "m-zzzzzzzz"])
    monkeypatch.setattr("memlane.runtime.new_id", lambda: next(ids))
    result = mem.add_batch([{"content": "The production database is called prd-main."}])
    assert result.failed == []
    landed = mem.get(result.ids[0])
    assert landed.id == "m-zzzzzzzz"
    assert landed.body == "The production database is called prd-main."
    assert mem.get(first.id).body == "The staging database is called stg-main."


def test_batch_lines_may_anchor_to_memories_landed_earlier(mem):
    base = mem.add("Billing runs on PostgreSQL 16.")
    result = mem.add_batch(
        [
            {"content": "Invoices are stored in the invoices table."},
            {"content": "Refund rows reference invoices.", "anchors": [base.id]},
            {"content": "Credit notes are invoices with a negative total."},
        ]
    )
    assert result.failed == [] and result.added == 3
    assert mem.get(result.ids[1]).anchors == (base.id,)
    assert [mem.get(i).body for i in result.ids] == [
        "Invoices are stored in the invoices table.",
        "Refund rows reference invoices.",
        "Credit notes are invoices with a negative total.",
    ]


def test_duplicates_within_one_batch_are_already_saved(mem):
    line = {"content": "Use uv for installs.", "session_id": "s-9"}
    result = mem.add_batch([line, dict(line, content="use UV for installs!"), line])
    assert result.added == 1 and result.already_saved == 2
    assert result.ids == [result.ids[0]] * 3


@pytest.mark.sqlite_only  # reads FTS5's segment table
def test_a_large_batch_leaves_the_keyword_index_merged(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each transaction writes its words as a new FTS5 segment; a batch large enough to
    count merges them all once it has landed, so later searches look each word up once."""
    import sqlite3

    monkeypatch.setattr("memlane.services.writing.BATCH_CHUNK", 10)
    monkeypatch.setattr("memlane.services.writing.REANALYZE_AFTER", 60)

    def segments() -> int:
        with sqlite3.connect(mem.store.conn.location) as conn:
            return int(
                conn.execute("SELECT count(DISTINCT segid) FROM memory_fts_idx").fetchone()[0]
            )

    mem.add_batch([{"content": f"note {i} about subject{i} and topic{i % 7}"} for i in range(50)])
    assert segments() > 1  # 50 lines: fewer than count as large
    mem.add_batch([{"content": f"fact {i} about thing{i} and area{i % 5}"} for i in range(60)])
    assert segments() == 1
    assert [h.record.body for h in mem.search("thing7")] == ["fact 7 about thing7 and area2"]
