"""install / uninstall: memlane's hooks and MCP server merged into Claude
Code's and Codex's settings without clobbering, idempotently, and taken out exactly."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlane.cli.main import cli

SETTINGS = """{
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo hi"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": "my-own-start"}]}]
    }
}
"""
CLAUDE_JSON = '{"numStartups": 12, "mcpServers": {"docs": {"command": "docs-server"}}}'
CODEX_TOML = """# my codex config
model = "o4"  # favourite

[mcp_servers.docs]
command = "docs-server"
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def memlane(tmp_path: Path, home: Path):
    project = tmp_path / "project"
    project.mkdir()

    def invoke(*args: str) -> tuple[int, str, str]:
        env = {"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "data"), "MEMLANE_DB": None}
        result = CliRunner().invoke(cli, [*args, "--project-dir", str(project)], env=env,
                                    catch_exceptions=False)  # fmt: skip
        return result.exit_code, result.stdout, result.stderr

    invoke.project = project  # type: ignore[attr-defined]
    return invoke


def _files(*paths: Path) -> dict[Path, bytes | None]:
    return {p: p.read_bytes() if p.exists() else None for p in paths}


def test_claude_code_round_trip_leaves_existing_files_byte_identical(memlane, home):
    settings, claude_json = home / ".claude" / "settings.json", home / ".claude.json"
    settings.parent.mkdir()
    settings.write_text(SETTINGS)
    claude_json.write_text(CLAUDE_JSON)
    before = _files(settings, claude_json)
    code, out, err = memlane("install", "claude-code")
    assert code == 0, err
    merged = json.loads(settings.read_text())
    assert merged["model"] == "opus" and merged["permissions"] == {"allow": ["Bash(ls:*)"]}
    hooks = merged["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["command"] == "echo hi"
    starts = [h["command"] for g in hooks["SessionStart"] for h in g["hooks"]]
    assert starts[0] == "my-own-start" and starts[1].endswith(
        "hook session-start --host claude-code"
    )
    for event, name in (("UserPromptSubmit", "user-prompt"), ("PreCompact", "pre-compact"),
                        ("Stop", "stop"), ("SessionEnd", "session-end"),
                        ("SubagentStart", "subagent-start")):  # fmt: skip
        [group] = hooks[event]
        assert group["hooks"][0]["command"].endswith(f"hook {name} --host claude-code")
    # The PreToolUse hook is asked for: only the user's own is there.
    assert [g["hooks"][0]["command"] for g in hooks["PreToolUse"]] == ["echo hi"]
    servers = json.loads(claude_json.read_text())["mcpServers"]
    assert servers["docs"] == {"command": "docs-server"}
    assert servers["memlane"]["args"][-1] == "serve"
    assert json.loads(claude_json.read_text())["numStartups"] == 12
    assert settings.read_text().startswith('{\n    "model"')  # the file's own indent kept
    backups = sorted(settings.parent.glob("settings.json.memlane-*.bak"))
    assert [b.read_bytes() for b in backups] == [before[settings]]
    installed = _files(settings, claude_json)
    code, out, _ = memlane("install", "claude-code")
    assert code == 0 and out.split()[::2] == ["unchanged", "unchanged"]
    assert _files(settings, claude_json) == installed  # idempotent
    code, out, err = memlane("uninstall", "claude-code")
    assert code == 0, err
    assert _files(settings, claude_json) == before


def test_project_scope_creates_files_and_uninstall_removes_them(memlane):
    project = memlane.project
    code, out, err = memlane("install", "claude-code", "--scope", "project", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert [f["action"] for f in report["files"]] == ["create", "create"]
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["memlane"]
    assert (project / ".claude" / "settings.json").exists()
    code, out, _ = memlane("uninstall", "claude-code", "--scope", "project")
    assert code == 0 and out.split()[::2] == ["delete", "delete"]
    assert not (project / ".mcp.json").exists()
    assert not (project / ".claude" / "settings.json").exists()


def test_codex_keeps_comments_and_turns_hooks_on(memlane, home):
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_TOML)
    code, _, err = memlane("install", "codex")
    assert code == 0, err
    text = config.read_text()
    assert text.startswith(CODEX_TOML)  # comments, layout and the other server kept
    assert "[mcp_servers.memlane]" in text and "codex_hooks = true" in text
    hooks = json.loads((home / ".codex" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "SubagentStart", "PreCompact", "Stop"}
    assert memlane("uninstall", "codex")[0] == 0
    assert config.read_text() == CODEX_TOML
    assert not (home / ".codex" / "hooks.json").exists()


def test_codex_hooks_switched_off_by_the_user_stay_off(memlane, home):
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text("[features]\ncodex_hooks = false\n")
    code, _, err = memlane("install", "codex")
    assert code == 0 and "features.codex_hooks` is already set" in err
    assert "codex_hooks = false" in config.read_text()
    memlane("uninstall", "codex")
    assert config.read_text() == "[features]\ncodex_hooks = false\n"


def test_dry_run_writes_nothing(memlane, home, tmp_path):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(SETTINGS)
    code, out, _ = memlane("install", "claude-code", "--dry-run")
    assert code == 0 and "+++" in out and "hook session-start" in out
    assert settings.read_text() == SETTINGS
    assert not (home / ".claude.json").exists()
    assert not list(settings.parent.glob("*.bak"))
    assert not (tmp_path / "data" / "memlane" / "installs.json").exists()


def test_a_damaged_settings_file_is_refused_and_nothing_is_written(memlane, home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": [oops')
    code, _, err = memlane("install", "claude-code")
    assert code == 2 and "not valid JSON" in err and len(err.strip().splitlines()) == 1
    assert settings.read_text() == '{"hooks": [oops'
    assert not (home / ".claude.json").exists()
    settings.write_text('{"hooks": {"Stop": "not a list"}}')
    code, _, err = memlane("install", "claude-code")
    assert code == 2 and "hooks.Stop" in err


def test_someone_elses_memlane_server_entry_is_never_overwritten(memlane, home):
    claude_json = home / ".claude.json"
    claude_json.write_text('{"mcpServers": {"memlane": {"command": "/opt/other/memlane"}}}')
    code, _, err = memlane("install", "claude-code")
    assert code == 0 and "mcpServers.memlane` is already set" in err
    memlane("uninstall", "claude-code")
    assert json.loads(claude_json.read_text()) == {
        "mcpServers": {"memlane": {"command": "/opt/other/memlane"}}
    }


def test_uninstall_keeps_what_was_added_by_hand_since(memlane, home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(SETTINGS)
    memlane("install", "claude-code")
    edited = json.loads(settings.read_text())
    edited["theme"] = "dark"
    edited["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "notify-me"})
    settings.write_text(json.dumps(edited, indent=4))
    memlane("uninstall", "claude-code")
    after = json.loads(settings.read_text())
    assert after["theme"] == "dark"
    assert after["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "notify-me"}]}]
    assert "memlane" not in settings.read_text()
    assert after["hooks"]["SessionStart"] == json.loads(SETTINGS)["hooks"]["SessionStart"]


def test_the_installed_hook_command_runs_and_names_the_store(memlane, home, tmp_path):
    db = tmp_path / "team.db"
    runner = CliRunner()
    env = {"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "data")}
    result = runner.invoke(cli, ["--db", str(db), "install", "claude-code"], env=env,
                           catch_exceptions=False)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    hooks = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    command = hooks["SessionStart"][0]["hooks"][0]["command"]
    argv = shlex.split(command)
    assert argv[:3] == [sys.executable, "-m", "memlane"] and argv[3:5] == ["--db", str(db)]
    server = json.loads((home / ".claude.json").read_text())["mcpServers"]["memlane"]
    assert server["args"] == ["-m", "memlane", "--db", str(db), "serve"]
    payload = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart",
                          "source": "startup", "cwd": str(tmp_path)})  # fmt: skip
    done = subprocess.run(argv, input=payload, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HOME": str(home)})  # fmt: skip
    assert done.returncode == 0 and isinstance(json.loads(done.stdout or "{}"), dict)
    assert db.exists()  # the hook opened the store named at install time
    garbage = subprocess.run(argv, input="not json at all", capture_output=True, text=True,
                             timeout=120, env={**os.environ, "HOME": str(home)})  # fmt: skip
    assert garbage.returncode == 0


def test_the_pre_tool_hook_is_installed_when_asked_for_and_uninstalled_with_the_rest(memlane, home):
    settings = home / ".claude" / "settings.json"
    code, _, err = memlane("install", "claude-code", "--pre-tool")
    assert code == 0, err
    [group] = json.loads(settings.read_text())["hooks"]["PreToolUse"]
    # Only for the tools that run a command or write a file.
    assert group["matcher"] == "Bash|Edit|Write|MultiEdit|NotebookEdit"
    assert group["hooks"][0]["command"].endswith("hook pre-tool --host claude-code")
    assert memlane("install", "codex", "--pre-tool")[0] == 0
    codex = json.loads((home / ".codex" / "hooks.json").read_text())["hooks"]
    assert codex["PreToolUse"][0]["matcher"] == "Bash"  # Codex's hook sees its shell only
    assert memlane("uninstall", "claude-code")[0] == 0
    assert not settings.exists()
