"""Moving memories between scopes: rekey-namespace, canonicalize-projects, update
--scope and the promotion ladder, on real stores; the pure rules without one."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from conftest import CliResult, raw_sql
from memlane import Invalid, Memory, NotFound
from memlane.lifecycle import promote
from memlane.model import Kind, Record, Taint, replace
from memlane.scope import canonical_project, canonical_scope, rekeyed, with_branches
from memlane.services import scoping
from memlane.timeutil import utcnow

Run = Callable[..., CliResult]

# ---- the pure rules ---------------------------------------------------------------------


def test_a_project_scope_covers_its_branches_and_nothing_else() -> None:
    known = ["project:app", "project:app@main", "project:app@feat/x", "project:apple", "global"]
    assert with_branches("project:app", known) == (
        "project:app",
        "project:app@feat/x",
        "project:app@main",
    )
    assert with_branches("project:app@main", known) == ("project:app@main",)
    assert with_branches("global", known) == ("global",)


def test_rekeying_a_project_carries_its_branches_only_to_another_project() -> None:
    assert rekeyed("project:old", "project:old", "project:new") == "project:new"
    assert rekeyed("project:old@b", "project:old", "project:new") == "project:new@b"
    assert rekeyed("project:older", "project:old", "project:new") is None
    assert rekeyed("project:old@b", "project:old", "global") is None
    assert rekeyed("project:old@b", "project:old", "project:new@main") is None
    assert rekeyed("project:old@b", "project:old@b", "global") == "global"


def test_canonical_names_follow_alias_chains_and_refuse_cycles() -> None:
    aliases = {"a": "b", "b": "c", "c": "c"}
    assert canonical_project("a", aliases) == "c"
    assert canonical_project("z", aliases) == "z"
    with pytest.raises(Invalid, match=r"cycle: x -> y -> x \("):
        canonical_project("w", {"w": "x", "x": "y", "y": "x"})
    assert canonical_scope("project:a@feat", aliases) == "project:c@feat"
    assert canonical_scope("global", aliases) == "global"
    with pytest.raises(Invalid, match="invalid project"):
        canonical_project("a", {"a": "not valid!"})


def test_the_ladder_climbs_branch_to_project_to_global() -> None:
    assert promote.next_rung("project:app@main") == "project:app"
    assert promote.next_rung("project:app") == "global"
    assert promote.next_rung("global") is None


def _earned(mem: Memory, scope: str = "project:proj@main", kind: str = "lesson") -> Record:
    written = mem.get(mem.add("Run migrations before the seed step.", scope=scope, kind=kind).id)
    return replace(written, applied_count=promote.MIN_APPLIED)


def test_eligibility_needs_applied_feedback_age_and_no_violation(mem: Memory) -> None:
    record = _earned(mem)
    old_enough = record.created_at + promote.MIN_AGE
    assert promote.judge(record, old_enough).eligible
    assert promote.judge(record, old_enough).target == "project:proj"
    refusals = {
        "applied 2 time(s), needs 3": replace(record, applied_count=2),
        "violated 1 time(s)": replace(record, violated_count=1),
        "younger than 7 days": record,
        "confidence 0.20": replace(record, confidence=0.2),
        "untrusted_web": replace(record, taint=Taint.UNTRUSTED_WEB),
        "no longer live": replace(record, superseded_at=record.created_at),
        "top of the ladder": replace(record, scope="global"),
    }
    for why, candidate in refusals.items():
        when = record.created_at + timedelta(days=1) if "younger" in why else old_enough
        verdict = promote.judge(candidate, when)
        assert not verdict.eligible and why in verdict.why, (why, verdict)


def test_only_portable_kinds_leave_a_project_for_global(mem: Memory) -> None:
    fact = replace(_earned(mem, scope="project:proj"), kind=Kind.FACT)
    later = fact.created_at + promote.MIN_AGE
    assert "a fact stays in its project" in promote.judge(fact, later).why
    assert promote.judge(replace(fact, kind=Kind.CONVENTION), later).eligible
    assert promote.judge(replace(fact, scope="project:proj@main"), later).eligible


# ---- rekeying on a store ----------------------------------------------------------------


@pytest.fixture
def spread(mem: Memory) -> dict[str, str]:
    """Memories of project old, its branches, another project and global."""
    ids = {
        "project": mem.add("Use pnpm, never npm.", scope="project:old", kind="convention").id,
        "branch": mem.add("The feature flag is named beta-ui.", scope="project:old@feat").id,
        "other": mem.add("The older service listens on 8080.", scope="project:older").id,
        "global": mem.add("Write commit messages in English.", scope="global").id,
    }
    ids["gone"] = mem.add("The old CI runs on Jenkins.", scope="project:old").id
    mem.retire(ids["gone"], "moved to GitHub Actions")
    return ids


def test_rekey_moves_a_project_and_its_branches_keeping_history(
    mem: Memory, spread: dict[str, str]
) -> None:
    moves = mem.scopes.rekey("project:old", "project:new")
    assert moves.by_scope() == {
        ("project:old", "project:new"): 2,
        ("project:old@feat", "project:new@feat"): 1,
    }
    moved = mem.get(spread["branch"])
    assert (moved.scope, moved.project, moved.branch) == ("project:new@feat", "new", "feat")
    assert mem.get(spread["gone"]).scope == "project:new"  # retired memories move too
    assert mem.get(spread["gone"]).superseded_at is not None  # and stay retired
    assert mem.get(spread["other"]).scope == "project:older"
    assert mem.get(spread["global"]).scope == "global"
    [prior, current] = mem.history(spread["project"])
    assert prior.reason == "moved from project:old to project:new"
    assert prior.fields["body"] == current.fields["body"] == "Use pnpm, never npm."
    lines = mem.journal(spread["project"])
    assert any(e.operation == "move" and e.detail == "project:old -> project:new" for e in lines)
    assert "project:old" not in mem.store.scopes()


def test_a_dry_run_reports_and_writes_nothing(mem: Memory, spread: dict[str, str]) -> None:
    before = mem.store.journal_entries(None, 1000)
    moves = mem.scopes.rekey("project:old", "global", dry_run=True)
    assert moves.dry_run and {(m.old, m.new) for m in moves.moves} == {("project:old", "global")}
    assert mem.get(spread["project"]).scope == "project:old"
    assert mem.store.journal_entries(None, 1000) == before


def test_rekey_to_global_keeps_the_project_it_was_written_in(
    mem: Memory, spread: dict[str, str]
) -> None:
    mem.scopes.rekey("project:old@feat", "global")
    moved = mem.get(spread["branch"])
    assert (moved.scope, moved.project) == ("global", "old")
    assert mem.get(spread["project"]).scope == "project:old"


def test_rekey_refuses_an_empty_or_unchanged_scope(mem: Memory, spread: dict[str, str]) -> None:
    with pytest.raises(NotFound, match=r"no memories in scope project:olf \(did you mean"):
        mem.scopes.rekey("project:olf", "project:new")
    with pytest.raises(Invalid, match="already the scope"):
        mem.scopes.rekey("project:old", "project:old")
    with pytest.raises(Invalid, match="did you mean 'global'"):
        mem.scopes.rekey("project:old", "globl")


def test_a_long_rekey_commits_in_chunks_and_reports_progress(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scoping, "MOVE_CHUNK", 2)
    for n in range(5):
        mem.add(f"Note number {n} about the parser.", scope="project:old", session_id=f"s{n}")
    told: list[tuple[int, int]] = []
    mem.scopes.rekey("project:old", "project:new", progress=lambda d, t: told.append((d, t)))
    assert told == [(2, 5), (4, 5), (5, 5)]
    assert mem.store.scopes() == ["project:new"]


def test_canonicalize_folds_aliased_projects_and_global_memories_written_there(
    mem: Memory, spread: dict[str, str]
) -> None:
    written = mem.add("A global rule from the old checkout.", scope="global").id
    session = mem.lifecycle.create_session(type="work").id
    assert mem.get(written).project == "proj"  # the writer's project (Context proj@main)
    aliases = {"old": "new", "proj": "new", "new": "new"}
    dry = mem.scopes.canonicalize(aliases, dry_run=True)
    assert mem.get(spread["project"]).scope == "project:old"
    done = mem.scopes.canonicalize(aliases)
    assert done.moves == dry.moves and not done.dry_run
    assert mem.get(spread["branch"]).scope == "project:new@feat"
    assert (mem.get(written).scope, mem.get(written).project) == ("global", "new")
    assert mem.history(written)[0].reason == "project proj renamed to new"
    assert mem.get(spread["other"]).scope == "project:older"
    assert mem.scopes.canonicalize(aliases).moves == ()
    assert [s.id for s in mem.lifecycle.sessions("new")] == [session]


def test_update_scope_moves_one_memory_with_its_reason(mem: Memory, spread: dict[str, str]) -> None:
    mem.update(spread["global"], scope="project:old", reason="it is about old")
    moved = mem.get(spread["global"])
    assert (moved.scope, moved.project) == ("project:old", "old")
    prior = mem.history(spread["global"])[0]
    assert prior.reason == "it is about old (moved from global to project:old)"
    with pytest.raises(Invalid, match="invalid scope"):
        mem.update(spread["global"], scope="project:")


def test_narrowing_to_a_project_covers_its_branches(mem: Memory, spread: dict[str, str]) -> None:
    assert mem.scopes.covering("project:old") == ("project:old", "project:old@feat")
    assert mem.scopes.covering("all") is None
    assert mem.scopes.covering(None) == mem.context.chain


# ---- promotion on a store ---------------------------------------------------------------


def _later(monkeypatch: pytest.MonkeyPatch, days: int = 8) -> None:
    at = utcnow() + timedelta(days=days)
    monkeypatch.setattr(scoping, "utcnow", lambda: at)


def test_promote_refuses_in_one_line_then_climbs_once_earned(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    lesson = mem.add("Pin the lockfile before a release.", kind="lesson").id
    with pytest.raises(Invalid, match=r"cannot be promoted: applied 0 time\(s\), needs 3"):
        mem.scopes.promote(lesson)
    for _ in range(promote.MIN_APPLIED):
        mem.feedback(lesson, applied=True)
    with pytest.raises(Invalid, match="younger than 7 days"):
        mem.scopes.promote(lesson)
    assert mem.scopes.promotion_candidates() == []
    _later(monkeypatch)
    [candidate] = mem.scopes.promotion_candidates()
    assert (candidate.id, candidate.target) == (lesson, "project:proj")
    assert "applied 3 times, never violated" in candidate.why
    move = mem.scopes.promote(lesson)
    assert (move.old, move.new) == ("project:proj@main", "project:proj")
    assert (
        mem.history(lesson)[-2].reason == "promoted (moved from project:proj@main to project:proj)"
    )
    assert mem.scopes.promote(lesson).new == "global"
    with pytest.raises(Invalid, match="top of the ladder"):
        mem.scopes.promote(lesson)


def test_one_violation_blocks_promotion(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    lesson = mem.add("Squash before merging.", kind="lesson").id
    for _ in range(5):
        mem.feedback(lesson, applied=True)
    mem.feedback(lesson, applied=False)
    _later(monkeypatch)
    assert mem.scopes.promotion_candidates() == []
    assert "violated 1 time(s)" in mem.scopes.promotion(lesson).why


# ---- the commands -----------------------------------------------------------------------


def _journal_count(db_path: Path) -> int:
    return int(raw_sql(db_path, "SELECT count(*) FROM journal")[0][0])


def test_rekey_namespace_command(run: Run, db_path: Path) -> None:
    added = run("add", "Use pnpm, never npm.", "--scope", "project:old", "--json").json()
    assert isinstance(added, dict)
    run("add", "Flag beta-ui is on.", "--scope", "project:old@feat")
    lines = _journal_count(db_path)
    dry = run("rekey-namespace", "project:old", "project:new", "--dry-run")
    assert dry.exit_code == 0
    assert "would move 1 memory: project:old -> project:new" in dry.stdout
    assert _journal_count(db_path) == lines
    done = run("rekey-namespace", "project:old", "project:new", "--json")
    report = done.json()
    assert isinstance(report, dict) and report["count"] == 2 and not report["dry_run"]
    history = run("history", added["id"])
    assert "moved from project:old to project:new" in history.stdout
    missing = run("rekey-namespace", "project:old", "project:new")
    assert missing.exit_code == 1 and missing.stdout == ""
    assert missing.stderr.startswith("memlane: error: no memories in scope project:old")
    assert run("rekey-namespace", "project:new", "nowhere").exit_code == 2


@pytest.mark.sqlite_only  # a server database exists before any command runs
def test_a_dry_run_on_a_missing_store_creates_nothing(
    run: Run, cli_env: dict[str, str], tmp_path: Path
) -> None:
    for dry_run in (("--dry-run",), ()):
        result = run("rekey-namespace", "project:a", "project:b", *dry_run)
        assert result.exit_code == 1 and "no memories in scope project:a" in result.stderr
        assert f"(no store at {cli_env['MEMLANE_DB']})" in result.stderr
        assert not Path(cli_env["MEMLANE_DB"]).exists()
    assert run("canonicalize-projects").stdout == "nothing to move\n"
    assert not Path(cli_env["MEMLANE_DB"]).exists()
    assert run("promote", "--candidates").stdout == "no promotion candidates\n"
    assert not Path(cli_env["MEMLANE_DB"]).exists()


def test_canonicalize_projects_command(run: Run) -> None:
    run("add", "Deploys go through Argo.", "--scope", "project:h-cc-bridge@main")
    assert run("projects", "alias", "h-cc-bridge", "hermes-cc-bridge").exit_code == 0
    shown = run("canonicalize-projects", "--dry-run", "--json").json()
    assert isinstance(shown, dict) and shown["dry_run"] and shown["count"] == 1
    done = run("canonicalize-projects")
    assert "moved 1 memory: project:h-cc-bridge@main -> project:hermes-cc-bridge@main" in (
        done.stdout
    )
    assert run("canonicalize-projects").stdout == "nothing to move\n"


def test_alias_cycles_are_refused_and_canonicalize_never_swaps(
    run: Run, cli_env: dict[str, str]
) -> None:
    aliases = Path(cli_env["MEMLANE_PROJECT_ALIASES"])
    assert run("projects", "alias", "plain", "rv29").exit_code == 0
    saved = aliases.read_text(encoding="utf-8")
    for args, message in [
        (("rv29", "plain"), "alias rv29 -> plain would make a cycle: rv29 -> plain -> rv29\n"),
        (("shop", "shop"), "cannot alias 'shop' to itself\n"),
    ]:
        refused = run("projects", "alias", *args)
        assert (refused.exit_code, refused.stderr) == (2, f"memlane: error: {message}")
        assert aliases.read_text(encoding="utf-8") == saved
    run("add", "Plain's deploy rule.", "--scope", "project:plain")
    run("add", "Rv29's deploy rule.", "--scope", "project:rv29")
    aliases.write_text('{"plain": "rv29", "rv29": "plain"}', encoding="utf-8")
    looped = run("canonicalize-projects")
    assert looped.exit_code == 2
    assert "cycle: plain -> rv29 -> plain" in looped.stderr and looped.stderr.count("\n") == 1
    scopes = run("list", "--scope", "all", "--json").json()
    assert isinstance(scopes, dict)
    assert sorted(m["scope"] for m in scopes["results"]) == ["project:plain", "project:rv29"]


def test_unicode_project_names_scope_and_rekey(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("日本", "café", "caf"):
        (tmp_path / name).mkdir()
        monkeypatch.chdir(tmp_path / name)
        run("add", f"A rule of the {name} checkout.")
    listed = run("list", "--scope", "all", "--json").json()
    assert isinstance(listed, dict)
    scopes = sorted(m["scope"] for m in listed["results"])
    assert scopes == ["project:caf", "project:café", "project:日本"]
    moved = run("rekey-namespace", "project:café", "project:ünïcødé")
    assert moved.exit_code == 0 and "project:café -> project:ünïcødé" in moved.stdout


def test_update_scope_command(run: Run) -> None:
    added = run("add", "Ports: API on 8081.", "--scope", "global", "--json").json()
    assert isinstance(added, dict)
    assert run("update", added["id"], "--scope", "project:api").exit_code == 0
    shown = run("show", added["id"], "--json").json()
    assert isinstance(shown, dict) and shown["scope"] == "project:api"
    bad = run("update", added["id"], "--scope", "globl")
    assert bad.exit_code == 2 and "did you mean 'global'" in bad.stderr


def test_promote_command(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    added = run("add", "Rebase, never merge main in.", "--kind", "lesson", "--json").json()
    assert isinstance(added, dict)
    refused = run("promote", added["id"])
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and "needs 3" in refused.stderr
    for _ in range(3):
        run("feedback", added["id"], "--applied")
    _later(monkeypatch)
    listed = run("promote", "--candidates", "--json").json()
    assert isinstance(listed, list) and [c["id"] for c in listed] == [added["id"]]
    moved = run("promote", added["id"], "--json").json()
    assert isinstance(moved, dict) and (moved["from"], moved["to"]) == ("project:proj", "global")
    assert run("promote").exit_code == 2
    assert run("promote", added["id"], "--candidates").exit_code == 2
