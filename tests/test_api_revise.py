"""Revising memories through the Python API: update modes, versions, as-of reads,
restore, supersede/invalidate/retire/merge, delete, and privacy."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from conftest import BACKEND, raw_sql
from memlane import CLEAR, Conflict, Context, Invalid, Memory, NotFound, Patch
from memlane.model import ContentType, Kind, LinkType, ResonanceType, Visibility, WriteStatus

US = timedelta(microseconds=1)


@pytest.fixture
def other(db_path: Path):
    """A second agent on the same store and context."""
    with Memory.open(db_path, agent="other", context=Context("proj", "main")) as memory:
        yield memory


def note(mem: Memory, body: str = "Use pip for installs. Pip is fine.", **fields: Any) -> str:
    return mem.add(body, title=fields.pop("title", "Installs"), **fields).id


sql = raw_sql  # read the store directly, through a separate connection


def version_count(mem: Memory, memory_id: str) -> int:
    return len(mem.history(memory_id))


# ---- update: content modes ----------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "body"),
    [
        ({"content": "Use uv for installs."}, "Use uv for installs."),
        ({"append": " Except in CI."}, "Use pip for installs. Pip is fine. Except in CI."),
        ({"prepend": "NOTE: "}, "NOTE: Use pip for installs. Pip is fine."),
        ({"find": "for installs", "replace": "for builds"}, "Use pip for builds. Pip is fine."),
        ({"find": "ip", "replace": "IP", "nth": 2}, "Use pip for installs. PIP is fine."),
        (
            {"find": "ip", "replace": "IP", "replace_all": True},
            "Use pIP for installs. PIP is fine.",
        ),
    ],
)
def test_update_content_modes(mem, changes, body):
    memory_id = note(mem)
    result = mem.update(memory_id, **changes)
    assert result.status is WriteStatus.UPDATED
    assert result.version == 2
    record = mem.get(memory_id)
    assert record.body == body
    assert record.id == memory_id
    assert record.version == 2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"find": "ip", "replace": "X"}, "2 matches"),
        ({"find": "absent", "replace": "X"}, "not present"),
        ({"find": "ip", "replace": "X", "nth": 5}, "out of range"),
        ({"find": "pip"}, "go together"),
        ({"replace": "uv"}, "go together"),
        ({"content": "new", "append": "more"}, "mutually exclusive"),
        ({"append": "x", "prepend": "y"}, "mutually exclusive"),
        ({"content": "x", "find": "pip", "replace": "uv"}, "mutually exclusive"),
        ({"content": "   "}, "empty"),
        ({"content": "x" * 65537}, "limit"),
        ({"append": "x" * 65536}, "limit"),
        ({"title": "t" * 301}, "limit"),
        ({"add_tags": [f"t{i}" for i in range(51)]}, "limit"),
        ({"add_tags": ["x" * 65]}, "limit"),
        ({"kind": "factoid"}, "invalid kind"),
        ({"resonance_type": "eternal"}, "invalid resonance type"),
        ({"content_type": "binary"}, "invalid content type"),
        ({"importance": 0}, "importance"),
        ({"category": "nonexistent"}, "unknown category"),
        ({"wake_order": "soon"}, "wake order"),
        ({"visibility": "hidden"}, "visibility"),
        ({"owner": "bob"}, "owner"),
        ({}, "nothing to change"),
        ({"title": "Installs"}, "nothing to change"),
    ],
)
def test_update_refuses_and_changes_nothing(mem, changes, message):
    memory_id = note(mem)
    before = mem.get(memory_id)
    with pytest.raises(Invalid, match=message):
        mem.update(memory_id, **changes)
    assert mem.get(memory_id) == before
    assert version_count(mem, memory_id) == 1


def test_update_several_matches_error_suggests_nth_or_replace_all(mem):
    memory_id = note(mem)
    with pytest.raises(Invalid) as err:
        mem.update(memory_id, find="ip", replace="X")
    assert "--nth" in str(err.value)
    assert "--replace-all" in str(err.value)


def test_update_accepts_a_patch_object(mem):
    memory_id = note(mem)
    mem.update(memory_id, Patch(title="Package installs", add_tags=("tooling",)))
    record = mem.get(memory_id)
    assert (record.title, record.tags) == ("Package installs", ("tooling",))


# ---- update: metadata modes ---------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field", "value"),
    [
        ({"title": "Package installs"}, "title", "Package installs"),
        ({"tags": "x,y"}, "tags", ("x", "y")),
        ({"tags": []}, "tags", ()),
        ({"add_tags": "c"}, "tags", ("a", "b", "c")),
        ({"add_tags": ["b", "c"]}, "tags", ("a", "b", "c")),
        ({"remove_tags": "a"}, "tags", ("b",)),
        ({"tags": "x", "add_tags": "y", "remove_tags": "x"}, "tags", ("y",)),
        ({"category": "lesson"}, "category", "lesson"),
        ({"kind": "procedure"}, "kind", Kind.PROCEDURE),
        ({"importance": 9}, "importance", 9),
        ({"importance": 42}, "importance", 42),
        ({"resonance_type": "foundational"}, "resonance_type", ResonanceType.FOUNDATIONAL),
        ({"content_type": "code"}, "content_type", ContentType.CODE),
        ({"wake_phrases": "p1,p2"}, "wake_phrases", ("p1", "p2")),
        ({"add_wake_phrases": "w2"}, "wake_phrases", ("w1", "w2")),
        ({"remove_wake_phrases": "w1"}, "wake_phrases", ()),
        ({"wake_order": 7}, "wake_order", 7),
        ({"wake_order": CLEAR}, "wake_order", None),
        ({"session_id": "retrofit-1"}, "session_id", "retrofit-1"),
        ({"applicability": "python,rust"}, "applicability", ("python", "rust")),
        ({"applicability": []}, "applicability", ()),
        ({"source_ref": "url:https://x.test"}, "source_ref", "url:https://x.test"),
    ],
)
def test_update_metadata_modes(mem, changes, field, value):
    memory_id = note(mem, tags=["a", "b"], wake_phrases=["w1"], wake_order=2, applicability="go")
    mem.update(memory_id, **changes)
    assert getattr(mem.get(memory_id), field) == value


def test_update_kind_changes_the_memory_class(mem):
    memory_id = note(mem)
    mem.update(memory_id, kind="event")
    assert mem.get(memory_id).memory_class.value == "episodic"


def test_update_make_private_defaults_the_owner_to_the_author(mem, other):
    memory_id = note(mem)
    mem.update(memory_id, private=True)
    record = mem.get(memory_id)
    assert (record.visibility, record.owner) == (Visibility.PRIVATE, "tester")
    with pytest.raises(NotFound):
        other.get(memory_id)


def test_update_make_public_needs_force(mem, other):
    memory_id = note(mem, private=True)
    with pytest.raises(Invalid, match="force"):
        mem.update(memory_id, visibility="public")
    with pytest.raises(NotFound):
        other.get(memory_id)
    mem.update(memory_id, visibility="public", force=True)
    record = other.get(memory_id)
    assert (record.visibility, record.owner) == (Visibility.PUBLIC, None)


def test_update_never_gives_a_private_memory_to_another_owner(mem, other):
    memory_id = note(mem, private=True)
    for force in (False, True):
        with pytest.raises(Invalid, match="owner 'other' refused"):
            mem.update(memory_id, owner="other", force=force)
    mem.update(memory_id, owner="tester", title="Still mine")  # naming oneself is fine
    assert (mem.get(memory_id).owner, mem.get(memory_id).version) == ("tester", 2)
    with pytest.raises(NotFound):
        other.get(memory_id)


def test_update_unknown_id_is_not_found(mem):
    with pytest.raises(NotFound):
        mem.update("m-zzzzzzzz", title="x")


# ---- versions and history ------------------------------------------------------

BODIES = ["alpha version one", "bravo version two", "charlie version three", "delta version four"]


@pytest.fixture
def versioned(mem) -> str:
    """A memory updated three times: four versions with one distinctive word each."""
    memory_id = mem.add(BODIES[0], title="Release notes").id
    for body, reason in zip(BODIES[1:], ["typo", None, "rewrite"], strict=True):
        mem.update(memory_id, content=body, reason=reason)
    return memory_id


def test_history_lists_every_version_oldest_first(mem, versioned):
    history = mem.history(versioned)
    assert [v.number for v in history] == [1, 2, 3, 4]
    assert [v.body for v in history] == BODIES
    assert [v.reason for v in history] == ["typo", "updated", "rewrite", "current"]
    assert history[-1].valid_until is None
    assert {v.actor for v in history[:-1]} == {"tester"}
    assert mem.get(versioned).version == 4


def test_history_intervals_are_contiguous_and_increasing(mem, versioned):
    history = mem.history(versioned)
    for earlier, later in pairwise(history):
        assert earlier.valid_from < earlier.valid_until == later.valid_from
    assert history[0].valid_from == mem.get(versioned).created_at


def test_get_as_of_returns_the_version_valid_then(mem, versioned):
    for version in mem.history(versioned):
        assert mem.get(versioned, as_of=version.valid_from).body == version.body
        if version.valid_until is not None:
            last_instant = version.valid_until - US
            assert mem.get(versioned, as_of=last_instant).body == version.body
            assert mem.get(versioned, as_of=version.valid_until).body != version.body


def test_get_as_of_reports_the_version_number_valid_then(mem, versioned):
    second = mem.history(versioned)[1]
    record = mem.get(versioned, as_of=second.valid_from)
    assert (record.version, record.body, record.id) == (2, BODIES[1], versioned)


def test_get_as_of_accepts_iso_text(mem, versioned):
    second = mem.history(versioned)[1]
    assert mem.get(versioned, as_of=second.valid_from.isoformat()).body == BODIES[1]


def test_get_as_of_before_creation_is_not_found(mem, versioned):
    created = mem.get(versioned).created_at
    with pytest.raises(NotFound, match="not valid"):
        mem.get(versioned, as_of=created - US)


def test_list_as_of_returns_the_version_valid_then(mem, versioned):
    for version in mem.history(versioned):
        assert [r.body for r in mem.list(as_of=version.valid_from)] == [version.body]
    created = mem.get(versioned).created_at
    assert mem.list(as_of=created - US) == []


def test_search_as_of_matches_the_content_valid_then(mem, versioned):
    history = mem.history(versioned)
    for version, word in zip(history, ["alpha", "bravo", "charlie", "delta"], strict=True):
        hits = mem.search(word, as_of=version.valid_from)
        assert [(h.record.id, h.record.body) for h in hits] == [(versioned, version.body)]
        assert [h.record.body for h in mem.search("version", as_of=version.valid_from)] == [
            version.body
        ]
        others = {"alpha", "bravo", "charlie", "delta"} - {word}
        for absent in others:
            assert mem.search(absent, as_of=version.valid_from) == []


def test_search_now_matches_only_current_content(mem, versioned):
    assert mem.search("alpha") == []
    assert [h.record.body for h in mem.search("delta")] == [BODIES[3]]


def test_refused_update_adds_no_version(mem, versioned):
    with pytest.raises(Invalid):
        mem.update(versioned, find="alpha", replace="omega")  # only in an old version
    assert version_count(mem, versioned) == 4
    assert mem.get(versioned).body == BODIES[3]


# ---- restore -------------------------------------------------------------------


def test_restore_defaults_to_the_previous_version(mem, versioned):
    result = mem.restore(versioned)
    assert result.version == 5
    record = mem.get(versioned)
    assert record.body == BODIES[2]
    history = mem.history(versioned)
    assert history[3].reason == "restored version 3"
    assert history[3].body == BODIES[3]


def test_restore_an_explicit_version(mem, versioned):
    mem.restore(versioned, version=1)
    assert mem.get(versioned).body == BODIES[0]
    assert [v.body for v in mem.history(versioned)] == [*BODIES, BODIES[0]]


def test_restore_brings_back_metadata_too(mem):
    memory_id = note(mem, tags=["a"], importance=3)
    mem.update(memory_id, tags="b", importance=9, title="Changed")
    mem.restore(memory_id)
    record = mem.get(memory_id)
    assert (record.tags, record.importance, record.title) == (("a",), 3, "Installs")


def test_restore_the_current_version_is_refused(mem, versioned):
    with pytest.raises(Invalid, match="already current"):
        mem.restore(versioned, version=4)


@pytest.mark.parametrize("version", [0, 9, -1])
def test_restore_a_missing_version_is_not_found_listing_the_known_ones(mem, versioned, version):
    with pytest.raises(NotFound, match="1, 2, 3"):
        mem.restore(versioned, version=version)
    assert mem.get(versioned).version == 4


def test_restore_without_earlier_versions_is_not_found(mem):
    with pytest.raises(NotFound, match="none"):
        mem.restore(note(mem))


# ---- supersede -----------------------------------------------------------------


def test_supersede_creates_a_successor_and_keeps_the_old_for_audit(mem):
    old = note(mem, tags=["tooling"], importance=7, category="lesson", kind="lesson")
    result = mem.supersede(old, "Use uv for installs.", reason="uv is faster")
    assert result.status is WriteStatus.ADDED
    new = result.id
    assert new != old
    old_record = mem.get(old)
    assert (old_record.superseded_by, old_record.supersede_reason) == (new, "uv is faster")
    assert old_record.superseded_at == mem.get(new).created_at
    assert not old_record.live
    new_record = mem.get(new)
    assert (new_record.tags, new_record.importance, new_record.category, new_record.kind) == (
        ("tooling",),
        7,
        "lesson",
        Kind.LESSON,
    )
    assert new_record.scope == old_record.scope
    assert [r.id for r in mem.list()] == [new]
    assert {r.id for r in mem.list(include_superseded=True)} == {old, new}
    assert [(ln.source, ln.target, ln.type) for ln in mem.graph.links(old)] == [
        (new, old, LinkType.SUPERSEDES)
    ]


def test_supersede_fields_override_the_inherited_ones(mem):
    old = note(mem, tags=["a"], importance=7)
    new = mem.supersede(old, "Replacement", tags=["b"], importance=2).id
    assert (mem.get(new).tags, mem.get(new).importance) == (("b",), 2)


def test_supersede_as_of_hands_over_at_the_successor_creation(mem):
    old = note(mem)
    new = mem.supersede(old, "Use uv for installs.").id
    handover = mem.get(new).created_at
    assert [r.id for r in mem.list(as_of=handover - US)] == [old]
    assert [r.id for r in mem.list(as_of=handover)] == [new]
    assert mem.get(old, as_of=handover - US).body.startswith("Use pip")
    with pytest.raises(NotFound):
        mem.get(old, as_of=handover)


def test_supersede_unknown_id_is_not_found(mem):
    with pytest.raises(NotFound):
        mem.supersede("m-zzzzzzzz", "new")


# ---- invalidate / retire / write-once tombstones ---------------------------------


@pytest.mark.parametrize("reason", ["", "   ", None])
def test_invalidate_requires_a_reason(mem, reason):
    memory_id = note(mem)
    with pytest.raises(Invalid, match="reason"):
        mem.invalidate(memory_id, reason)
    assert mem.get(memory_id).live


def test_invalidate_ends_validity_without_a_successor(mem):
    memory_id = note(mem)
    record = mem.invalidate(memory_id, "  pip was removed  ")
    assert record.valid_until is not None
    assert (record.superseded_by, record.superseded_at) == (None, None)
    assert record.supersede_reason == "pip was removed"
    assert not record.live
    assert mem.list() == []
    assert [r.id for r in mem.list(include_superseded=True)] == [memory_id]
    assert mem.get(memory_id).body.startswith("Use pip")


def test_invalidate_as_of_is_half_open(mem):
    memory_id = note(mem)
    until = mem.invalidate(memory_id, "wrong").valid_until
    assert mem.get(memory_id, as_of=until - US).id == memory_id
    assert [r.id for r in mem.list(as_of=until - US)] == [memory_id]
    with pytest.raises(NotFound):
        mem.get(memory_id, as_of=until)
    assert mem.list(as_of=until) == []


def test_retire_ends_a_memory_without_successor(mem):
    memory_id = note(mem)
    record = mem.retire(memory_id)
    assert record.superseded_at is not None
    assert (record.superseded_by, record.valid_until) == (None, None)
    assert record.supersede_reason == "retired"
    assert not record.live
    assert mem.list() == []
    assert mem.retire(note(mem, "another"), reason="obsolete").supersede_reason == "obsolete"


def tombstone(mem: Memory, how: str, memory_id: str) -> None:
    if how == "supersede":
        mem.supersede(memory_id, "Successor text")
    elif how == "invalidate":
        mem.invalidate(memory_id, "not true")
    elif how == "retire":
        mem.retire(memory_id)
    else:
        mem.merge([memory_id], "Merged text")


TOMBSTONES = ["supersede", "invalidate", "retire", "merge"]
SECOND_ACTIONS = {
    "supersede": lambda mem, i: mem.supersede(i, "Another successor"),
    "invalidate": lambda mem, i: mem.invalidate(i, "again"),
    "retire": lambda mem, i: mem.retire(i),
    "merge": lambda mem, i: mem.merge([i], "Merged again"),
    "update": lambda mem, i: mem.update(i, title="Edited"),
    "restore": lambda mem, i: mem.restore(i, version=1),
}


@pytest.mark.parametrize("first", TOMBSTONES)
@pytest.mark.parametrize("second", list(SECOND_ACTIONS))
def test_tombstones_are_write_once(mem, first, second):
    memory_id = note(mem)
    tombstone(mem, first, memory_id)
    before = mem.get(memory_id)
    count = mem.stats().total
    with pytest.raises(Conflict, match="write-once"):
        SECOND_ACTIONS[second](mem, memory_id)
    assert mem.get(memory_id) == before
    assert mem.stats().total == count


# ---- merge ---------------------------------------------------------------------


def test_merge_promotes_importance_to_the_max_and_unions_tags(mem):
    a = note(mem, "First half", importance=3, tags=["x"])
    b = note(mem, "Second half", importance=8, tags=["y", "x"])
    c = note(mem, "Third half", importance=5)
    result = mem.merge([a, b, c], "Both halves together")
    merged = mem.get(result.id)
    assert merged.importance == 8
    assert merged.tags == ("x", "y")
    assert merged.live
    for source in (a, b, c):
        record = mem.get(source)
        assert record.superseded_by == result.id
        assert not record.live
    assert [r.id for r in mem.list()] == [result.id]
    assert {(ln.target, ln.type) for ln in mem.graph.links(result.id)} == {
        (a, LinkType.SUPERSEDES),
        (b, LinkType.SUPERSEDES),
        (c, LinkType.SUPERSEDES),
    }


def test_merge_with_a_missing_id_merges_nothing(mem):
    a = note(mem, "First")
    with pytest.raises(NotFound, match=r"m-zzzzzzzz.*nothing was merged"):
        mem.merge(["m-zzzzzzzz", a], "Merged")
    assert mem.get(a).live and mem.stats().total == 1


def test_merge_with_nothing_to_merge_is_not_found(mem):
    with pytest.raises(NotFound):
        mem.merge(["m-zzzzzzzz"], "Merged")
    assert mem.stats().total == 0


def test_merge_with_a_tombstoned_source_changes_nothing(mem):
    a, b = note(mem, "First"), note(mem, "Second")
    mem.retire(b)
    with pytest.raises(Conflict):
        mem.merge([a, b], "Merged")
    assert mem.get(a).live
    assert mem.stats().total == 2


# ---- delete --------------------------------------------------------------------

SECRET_WORD = "zanzibarquux"


def fts_hits(db_path: Path, table: str, word: str) -> int:
    if BACKEND == "postgres":  # the index is the table's own terms column (FTS5's terms)
        from memlane.store.terms import phrases

        source = {"memory_fts": "memory", "version_fts": "memory_version"}[table]
        query = f"SELECT count(*) FROM {source} WHERE jsonb_exists(terms, ?)"
        return sql(db_path, query, phrases([word])[0][0])[0][0]
    return sql(db_path, f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", f'"{word}"')[0][0]


def columns_of(db_path: Path, table: str) -> list[str]:
    if BACKEND == "postgres":
        query = "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
        return [r[0] for r in sql(db_path, query + "ORDER BY ordinal_position", table)]
    return [row[1] for row in sql(db_path, f"PRAGMA table_info({table})")]


def test_delete_removes_the_memory_versions_links_and_fts_rows(mem, db_path):
    memory_id = note(mem, f"The {SECRET_WORD} lives here.")
    mem.update(memory_id, append=" More.")
    successor = mem.supersede(memory_id, "Successor without the word").id
    other_id = note(mem, "Unrelated note")
    assert fts_hits(db_path, "version_fts", SECRET_WORD) == 1

    assert mem.delete(memory_id).ids == (memory_id,)

    with pytest.raises(NotFound):
        mem.get(memory_id)
    with pytest.raises(NotFound):
        mem.history(memory_id)
    assert sql(db_path, "SELECT count(*) FROM memory WHERE id = ?", memory_id) == [(0,)]
    assert sql(db_path, "SELECT count(*) FROM memory_version WHERE memory_id = ?", memory_id) == [
        (0,)
    ]
    assert sql(
        db_path, "SELECT count(*) FROM link WHERE source = ? OR target = ?", memory_id, memory_id
    ) == [(0,)]
    assert fts_hits(db_path, "memory_fts", SECRET_WORD) == 0
    assert fts_hits(db_path, "version_fts", SECRET_WORD) == 0
    assert mem.search(SECRET_WORD, include_superseded=True, scope="all") == []
    assert mem.get(successor).live
    assert mem.get(other_id).live


def test_delete_leaves_a_journal_line_without_content(mem, db_path):
    memory_id = note(mem, f"The {SECRET_WORD} lives here.")
    mem.delete(memory_id)
    rows = sql(
        db_path, "SELECT operation, actor, detail FROM journal WHERE memory_id = ?", memory_id
    )
    assert rows == [("add", "tester", None), ("delete", "tester", None)]
    columns = columns_of(db_path, "journal")
    # detail holds a forget's stated reason, never the memory's content
    assert columns == ["seq", "at", "operation", "memory_id", "actor", "detail"]
    assert SECRET_WORD not in repr(sql(db_path, "SELECT * FROM journal"))


def test_journal_of_a_deleted_memory_is_still_readable(mem):
    """The journal line is all that is left of a deleted memory; the API must show it."""
    memory_id = note(mem)
    mem.delete(memory_id)
    assert [e.operation for e in mem.journal(memory_id)] == ["delete", "add"]


@pytest.mark.sqlite_only
def test_delete_leaves_no_trace_of_the_content_in_the_file(mem, db_path):
    """forget removes a memory from every table and index: its words are not in the file."""
    for i in range(3):
        note(mem, f"Filler note number {i}")
    memory_id = note(mem, f"The {SECRET_WORD} password lives here.")
    mem.update(memory_id, append=" And xyzzyplugh too.")
    mem.delete(memory_id)
    mem.close()
    leftovers = {
        path.name: [w for w in (SECRET_WORD, "xyzzyplugh") if w.encode() in path.read_bytes()]
        for path in db_path.parent.glob(db_path.name + "*")
    }
    assert all(not words for words in leftovers.values()), leftovers


def test_delete_unknown_id_is_not_found(mem):
    with pytest.raises(NotFound):
        mem.delete("m-zzzzzzzz")


def test_delete_a_tombstoned_memory_is_allowed(mem):
    memory_id = note(mem)
    mem.invalidate(memory_id, "wrong")
    mem.delete(memory_id)
    with pytest.raises(NotFound):
        mem.get(memory_id)


# ---- privacy -------------------------------------------------------------------


@pytest.fixture
def secret(mem) -> str:
    return note(mem, f"My private {SECRET_WORD} plan", private=True, session_id="s1")


@pytest.mark.parametrize(
    "action",
    [
        lambda m, i: m.get(i),
        lambda m, i: m.history(i),
        lambda m, i: m.graph.links(i),
        lambda m, i: m.update(i, title="mine now"),
        lambda m, i: m.restore(i),
        lambda m, i: m.invalidate(i, "nope"),
        lambda m, i: m.retire(i),
        lambda m, i: m.supersede(i, "hijack"),
        lambda m, i: m.delete(i),
    ],
    ids=[
        "get",
        "history",
        "links",
        "update",
        "restore",
        "invalidate",
        "retire",
        "supersede",
        "delete",
    ],
)
def test_private_memory_is_not_found_for_another_agent(mem, other, secret, action):
    with pytest.raises(NotFound):
        action(other, secret)
    assert mem.get(secret).live


def test_private_memory_is_hidden_from_other_agents_lists_and_searches(other, secret):
    assert other.list(scope="all") == []
    assert other.list(include_private=True, scope="all") == []
    assert other.list(mine=True) == []
    assert other.search(SECRET_WORD, include_private=True) == []


def test_private_memory_is_hidden_from_a_caller_without_identity(db_path, secret):
    with Memory.open(db_path, context=Context("proj", "main")) as anonymous:
        with pytest.raises(NotFound):
            anonymous.get(secret)
        assert anonymous.list() == []


def test_private_memory_is_visible_to_its_owner_on_request(mem, secret):
    assert mem.list() == []  # default reads are public-only
    assert [r.id for r in mem.list(include_private=True)] == [secret]
    assert [r.id for r in mem.list(mine=True)] == [secret]
    assert [h.record.id for h in mem.search(SECRET_WORD, include_private=True)] == [secret]
    assert mem.hidden_private_count(mem.filters()) == 1


def test_made_private_memory_stays_hidden_in_as_of_reads(mem, other):
    """Making a memory private hides its earlier public versions from others too."""
    memory_id = note(mem, f"Once public {SECRET_WORD}")
    public_from = mem.get(memory_id).created_at
    mem.update(memory_id, private=True)
    with pytest.raises(NotFound):
        other.get(memory_id, as_of=public_from)
    assert other.list(as_of=public_from) == []
    assert other.search(SECRET_WORD, as_of=public_from) == []


def test_restore_does_not_make_a_private_memory_public_without_force(mem, other):
    """Restoring old content must not undo a privacy change: public needs force."""
    memory_id = note(mem, "Once public, then made private")
    mem.update(memory_id, private=True)
    mem.update(memory_id, append=" With private details.")
    with contextlib.suppress(Invalid):  # refusing without force is fine too
        mem.restore(memory_id, version=1)
    with pytest.raises(NotFound):
        other.get(memory_id)
