"""The `memlane` CLI as a user drives it: every command, its text and --json output, exit codes.

Exit codes: 0 ok, 1 not found / runtime failure, 2 usage or refused input. A refusal
prints one line on stderr, nothing on stdout, and writes nothing.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

# Record fields that differ between two otherwise identical writes.
VOLATILE = {
    "id",
    "created_at",
    "updated_at",
    "valid_from",
    "version_from",
    "links",
}  # links name ids


# ---- helpers -------------------------------------------------------------------------------


def ok(result: Any) -> Any:
    assert result.exit_code == 0, f"exit {result.exit_code}: {result.stderr}"
    return result


def refused(result: Any, code: int = 2) -> str:
    """A refusal: the exit code, nothing on stdout, exactly one line on stderr."""
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip("\n").splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def add(run: Any, *args: str, input: str | None = None) -> str:
    """`memlane add ... --json` and the new id."""
    result = ok(run("add", *args, "--json", input=input))
    payload = result.json()
    assert payload["status"] == "added", payload
    return str(payload["id"])


def show(run: Any, memory_id: str, *args: str) -> dict[str, Any]:
    return ok(run("show", memory_id, "--json", *args)).json()


def total(run: Any) -> int:
    """Every memory row in the store, live or not."""
    return int(ok(run("stats", "--json")).json()["total"])


def listed(run: Any, *args: str) -> list[str]:
    payload = ok(run("list", "--json", *args)).json()
    assert payload["count"] == len(payload["results"])
    return [r["id"] for r in payload["results"]]


def searched(run: Any, query: str, *args: str) -> list[str]:
    payload = ok(run("search", query, "--json", *args)).json()
    assert payload["count"] == len(payload["results"])
    return [r["id"] for r in payload["results"]]


def stable(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in VOLATILE}


# ---- add: every field round-trips ----------------------------------------------------------

# One memory using every field `memlane add --help` offers, as show --json reports it.
EXPECTED = {
    "title": "Retry with backoff",
    "body": "Use exponential backoff with jitter.\nCap the delay at 30 seconds.",
    "kind": "procedure",
    "category": "networking",
    "tags": ["reliability", "networking"],
    "importance": 7,
    "resonance_type": "operational",
    "scope": "project:billing@dev",
    "project": "billing",
    "branch": "dev",
    "source_agent": "whistledown",
    "source_ref": "file:src/retry.py#abc123",
    "source_type": "agent_session",
    "entry_type": "synthesis",
    "content_type": "code",
    "session_id": "sess-42",
    "visibility": "private",
    "owner": "tester",
    "wake_phrases": ["first light", "second light", "third light"],
    "wake_order": 3,
    "applicability": ["python", "backend"],
    "domain": "infra/net",
    "occurred_at": "2024-03-01T12:00:00Z",
    "signal": "test",
    "confidence": 0.8,
    "taint": "untrusted_tool",
    "ephemeral": True,
    "memory_class": "procedural",
    "live": True,
    "version": 1,
}

ADD_ARGS = (
    "--title", "Retry with backoff",
    "--content", "Use exponential backoff with jitter.\nCap the delay at 30 seconds.",
    "--kind", "procedure",
    "-c", "networking",
    "--tags", "reliability,networking",
    "--importance", "7",
    "--resonance-type", "operational",
    "--scope", "project:billing@dev",
    "--source-agent", "whistledown",
    "--source-ref", "file:src/retry.py#abc123",
    "--source-type", "agent_session",
    "--entry-type", "synthesis",
    "--content-type", "code",
    "--session-id", "sess-42",
    "--private",
    "--visibility", "private",
    "--owner", "tester",
    "--wake-phrase", "first light",
    "--wake-phrase", "second light",
    "--wake-phrases", "third light",
    "--wake-order", "3",
    "-a", "python,backend",
    "-d", "infra/net",
    "--occurred-at", "2024-03-01T12:00:00Z",
    "--signal", "test",
    "--confidence", "0.8",
    "--taint", "untrusted_tool",
    "--ephemeral",
    "--allow-duplicate",
    "--no-embed",
)  # fmt: skip

# The same memory as one add-batch line: the input fields of EXPECTED, by their input names.
BATCH_LINE = {
    **{
        k: v
        for k, v in EXPECTED.items()
        if k not in ("body", "project", "branch", "memory_class", "live", "version")
    },
    "content": EXPECTED["body"],
    "private": True,
    "allow_duplicate": True,
    "no_embed": True,
}


def test_every_add_flag_round_trips_through_show(run):
    ok(run("categories", "add", "networking", "Network behaviour"))
    target = add(run, "--content", "Anchor target")
    memory_id = add(run, *ADD_ARGS, "--anchors", target[:6])
    record = show(run, memory_id)
    assert record["id"] == memory_id
    for key, value in EXPECTED.items():
        assert record[key] == value, key
    assert record["anchors"] == [target]
    assert record["dedup_hash"].startswith("dh1:")


def test_every_field_round_trips_through_add_batch_identically(run):
    ok(run("categories", "add", "networking"))
    target = add(run, "--content", "Anchor target")
    via_add = show(run, add(run, *ADD_ARGS, "--anchors", target))
    line = {**BATCH_LINE, "anchors": [target]}
    batch = ok(run("add-batch", "--json", input=json.dumps(line) + "\n")).json()
    assert (batch["added"], batch["failed"]) == (1, 0)
    via_batch = show(run, batch["ids"][0])
    for key, value in EXPECTED.items():
        assert via_batch[key] == value, key
    assert via_batch["anchors"] == [target]
    assert stable(via_batch) == stable(via_add)


def test_anchors_to_unknown_ids_are_refused(run):
    assert "m-nothere0" in refused(run("add", "--content", "x", "--anchors", "m-nothere0"), 1)
    assert total(run) == 0


def test_update_anchor_modes(run):
    a, b, c = (add(run, "--content", f"target {n}") for n in "abc")
    memory_id = add(run, "--content", "anchored", "--anchors", a)
    ok(run("update", memory_id, "--add-anchor", b))
    assert sorted(show(run, memory_id)["anchors"]) == sorted([a, b])
    ok(run("update", memory_id, "--remove-anchor", a))
    assert show(run, memory_id)["anchors"] == [b]
    ok(run("update", memory_id, "--anchors", f"{a},{c}"))
    assert sorted(show(run, memory_id)["anchors"]) == sorted([a, c])
    assert set(listed(run, "--has-anchors")) == {memory_id}


def test_zero_values_are_kept_not_dropped(run):
    """`--wake-order 0` (first in the wake sequence) and `--confidence 0` are real values."""
    record = show(
        run, add(run, "--content", "Wake first", "--wake-order", "0", "--confidence", "0")
    )
    assert record["wake_order"] == 0
    assert record["confidence"] == 0.0


def test_add_batch_accepts_comma_strings_and_the_resonance_alias(run):
    line = {"content": "Pin TZ=UTC in conftest", "tags": "tz, testing", "resonance": 9}
    batch = ok(run("add-batch", "--json", input=json.dumps(line))).json()
    record = show(run, batch["ids"][0])
    assert record["tags"] == ["tz", "testing"]
    assert record["importance"] == 9
    assert record["title"] == "Pin TZ=UTC in conftest"


def test_add_derives_title_and_defaults(run):
    memory_id = add(run, "--content", "Use uv for installs. It is faster here.")
    record = show(run, memory_id)
    assert record["title"] == "Use uv for installs"
    assert record["body"] == "Use uv for installs. It is faster here."
    assert (record["kind"], record["category"], record["importance"]) == ("fact", "fact", 5)
    assert (record["visibility"], record["owner"]) == ("public", None)
    assert record["scope"] == "project:proj"
    assert record["source_agent"] == "tester"


@pytest.mark.parametrize("how", ["positional", "--content", "-f", "--file", "--content-file"])
def test_add_content_sources(run, tmp_path, how):
    text = "Line one of the note.\nLine two."
    source = tmp_path / "note.md"
    source.write_text(text, encoding="utf-8")
    args = (text,) if how == "positional" else (how, text if how == "--content" else str(source))
    assert show(run, add(run, *args))["body"] == text


@pytest.mark.parametrize("args", [("-",), ("--content", "-"), ("-f", "-")])
def test_add_content_from_stdin(run, args):
    memory_id = add(run, *args, input="Read from the pipe.\n")
    assert show(run, memory_id)["body"] == "Read from the pipe."


def test_add_plain_output_and_no_session_note(run):
    result = ok(run("add", "--content", "A plain add"))
    assert result.stdout.startswith("Added entry: m-")
    assert len(result.stdout.strip().splitlines()) == 1
    assert "session" in result.stderr  # the dedup bypass is never silent


@pytest.mark.parametrize(
    "args, message",
    [
        (("--content", "a", "--file", "x.md"), "not both"),
        (("inline", "--content", "b"), "once"),
        (("-f", "does-not-exist.md"), "not found"),
        ((), "no content"),
        (("--content", "   \n  "), "empty"),
        (("--content", "x", "-c", "netwrk"), "categories add"),
        (("--content", "x", "--scope", "globl"), "global"),
        (("--content", "x", "--content-type", "binary"), "content type"),
        (("--content", "x", "--taint", "dirty"), "taint"),
        (("--content", "x", "--signal", "vibes"), "signal"),
        (("--content", "x", "--confidence", "1.5"), "confidence"),
        (("--content", "x", "--importance", "0"), "importance"),
        (("--content", "x", "--owner", "bob"), "private"),
        (("--content", "x", "--private", "--visibility", "public"), "contradict"),
        (("--content", "x", "--thread-id", "m-abc"), "type"),
        (("--content", "x", "--session", "s1"), "type"),
        (("--content", "x", "--occurred-at", "blorp o'clock"), "occurred"),
        (("--content", "x", "--type", "decision", "--thread-id", "m-a"), "thread_closed"),
    ],
)
def test_add_refusals_are_one_line_exit_2_and_write_nothing(run, args, message):
    line = refused(run("add", *args, "--json"))
    assert message in line
    assert total(run) == 0


# ---- limits ----------------------------------------------------------------------------------


def test_body_limit_is_64_kib(run):
    assert add(run, "--content", "a" * 65536, "--title", "max")
    line = refused(run("add", "--content", "b" * 65537, "--title", "over"))
    assert "65537" in line
    multibyte = "é" * 32769  # 65,538 UTF-8 bytes in 32,769 characters
    refused(run("add", "--content", multibyte, "--title", "over"))
    assert total(run) == 1


def test_title_limit_is_300_characters(run):
    add(run, "--content", "body one", "--title", "t" * 300)
    line = refused(run("add", "--content", "body two", "--title", "t" * 301))
    assert "300" in line
    assert total(run) == 1


def test_tag_limits_are_50_tags_of_64_characters(run):
    add(run, "--content", "fifty", "--tags", ",".join(f"t{i}" for i in range(50)))
    add(run, "--content", "long tag", "--tags", "x" * 64)
    refused(run("add", "--content", "many", "--tags", ",".join(f"t{i}" for i in range(51))))
    refused(run("add", "--content", "longer tag", "--tags", "y" * 65))
    assert total(run) == 2


def test_limits_apply_to_add_batch_lines(run):
    lines = [
        {"content": "c" * 65537},
        {"content": "ok", "title": "t" * 301},
        {"content": "ok", "tags": [f"t{i}" for i in range(51)]},
        {"content": "fine"},
    ]
    result = run("add-batch", input="\n".join(json.dumps(x) for x in lines))
    assert result.exit_code == 2
    assert [ln.split("]")[0] for ln in result.stderr.splitlines() if "error" in ln] == [
        "[1",
        "[2",
        "[3",
    ]
    assert total(run) == 1


def test_limits_apply_to_update(run):
    memory_id = add(run, "--content", "short")
    refused(run("update", memory_id, "--append-content", "z" * 65536))
    refused(run("update", memory_id, "--title", "t" * 301))
    refused(run("update", memory_id, "--tags", ",".join(f"t{i}" for i in range(51))))
    assert show(run, memory_id)["version"] == 1


# ---- typed facts -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fact, kind, category, state",
    [
        ("decision", "decision", "decision", None),
        ("insight", "insight", "insight", None),
        ("person", "person", "person", None),
        ("quote", "quote", "quote", None),
        ("thread_opened", "thread", "thread", "open"),
        ("commitment", "commitment", "commitment", "open"),
    ],
)
def test_type_shortcut_routes_kind_category_and_title(run, fact, kind, category, state):
    content = "Chose Typst over mdBook for the docs. It renders math."
    record = show(run, add(run, "--type", fact, "--content", content, "--session", "abc-123"))
    assert (record["kind"], record["category"], record["state"]) == (kind, category, state)
    assert record["title"] == "Chose Typst over mdBook for the docs"
    assert record["resonance_type"] == "ephemeral"
    assert record["session_id"] == "abc-123"


def test_thread_closed_closes_the_thread(run):
    thread = add(run, "--type", "thread_opened", "--content", "Should refunds be idempotent?")
    closing = add(
        run,
        "--type",
        "thread_closed",
        "--thread-id",
        thread[:5],
        "--content",
        "Refunds are idempotent by request id.",
    )
    assert show(run, closing)["category"] == "thread"
    closed = show(run, thread)
    assert closed["state"] == "closed"
    assert closed["version"] == 2
    history = ok(run("history", thread, "--json")).json()["versions"]
    assert closing in history[0]["reason"]
    again = ["--type", "thread_closed", "--thread-id", thread, "--content", "Closing twice"]
    assert "already closed" in refused(run("add", *again))
    not_thread = add(run, "--content", "Just a fact")
    refused(run("add", "--type", "thread_closed", "--thread-id", not_thread, "--content", "x"))
    refused(run("add", "--type", "thread_closed", "--thread-id", "m-zzzzzzzz", "--content", "y"), 1)
    assert total(run) == 3


# ---- write-boundary dedup ----------------------------------------------------


def test_dedup_plain_wording(run):
    first = ok(run("add", "--content", "Use uv for installs.", "--session-id", "s1"))
    memory_id = first.stdout.strip().removeprefix("Added entry: ")
    assert first.stdout == f"Added entry: {memory_id}\n"
    again = ok(run("add", "--content", "USE UV  for installs!", "--session-id", "s1"))
    assert again.stdout == (
        f"Already saved as {memory_id} (identical entry this session — nothing to do).\n"
    )
    assert total(run) == 1


def test_dedup_json_shape(run):
    memory_id = add(run, "--content", "Use uv for installs.", "--session-id", "s1")
    result = ok(run("add", "--content", "use “uv” for installs", "--session-id", "s1", "--json"))
    payload = result.json()
    assert payload["id"] == memory_id
    assert payload["skipped"] is True
    assert payload["duplicate_of"] == memory_id
    assert payload["status"] == "already_persisted"
    assert isinstance(payload["note"], str) and payload["note"]
    assert result.stderr == ""
    assert total(run) == 1


def test_dedup_ignores_an_echoed_versus_derived_title(run):
    content = "Use uv for installs. It is faster here."
    memory_id = add(run, "--content", content, "--session-id", "s1")
    result = ok(
        run(
            "add", "-t", "Use uv for installs", "--content", content, "--session-id", "s1", "--json"
        )
    )
    assert result.json()["duplicate_of"] == memory_id


@pytest.mark.parametrize(
    "second",
    [
        ("--session-id", "s2"),  # another session
        ("--session-id", "s1", "-c", "lesson"),  # another category
        ("--session-id", "s1", "--source-agent", "other"),  # another owner
    ],
)
def test_past_the_exact_gate_the_same_text_refreshes(run, second):
    # The exact gate is one session, owner and category; the near-duplicate policy
    # then sees the same fact restated and refreshes the first memory.
    first = add(run, "--content", "Use uv for installs.", "--session-id", "s1")
    again = ok(run("add", "--content", "Use uv for installs.", *second, "--json")).json()
    assert (again["status"], again["id"], again["similarity"]) == ("refreshed", first, 1.0)
    text = ok(run("add", "--content", "Use uv for installs.", *second))
    assert text.stdout.startswith(f"Refreshed entry: {first}")
    assert total(run) == 1


def test_allow_duplicate_forces_a_new_entry(run):
    first = add(run, "--content", "Use uv for installs.", "--session-id", "s1")
    forced = ("--session-id", "s1", "--allow-duplicate")
    assert add(run, "--content", "Use uv for installs.", *forced) != first
    assert total(run) == 2


def test_no_session_bypass_is_reported(run):
    payload = ok(run("add", "--content", "No session here", "--json"))
    assert payload.json()["dedup"] == "bypassed_no_session"
    assert payload.stderr == ""  # json mode: the field, not the note
    plain = ok(run("add", "--content", "Another entry without a session"))
    assert plain.stdout.startswith("Added entry: ")
    assert "session" in plain.stderr
    assert total(run) == 2
    with_session = ok(run("add", "--content", "x", "--session-id", "s", "--json")).json()
    assert "dedup" not in with_session


def test_add_batch_dedup_wording_and_summary(run):
    lines = [
        {"title": "T1", "content": "C1", "session_id": "s1"},
        {"title": "t1", "content": "c1!", "session_id": "s1"},
        {"type": "decision", "content": "Chose Rust", "session_id": "s1"},
        {"type": "decision", "content": "chose rust.", "session_id": "s1"},
        {"title": "T1", "content": "C1", "session_id": "s1", "allow_duplicate": True},
    ]
    result = ok(run("add-batch", input="\n".join(json.dumps(x) for x in lines) + "\n"))
    out = result.stdout.splitlines()
    first = out[0].split("Added entry: ")[1].split()[0]
    decision = out[2].split("Added entry: ")[1].split()[0]
    assert out[0] == f"[1] Added entry: {first} (T1)"
    assert out[1] == f"[2] Already saved: {first} (t1) — identical this session, no action"
    assert out[3].startswith(f"[4] Already saved: {decision} (")
    assert out[4].startswith("[5] Added entry: ")
    assert out[-1] == "3 added, 0 refreshed, 2 already saved (no action needed), 0 failed"
    body = "\n".join(out[:-1]).lower()
    assert "skipped" not in body and "duplicate" not in body
    assert total(run) == 3


def test_add_batch_no_session_note(run):
    result = ok(run("add-batch", input='{"content": "one"}\n{"content": "two"}\n'))
    assert "session" in result.stderr
    last = result.stdout.splitlines()[-1]
    assert last == "2 added, 0 refreshed, 0 already saved (no action needed), 0 failed"


# ---- errors: unknown and ambiguous ids -------------------------------------------------------

ID_COMMANDS = [
    ("show",),
    ("show", "--content-only"),
    ("history",),
    ("update", "--title", "New"),
    ("edit", "--find", "a", "--replace", "b"),
    ("append", "--content", "more"),
    ("prepend", "--content", "more"),
    ("restore",),
    ("restore", "--list"),
    ("supersede", "--content", "new"),
    ("invalidate", "--reason", "wrong"),
    ("retire",),
    ("delete",),
]


@pytest.mark.parametrize("command", ID_COMMANDS, ids=lambda c: " ".join(c))
def test_unknown_id_says_so_exit_1(run, command):
    add(run, "--content", "Something real")
    before = total(run)
    line = refused(run(command[0], "m-nothere0", *command[1:], "--json"), code=1)
    assert "m-nothere0" in line
    assert "no memory" in line
    assert total(run) == before


@pytest.mark.parametrize("command", ID_COMMANDS, ids=lambda c: " ".join(c))
def test_ambiguous_prefix_lists_candidates_exit_2(run, command):
    first = add(run, "--content", "First memory")
    second = add(run, "--content", "Second memory")
    line = refused(run(command[0], "m-", *command[1:]))
    assert "ambiguous" in line
    assert first in line and second in line
    assert total(run) == 2
    assert show(run, first)["version"] == 1


def test_unique_prefix_with_or_without_m_dash(run):
    memory_id = add(run, "--content", "Prefix me")
    assert show(run, memory_id[:5])["id"] == memory_id
    assert show(run, memory_id[2:6])["id"] == memory_id


def test_merge_with_only_unknown_ids_is_exit_1(run):
    refused(run("merge", "m-nothere0", "m-nothere1", "--into", "x"), code=1)
    assert total(run) == 0


def test_errors_with_json_leave_stdout_empty(run):
    result = run("show", "m-nothere0", "--json")
    assert result.exit_code == 1
    assert result.stdout == ""


# ---- usage errors (click) --------------------------------------------------------------------

USAGE_ERRORS = [
    ("list", "--exclude-tags", "a", "--exclude-tags", "b"),
    ("search", "x", "--exclude-tags", "a", "--exclude-tags", "b"),
    ("invalidate", "m-abc"),
    ("add", "--content", "x", "--kind", "bogus"),
    ("add", "--content", "x", "--importance", "high"),
    ("show",),
    ("list", "--no-such-flag"),
]


@pytest.mark.parametrize("args", USAGE_ERRORS, ids=lambda a: " ".join(a))
def test_usage_errors_exit_2_and_write_nothing(run, args):
    result = run(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert total(run) == 0


@pytest.mark.parametrize("args", USAGE_ERRORS, ids=lambda a: " ".join(a))
def test_usage_errors_are_one_line_on_stderr(run, args):
    refused(run(*args))


# ---- show ------------------------------------------------------------------------------------


def test_show_text_content_only_and_as_of(run):
    memory_id = add(run, "--content", "Deploy on Fridays", "--tags", "ops")
    ok(run("update", memory_id, "--content", "Never deploy on Fridays"))
    text = ok(run("show", memory_id[:6])).stdout
    lines = text.splitlines()
    assert lines[0] == f"<memlane-memory id={memory_id}>"  # fenced: a model reads it as data
    # the title was derived from the body, so it follows the new one
    assert lines[1] == f"{memory_id}  Never deploy on Fridays" and lines[-1] == "</memlane-memory>"
    assert "Never deploy on Fridays" in text
    assert any(ln.split() == ["tags:", "ops"] for ln in text.splitlines())
    assert ok(run("show", memory_id, "--content-only")).stdout == "Never deploy on Fridays\n"
    v1 = ok(run("history", memory_id, "--json")).json()["versions"][0]
    old = show(run, memory_id, "--as-of", v1["valid_from"])
    assert (old["body"], old["version"]) == ("Deploy on Fridays", 1)
    as_of_text = ok(run("show", memory_id, "--as-of", v1["valid_from"], "--content-only"))
    assert as_of_text.stdout == "Deploy on Fridays\n"
    assert "not valid" in refused(run("show", memory_id, "--as-of", "2000-01-01"), code=1)
    refused(run("show", memory_id, "--as-of", "yesterday-ish"))


def test_show_as_of_every_earlier_instant_after_three_updates(run):
    bodies = ["Cache for 1 minute", "Cache for 5 minutes", "Cache for 1 hour", "Never cache"]
    memory_id = add(run, "--content", bodies[0])
    for body in bodies[1:]:
        ok(run("update", memory_id, "--content", body))
    versions = ok(run("history", memory_id, "--json")).json()["versions"]
    assert [v["body"] for v in versions] == bodies
    for version, body in zip(versions, bodies, strict=True):
        for instant in filter(None, (version["valid_from"], _just_before(version["valid_until"]))):
            assert show(run, memory_id, "--as-of", instant)["body"] == body


def _just_before(instant: str | None) -> str | None:
    """One microsecond before an ISO instant (the last moment of a version's validity)."""
    if instant is None:
        return None
    moment = datetime.fromisoformat(instant) - timedelta(microseconds=1)
    return moment.isoformat()


def test_private_memory_of_another_owner_is_not_shown(run, cli_env):
    cli_env["MEMLANE_AGENT"] = "bob"
    memory_id = add(run, "--content", "Bob's secret", "--private")
    cli_env["MEMLANE_AGENT"] = "tester"
    assert "no memory" in refused(run("show", memory_id), code=1)
    assert memory_id not in listed(run, "--include-private")


# ---- list and search with the shared filters -------------------------------------------------


@pytest.fixture
def shelf(run) -> dict[str, str]:
    """A small store exercising every filter; names -> ids."""
    ids = {
        "alpha": add(
            run,
            "--content",
            "Alpha procedure for deploys",
            "--kind",
            "procedure",
            "--tags",
            "tier/core,deploy",
            "--importance",
            "9",
            "--resonance-type",
            "foundational",
            "--wake-phrase",
            "dawn",
            "--session-id",
            "s1",
        ),
        "beta": add(
            run,
            "--content",
            "Beta lesson about deploys",
            "--kind",
            "lesson",
            "-c",
            "lesson",
            "--tags",
            "deploy",
            "--importance",
            "2",
            "--occurred-at",
            "2020-01-01",
        ),
    }
    ids["gamma"] = add(
        run,
        "--content",
        "Gamma convention on naming",
        "--kind",
        "convention",
        "--anchors",
        ids["alpha"],
    )
    ids["private"] = add(run, "--content", "Private deploy note", "--private")
    ids["global"] = add(run, "--content", "Global deploy fact", "--scope", "global")
    ids["elsewhere"] = add(run, "--content", "Other project deploy", "--scope", "project:other")
    return ids


def test_list_default_and_text_output(run, shelf):
    ids = listed(run)
    expected = {shelf[k] for k in ("alpha", "beta", "gamma", "global")}
    assert set(ids) == expected  # private hidden, other project out of scope
    result = ok(run("list"))
    assert len(result.stdout.splitlines()) == 4
    assert all(line.startswith("m-") for line in result.stdout.splitlines())
    assert "[procedure] Alpha procedure for deploys" in result.stdout
    assert "#tier/core #deploy" in result.stdout
    assert "private entries of yours matched but are hidden" in result.stderr
    assert "--include-private" in result.stderr


@pytest.mark.parametrize(
    "args, expected",
    [
        (("-c", "lesson"), {"beta"}),
        (("-c", "lesson,convention"), {"beta", "gamma"}),
        (("--kind", "procedure,convention"), {"alpha", "gamma"}),
        (("--tags", "deploy"), {"alpha", "beta"}),
        (("--exclude-tags", "tier/"), {"beta", "gamma", "global"}),
        (("--exclude-tags", "tier/,deploy,"), {"gamma", "global"}),
        (("--min-resonance", "8"), {"alpha"}),
        (("--max-resonance", "2"), {"beta"}),
        (("--has-wake-phrase",), {"alpha"}),
        (("--missing-wake-phrase",), {"beta", "gamma", "global"}),
        (("--has-resonance-type",), {"alpha"}),
        (("--missing-resonance-type",), {"beta", "gamma", "global"}),
        (("--has-anchors",), {"gamma"}),
        (("--missing-anchors",), {"alpha", "beta", "global"}),
        (("--mine",), {"private"}),
        (("--include-private",), {"alpha", "beta", "gamma", "global", "private"}),
        (("--scope", "all"), {"alpha", "beta", "gamma", "global", "elsewhere"}),
        (("--scope", "global"), {"global"}),
        (("--scope", "project:other"), {"elsewhere"}),
        (("--session-id", "s1"), {"alpha"}),
        (("--until", "2021-01-01"), {"beta"}),
        (("--since", "2021-01-01"), {"alpha", "gamma", "global"}),
    ],
)
def test_list_filters(run, shelf, args, expected):
    assert set(listed(run, *args)) == {shelf[name] for name in expected}


@pytest.mark.parametrize(
    "args, expected",
    [
        ((), {"alpha", "beta", "global"}),
        (("--include-private",), {"alpha", "beta", "global", "private"}),
        (("--scope", "all"), {"alpha", "beta", "global", "elsewhere"}),
        (("-c", "lesson"), {"beta"}),
        (("--exclude-tags", "tier/"), {"beta", "global"}),
        (("--tags", "tier/core"), {"alpha"}),
        (("--min-resonance", "8"), {"alpha"}),
        (("--kind", "lesson"), {"beta"}),
        (("--has-wake-phrase",), {"alpha"}),
    ],
)
def test_search_filters(run, shelf, args, expected):
    assert set(searched(run, "deploy", *args)) == {shelf[name] for name in expected}


def test_list_limit_and_sort(run, shelf):
    assert len(listed(run, "--limit", "2")) == 2
    assert len(listed(run, "--limit", "0")) == 4
    assert listed(run, "--sort", "importance")[0] == shelf["alpha"]
    assert listed(run, "--sort", "oldest")[0] == shelf["alpha"]
    assert listed(run, "--sort", "created")[-1] == shelf["alpha"]
    refused(run("list", "--limit", "-1"))


def test_contradictory_presence_filters_are_refused(run, shelf):
    assert "exclude" in refused(run("list", "--has-wake-phrase", "--missing-wake-phrase"))
    refused(run("list", "--since", "not a date"))
    refused(run("list", "--kind", "bogus"))
    refused(run("list", "--scope", "globl"))


def test_list_includes_superseded_only_on_request(run, shelf):
    ok(run("retire", shelf["gamma"]))
    assert shelf["gamma"] not in listed(run)
    assert shelf["gamma"] in listed(run, "--include-superseded")


def test_search_text_and_json(run, shelf):
    result = ok(run("search", "naming convention"))
    lines = result.stdout.splitlines()
    assert lines[0] == "<memlane-search>" and lines[-1] == "</memlane-search>"
    assert len(lines) == 3 and shelf["gamma"] in lines[1]
    payload = ok(run("search", "naming convention", "--json")).json()
    assert payload["query"] == "naming convention"
    hit = payload["results"][0]
    assert (hit["id"], hit["rank"]) == (shelf["gamma"], 1)
    assert isinstance(hit["score"], float)
    nothing = ok(run("search", "zebra"))
    assert nothing.stdout == ""
    assert "no memories matched" in nothing.stderr


def test_search_falls_back_to_any_word(run, shelf):
    assert set(searched(run, "gamma zebra")) == {shelf["gamma"]}


def test_search_hidden_private_hint_is_stderr_only(run, shelf):
    result = ok(run("search", "private"))
    assert result.stdout == ""
    assert "private entries of yours matched but are hidden" in result.stderr
    assert ok(run("search", "private", "--json")).json()["count"] == 0
    silent = ok(run("search", "private", "--include-private", "--json"))
    assert silent.json()["count"] == 1
    assert "hidden" not in silent.stderr


@pytest.mark.parametrize(
    "query", ['"unbalanced', "deploy AND (", "NOT", "a:b", "-deploy", "deploy*", "NEAR(x y)", "^"]
)
def test_search_survives_fts_syntax(run, shelf, query):
    result = ok(run("search", "--json", "--", query))
    assert isinstance(result.json()["results"], list)


def test_search_prefix_star_matches(run, shelf):
    assert set(searched(run, "conven*")) == {shelf["gamma"]}


def test_search_as_of_reads_old_content(run):
    memory_id = add(run, "--title", "Build tool", "--content", "The build uses make")
    ok(run("update", memory_id, "--content", "The build uses just"))
    v1 = ok(run("history", memory_id, "--json")).json()["versions"][0]
    assert searched(run, "make") == []
    assert searched(run, "make", "--as-of", v1["valid_from"]) == [memory_id]


# ---- recent ----------------------------------------------------------------------------------


def test_recent_shows_ephemeral_facts_by_default(run):
    fact = add(run, "--type", "decision", "--content", "Chose SQLite for the store")
    plain_memory = add(run, "--content", "A plain fact")
    payload = ok(run("recent", "--json")).json()
    assert [r["id"] for r in payload["results"]] == [fact]
    every = ok(run("recent", "--all-types", "--json")).json()
    assert {r["id"] for r in every["results"]} == {fact, plain_memory}
    assert fact in ok(run("recent")).stdout
    by_type = ok(run("recent", "--resonance-type", "ephemeral", "--json")).json()
    assert [r["id"] for r in by_type["results"]] == [fact]
    refused(run("recent", "--days", "-1"))


def test_recent_empty_note(run):
    result = ok(run("recent"))
    assert result.stdout == ""
    assert "ephemeral" in result.stderr


# ---- update and its modes --------------------------------------------------------------------


def test_update_fields_and_versions(run):
    memory_id = add(run, "--content", "Deploy with make", "--tags", "a,b", "--wake-order", "4")
    result = ok(run("update", memory_id, "--title", "Deploys", "--reason", "clearer"))
    assert result.stdout == f"Updated entry: {memory_id} (version 2)\n"
    payload = ok(
        run(
            "update",
            memory_id,
            "--add-tag",
            "c",
            "--remove-tag",
            "a",
            "--importance",
            "8",
            "--kind",
            "procedure",
            "-c",
            "procedure",
            "--resonance-type",
            "operational",
            "--content-type",
            "code",
            "--add-wake-phrase",
            "sunrise",
            "-a",
            "ci",
            "-d",
            "ops",
            "--source-ref",
            "commit:abc",
            "--session-id",
            "s9",
            "--json",
        )
    ).json()
    assert (payload["id"], payload["status"], payload["version"]) == (memory_id, "updated", 3)
    record = show(run, memory_id)
    assert record["title"] == "Deploys"
    assert record["tags"] == ["b", "c"]
    assert (record["importance"], record["kind"], record["category"]) == (
        8,
        "procedure",
        "procedure",
    )
    assert (record["resonance_type"], record["content_type"]) == ("operational", "code")
    assert record["wake_phrases"] == ["sunrise"]
    assert (record["applicability"], record["domain"]) == (["ci"], "ops")
    assert (record["source_ref"], record["session_id"]) == ("commit:abc", "s9")
    assert record["wake_order"] == 4
    ok(run("update", memory_id, "--tags", "x,y", "--wake-phrases", "p,q"))
    record = show(run, memory_id)
    assert (record["tags"], record["wake_phrases"]) == (["x", "y"], ["p", "q"])
    ok(run("update", memory_id, "--remove-wake-phrase", "p"))
    assert show(run, memory_id)["wake_phrases"] == ["q"]
    history = ok(run("history", memory_id, "--json")).json()["versions"]
    assert [v["number"] for v in history] == [1, 2, 3, 4, 5]
    assert history[0]["reason"] == "clearer"


def test_update_wake_order_dash_clears(run):
    memory_id = add(run, "--content", "Wake me", "--wake-order", "3")
    ok(run("update", memory_id, "--wake-order", "7"))
    assert show(run, memory_id)["wake_order"] == 7
    ok(run("update", memory_id, "--wake-order", "-"))
    assert show(run, memory_id)["wake_order"] is None
    refused(run("update", memory_id, "--wake-order", "soon"))
    assert show(run, memory_id)["version"] == 3


def test_update_content_modes(run, tmp_path):
    memory_id = add(run, "--content", "one two one three one")
    ok(run("update", memory_id, "--find", "one", "--replace", "1", "--nth", "2"))
    assert show(run, memory_id)["body"] == "one two 1 three one"
    ok(run("update", memory_id, "--find", "one", "--replace", "uno", "--replace-all"))
    assert show(run, memory_id)["body"] == "uno two 1 three uno"
    ok(run("update", memory_id, "--append-content", " (end)"))
    ok(run("update", memory_id, "--prepend-content", "(start) "))
    assert show(run, memory_id)["body"] == "(start) uno two 1 three uno (end)"
    source = tmp_path / "new.txt"
    source.write_text("From a file\n", encoding="utf-8")
    ok(run("update", memory_id, "-f", str(source)))
    assert show(run, memory_id)["body"] == "From a file"
    ok(run("update", memory_id, "--content", "-", input="From stdin\n"))
    assert show(run, memory_id)["body"] == "From stdin"
    appended = tmp_path / "more.txt"
    appended.write_text(" and more", encoding="utf-8")
    ok(run("update", memory_id, "--append-file", str(appended)))
    assert show(run, memory_id)["body"] == "From stdin and more"


def test_update_find_with_several_matches_needs_nth_or_replace_all(run):
    memory_id = add(run, "--content", "one two one")
    line = refused(run("update", memory_id, "--find", "one", "--replace", "1"))
    assert "2 matches" in line
    refused(run("update", memory_id, "--find", "one", "--replace", "1", "--nth", "3"))
    refused(run("update", memory_id, "--find", "zzz", "--replace", "1"))
    refused(run("update", memory_id, "--find", "one"))
    record = show(run, memory_id)
    assert (record["body"], record["version"]) == ("one two one", 1)


def test_update_refusals_change_nothing(run):
    memory_id = add(run, "--content", "Stay as I am", "--private")
    refused(run("update", memory_id, "--content", "a", "--append-content", "b"))
    refused(run("update", memory_id, "--visibility", "public"))  # needs --force
    refused(run("update", memory_id, "--owner", "mallory", "--private", "--force"))
    refused(run("update", memory_id, "--kind", "bogus"))
    refused(run("update", memory_id, "-c", "nosuchcategory"))
    refused(run("update", memory_id))  # nothing to change
    assert show(run, memory_id)["version"] == 1
    ok(run("update", memory_id, "--visibility", "public", "--force"))
    assert show(run, memory_id)["visibility"] == "public"


def test_edit_append_prepend_shortcuts(run, tmp_path):
    memory_id = add(run, "--content", "Run make test")
    result = ok(run("edit", memory_id, "--find", "make", "--replace", "just"))
    assert result.stdout == f"Updated entry: {memory_id} (version 2)\n"
    ok(run("edit", memory_id, "--old", "test", "--new", "check", "--json"))
    ok(run("append", memory_id, "--content", " daily"))
    ok(run("append", memory_id, input=" now"))  # stdin when no content is given
    source = tmp_path / "pre.txt"
    source.write_text("Always: ", encoding="utf-8")
    ok(run("prepend", memory_id, "-f", str(source)))
    payload = ok(run("prepend", memory_id, "--content", "Note. ", "--json")).json()
    assert payload["version"] == 7
    assert show(run, memory_id)["body"] == "Note. Always: Run just check daily now"
    reasons = [v["reason"] for v in ok(run("history", memory_id, "--json")).json()["versions"]]
    assert reasons == [
        "edited",
        "edited",
        "appended",
        "appended",
        "prepended",
        "prepended",
        "current",
    ]
    memory2 = add(run, "--content", "x x")
    refused(run("edit", memory2, "--find", "x", "--replace", "y"))
    ok(run("edit", memory2, "--find", "x", "--replace", "y", "--replace-all"))
    assert show(run, memory2)["body"] == "y y"


# ---- history and restore ---------------------------------------------------------------------


def test_history_text_and_json(run):
    memory_id = add(run, "--content", "Version one")
    ok(run("update", memory_id, "--content", "Version two", "--reason", "rewrote"))
    text = ok(run("history", memory_id)).stdout.splitlines()
    assert len(text) == 2
    assert text[0].startswith("v1 ") and "rewrote" in text[0]
    assert text[1].startswith("v2 ") and " .. now" in text[1]
    payload = ok(run("history", memory_id[:6], "--json")).json()
    assert payload["id"] == memory_id
    assert [(v["number"], v["body"], v["current"]) for v in payload["versions"]] == [
        (1, "Version one", False),
        (2, "Version two", True),
    ]
    assert payload["versions"][0]["valid_until"] == payload["versions"][1]["valid_from"]


def test_restore_list_previous_and_version(run):
    memory_id = add(run, "--content", "First text")
    ok(run("update", memory_id, "--content", "Second text"))
    ok(run("update", memory_id, "--content", "Third text"))
    listing = ok(run("restore", memory_id, "--list")).stdout.splitlines()
    assert [ln.split()[0] for ln in listing] == ["v1", "v2", "v3"]
    assert "current" in listing[-1]
    listed_json = ok(run("restore", memory_id, "--list", "--json")).json()
    assert [v["number"] for v in listed_json["versions"]] == [1, 2, 3]
    result = ok(run("restore", memory_id))
    assert result.stdout == f"Restored entry: {memory_id} (version 4)\n"
    assert show(run, memory_id)["body"] == "Second text"
    payload = ok(run("restore", memory_id, "--version", "1", "--json")).json()
    assert (payload["status"], payload["version"]) == ("updated", 5)
    assert show(run, memory_id)["body"] == "First text"
    assert "no version 9" in refused(run("restore", memory_id, "--version", "9"), code=1)
    refused(run("restore", memory_id, "--version", "5"))  # already current
    assert show(run, memory_id)["version"] == 5


def test_restore_without_history_is_refused(run):
    memory_id = add(run, "--content", "Only one version")
    refused(run("restore", memory_id), code=1)
    assert show(run, memory_id)["version"] == 1


# ---- supersede, invalidate, retire, merge, delete --------------------------------------------


def test_supersede(run):
    old = add(run, "--content", "Deploy on Fridays", "--tags", "ops", "--importance", "7")
    result = ok(run("supersede", old, "--content", "Deploy on Mondays", "--reason", "incident"))
    assert result.stdout.startswith(f"Superseded {old} by: m-")
    new = result.stdout.split("by: ")[1].split()[0]
    successor = show(run, new)
    assert (successor["body"], successor["tags"], successor["importance"]) == (
        "Deploy on Mondays",
        ["ops"],
        7,
    )
    previous = show(run, old)
    assert previous["superseded_by"] == new
    assert previous["supersede_reason"] == "incident"
    assert previous["live"] is False
    assert listed(run) == [new]
    assert set(listed(run, "--include-superseded")) == {old, new}
    line = refused(run("supersede", old, "--content", "again"))
    assert "superseded" in line
    refused(run("supersede", new))  # no content
    payload = ok(run("supersede", new, "--content", "-", "--json", input="Deploy daily")).json()
    assert payload["status"] == "added" and payload["id"] != new
    assert total(run) == 3


def test_invalidate_needs_a_reason(run):
    memory_id = add(run, "--content", "The API is v1")
    refused(run("invalidate", memory_id, "--reason", "   "))
    assert show(run, memory_id)["live"] is True
    result = ok(run("invalidate", memory_id, "--reason", "v2 shipped"))
    assert result.stdout == f"Invalidated: {memory_id} (invalidated (v2 shipped))\n"
    record = show(run, memory_id)
    assert record["valid_until"] is not None and record["live"] is False
    assert record["supersede_reason"] == "v2 shipped"
    assert listed(run) == []
    assert "tombstones" in refused(run("invalidate", memory_id, "--reason", "again"))
    refused(run("update", memory_id, "--title", "revive"))


def test_retire(run):
    memory_id = add(run, "--content", "Old habit")
    payload = ok(run("retire", memory_id, "--reason", "no longer used", "--json")).json()
    assert payload["id"] == memory_id
    assert payload["superseded_at"] is not None and payload["superseded_by"] is None
    assert payload["live"] is False
    assert listed(run) == []
    assert memory_id in listed(run, "--include-superseded")
    refused(run("retire", memory_id))
    other = add(run, "--content", "Another habit")
    assert ok(run("retire", other)).stdout == f"Retired: {other} (retired (retired))\n"


def test_merge(run):
    a = add(run, "--content", "Use uv", "--tags", "tooling", "--importance", "3")
    b = add(run, "--content", "uv is fast", "--tags", "speed", "--importance", "8")
    result = ok(run("merge", a, b[:6], "--into", "Use uv: it is fast", "-t", "uv"))
    assert result.stdout.startswith("Merged into: m-")
    merged = result.stdout.split(": ")[1].split()[0]
    record = show(run, merged)
    assert (record["title"], record["body"]) == ("uv", "Use uv: it is fast")
    assert record["importance"] == 8
    assert set(record["tags"]) == {"tooling", "speed"}
    assert show(run, a)["superseded_by"] == merged
    assert show(run, b)["superseded_by"] == merged
    assert listed(run) == [merged]
    c = add(run, "--content", "third")
    line = refused(run("merge", c, "m-nothere0", "--into", "merged again", "--json"), code=1)
    assert "m-nothere0" in line and "nothing was merged" in line
    assert show(run, c)["superseded_by"] is None


def test_delete(run):
    keep = add(run, "--content", "Keep me")
    gone = add(run, "--content", "Delete me")
    ok(run("update", gone, "--content", "Delete me now"))
    assert ok(run("delete", gone)).stdout == f"Deleted entry: {gone}\n"
    refused(run("show", gone), code=1)
    assert listed(run) == [keep]
    assert searched(run, "delete") == []
    stats = ok(run("stats", "--json")).json()
    assert (stats["total"], stats["versions"]) == (1, 0)
    payload = ok(run("delete", keep, "--json")).json()
    assert payload == {"id": keep, "status": "deleted", "scrubbed": [], "removed": [],
                       "unchanged": [], "packs": [], "warnings": []}  # fmt: skip


# ---- registries ------------------------------------------------------------------------------


def test_categories_list_add_remove(run):
    names = [e["name"] for e in ok(run("categories", "list", "--json")).json()]
    assert "fact" in names and "decision" in names
    result = ok(run("categories", "add", "recipes", "How to cook things"))
    assert result.stdout == "Added category: recipes\n"
    entry = ok(run("categories", "list", "--json")).json()
    assert {"name": "recipes", "description": "How to cook things"}.items() <= next(
        e for e in entry if e["name"] == "recipes"
    ).items()
    assert "recipes" in ok(run("categories", "list")).stdout
    memory_id = add(run, "--content", "Bake at 200C", "-c", "recipes")
    line = refused(run("categories", "remove", "recipes"))
    assert "used by 1" in line
    ok(run("delete", memory_id))
    payload = ok(run("categories", "remove", "recipes", "--json")).json()
    assert payload == {"name": "recipes", "status": "removed"}
    refused(run("add", "--content", "x", "-c", "recipes"))
    refused(run("categories", "remove", "recipes"), code=1)
    refused(run("categories", "add", "bad,name"))


def test_categories_remove_refuses_while_superseded_memory_uses_it(run):
    ok(run("categories", "add", "recipes"))
    memory_id = add(run, "--content", "Bake at 200C", "-c", "recipes")
    ok(run("retire", memory_id))
    refused(run("categories", "remove", "recipes"))
    assert "recipes" in [e["name"] for e in ok(run("categories", "list", "--json")).json()]


def test_agents_list_add_show(run):
    ok(run("agents", "add", "soren", "-d", "Writes docs", "-D", "docs"))
    agents = ok(run("agents", "list", "--json")).json()
    assert [(a["name"], a["description"], a["domain"]) for a in agents] == [
        ("soren", "Writes docs", "docs")
    ]
    assert "soren" in ok(run("agents", "list")).stdout
    add(run, "--content", "From soren", "--source-agent", "soren")
    add(run, "--content", "Also from soren", "--source-agent", "soren")
    shown = ok(run("agents", "show", "soren", "--json")).json()
    assert (shown["name"], shown["memories"]) == ("soren", 2)
    assert "memories written: 2" in ok(run("agents", "show", "soren")).stdout
    assert "nobody" in refused(run("agents", "show", "nobody"), code=1)


def test_projects_list_add_alias(run, cli_env):
    result = ok(
        run(
            "projects",
            "add",
            "--id",
            "billing",
            "--name",
            "Billing",
            "--path",
            "/src/billing",
            "--repo-url",
            "acme/billing",
            "--description",
            "Invoices",
        )
    )
    assert result.stdout == "Added project: billing\n"
    projects = ok(run("projects", "list", "--json")).json()
    assert len(projects) == 1
    # Both the project id (what scopes use) and its display name are reported.
    assert "billing" in projects[0].values()
    assert "Billing" in projects[0].values()
    assert projects[0]["repo_url"] == "acme/billing"
    payload = ok(run("projects", "alias", "proj", "billing", "--json")).json()
    assert payload["aliases"] == {"proj": "billing"}
    assert json.loads(Path(cli_env["MEMLANE_PROJECT_ALIASES"]).read_text()) == {"proj": "billing"}
    # The working directory is named `proj`: it now files memories under billing.
    assert show(run, add(run, "--content", "Aliased"))["scope"] == "project:billing"
    assert "proj -> billing" in ok(run("projects", "aliases")).stdout
    assert ok(run("projects", "aliases", "--json")).json()["aliases"] == {"proj": "billing"}


def test_applicability_list_add(run):
    ok(run("applicability", "add", "--id", "python", "--description", "Python code"))
    entries = ok(run("applicability", "list", "--json")).json()
    assert [(e["name"], e["description"]) for e in entries] == [("python", "Python code")]
    assert "python" in ok(run("applicability", "list")).stdout
    refused(run("applicability", "add", "--id", " "))


def test_tags_list(run):
    add(run, "--content", "a", "--tags", "ops,deploy")
    add(run, "--content", "b", "--tags", "ops", "-c", "lesson")
    assert ok(run("tags", "list", "--json")).json() == [
        {"tag": "ops", "count": 2},
        {"tag": "deploy", "count": 1},
    ]
    assert ok(run("tags", "list", "-c", "lesson", "--json")).json() == [{"tag": "ops", "count": 1}]
    lines = ok(run("tags", "list")).stdout.splitlines()
    assert [ln.split() for ln in lines] == [["2", "ops"], ["1", "deploy"]]


@pytest.mark.parametrize(
    "kind, member",
    [
        ("kinds", "procedure"),
        ("fact-types", "thread_closed"),
        ("resonance-types", "foundational"),
        ("relationship-types", "supersedes"),
        ("content-types", "code"),
        ("taints", "untrusted_web"),
        ("signals", "reviewer"),
    ],
)
def test_types_list(run, kind, member):
    assert member in ok(run("types", kind, "list", "--json")).json()
    assert member in ok(run("types", kind)).stdout.splitlines()


def test_types_unknown_list_is_usage_error(run):
    result = run("types", "colours", "list")
    assert result.exit_code == 2
    assert result.stdout == ""


# ---- stats, --json everywhere, quickstart -----------------------------------------------------


def test_stats(run):
    a = add(run, "--content", "one", "--kind", "procedure")
    add(run, "--content", "two")
    ok(run("update", a, "--content", "one!"))
    ok(run("retire", a))
    stats = ok(run("stats", "--json")).json()
    assert (stats["total"], stats["live"], stats["versions"]) == (2, 1, 1)
    assert (stats["superseded"], stats["invalidated"], stats["retired"]) == (0, 0, 1)
    text = ok(run("stats")).stdout
    assert any(ln.split() == ["total:", "2"] for ln in text.splitlines())
    assert any(ln.split() == ["retired:", "1"] for ln in text.splitlines())


def test_a_retired_memory_is_marked_retired_not_previously(run):
    gone = add(run, "--content", "The nightly export job writes CSV files.")
    ok(run("retire", gone, "--reason", "the export job was dropped"))
    line = ok(run("search", "nightly export", "--include-superseded")).stdout
    assert "[RETIRED]" in line and "[PREVIOUSLY]" not in line, line
    shown = ok(run("show", gone)).stdout
    assert "[RETIRED]" in shown and "[PREVIOUSLY]" not in shown
    old = add(run, "--content", "The weekly export job writes JSON files.")
    ok(run("invalidate", old, "--reason", "it writes Parquet now"))
    line = ok(run("search", "weekly export", "--include-superseded")).stdout
    assert "[PREVIOUSLY]" in line and "[RETIRED]" not in line, line
    stats = ok(run("stats", "--json")).json()
    assert (stats["invalidated"], stats["retired"]) == (1, 1)


def _json_commands(ids: dict[str, str]) -> list[tuple[str, ...]]:
    a, b, c, d = ids["a"], ids["b"], ids["c"], ids["d"]
    return [
        ("add", "--content", "json add"),
        ("add", "--type", "insight", "--content", "json insight"),
        ("add-batch",),
        ("show", a),
        ("list",),
        ("search", "alpha"),
        ("recent", "--all-types"),
        ("history", a),
        ("stats",),
        ("update", a, "--title", "Alpha!"),
        ("edit", a, "--find", "alpha", "--replace", "ALPHA"),
        ("append", a, "--content", " tail"),
        ("prepend", a, "--content", "head "),
        ("restore", a, "--list"),
        ("restore", a),
        ("supersede", b, "--content", "beta 2"),
        ("invalidate", c, "--reason", "stale"),
        ("retire", d),
        ("merge", ids["e"], ids["f"], "--into", "merged"),
        ("delete", ids["g"]),
        ("categories", "list"),
        ("categories", "add", "jsoncat"),
        ("categories", "remove", "jsoncat"),
        ("agents", "list"),
        ("agents", "add", "jsonagent"),
        ("agents", "show", "jsonagent"),
        ("projects", "list"),
        ("projects", "add", "--id", "jsonproj"),
        ("projects", "alias", "olddir", "jsonproj"),
        ("projects", "aliases"),
        ("applicability", "list"),
        ("applicability", "add", "--id", "jsonapp"),
        ("tags", "list"),
        ("types", "kinds", "list"),
        ("journal",),
        ("journal", a),
        ("quickstart",),
    ]


def test_every_command_prints_parseable_json(run):
    ids = {k: add(run, "--content", f"{k} alpha memory", "--tags", "t") for k in "abcdefg"}
    failures = []
    for args in _json_commands(ids):
        stdin = '{"content": "batch line"}\n' if args[0] == "add-batch" else None
        result = run(*args, "--json", input=stdin)
        try:
            assert result.exit_code == 0, result.stderr
            json.loads(result.stdout)
        except (AssertionError, ValueError) as exc:
            failures.append(f"{' '.join(args)}: {exc}: {result.stdout[:200]!r}")
    assert failures == []


def test_show_content_only_with_json_still_prints_only_json(run):
    """--json promises JSON on stdout; with --content-only it may refuse, not print raw text."""
    memory_id = add(run, "--content", "plain body text")
    result = run("show", memory_id, "--content-only", "--json")
    if result.exit_code == 2:
        refused(result)
        return
    assert result.exit_code == 0
    json.loads(result.stdout)


def test_quickstart_shows_the_everyday_commands(run):
    result = ok(run("quickstart"))
    out = result.stdout
    assert "Stored 12 memories" in out
    for command in ("$ memlane list", "$ memlane search", "$ memlane recall",
                    "$ memlane entities list", "$ memlane show", "$ memlane history"):  # fmt: skip
        assert command in out
    assert "<memlane-recall>" in out and "refund" in out.split("<memlane-recall>")[1]
    assert "make migrate" in out  # the sample memory shows up in list/search/show
    assert "v1 " in out and "v3 " in out and ".. now" in out  # history of the updated memory
    assert "Use `make migrate-test`" in out
    assert total(run) == 0  # the user's own store is untouched
    assert "Store kept at" not in out


def test_quickstart_json(run):
    payload = ok(run("quickstart", "--json")).json()
    assert payload["added"] == 12
    assert len(payload["list"]) == 5
    assert any("make migrate" in hit["body"] for hit in payload["search"])
    assert len(payload["history"]) == 3
    assert any("refund" in r["body"].lower() for r in payload["recall"])
    assert total(run) == 0


def test_journal_records_operations_without_content(run):
    memory_id = add(run, "--content", "Secret-ish body text")
    ok(run("update", memory_id, "--title", "Renamed"))
    entries = ok(run("journal", memory_id, "--json")).json()
    assert [e["operation"] for e in entries] == ["update", "add"]
    assert "Secret-ish" not in json.dumps(entries)
    assert memory_id in ok(run("journal")).stdout


def test_quickstart_keep_prints_the_store(run):
    result = ok(run("quickstart", "--keep"))
    kept = Path(result.stdout.strip().splitlines()[-1].removeprefix("Store kept at "))
    try:
        assert kept.exists()
    finally:
        import shutil

        shutil.rmtree(kept.parent, ignore_errors=True)


def test_help_lists_sections_and_version(run):
    out = ok(run("--help")).stdout
    assert "Memory ops" in out and "Recall" in out and "Admin" in out
    assert "add-batch" in out
    assert ok(run("--version")).stdout.strip().endswith("0.1.0")


# ---- runtime failures: exit 1, one line --------------------------------------------------------


def test_a_file_that_is_not_a_store_is_exit_1(run, db_path):
    db_path.write_bytes(b"this is not a sqlite database, just some text\n" * 100)
    line = refused(run("list", "--json"), code=1)
    assert str(db_path) in line
    assert db_path.read_bytes().startswith(b"this is not a sqlite database")


def test_a_store_from_a_newer_memlane_is_exit_1(run, db_path):
    ok(run("add", "--content", "made by a write"))  # creates the store (a read would not)
    import sqlite3

    with sqlite3.connect(db_path) as conn:
        conn.execute(
            "INSERT INTO schema_migrations(version, name, applied_at) VALUES (999, 'future', 'x')"
        )
    line = refused(run("add", "--content", "x"), code=1)
    assert "newer" in line
