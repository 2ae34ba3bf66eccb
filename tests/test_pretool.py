"""The PreToolUse lane: what a tool call touches (hooks.tool), the rules shown before
it runs, silence otherwise, and never a decision to deny. The gold set is
tests/pretool_gold.py; tests/pretool_sets/ holds sets written by others who never saw
hooks.tool. `python tests/test_pretool.py` prints the figures of each."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from memlane import Context, Memory
from memlane.hooks import host, tool
from memlane.hooks.events import Options, pre_tool
from memlane.model import Kind

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from pretool_gold import CASES, MEMORIES  # noqa: E402

# What the lane must reach on its gold set: precision first (a hazard shown on every
# call teaches the agent to skip them), and most of the rules that bear on a call.
MIN_PRECISION = 0.9
MIN_RECALL = 0.7


# ---- what a call touches (pure) ------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "files", "words"),
    [
        ("git push --force origin main", set(), {"git", "push", "forc"}),
        ("cd web && npm install lodash", set(), {"npm", "instal", "lodash"}),
        ("DATABASE_URL=x uv run alembic upgrade head", set(), {"alembi", "upgrad"}),
        ("python -m pytest -n auto tests/db", set(), {"pytest", "auto", "db"}),
        ('git commit -m "fix the deploy script"', set(), {"git", "commit"}),
        ("sudo -E make release VERSION=1.2", set(), {"make", "releas"}),
        ("kubectl apply -f k8s/deploy.yaml", {"deploy.yaml"}, {"kubect", "apply"}),
        ("ls -la src/api; cat README.md | head", set(), set()),
        ("rm -rf src/ data/", set(), {"rm", "rf", "data"}),
        # Only looking: a reading subcommand, sed without -i.
        ("git diff main && docker compose ps && kubectl get pods", set(), set()),
        ("sed -n 1,5p app/settings.py", set(), set()),
        ("sed -i s/a/b/ app/settings.py", {"settings.py"}, {"sed"}),
        # A branch is no file, a ref no word, git's paths are history.
        ("git checkout -b fix/rounding", set(), {"git", "checko"}),
        ("git add src/billing/invoice.py", set(), {"git"}),
        # A here-document's body is what the command carries, not what it does.
        (
            "git commit -F - <<'EOF'\nuse alembic downgrade, not docker compose\nEOF",
            set(),
            {"git", "commit"},
        ),
        # A script run through a shell is the command.
        ("bash -c 'alembic downgrade -1'", set(), {"alembi", "downgr"}),
    ],
)
def test_a_command_touches_its_programs_words_and_files(command, files, words):
    about = tool.subject("Bash", {"command": command})
    assert about is not None and about.files == files and about.words == words


def test_an_argv_through_a_shell_is_read_as_its_script():
    about = tool.subject("shell", {"command": ["bash", "-lc", "git push --force"]})
    assert about is not None and {"git", "push", "forc"} <= about.words


def test_another_projects_file_is_not_this_stores_concern():
    elsewhere = tool.subject("Edit", {"file_path": "/home/u/other/app/settings.py"}, "/home/u/proj")
    assert elsewhere is None


def test_a_file_tool_touches_the_file_and_its_telling_directories():
    about = tool.subject("Edit", {"file_path": "/home/u/proj/alembic/versions/3f_add.py"},
                         "/home/u/proj")  # fmt: skip
    assert about is not None and about.files == {"3f_add.py"} and not about.words
    assert about.dirs == {"alembic/versions", "alembic", "versions"}
    patch = "*** Begin Patch\n*** Update File: src/app/settings.py\n@@\n-a\n+b\n*** End Patch"
    patched = tool.subject("apply_patch", {"input": patch})
    assert patched is not None and patched.files == {"settings.py"}


def test_a_rule_on_a_directory_bears_on_its_files_and_a_rule_on_a_file_not_on_its_neighbours():
    guarded = tool.subject("Write", {"file_path": "/r/models/staging/stripe/x.sql"}, "/r")
    beside = tool.subject("Edit", {"file_path": "/r/src/api/routes.ts"}, "/r")
    assert guarded is not None and beside is not None
    assert tool._names_dir(
        "everything under models/staging/stripe/ is generated", "models/staging/stripe"
    )
    assert not any(tool._names_dir("src/api/client.gen.ts is generated", d) for d in beside.dirs)


def test_a_rule_on_one_setting_says_nothing_about_another():
    assert tool._unmet("target", {"prod"}, frozenset({"target=dev"}))
    assert not tool._unmet("target", {"prod"}, frozenset({"target=prod"}))
    assert not tool._unmet("target", {"prod"}, frozenset())
    about = tool.subject("Bash", {"command": "DBT_TARGET=prod dbt build --target=prod -s x"})
    assert about is not None and {"dbt_target=prod", "target=prod"} <= about.values


def test_a_tool_that_touches_nothing_has_no_subject():
    assert tool.subject("Read", {"file_path": "x.py"}) is None
    assert tool.subject("Bash", {"command": 3}) is None
    assert tool.subject("Bash", {"command": "ls"}).empty  # type: ignore[union-attr]


# ---- what a rule says (pure) -----------------------------------------------------------


def test_a_rule_is_read_for_its_hazard_not_for_what_it_prescribes():
    rule = tool.read_rule(
        "gen/go/ is buf output. Don't touch it by hand: edit proto/ and run `make proto`."
    )
    assert "gen/go/" in rule.edits and "proto/" not in rule.edits + rule.runs
    fine = tool.read_rule(
        "Never run db:migrate against production. Read-only stuff like db:migrate:status "
        "is fine, and tally-staging is fair game."
    )
    assert "db:migrate:status" in fine.allowed and "tally-staging" in fine.allowed
    assert "db:migrate" not in fine.allowed and fine.confined == {"prod"}


def test_what_a_guarded_file_is_made_from_is_not_guarded():
    rule = tool.read_rule(
        "openapi.yaml is generated by rswag and web/api/ is generated from it by `make ts`. "
        "Everything under models/stripe/ is generated by gen.py from stripe.yml and "
        "templates/staging.sql.j2."
    )
    assert "openapi.yaml" in rule.edits and "web/api/" in rule.edits
    assert not any(s in rule.edits for s in ("rswag", "make ts", "gen.py", "stripe.yml", ".j2"))


def test_a_hazard_about_running_a_command_is_not_about_editing_its_files():
    rule = tool.read_rule(
        "Only CI deploys dags/ to the prod bucket. Never run make sync-dags by hand: a "
        "half-synced dags/ breaks every DAG."
    )
    assert "dags/" in rule.runs and not rule.edits


def _rule(text: str, kind: str = "constraint") -> Any:
    from datetime import UTC, datetime

    from memlane.model import Record

    now = datetime(2026, 1, 1, tzinfo=UTC)
    return Record(id="r", scope="project:p", title=text[:40], body=text, kind=Kind(kind),
                  category="general", created_at=now, updated_at=now, valid_from=now,
                  version_from=now, dedup_hash="h")  # fmt: skip


@pytest.mark.parametrize(
    ("text", "shown", "silent"),
    [
        # Doing what the rule allows or prescribes instead.
        (
            "No force pushes to main pls. --force-with-lease on your own branch is totally fine.",
            "git push --force origin main",
            "git push --force-with-lease origin feat/x",
        ),
        (
            "no bare `bundle update`: it bumps every gem. use `bundle update --conservative <gem>`.",
            "bundle update",
            "bundle update --conservative nokogiri",
        ),
        # An option the rule asks for, given or not.
        (
            "The snowsql prod connection defaults to ACCOUNTADMIN. Always pass --rolename "
            "TRANSFORMER when connecting to prod.",
            "snowsql -c prod -q 'select 1'",
            "snowsql -c prod --rolename TRANSFORMER -q 'select 1'",
        ),
        # A prohibition confined to an environment.
        (
            "Never db:reset or db:drop against staging; the demo tenants live there.",
            "RAILS_ENV=staging bin/rails db:reset",
            "bin/rails db:reset",
        ),
        # A compound name is one name; a reading subcommand only looks.
        (
            "Never run make sync-dags or gsutil rsync into the prod bucket by hand.",
            "make sync-dags",
            "make sync-dags-dev",
        ),
        (
            "airflow dags backfill skips failed dates unless --reset-dagruns is passed.",
            "airflow dags backfill -s 2024-06-01 finance_daily",
            "airflow dags list-runs -d finance_daily",
        ),
    ],
)
def test_a_call_that_does_as_the_rule_says_hears_nothing_of_it(text, shown, silent):
    rule = _rule(text)
    for command, bears in ((shown, True), (silent, False)):
        about = tool.subject("Bash", {"command": command})
        assert about is not None
        assert (tool.evidence(about, rule) >= tool.MIN_EVIDENCE) is bears, command


def test_a_command_that_writes_a_guarded_file_is_an_edit_of_it():
    rule = _rule("seeds/country_codes.csv is owned by Finance; don't touch it.", "convention")
    written = tool.subject("Bash", {"command": "echo 'XK,Kosovo' >> seeds/country_codes.csv"})
    seeded = tool.subject("Bash", {"command": "dbt seed -s country_codes --target dev"})
    assert written is not None and "country_codes.csv" in written.files
    assert tool.evidence(written, rule) >= tool.MIN_EVIDENCE
    assert seeded is not None and tool.evidence(seeded, rule) < tool.MIN_EVIDENCE


# ---- the gold set, through the hook's handler ------------------------------------------


def gold_store(path: Path, memories: dict[str, tuple[str, str]] = MEMORIES) -> dict[str, str]:
    """The gold memories in a project store (hash vectors); memory id -> key."""
    from memlane.embed import get_embedder

    with Memory.open(path, agent="tester", context=Context("proj"),
                     embedder=get_embedder("hash")) as mem:  # fmt: skip
        keys = {}
        for key, (kind, text) in memories.items():
            keys[mem.add(text, kind=kind, scope="project:proj").id or ""] = key
        return keys


def measure(
    path: Path, keys: dict[str, str], split: str | None = None, cases: list[Any] = CASES
) -> dict[str, Any]:
    """Precision and recall of the lane's injections over the gold calls (of `split`)."""
    from memlane.embed import get_embedder

    shown = right = expected = 0
    misses: list[str] = []
    for case_split, call, want in cases:
        if split and case_split != split:
            continue
        event = host.Event(host.PRE_TOOL, host.CLAUDE_CODE, cwd="/repo", **call)
        with Memory.open(path, agent="tester", context=Context("proj"),
                         embedder=get_embedder("hash")) as mem:  # fmt: skip
            outcome = pre_tool(event, lambda m=mem: m, Options())
        got = {keys[i] for i in outcome.injected}
        shown, right, expected = (
            shown + len(got),
            right + len(got & set(want)),
            expected + len(want),
        )
        if got != set(want):
            misses.append(f"{call['tool_input']}: expected {want}, injected {sorted(got)}")
    return {
        "precision": right / shown if shown else 1.0,
        "recall": right / expected if expected else 1.0,
        "calls": sum(1 for s, _, _ in cases if not split or s == split),
        "misses": misses,
    }


@pytest.fixture(scope="module")
def gold(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("pretool") / "store.db"
    return path, gold_store(path)


@pytest.mark.parametrize("split", ["dev", "test"])
def test_the_lane_is_precise_on_its_gold_set(gold, split):
    figures = measure(*gold, split=split)
    assert figures["precision"] >= MIN_PRECISION, figures["misses"]
    assert figures["recall"] >= MIN_RECALL, figures["misses"]


def test_the_gold_store_holds_rules_and_the_facts_that_must_stay_out():
    kinds = {Kind(kind) for kind, _ in MEMORIES.values()}
    assert kinds & tool.RULE_KINDS and kinds - tool.RULE_KINDS


# ---- the hook, end to end ------------------------------------------------------------


def test_a_recorded_pre_tool_call_gets_its_rule_and_no_decision(run, db_path, tmp_path):
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    from memlane.embed import get_embedder

    with Memory.open(db_path, agent="tester", context=Context("proj"),
                     embedder=get_embedder("hash")) as mem:  # fmt: skip
        rule = mem.add(MEMORIES["force-push"][1], kind="lesson", scope="project:proj").id
        mem.add(MEMORIES["fact-git"][1], kind="fact", scope="project:proj")
    for host_name in host.HOSTS:
        data = json.loads((ROOT / "hook_payloads" / host_name / "pre-tool.json").read_text())
        data["cwd"] = str(project)
        done = run("hook", "pre-tool", "--host", host_name, input=json.dumps(data))
        answer = json.loads(done.stdout)["hookSpecificOutput"]
        assert answer["hookEventName"] == "PreToolUse" and "permissionDecision" not in answer
        assert (
            rule in answer["additionalContext"] and "protected" not in answer["additionalContext"]
        )
        quiet = {**data, "tool_input": {"command": "git status"}}
        assert json.loads(run("hook", "pre-tool", "--host", host_name,
                              input=json.dumps(quiet)).stdout) == {}  # fmt: skip


def test_a_pre_tool_payload_without_its_tool_is_refused_quietly(run, tmp_path):
    bad = {"hook_event_name": "PreToolUse", "cwd": str(tmp_path), "tool_name": "Bash"}
    done = run("hook", "pre-tool", input=json.dumps(bad))
    assert done.exit_code == 0 and json.loads(done.stdout) == {}


# The sets others wrote that the lane was never changed against: their figures are the
# ones to expect on a new project, so they are printed, not asserted. The lane was
# changed against the others, which must stay precise.
HELD_OUT = frozenset({"go_ledger", "ts_larder"})
MIN_SEEN_PRECISION = 0.85


def other_sets() -> dict[str, tuple[dict[str, tuple[str, str]], list[Any]]]:
    """Sets written by others who never saw hooks.tool (tests/pretool_sets/*.json):
    {"memories": {key: [kind, text]}, "cases": [[tool, input, [keys]]]}."""
    found = {}
    for path in sorted((ROOT / "pretool_sets").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        memories = {k: (v[0], v[1]) for k, v in data["memories"].items()}
        cases = [("test", {"tool_name": t, "tool_input": i}, want) for t, i, want in data["cases"]]
        found[path.stem] = (memories, cases)
    return found


@pytest.mark.parametrize("name", sorted(set(other_sets()) - HELD_OUT))
def test_the_lane_stays_precise_on_the_sets_of_others_it_was_changed_against(name, tmp_path):
    memories, cases = other_sets()[name]
    figures = measure(tmp_path / "store.db", gold_store(tmp_path / "store.db", memories),
                      cases=cases)  # fmt: skip
    assert figures["precision"] >= MIN_SEEN_PRECISION, figures["misses"]


# ---- a subagent's start ----------------------------------------------------------------


def _task_line(prompt: str) -> str:
    block = {"type": "tool_use", "id": "toolu_1", "name": "Task",
             "input": {"description": "Ship it", "prompt": prompt}}  # fmt: skip
    return json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [block]}})


def test_a_subagent_gets_the_context_of_the_task_its_parent_gave_it(run, db_path, tmp_path):
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    from memlane.embed import get_embedder

    friday = "Never deploy to production on Fridays; the on-call rotation is thin."
    with Memory.open(db_path, agent="tester", context=Context("proj"),
                     embedder=get_embedder("hash")) as mem:  # fmt: skip
        rule = mem.add(friday, kind="constraint", importance=8, scope="project:proj").id
    chat = project / "transcript.jsonl"
    chat.write_text(
        _task_line("Look at the flaky login test.") + "\n"
        + _task_line("Deploy the hotfix to production this Friday afternoon.") + "\n"
    )  # fmt: skip
    data = {"session_id": "s1", "transcript_path": str(chat), "cwd": str(project),
            "hook_event_name": "SubagentStart", "agent_id": "a1", "agent_type": "general"}  # fmt: skip
    # The parent session was shown it already; the subagent's fresh context was not.
    asked = {"session_id": "s1", "transcript_path": str(chat), "cwd": str(project),
             "hook_event_name": "UserPromptSubmit",
             "prompt": "Deploy the hotfix to production this Friday afternoon."}  # fmt: skip
    parent = json.loads(run("hook", "user-prompt", input=json.dumps(asked)).stdout)
    assert rule in parent["hookSpecificOutput"]["additionalContext"]
    done = run("hook", "subagent-start", input=json.dumps(data))
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "SubagentStart" and rule in answer["additionalContext"]
    chat.write_text(_task_line("Look at the flaky login test.") + "\n")
    assert json.loads(run("hook", "subagent-start", input=json.dumps(data)).stdout) == {}
    assert json.loads(run("hook", "subagent-start", input=json.dumps(
        {**data, "transcript_path": None})).stdout) == {}  # fmt: skip


if __name__ == "__main__":
    import tempfile

    sets = {"gold": (dict(MEMORIES), list(CASES)), **other_sets()}
    for label, (memories, cases) in sets.items():
        with tempfile.TemporaryDirectory() as folder:
            store = Path(folder) / "store.db"
            ids = gold_store(store, memories)
            for name in ("dev", "test", None) if label == "gold" else (None,):
                result = measure(store, ids, name, cases)
                print(f"{label:12} {name or 'all':5} calls {result['calls']:3}  precision "
                      f"{result['precision']:.3f}  recall {result['recall']:.3f}"
                      f"{'  (held out)' if label in HELD_OUT else ''}")  # fmt: skip
