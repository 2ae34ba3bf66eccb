"""`memlane add-batch`: partial success, line-numbered reports, ids in input order.

Bad lines are reported on stderr by their line number and skipped; the good ones land.
Exit 0 when nothing failed (duplicate skips are not failures), 2 when any line was refused.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memlane import Memory

N = 1000
# Known bad lines (1-based) in the 1,000-line batch and why each one is bad.
BAD = {
    17: "{not json at all",
    500: "[1, 2, 3]",  # an array: the last line of the first 500
    873: json.dumps({"content": "has a bogus kind", "kind": "bogus"}),
}
SUMMARY = re.compile(
    r"^(\d+) added, \d+ refreshed, (\d+) already saved \(no action needed\), (\d+) failed$"
)


def good_line(i: int) -> dict[str, Any]:
    return {
        "title": f"Note {i}",
        "content": f"Batch body number {i}: keep the line whole.",
        "tags": ["batch", f"n{i % 7}"],
        "importance": 1 + i % 9,
        "session_id": "batch-session",
    }


def batch_text(n: int = N, bad: dict[int, str] | None = None) -> str:
    bad = BAD if bad is None else bad
    return "".join(
        (bad[i] if i in bad else json.dumps(good_line(i))) + "\n" for i in range(1, n + 1)
    )


def error_lines(stderr: str) -> dict[int, str]:
    """`[N] error: ...` lines on stderr, by line number."""
    found = {}
    for line in stderr.splitlines():
        match = re.match(r"^\[(\d+)\] error: (.+)$", line)
        if match:
            found[int(match[1])] = match[2]
    return found


def summary(stdout: str) -> tuple[int, int, int]:
    match = SUMMARY.match(stdout.strip().splitlines()[-1])
    assert match, stdout[-300:]
    return int(match[1]), int(match[2]), int(match[3])


def bodies(db_path: Path) -> dict[str, str]:
    """Every memory in the store: id -> body (read through the library, as a user would)."""
    with Memory.open(db_path, agent="tester") as mem:
        return {r.id: r.body for r in mem.list(scope="all", include_private=True, limit=0)}


def test_thousand_lines_with_three_bad_ones(run, tmp_path, db_path):
    source = tmp_path / "batch.jsonl"
    source.write_text(batch_text(), encoding="utf-8")
    result = run("add-batch", "-f", str(source))
    assert result.exit_code == 2
    errors = error_lines(result.stderr)
    assert sorted(errors) == sorted(BAD)
    assert "JSON" in errors[17]
    assert "object" in errors[500]
    assert "kind" in errors[873] and "bogus" in errors[873]
    assert summary(result.stdout) == (N - 3, 0, 3)
    added = [ln for ln in result.stdout.splitlines() if "Added entry: " in ln]
    assert len(added) == N - 3
    stored = bodies(db_path)
    assert len(stored) == N - 3
    expected = {good_line(i)["content"] for i in range(1, N + 1) if i not in BAD}
    assert set(stored.values()) == expected


def test_json_summary_ids_in_input_order(run, db_path):
    result = run("add-batch", "--json", input=batch_text())
    assert result.exit_code == 2
    payload = result.json()  # stdout is only JSON
    assert (payload["added"], payload["already_saved"], payload["failed"]) == (N - 3, 0, 3)
    ids = payload["ids"]
    assert len(ids) == N
    assert [i + 1 for i, memory_id in enumerate(ids) if memory_id is None] == sorted(BAD)
    assert len({m for m in ids if m}) == N - 3
    stored = bodies(db_path)
    for number, memory_id in enumerate(ids, start=1):
        if memory_id is not None:
            assert stored[memory_id] == good_line(number)["content"]
    lines = payload["lines"]
    assert [ln["line"] for ln in lines] == list(range(1, N + 1))
    assert {ln["line"] for ln in lines if "error" in ln} == set(BAD)
    errors = error_lines(result.stderr)
    assert errors == {} or sorted(errors) == sorted(BAD)


def test_duplicates_count_as_already_saved_not_failed(run, db_path):
    lines = [good_line(i) for i in range(1, 6)]
    repeat = {**good_line(3), "title": "NOTE 3!", "tags": ["other"]}  # recased, other tags
    text = "\n".join(json.dumps(x) for x in [*lines, repeat, good_line(1)]) + "\n"
    result = run("add-batch", input=text)
    assert result.exit_code == 0, result.stderr
    assert summary(result.stdout) == (5, 2, 0)
    assert error_lines(result.stderr) == {}
    again = run("add-batch", "--json", input=text)
    assert again.exit_code == 0
    payload = again.json()
    assert (payload["added"], payload["already_saved"], payload["failed"]) == (0, 7, 0)
    first_ids = [ln["duplicate_of"] for ln in payload["lines"]]
    assert None not in payload["ids"]
    assert payload["ids"] == first_ids
    assert all(ln["status"] == "already_persisted" and ln["skipped"] for ln in payload["lines"])
    assert len(bodies(db_path)) == 5


def test_blank_lines_are_ignored_but_keep_their_numbers(run, db_path):
    text = "\n" + json.dumps(good_line(1)) + "\n\n   \n\t\n{broken\n" + json.dumps(good_line(2))
    result = run("add-batch", input=text)
    assert result.exit_code == 2
    assert sorted(error_lines(result.stderr)) == [6]
    assert summary(result.stdout) == (2, 0, 1)
    payload = run("add-batch", "--json", input=text.replace("Batch", "Second")).json()
    assert [ln["line"] for ln in payload["lines"]] == [2, 6, 7]
    assert payload["ids"][1] is None and None not in (payload["ids"][0], payload["ids"][2])
    assert len(bodies(db_path)) == 4


def test_only_blank_input_adds_nothing(run):
    result = run("add-batch", input="\n\n  \n")
    assert result.exit_code == 0
    assert summary(result.stdout) == (0, 0, 0)


def test_file_and_stdin_give_the_same_result(run, tmp_path, db_path):
    text = batch_text(20, {5: "nope"})
    source = tmp_path / "b.jsonl"
    source.write_text(text.replace("Batch body", "From file"), encoding="utf-8")
    from_file = run("add-batch", "--file", str(source), "--json")
    from_stdin = run("add-batch", "-f", "-", "--json", input=text)
    implicit = run("add-batch", "--json", input=text.replace("Batch body", "Implicit"))
    for result in (from_file, from_stdin, implicit):
        assert result.exit_code == 2
        payload = result.json()
        assert (payload["added"], payload["failed"]) == (19, 1)
        assert payload["ids"][4] is None
    assert len(bodies(db_path)) == 57


def test_missing_file_is_one_line_exit_2(run, tmp_path):
    result = run("add-batch", "-f", str(tmp_path / "missing.jsonl"))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert "missing.jsonl" in result.stderr


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_invalid_utf8_line_is_reported_not_a_crash(run, tmp_path, db_path, via):
    data = (
        json.dumps(good_line(1)).encode()
        + b"\n"
        + b'{"content": "caf\xe9 latin-1"}\n'
        + b"\xff\xfe\xfa\n"
        + json.dumps(good_line(2)).encode()
        + b"\n"
    )
    if via == "file":
        source = tmp_path / "bad.jsonl"
        source.write_bytes(data)
        result = run("add-batch", "-f", str(source))
    else:
        result = run("add-batch", input=data)
    assert result.exit_code == 2
    errors = error_lines(result.stderr)
    assert sorted(errors) == [2, 3]
    assert all("UTF-8" in message for message in errors.values())
    assert summary(result.stdout) == (2, 0, 2)
    assert len(bodies(db_path)) == 2


def test_crlf_lines_land_without_carriage_returns(run, db_path):
    text = json.dumps(good_line(1)) + "\r\n" + json.dumps({"content": "two\r\nlines"}) + "\r\n"
    result = run("add-batch", input=text)
    assert result.exit_code == 0, result.stderr
    assert sorted(bodies(db_path).values()) == [good_line(1)["content"], "two\nlines"]


@pytest.mark.parametrize(
    "line, reason",
    [
        ('"just a string"', "object"),
        ("42", "object"),
        ("null", "object"),
        ('{"content": 5}', "string"),
        ('{"content": "x", "colour": "red"}', "colour"),
        ('{"title": "no content"}', "content"),
        ('{"content": "x", "importance": "very"}', "importance"),
        ('{"content": "x", "confidence": NaN}', "confidence"),
        ('{"content": "x", "tags": {"a": 1}}', "tags"),
        ('{"content": "x", "private": "yes"}', "private"),
        ('{"content": "x", "scope": "globl"}', "global"),
        ('{"content": "x", "category": "nosuch"}', "categor"),
        ('{"content": "x", "thread_id": "m-zzzzzzzz"}', "type"),
        ('{"content": "x", "type": "thread_closed", "thread_id": "m-zzzzzzzz"}', "m-zzzzzzzz"),
        ('{"content": "x", "occurred_at": 12}', "occurred_at"),
    ],
)
def test_each_kind_of_bad_line_is_reported_and_the_rest_land(run, db_path, line, reason):
    text = json.dumps(good_line(1)) + "\n" + line + "\n" + json.dumps(good_line(2)) + "\n"
    result = run("add-batch", input=text)
    errors = error_lines(result.stderr)
    assert result.exit_code == 2
    assert sorted(errors) == [2]
    assert reason in errors[2]
    assert summary(result.stdout) == (2, 0, 1)
    assert len(bodies(db_path)) == 2


@pytest.mark.parametrize(
    "line",
    [
        pytest.param('{"content": "lone \\ud800 surrogate"}', id="lone-surrogate-escape"),
        pytest.param("[" * 100_000 + "]" * 100_000, id="deeply-nested"),
        pytest.param('{"content": "' + "x" * 70_000 + '"}', id="over-body-limit"),
    ],
)
def test_pathological_lines_are_reported_not_a_crash(run, db_path, line):
    """Valid-or-not JSON that trips the parser or the encoder is still just one bad line."""
    text = json.dumps(good_line(1)) + "\n" + line + "\n" + json.dumps(good_line(2)) + "\n"
    result = run("add-batch", input=text)
    assert result.exit_code == 2
    assert sorted(error_lines(result.stderr)) == [2]
    assert summary(result.stdout) == (2, 0, 1)
    assert len(bodies(db_path)) == 2


def test_add_batch_in_a_real_process(run_process, tmp_path, db_path):
    text = batch_text(50, {10: "{oops", 40: json.dumps({"content": "x", "taint": "filthy"})})
    piped = run_process("add-batch", input=text)
    assert piped.returncode == 2
    assert sorted(error_lines(piped.stderr)) == [10, 40]
    assert summary(piped.stdout) == (48, 0, 2)
    source = tmp_path / "again.jsonl"
    source.write_text(text, encoding="utf-8")
    again = run_process("add-batch", "--file", str(source), "--json")
    assert again.returncode == 2
    payload = json.loads(again.stdout)
    assert (payload["added"], payload["already_saved"], payload["failed"]) == (0, 48, 2)
    assert len(bodies(db_path)) == 48


def test_typed_fact_lines(run, db_path):
    thread = {"type": "thread_opened", "content": "Which queue: SQS or Kafka?", "session": "s1"}
    first = run("add-batch", "--json", input=json.dumps(thread)).json()
    thread_id = first["ids"][0]
    lines = [
        {"type": "decision", "content": "Chose Kafka for ordering", "session": "s1"},
        {"type": "thread_closed", "thread_id": thread_id, "content": "Settled on Kafka."},
        {"type": "thread_closed", "thread_id": thread_id, "content": "Closed again?"},
    ]
    result = run("add-batch", "--json", input="\n".join(json.dumps(x) for x in lines))
    assert result.exit_code == 2
    payload = result.json()
    assert (payload["added"], payload["failed"]) == (2, 1)
    assert "already closed" in payload["lines"][2]["error"]
    with Memory.open(db_path, agent="tester") as mem:
        decision = mem.get(payload["ids"][0])
        assert (decision.kind.value, decision.category, decision.session_id) == (
            "decision",
            "decision",
            "s1",
        )
        assert decision.title == "Chose Kafka for ordering"
        assert mem.get(thread_id).state.value == "closed"
