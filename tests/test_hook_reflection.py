"""Failure reflection at Stop (hooks.reflect): a tool call that failed and later
succeeded asks the agent, once, to save what fixed it; anything else lets it stop."""

from __future__ import annotations

import json
from pathlib import Path

from memlane.hooks import reflect
from memlane.model import Signal


def claude_call(key: str, command: str) -> str:
    block = {"type": "tool_use", "id": key, "name": "Bash", "input": {"command": command}}
    return json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [block]}})


def claude_result(key: str, failed: bool) -> str:
    block = {"type": "tool_result", "tool_use_id": key, "content": "...", "is_error": failed}
    return json.dumps({"type": "user", "message": {"role": "user", "content": [block]}})


def codex_call(key: str, command: str) -> str:
    payload = {"type": "function_call", "name": "shell", "call_id": key,
               "arguments": json.dumps({"command": ["bash", "-lc", command]})}  # fmt: skip
    return json.dumps({"type": "response_item", "payload": payload})


def codex_result(key: str, code: int) -> str:
    output = json.dumps({"output": "...", "metadata": {"exit_code": code}})
    payload = {"type": "function_call_output", "call_id": key, "output": output}
    return json.dumps({"type": "response_item", "payload": payload})


def test_a_failure_fixed_later_is_what_to_reflect_on():
    lines = [
        claude_call("1", "pytest tests/db -x"), claude_result("1", True),
        claude_call("2", "cat app/db.py"), claude_result("2", False),
        claude_call("3", "pytest tests/db"), claude_result("3", False),
    ]  # fmt: skip
    [fix] = reflect.fixes(reflect.calls(lines))
    assert fix == reflect.Fix("pytest", Signal.TEST)
    asked = reflect.request([fix])
    assert asked is not None and "`pytest` failed and then succeeded" in asked
    assert "memlane add --kind lesson --signal test" in asked


def test_codex_exit_codes_count_as_failures():
    lines = [codex_call("a", "cargo build"), codex_result("a", 101),
             codex_call("b", "cargo build --locked"), codex_result("b", 0)]  # fmt: skip
    assert reflect.fixes(reflect.calls(lines)) == [reflect.Fix("cargo build", Signal.COMPILE)]


def test_retries_that_teach_nothing_ask_nothing():
    """A path typo, an edit that missed, a server polled until it answers, a rejected
    call approved later: no test, compile or lint signal, no lesson."""
    lines = [claude_call("1", "cat src/invoice.py"), claude_result("1", True),
             claude_call("2", "cat src/billing/invoice.py"), claude_result("2", False),
             claude_call("3", "curl localhost:8000/health"), claude_result("3", True),
             claude_call("4", "curl localhost:8000/health"), claude_result("4", False),
             claude_call("5", "npm install"), claude_result("5", True),
             claude_call("6", "npm install"), claude_result("6", False)]  # fmt: skip
    assert reflect.fixes(reflect.calls(lines)) == []


def test_no_failure_or_no_fix_asks_nothing():
    passing = [claude_call("1", "ruff check src"), claude_result("1", False)]
    unresolved = [claude_call("1", "cargo build"), claude_result("1", True)]
    other = [claude_call("1", "make lint"), claude_result("1", True),
             claude_call("2", "make test"), claude_result("2", False)]  # fmt: skip
    for lines in (passing, unresolved, other, [], ["not json", "[1]"]):
        assert reflect.request(reflect.fixes(reflect.calls(lines))) is None


def test_a_call_whose_result_is_not_yet_written_is_left_for_later():
    assert reflect.calls([claude_call("1", "pytest")]) == []


def test_the_stop_hook_asks_once_and_never_while_the_host_continues(run, tmp_path: Path):
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    chat = project / "transcript.jsonl"
    chat.write_text(
        "\n".join([claude_call("1", "pytest -q"), claude_result("1", True),
                   claude_call("2", "pytest -q"), claude_result("2", False)]) + "\n"
    )  # fmt: skip
    data = {"session_id": "s1", "transcript_path": str(chat), "cwd": str(project),
            "hook_event_name": "Stop", "stop_hook_active": False}  # fmt: skip
    first = json.loads(run("hook", "stop", input=json.dumps(data)).stdout)
    assert first["decision"] == "block" and "`pytest` failed and then succeeded" in first["reason"]
    continuing = {**data, "stop_hook_active": True}
    assert json.loads(run("hook", "stop", input=json.dumps(continuing)).stdout) == {}
    # The same stretch is not asked about again.
    assert json.loads(run("hook", "stop", input=json.dumps(data)).stdout) == {}
    with chat.open("a") as more:
        more.write(claude_call("5", "mypy src") + "\n" + claude_result("5", True) + "\n")
        more.write(claude_call("6", "mypy src") + "\n" + claude_result("6", False) + "\n")
    # A session is asked once: a later fix in it goes by.
    assert json.loads(run("hook", "stop", input=json.dumps(data)).stdout) == {}
    other = {**data, "session_id": "s2"}
    chat.write_text(
        claude_call("3", "ruff check") + "\n" + claude_result("3", True) + "\n"
        + claude_call("4", "ruff check") + "\n" + claude_result("4", False) + "\n"
    )  # fmt: skip
    again = json.loads(run("hook", "stop", "--host", "codex", input=json.dumps(other)).stdout)
    assert again["decision"] == "block" and "--signal lint --session-id s2" in again["reason"]
