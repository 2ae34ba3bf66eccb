"""Pure functions: normalization and the dedup hash, find/replace, FTS queries,
scopes and the working context, enums, resonance decay and filter building."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memlane import Context, Invalid
from memlane.model import (
    Kind,
    ResonanceType,
    SourceType,
    Visibility,
    effective_resonance,
    parse_enum,
)
from memlane.retrieve.filters import make_filters
from memlane.scope import detect_context, load_aliases, parse_scope, save_alias
from memlane.store.sqlite.sql import fts_query
from memlane.write.normalize import dedup_hash, derive_title, fold
from memlane.write.patch import find_replace

T0 = datetime(2026, 1, 1, tzinfo=UTC)
WEEK = timedelta(days=7)
CTX = Context("proj", "main")

# ---- fold / dedup_hash ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("Use UV for installs", "use uv for installs"),
        ("  many   spaces\tand\nnewlines  ", "many spaces and newlines"),
        ("Hello, world! (really?)", "hello world really"),
        ("“Smart” ‘quotes’", "smart quotes"),
        ("wait — an em dash – an en dash", "wait an em dash an en dash"),
        ("and so on…", "and so on"),
        ("", ""),
        ("...!!!", ""),
    ],
)
def test_fold_lowercases_strips_punctuation_and_collapses_space(text, folded):
    assert fold(text) == folded


def test_fold_keeps_letters_and_digits_of_any_script():
    assert fold("Café 42 Ünïcode") == "café 42 ünïcode"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Don't use pip", "Dont use pip"),
        ("Don’t use pip", "Dont use pip"),
    ],
)
def test_fold_strips_apostrophes_rather_than_splitting_words(a, b):
    """The spec says punctuation is *stripped*: "don't" and "dont" fold alike."""
    assert fold(a) == fold(b)


def test_dedup_hash_names_its_algorithm():
    assert dedup_hash("t", "body").startswith("dh1:")


@pytest.mark.parametrize(
    ("variant_title", "variant_body"),
    [
        ("USE UV FOR INSTALLS", "ALWAYS. NEVER PIP."),
        ("Use uv, for installs!", "Always -- never pip..."),
        ("Use “uv” for installs", "Always — never pip…"),
        ("  Use   uv for\ninstalls ", " Always\tnever   pip "),
    ],
)
def test_dedup_hash_ignores_case_punctuation_and_whitespace(variant_title, variant_body):
    assert dedup_hash("Use uv for installs", "Always. Never pip.") == dedup_hash(
        variant_title, variant_body
    )


def test_dedup_hash_differs_for_different_words():
    assert dedup_hash("Use uv", "for installs") != dedup_hash("Use uv", "for builds")


def test_dedup_hash_is_a_length_prefixed_pair_not_a_concatenation():
    """'ab'+'cd' and 'abc'+'d' must not collide (the title is no prefix of the body)."""
    assert dedup_hash("x ab", "cd y") != dedup_hash("x abcd", "y")


def test_dedup_hash_title_echoing_the_body_counts_as_no_title():
    body = "Use uv for installs. It is faster than pip."
    assert dedup_hash(derive_title(body), body) == dedup_hash("", body)
    assert dedup_hash("use UV for installs", body) == dedup_hash("", body)


# ---- derive_title -----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "title"),
    [
        ("Use uv for installs. It is faster.", "Use uv for installs"),
        ("Is it fast? Yes.", "Is it fast?"),
        ("First line\nsecond line", "First line"),
        ("One sentence only", "One sentence only"),
        ("...", "untitled"),
    ],
)
def test_derive_title_takes_the_first_sentence_or_line(body, title):
    assert derive_title(body) == title


def test_derive_title_cuts_a_long_sentence_at_a_word_boundary():
    body = " ".join(["word"] * 60)
    title = derive_title(body)
    assert len(title) <= 80
    assert title.endswith("…")
    assert title[:-1].split(" ") == ["word"] * len(title[:-1].split(" "))


def test_derive_title_cuts_a_long_word_hard():
    title = derive_title("x" * 200)
    assert title == "x" * 79 + "…"


# ---- find_replace -----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "find", "new", "nth", "replace_all", "expected"),
    [
        ("use pip here", "pip", "uv", None, False, "use uv here"),
        ("a b a b a", "a", "X", 2, False, "a b X b a"),
        ("a b a b a", "a", "X", 1, False, "X b a b a"),
        ("a b a b a", "a", "X", 3, False, "a b a b X"),
        ("a b a b a", "a", "X", None, True, "X b X b X"),
        ("a b a", "a", "", None, True, " b "),
    ],
)
def test_find_replace_modes(body, find, new, nth, replace_all, expected):
    assert find_replace(body, find, new, nth, replace_all) == expected


def test_find_replace_nth_counts_the_same_occurrences_as_the_match_count():
    """'aaaa' holds two (non-overlapping) 'aa': the 2nd is at index 2, as replace-all sees it."""
    assert find_replace("aaaa", "aa", "X", None, True) == "XX"
    assert find_replace("aaaa", "aa", "X", 2, False) == "aaX"


@pytest.mark.parametrize(
    ("body", "find", "nth", "message"),
    [
        ("a b a", "a", None, "2 matches"),
        ("a b a", "zzz", None, "not present"),
        ("a b a", "", None, "empty"),
        ("a b a", "a", 3, "out of range"),
        ("a b a", "a", 0, "out of range"),
    ],
)
def test_find_replace_refuses(body, find, nth, message):
    with pytest.raises(Invalid, match=message):
        find_replace(body, find, "X", nth, False)


def test_find_replace_several_matches_names_both_ways_out():
    with pytest.raises(Invalid) as err:
        find_replace("x x x", "x", "y", None, False)
    assert "--nth" in str(err.value)
    assert "--replace-all" in str(err.value)


# ---- fts_query --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "match", "query"),
    [
        ("uv pip", "all", '"uv" AND "pip"'),
        ("uv pip", "any", '"uv" OR "pip"'),
        ("inst*", "all", '"inst"*'),
        ('say "hi" (now)', "all", '"say" AND "hi"'),
        ("where do we configure the proxy", "all", '"configure" AND "proxy"'),
        ("what is it", "all", '"what" AND "is" AND "it"'),
        ("NOT this OR that", "all", '"NOT" AND "this" AND "OR" AND "that"'),
        ("foo-bar:baz", "all", '"foo" AND "bar" AND "baz"'),
        ("repeat repeat", "all", '"repeat"'),
        ("café", "all", '"café"'),
        (
            "what's a good recipe for banana bread?",
            "all",
            '"good" AND "recipe" AND "banana" AND "bread"',
        ),
        ("Alice’s laptop won't boot", "all", '"Alice" AND "laptop" AND "won" AND "boot"'),
        (
            "proxy port config",
            "most",
            '("proxy" AND "port") OR ("proxy" AND "config") OR ("port" AND "config")',
        ),
    ],
)
def test_fts_query_quotes_every_token(text, match, query):
    assert fts_query(text, match) == query


@pytest.mark.parametrize("text", ["", "   ", "!!! ... ---", '"()"*'])
def test_fts_query_without_tokens_is_none(text):
    assert fts_query(text, "all") is None


@pytest.mark.parametrize(
    ("text", "match"),
    [("proxy", "any"), ("proxy port", "most"), ("b c d e f g h", "most")],
)
def test_fts_query_skips_a_mode_that_repeats_a_narrower_one(text, match):
    assert fts_query(text, match) is None


# ---- parse_scope ------------------------------------------------------------


@pytest.mark.parametrize(
    "scope",
    [
        "global",
        "project:memlane",
        "project:my-proj.v2_x",
        "project:memlane@main",
        "project:memlane@feature/new-thing",
        "project:m@release-1.2+hotfix",
    ],
)
def test_parse_scope_accepts_the_three_forms(scope):
    assert parse_scope(scope) == scope


def test_parse_scope_strips_surrounding_space():
    assert parse_scope("  global ") == "global"


@pytest.mark.parametrize(
    "near_miss", ["globl", "glboal", "Global", "GLOBAL", "globals", "user:global", "*"]
)
def test_parse_scope_refuses_near_misses_of_global_naming_it(near_miss):
    with pytest.raises(Invalid, match="did you mean 'global'"):
        parse_scope(near_miss)


@pytest.mark.parametrize(
    "bad",
    [
        "project",
        "project:",
        "projects:x",
        "project x",
        "project:a b",
        "project:a@",
        "project:@main",
        "project:-x",
        "proj:x",
        "local",
        "",
    ],
)
def test_parse_scope_refuses_malformed_scopes(bad):
    with pytest.raises(Invalid, match="scope"):
        parse_scope(bad)


# ---- detect_context ---------------------------------------------------------


def make_repo(root: Path, head: str = "ref: refs/heads/main") -> Path:
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text(head + "\n", encoding="utf-8")
    return root


def test_detect_context_reads_project_and_branch_from_git(tmp_path):
    repo = make_repo(tmp_path / "myproj", "ref: refs/heads/feature/x")
    assert detect_context(repo) == Context("myproj", "feature/x")


def test_detect_context_from_a_subdirectory_uses_the_git_root(tmp_path):
    repo = make_repo(tmp_path / "myproj")
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    assert detect_context(sub) == Context("myproj", "main")


def test_detect_context_detached_head_has_no_branch(tmp_path):
    repo = make_repo(tmp_path / "myproj", "3f2a9c" * 6 + "abcd")
    assert detect_context(repo) == Context("myproj", None)


def test_detect_context_without_git_uses_the_directory_name(tmp_path):
    plain = tmp_path / "notes"
    plain.mkdir()
    assert detect_context(plain) == Context("notes", None)


def test_detect_context_makes_a_directory_name_a_valid_project_name(tmp_path):
    odd = tmp_path / "my proj (copy)"
    odd.mkdir()
    ctx = detect_context(odd)
    assert ctx.project == "my-proj-copy"
    assert parse_scope(ctx.default_scope) == "project:my-proj-copy"


@pytest.mark.parametrize(
    ("directory", "project"),
    [
        ("日本", "日本"),
        ("café", "café"),
        ("cafe\u0301", "café"),  # NFD, as some file systems spell it: the same project
        ("caf", "caf"),
        ("Ünïcødé (2)", "Ünïcødé-2"),
        ("my_proj.v2 ", "my_proj.v2"),
        ("__x__", "x"),
    ],
)
def test_detect_context_keeps_unicode_letters_and_ascii_names_as_before(
    tmp_path, directory, project
):
    folder = tmp_path / directory
    folder.mkdir()
    ctx = detect_context(folder)
    assert ctx.project == project
    assert parse_scope(ctx.default_scope) == f"project:{project}"


def test_parse_scope_accepts_unicode_project_names_in_nfc():
    assert parse_scope("project:ünïcødé@main") == "project:ünïcødé@main"
    assert parse_scope("project:cafe\u0301") == "project:café"
    with pytest.raises(Invalid, match="scope"):
        parse_scope("project:_x")


@pytest.mark.parametrize("absolute", [True, False])
def test_detect_context_follows_a_worktree_git_file(tmp_path, absolute):
    main = make_repo(tmp_path / "main-repo")
    admin = main / ".git" / "worktrees" / "wt"
    admin.mkdir(parents=True)
    (admin / "HEAD").write_text("ref: refs/heads/topic\n", encoding="utf-8")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    target = str(admin) if absolute else "../main-repo/.git/worktrees/wt"
    (worktree / ".git").write_text(f"gitdir: {target}\n", encoding="utf-8")
    assert detect_context(worktree).branch == "topic"


def test_detect_context_maps_a_renamed_directory_through_the_alias_map(tmp_path):
    repo = make_repo(tmp_path / "memlane-old-checkout")
    ctx = detect_context(repo, aliases={"memlane-old-checkout": "memlane"})
    assert ctx == Context("memlane", "main")


def test_alias_map_saved_then_loaded_renames_the_project(tmp_path):
    aliases_file = tmp_path / "cfg" / "aliases.json"
    save_alias(aliases_file, "renamed-dir", "memlane")
    repo = make_repo(tmp_path / "renamed-dir")
    assert detect_context(repo, load_aliases(aliases_file)).project == "memlane"
    assert json.loads(aliases_file.read_text()) == {"renamed-dir": "memlane"}


def test_load_aliases_missing_file_is_empty(tmp_path):
    assert load_aliases(tmp_path / "nope.json") == {}
    assert load_aliases(None) == {}


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"])
def test_load_aliases_refuses_a_broken_map(tmp_path, content):
    path = tmp_path / "aliases.json"
    path.write_text(content)
    with pytest.raises(Invalid, match="alias map"):
        load_aliases(path)


def test_save_alias_refuses_invalid_names(tmp_path):
    with pytest.raises(Invalid, match="project name"):
        save_alias(tmp_path / "a.json", "ok", "bad name")


@pytest.mark.parametrize(
    ("ctx", "default", "chain"),
    [
        (Context(), "global", ("global",)),
        (Context("p"), "project:p", ("project:p", "global")),
        (Context("p", "b"), "project:p@b", ("project:p@b", "project:p", "global")),
    ],
)
def test_context_default_scope_and_read_chain(ctx, default, chain):
    assert ctx.default_scope == default
    assert ctx.chain == chain


# ---- parse_enum -------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "value", "member"),
    [
        (Kind, "lesson", Kind.LESSON),
        (Kind, "  LESSON ", Kind.LESSON),
        (Kind, Kind.TASK, Kind.TASK),
        (SourceType, "agent-session", SourceType.AGENT_SESSION),
        (ResonanceType, "Foundational", ResonanceType.FOUNDATIONAL),
        (Visibility, "private", Visibility.PRIVATE),
    ],
)
def test_parse_enum_accepts_case_and_dash_variants(cls, value, member):
    assert parse_enum(cls, value, "x") is member


def test_parse_enum_refuses_naming_the_nearest_value_and_all_choices():
    with pytest.raises(Invalid) as err:
        parse_enum(Kind, "lesso", "kind")
    message = str(err.value)
    assert "invalid kind 'lesso'" in message
    assert "did you mean 'lesson'" in message
    assert all(k.value in message for k in Kind)


@pytest.mark.parametrize("value", [None, "", "zzzz", 3])
def test_parse_enum_refuses_values_outside_the_enum(value):
    with pytest.raises(Invalid, match="choose from"):
        parse_enum(Kind, value, "kind")


# ---- effective_resonance ----------------------------------------------------


@pytest.mark.parametrize(
    ("importance", "weeks", "expected"),
    [
        (3, 1, 2.7),
        (3, 2, 3 * 0.9**2),
        (5, 1, 4.75),
        (8, 1, 7.8),
        (10, 4, 10 * 0.975**4),
    ],
)
def test_effective_resonance_decays_weekly_by_level(importance, weeks, expected):
    now = T0 + weeks * WEEK
    assert effective_resonance(importance, None, T0, now) == pytest.approx(expected)


def test_effective_resonance_counts_only_whole_weeks():
    almost = T0 + WEEK - timedelta(seconds=1)
    assert effective_resonance(5, None, T0, almost) == 5


@pytest.mark.parametrize(
    "rtype", [ResonanceType.FOUNDATIONAL, ResonanceType.TRANSFORMATIVE, "foundational"]
)
def test_effective_resonance_exempts_foundational_and_transformative(rtype):
    assert effective_resonance(4, rtype, T0, T0 + 52 * WEEK) == 4


@pytest.mark.parametrize("rtype", ["relational", "operational", "ephemeral", "session"])
def test_effective_resonance_other_types_decay(rtype):
    assert effective_resonance(4, rtype, T0, T0 + 2 * WEEK) < 4


def test_effective_resonance_never_grows_for_a_clock_in_the_future():
    assert effective_resonance(5, None, T0, T0 - 3 * WEEK) == 5


# ---- make_filters -----------------------------------------------------------


def test_make_filters_default_reads_the_context_chain_public_only():
    f = make_filters(CTX, "tester", {})
    assert f.scopes == ("project:proj@main", "project:proj", "global")
    assert not f.include_private
    assert not f.mine
    assert f.limit == 50


def test_make_filters_scope_all_reads_everything():
    assert make_filters(CTX, None, {"scope": "all"}).scopes is None


def test_make_filters_explicit_scopes_are_validated():
    f = make_filters(CTX, None, {"scope": "global,project:x@dev"})
    assert f.scopes == ("global", "project:x@dev")
    with pytest.raises(Invalid, match="global"):
        make_filters(CTX, None, {"scope": "globl"})


def test_make_filters_parses_lists_kinds_and_times():
    f = make_filters(
        CTX,
        None,
        {
            "category": "a, b",
            "kind": ["Lesson", "fact"],
            "tags": "x,y,x",
            "since": "2026-01-01",
            "limit": 0,
        },
    )
    assert f.categories == ("a", "b")
    assert f.kinds == (Kind.LESSON, Kind.FACT)
    assert f.tags_any == ("x", "y")
    assert f.since == datetime(2026, 1, 1, tzinfo=UTC)
    assert f.limit is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"colour": "red"}, "unknown filter option"),
        ({"order": "random"}, "invalid order"),
        ({"mine": True}, "identity"),
        ({"include_private": True}, "identity"),
        ({"has_wake_phrase": True, "missing_wake_phrase": True}, "exclude each other"),
        ({"has_anchors": True, "missing_anchors": True}, "exclude each other"),
        ({"has_resonance_type": True, "missing_resonance_type": True}, "exclude each other"),
        ({"limit": -1}, "--limit"),
        ({"limit": True}, "--limit"),
        ({"limit": "5"}, "--limit"),
        ({"kind": "factoid"}, "invalid kind"),
        ({"resonance_types": "eternal"}, "invalid resonance type"),
        ({"since": "the blue moon"}, "invalid since"),
        ({"as_of": "2026-13-01"}, "invalid as-of"),
    ],
)
def test_make_filters_refuses_bad_options(options, message):
    with pytest.raises(Invalid, match=message):
        make_filters(CTX, None, options)
