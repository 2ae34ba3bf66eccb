"""The settings file, `memlane settings` and `memlane migrate`, through the real CLI.

The settings file is the test's own (cli_env's MEMLANE_CONFIG); stores are real (a
SQLite file, or a PostgreSQL database under MEMLANE_TEST_BACKEND=postgres).
"""

from __future__ import annotations

import json
import re
import sqlite3
import tomllib
from pathlib import Path
from typing import Any

import pytest

from conftest import BACKEND, raw_sql, store_schema
from memlane import Memory, SchemaOutdated
from memlane.store import EMBED_PROFILE_META, open_store


@pytest.fixture
def settings_path(cli_env: dict[str, str]) -> Path:
    return Path(cli_env["MEMLANE_CONFIG"])


def listed(run: Any) -> dict[str, dict[str, Any]]:
    done = run("settings", "list", "--json")
    assert done.exit_code == 0, done.stderr
    return {row["name"]: row for row in done.json()["settings"]}


def one_line_error(done: Any, code: int = 2) -> str:
    assert done.exit_code == code and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("memlane: error: ")
    return line


# ---- the file: precedence, sources, derived values -------------------------------------


def test_the_environment_overrides_the_file_which_overrides_the_default(
    run, cli_env, settings_path
):
    settings_path.write_text('inject_budget = 800\nembed_profile = "minilm"\n', encoding="utf-8")
    rows = listed(run)
    assert (rows["inject_budget"]["value"], rows["inject_budget"]["source"]) == (800, "file")
    # cli_env sets MEMLANE_EMBED_PROFILE=hash: the environment wins over the file.
    assert (rows["embed_profile"]["value"], rows["embed_profile"]["source"]) == (
        "hash",
        "environment",
    )
    assert (rows["max_tags"]["value"], rows["max_tags"]["source"]) == (50, "default")
    got = run("settings", "get", "inject_budget", "--json").json()
    assert got == {"name": "inject_budget", "value": 800, "source": "file"}


def test_a_file_value_reaches_the_command_it_configures(run, cli_env, settings_path):
    settings_path.write_text("max_tags = 1\n", encoding="utf-8")
    done = run("add", "Two tags are one too many here.", "--tags", "a,b")
    assert done.exit_code == 2 and "tags" in done.stderr


def test_derived_values_and_masked_secrets(run, cli_env, settings_path, db_path):
    settings_path.write_text('embed_api_key = "sk-live-123456"\n', encoding="utf-8")
    cli_env["MEMLANE_MCP_TOKEN"] = "operator-secret"
    done = run("settings", "list", "--json")
    assert "sk-live-123456" not in done.stdout and "operator-secret" not in done.stdout
    payload = done.json()
    rows = {row["name"]: row for row in payload["settings"]}
    assert rows["embed_api_key"] == {
        "name": "embed_api_key",
        "value": "********",
        "source": "file",
        "env": "MEMLANE_EMBED_API_KEY",
    }
    assert rows["mcp_token"]["value"] == "********" and rows["web_token"]["value"] is None
    assert payload["derived"]["embed_dimension"] == 384  # the hash profile's
    if BACKEND == "sqlite":
        assert payload["derived"]["store"] == str(Path(db_path).absolute())
    text = run("settings", "list")
    assert "sk-live" not in text.stdout and "embed_dimension" in text.stdout
    assert run("settings", "get", "embed_api_key").stdout == "********\n"
    elsewhere = Path(db_path).parent / "elsewhere.db" if BACKEND == "sqlite" else Path("/x.db")
    assert run("--db", str(elsewhere), "settings", "get", "store").stdout == f"{elsewhere}\n"
    assert not elsewhere.exists()


def test_reading_the_settings_creates_nothing(run, cli_env, settings_path, tmp_path):
    cli_env["MEMLANE_DB"] = str(tmp_path / "nowhere" / "memlane.db")
    for args in (("settings", "list"), ("settings", "get", "db"), ("settings", "path")):
        assert run(*args).exit_code == 0
    assert run("settings", "path").stdout == f"{settings_path}\n"
    assert not settings_path.exists() and not (tmp_path / "nowhere").exists()
    assert run("settings", "list", "--json").json()["file"]["exists"] is False


# ---- bad values: one line from every command, the file named ---------------------------


def test_a_bad_file_value_is_one_line_naming_the_file(run, settings_path):
    settings_path.write_text('inject_budget = "lots"\n', encoding="utf-8")
    line = one_line_error(run("stats"))
    assert str(settings_path) in line and "inject_budget = 'lots' is not valid" in line
    # doctor and settings run on, with the default, and name it.
    doctor = run("doctor", "--json")
    assert any(str(settings_path) in c["detail"] for c in doctor.json())
    listing = run("settings", "list", "--json")
    [problem] = listing.json()["problems"]
    assert listing.exit_code == 0 and problem.startswith(f"{settings_path}: inject_budget")
    assert f"note: {problem}" in listing.stderr
    assert {r["name"]: r for r in listing.json()["settings"]}["inject_budget"]["value"] == 1500


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("embed_profle = 'hash'\n", "unknown setting 'embed_profle'; did you mean embed_profile?"),
        ("inject_budget = [1, \n", "is not valid TOML"),
        ("config = '/elsewhere.toml'\n", "config is read from MEMLANE_CONFIG only"),
        ("[env]\nAWS_PROFILE = ['a']\n", "[env] AWS_PROFILE must be a string or a number"),
    ],
)
def test_a_bad_file_is_refused_in_one_line(run, settings_path, text, named):
    settings_path.write_text(text, encoding="utf-8")
    line = one_line_error(run("list"))
    assert str(settings_path) in line and named in line


def test_a_hook_with_a_bad_file_value_answers_and_logs_it(
    run, run_process, cli_env, settings_path, tmp_path
):
    run("add", "Deploys go through the staging cluster first.", "--importance", "9")
    settings_path.write_text('inject_budget = "lots"\n', encoding="utf-8")
    cli_env["MEMLANE_HOOK_DIR"] = str(tmp_path / "hooks")
    project = tmp_path / "proj"
    event = {"session_id": "s-1", "cwd": str(project), "hook_event_name": "SessionStart"}
    done = run_process("hook", "session-start", input=json.dumps(event))
    assert done.returncode == 0 and "staging cluster" in done.stdout
    [entry] = [json.loads(x) for x in (tmp_path / "hooks" / "hooks.log").read_text().splitlines()]
    assert entry["reason"] == "injected" and "error" not in entry
    [problem] = entry["settings"]
    assert problem.startswith(f"{settings_path}: inject_budget = 'lots' is not valid")


# ---- [env] ----------------------------------------------------------------------------


def test_the_env_table_sets_what_the_environment_lacks(run, cli_env, settings_path, monkeypatch):
    for name in ("MEMLANE_RECALL_LINK_BUDGET", "MEMLANE_TEST_PROVIDER_KEY"):
        monkeypatch.setenv(name, "")  # unset (empty counts so), and restored after the test
    settings_path.write_text(
        "[env]\n"
        "MEMLANE_RECALL_LINK_BUDGET = 5\n"
        'MEMLANE_TEST_PROVIDER_KEY = "k-1"\n'
        'MEMLANE_AGENT = "from-the-file"\n',
        encoding="utf-8",
    )
    payload = run("settings", "list", "--json").json()
    rows = {row["name"]: row for row in payload["settings"]}
    # Set by the file's [env] table: the file's, not the environment's.
    assert (rows["recall_link_budget"]["value"], rows["recall_link_budget"]["source"]) == (
        5,
        "file [env]",
    )
    assert (rows["agent"]["value"], rows["agent"]["source"]) == ("tester", "environment")
    assert payload["env"] == {
        "MEMLANE_RECALL_LINK_BUDGET": "file",
        "MEMLANE_TEST_PROVIDER_KEY": "file",
        "MEMLANE_AGENT": "environment",
    }


def test_the_env_table_fills_an_empty_variable_in_a_real_process(
    run_process, cli_env, settings_path
):
    cli_env["MEMLANE_AGENT"] = ""  # empty counts as unset, as for every setting
    settings_path.write_text('[env]\nMEMLANE_AGENT = "from-the-file"\n', encoding="utf-8")
    done = run_process("settings", "get", "agent", "--json")
    assert json.loads(done.stdout) == {
        "name": "agent",
        "value": "from-the-file",
        "source": "file [env]",
    }


def test_a_bad_env_table_value_is_blamed_on_the_file(run, settings_path, monkeypatch):
    monkeypatch.setenv("MEMLANE_MAX_TAGS", "")  # unset, as the [env] table leaves it after
    settings_path.write_text('[env]\nMEMLANE_MAX_TAGS = "many"\n', encoding="utf-8")
    line = one_line_error(run("stats"))
    assert f"{settings_path}: [env] MEMLANE_MAX_TAGS = 'many' is not valid" in line
    doctor = run("doctor", "--json").json()
    [check] = [c for c in doctor if "MEMLANE_MAX_TAGS" in c["detail"]]
    assert check["detail"].startswith(f"{settings_path}: [env]") and "[env] table" in check["fix"]


# ---- settings set / unset ---------------------------------------------------------------


def test_set_writes_typed_values_and_keeps_the_rest(run, settings_path):
    settings_path.write_text(
        '# my settings\ninject_budget = 800  # smaller\n\n[env]\nAWS_PROFILE = "dev"\n',
        encoding="utf-8",
    )
    for key, value in (
        ("recall_half_lives", "3,90,180,7"),
        ("skip_write_embed", "yes"),
        ("review_threshold", "0.4"),
        ("capture_mode", "reviewed"),
        ("inject_budget", "900"),
    ):
        done = run("settings", "set", key, value)
        assert done.exit_code == 0, done.stderr
    text = settings_path.read_text(encoding="utf-8")
    assert text.startswith("# my settings\ninject_budget = 900  # smaller\n")
    data = tomllib.loads(text)
    assert data == {
        "inject_budget": 900,
        "recall_half_lives": [3.0, 90.0, 180.0, 7.0],
        "skip_write_embed": True,
        "review_threshold": 0.4,
        "capture_mode": "reviewed",
        "env": {"AWS_PROFILE": "dev"},
    }
    rows = listed(run)
    assert rows["recall_half_lives"]["value"] == [3.0, 90.0, 180.0, 7.0]
    assert rows["skip_write_embed"] == {**rows["skip_write_embed"], "value": True, "source": "file"}


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("inject_budget", "lots"), "inject_budget = 'lots' is not valid"),
        (("review_threshold", "1.5"), "use a number above 0 and at most 1"),
        (("embed_profle", "hash"), "did you mean embed_profile?"),
        (("config", "/elsewhere.toml"), "no setting 'config'"),
        (("inject_budget", "900", "--reindex"), "--reindex goes with a setting"),
        # What every command would refuse once set, refused here.
        (("--", "recall_weights", "-5,2,2,1,1"), "score weight relevance must lie in [0, 1]"),
        (("recall_weights", "nan,0,0,0,1"), "numbers in [0, 1] summing to 1"),
        (("recall_weights", "0.5,0.5,0.5,0,0"), "score weights must sum to 1, not 1.5"),
        (("recall_half_lives", "0,0,0,0"), "half-lives in days > 0"),
        (("recall_half_lives", "3,90,inf,7"), "half-lives in days > 0"),
        (("recall_scope_boosts", "1,2,1,1"), "scope boosts in [0, 1]"),
        (("recall_lane_weights", "nan,1,1"), "numbers >= 0, not all 0"),
        (("review_threshold", "0"), "above 0 and at most 1"),
        (("max_body_bytes", "0"), "max_body_bytes = '0' is not valid: use a whole number >= 1024"),
        (("max_tags", "0"), "use a whole number >= 1"),
        (("inject_budget", "abc"), "inject_budget = 'abc' is not valid: use a whole number >= 0"),
        (("backup_interval_hours", "soon"), "use a number of hours > 0"),
        (("dedup_conflict_threshold", "0.95"), "must be below the vector threshold (0.92)"),
    ],
)
def test_set_refuses_a_bad_key_or_value_and_changes_nothing(run, settings_path, args, named):
    original = b"inject_budget = 800  # kept byte for byte\n"
    settings_path.write_bytes(original)
    line = one_line_error(run("settings", "set", *args))
    assert named in line
    # What to give, not Python's words for the parse that failed.
    assert "invalid literal" not in line and "could not convert" not in line
    assert settings_path.read_bytes() == original
    assert [p.name for p in settings_path.parent.iterdir() if p.name.startswith(".")] == []


def test_set_refuses_to_rewrite_a_file_that_is_not_toml(run, settings_path):
    settings_path.write_text("inject_budget = [1,\n", encoding="utf-8")
    line = one_line_error(run("settings", "set", "max_tags", "3"))
    assert f"cannot update the settings file {settings_path}" in line
    assert settings_path.read_text(encoding="utf-8") == "inject_budget = [1,\n"


def test_set_refuses_without_creating_the_file(run, settings_path):
    one_line_error(run("settings", "set", "max_tags", "-"))
    assert not settings_path.exists()


def test_a_failed_write_leaves_the_old_file_whole(run, settings_path, monkeypatch):
    import memlane.files

    original = "inject_budget = 800\n"
    settings_path.write_text(original, encoding="utf-8")

    def full_disk(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(memlane.files.os, "replace", full_disk)
    line = one_line_error(run("settings", "set", "inject_budget", "900"))
    assert "No space left on device" in line
    assert settings_path.read_text(encoding="utf-8") == original
    assert sorted(p.name for p in settings_path.parent.iterdir() if p.name.startswith(".")) == []


def test_set_says_when_the_environment_overrides_it(run, settings_path):
    done = run("settings", "set", "embed_profile", "minilm", "--json")
    assert "MEMLANE_EMBED_PROFILE is set in the environment" in done.stderr
    assert done.json()["value"] == "minilm" and done.json()["reindex_needed"] is False


def test_a_secret_is_written_but_never_echoed(run, settings_path):
    done = run("settings", "set", "embed_api_key", "sk-live-123456")
    assert done.exit_code == 0 and "sk-live" not in done.stdout + done.stderr
    assert tomllib.loads(settings_path.read_text())["embed_api_key"] == "sk-live-123456"


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("recall_half_lives = [0, 0, 0, 0]\n", "recall_half_lives = [0, 0, 0, 0] is not valid"),
        ("recall_weights = [1, 1, 1, 1, 1]\n", "recall_weights = [1, 1, 1, 1, 1] is not valid"),
        ("dedup_vector_threshold = 0.5\n", "dedup_vector_threshold: the conflict threshold"),
    ],
)
def test_a_command_refused_for_a_bad_setting_names_it_and_writes_nothing(
    run, settings_path, db_path, text, named
):
    settings_path.write_text(text, encoding="utf-8")
    for args in (("add", "The build runs at night."), ("recall", "build"), ("stats",)):
        line = one_line_error(run(*args))
        assert f"{settings_path}: {named}" in line
    if BACKEND == "sqlite":
        assert list(db_path.parent.glob(db_path.name + "*")) == []


def test_unset_removes_a_key_the_file_holds_that_is_no_setting(run, settings_path):
    settings_path.write_text('embed_profle = "hash"\nmax_tags = 3\n', encoding="utf-8")
    line = one_line_error(run("list"))
    assert "`memlane settings unset embed_profle`" in line
    doctor = {c["name"]: c for c in run("doctor", "--json").json()}
    assert doctor["settings"]["fix"] == "remove it: `memlane settings unset embed_profle`"
    done = run("settings", "unset", "embed_profle")
    assert done.exit_code == 0 and done.stdout == f"removed embed_profle from {settings_path}\n"
    assert tomllib.loads(settings_path.read_text()) == {"max_tags": 3}
    assert run("list").exit_code == 0
    # A typo the file does not hold is still an error, with the nearest name.
    assert "did you mean embed_profile?" in one_line_error(run("settings", "unset", "embed_profle"))


def test_unset_removes_a_key_and_nothing_else(run, settings_path):
    settings_path.write_text("inject_budget = 800\nmax_tags = 3\n", encoding="utf-8")
    assert run("settings", "unset", "inject_budget", "--json").json()["removed"] is True
    assert tomllib.loads(settings_path.read_text()) == {"max_tags": 3}
    again = run("settings", "unset", "inject_budget")
    assert again.exit_code == 0 and "not set in" in again.stderr
    assert "did you mean max_tags?" in one_line_error(run("settings", "unset", "max_tag"))


def test_a_change_of_profile_asks_for_a_reindex(run, cli_env, settings_path):
    del cli_env["MEMLANE_EMBED_PROFILE"]
    settings_path.write_text('embed_profile = "hash"\n', encoding="utf-8")
    run("add", "The build runs on the CI machines at night.")
    done = run("settings", "set", "embed_profile", "none", "--json")
    assert done.json()["reindex_needed"] is True
    assert "--reindex" in done.stderr and "memlane reembed" in done.stderr


def test_unset_of_the_profile_asks_for_a_reindex_too(run, cli_env, settings_path):
    del cli_env["MEMLANE_EMBED_PROFILE"]
    settings_path.write_text('embed_profile = "hash"\n', encoding="utf-8")
    run("add", "The build runs on the CI machines at night.")
    done = run("settings", "unset", "embed_profile", "--json")  # back to minilm
    assert done.json() == {
        "name": "embed_profile",
        "removed": True,
        "file": str(settings_path),
        "reindex_needed": True,
        "reindexed": None,
    }
    assert "`memlane settings unset embed_profile --reindex`" in done.stderr
    assert tomllib.loads(settings_path.read_text()) == {}
    assert "--reindex goes with" in one_line_error(
        run("settings", "unset", "max_tags", "--reindex")
    )


def test_the_reindex_note_compares_with_the_profile_the_store_records(
    run, cli_env, settings_path, db_path
):
    del cli_env["MEMLANE_EMBED_PROFILE"]
    settings_path.write_text('embed_profile = "none"\n', encoding="utf-8")
    done = run("settings", "set", "embed_profile", "hash", "--json")
    assert done.json()["reindex_needed"] is False  # no store: no vectors to remake
    if BACKEND == "sqlite":
        assert not db_path.exists()  # and none made to find out
    run("add", "The build runs on the CI machines at night.")  # vectors of hash
    settings_path.write_text('embed_profile = "none"\n', encoding="utf-8")
    # The setting changes (none to hash), the store's vectors were hash's all along.
    done = run("settings", "set", "embed_profile", "hash", "--json")
    assert done.json()["reindex_needed"] is False and "--reindex" not in done.stderr


@pytest.mark.integration
def test_set_reindex_reembeds_with_the_new_profile(run, cli_env, settings_path, db_path):
    del cli_env["MEMLANE_EMBED_PROFILE"]
    settings_path.write_text('embed_profile = "hash"\n', encoding="utf-8")
    for text in ("The build runs at night.", "Releases are tagged on Fridays."):
        assert run("add", text).exit_code == 0
    with Memory.open(db_path) as mem:
        assert mem.store.meta(EMBED_PROFILE_META).startswith("hash/")
    done = run("settings", "set", "embed_profile", "minilm", "--reindex", "--json")
    assert done.exit_code == 0, done.stderr
    assert done.json()["reindexed"] == 2 and done.json()["reindex_needed"] is False
    with Memory.open(db_path) as mem:
        assert mem.store.meta(EMBED_PROFILE_META).startswith("minilm/")


# ---- migrate and auto_migrate ----------------------------------------------------------


def _build_old_store(location: str) -> None:
    """A store as the memlane before the latest migration left it: every migration but
    the last applied and recorded, as the backend's own runner records them."""
    schema = store_schema()
    steps = schema.MIGRATIONS[:-1]
    if BACKEND == "postgres":
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute(
                "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, "
                "name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            for number, name, step in steps:
                with conn.transaction(), conn.cursor() as cur:
                    step(cur)
                    cur.execute(
                        "INSERT INTO schema_migrations VALUES (%s, %s, '2026-01-01T00:00:00Z')",
                        (number, name),
                    )
        return
    conn = sqlite3.connect(location, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "CREATE TABLE schema_migrations ("
            "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        for number, name, step in steps:
            step(conn)
            conn.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00Z')",
                (number, name),
            )
        conn.execute("COMMIT")
    finally:
        conn.close()


@pytest.fixture
def old_store(cli_env: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """An out-of-date store, named by MEMLANE_DB."""
    if BACKEND == "postgres":
        location = request.getfixturevalue("pg_url")  # empty, not the migrated template
    else:
        location = str(tmp_path / "old.db")
    _build_old_store(location)
    cli_env["MEMLANE_DB"] = location
    return location


def _versions(location: str) -> list[int]:
    return [row[0] for row in raw_sql(location, "SELECT version FROM schema_migrations ORDER BY 1")]


def test_auto_migrate_off_refuses_an_old_store_until_migrate(run, cli_env, old_store):
    latest = store_schema().LATEST
    last = store_schema().MIGRATIONS[-1][1]
    cli_env["MEMLANE_AUTO_MIGRATE"] = "0"
    line = one_line_error(run("list"), code=1)
    assert f"older than this memlane's ({latest})" in line and "`memlane migrate`" in line
    dry = run("migrate", "--dry-run", "--json")
    assert dry.exit_code == 0, dry.stderr
    assert dry.json()["migrations"] == [{"version": latest, "name": last}]
    assert dry.json()["version"] == latest - 1
    assert _versions(old_store) == list(range(1, latest))  # the dry run changed nothing
    done = run("migrate")
    assert done.exit_code == 0 and f"{latest - 1} -> {latest}" in done.stdout
    assert last in done.stdout
    assert _versions(old_store) == list(range(1, latest + 1))
    assert run("add", "Migrated stores take new memories.").exit_code == 0
    again = run("migrate", "--json").json()
    assert again["migrations"] == [] and again["version"] == latest


@pytest.mark.skipif(BACKEND != "sqlite", reason="a SQLite file's bytes")
def test_a_refused_old_store_is_left_as_it_was(run, cli_env, old_store, tmp_path):
    cli_env["MEMLANE_AUTO_MIGRATE"] = "0"
    before = Path(old_store).read_bytes()
    files = sorted(p.name for p in tmp_path.iterdir())
    for args in (("list",), ("add", "Not yet: the store is old.")):
        assert "`memlane migrate`" in one_line_error(run(*args), code=1)
    assert Path(old_store).read_bytes() == before  # journal mode (byte 19) included
    assert sorted(p.name for p in tmp_path.iterdir()) == files


def test_hooks_on_an_old_store_say_to_migrate_in_one_line(
    run_process, cli_env, old_store, tmp_path
):
    cli_env["MEMLANE_AUTO_MIGRATE"] = "0"
    cli_env["MEMLANE_HOOK_DIR"] = str(tmp_path / "hooks")
    project = tmp_path / "proj"
    event = {"session_id": "s-1", "cwd": str(project), "hook_event_name": "SessionStart"}
    done = run_process("hook", "session-start", input=json.dumps(event))
    assert done.returncode == 0 and done.stderr == ""
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "memory is unavailable until" in context and "migrate` runs" in context
    [entry] = [json.loads(x) for x in (tmp_path / "hooks" / "hooks.log").read_text().splitlines()]
    assert entry["reason"] == "schema-outdated" and "`memlane migrate`" in entry["details"]["why"]
    assert "trace" not in entry and "error" not in entry


def test_auto_migrate_off_from_the_settings_file(run, settings_path, old_store):
    run("settings", "set", "auto_migrate", "off")
    assert "memlane migrate" in one_line_error(run("stats"), code=1)
    with pytest.raises(SchemaOutdated):
        open_store(old_store, migrate=False)


def test_auto_migrate_on_migrates_when_opened(run, old_store):
    latest = store_schema().LATEST
    assert run("list").exit_code == 0
    assert _versions(old_store)[-1] == latest


def test_a_new_store_is_made_whole_with_auto_migrate_off(run, cli_env, tmp_path):
    cli_env["MEMLANE_AUTO_MIGRATE"] = "0"
    assert run("add", "A new store needs no migrating.").exit_code == 0
    assert run("migrate", "--json").json()["migrations"] == []


@pytest.mark.sqlite_only
def test_migrate_never_creates_a_store(run, cli_env, tmp_path):
    missing = tmp_path / "missing.db"
    cli_env["MEMLANE_DB"] = str(missing)
    for args in (("migrate",), ("migrate", "--dry-run")):
        assert f"no store at {missing}" in one_line_error(run(*args), code=1)
    assert not missing.exists()


# ---- the layering itself, on a given environment ----------------------------------------


def test_load_layers_environment_file_and_default(tmp_path):
    from memlane.settings_file import load

    path = tmp_path / "settings.toml"
    path.write_text(
        'max_tags = 7\ninject_budget = 900\nweb_allowed_hosts = ["a.example.org"]\n'
        '[env]\nMEMLANE_MAX_TAGS = "9"\n',
        encoding="utf-8",
    )
    environ = {"MEMLANE_CONFIG": str(path), "MEMLANE_INJECT_BUDGET": "100"}
    resolved = load(environ)
    assert environ["MEMLANE_MAX_TAGS"] == "9"  # [env] filled the gap, and then ruled
    picked = {k: (resolved.values[k], resolved.sources[k]) for k in
              ("max_tags", "inject_budget", "web_allowed_hosts", "max_title_chars")}  # fmt: skip
    assert picked == {
        "max_tags": (9, "file [env]"),
        "inject_budget": (100, "environment"),
        "web_allowed_hosts": (("a.example.org",), "file"),
        "max_title_chars": (300, "default"),
    }
    assert resolved.file.exists and resolved.problems == ()


def test_load_leniently_keeps_each_good_value_and_lists_each_bad_one(tmp_path):
    from memlane.errors import Invalid
    from memlane.settings_file import load

    path = tmp_path / "settings.toml"
    path.write_text(
        'max_tags = "many"\ninject_budget = 900\nrecall_weights = [1, 1, 1, 1, 1]\n',
        encoding="utf-8",
    )
    environ = {"MEMLANE_CONFIG": str(path), "MEMLANE_MAX_TITLE_CHARS": "x"}
    with pytest.raises(Invalid, match=re.escape("recall_weights = [1, 1, 1, 1, 1] is not")):
        load(dict(environ))
    resolved = load(dict(environ), lenient=True)
    assert resolved.values["inject_budget"] == 900
    assert (resolved.values["max_tags"], resolved.values["max_title_chars"]) == (50, 300)
    assert resolved.values["recall_weights"] is None  # its group is back at its defaults
    weights, title, tags = resolved.problems
    assert title.startswith("MEMLANE_MAX_TITLE_CHARS='x' is not valid")
    assert tags.startswith(f"{path}: max_tags = 'many' is not valid")
    assert weights.startswith(f"{path}: recall_weights = [1, 1, 1, 1, 1] is not valid")
    assert "sum to 1" in weights


def test_settings_that_do_not_fit_together_are_refused_naming_each(tmp_path):
    from memlane.errors import Invalid
    from memlane.settings_file import load

    path = tmp_path / "settings.toml"
    path.write_text("dedup_conflict_threshold = 0.9\n", encoding="utf-8")
    environ = {"MEMLANE_CONFIG": str(path), "MEMLANE_DEDUP_VECTOR_THRESHOLD": "0.8"}
    named = f"MEMLANE_DEDUP_VECTOR_THRESHOLD, {path}: dedup_conflict_threshold: the conflict"
    with pytest.raises(Invalid, match=re.escape(named)):
        load(dict(environ))
    resolved = load(dict(environ), lenient=True)
    assert resolved.values["dedup_conflict_threshold"] is None  # back at the defaults
    assert [p.startswith(named) for p in resolved.problems] == [True]


def test_open_memory_checks_the_settings_before_it_makes_a_store(tmp_path):
    from memlane import config
    from memlane.errors import Invalid

    values = {**config.resolve({}), "recall_half_lives": (0.0, 0.0, 0.0, 0.0)}
    values["project_aliases"] = str(tmp_path / "aliases.json")
    with pytest.raises(Invalid, match="half-lives"):
        config.open_memory(values, str(tmp_path / "new.db"), cwd=tmp_path)
    assert list(tmp_path.iterdir()) == []
