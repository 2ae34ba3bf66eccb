"""Inputs are read with limits while reading: a device, a FIFO, an endless or huge
stdin, an overlong JSONL line and a symlink out of an imported folder are refused with
one line on stderr and exit 2, and the good part of a batch still lands."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memlane import Memory
from memlane.errors import Invalid
from memlane.scope import Context
from memlane.write import inputs

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX special files")


def _count(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM memory").fetchone()[0])


def _one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# ---- the pure readers -------------------------------------------------------------------------


def test_read_capped_stops_one_chunk_past_the_cap_on_an_endless_stream():
    with open("/dev/zero", "rb") as endless, pytest.raises(Invalid, match="larger than"):
        inputs.read_capped(endless, 1000, "content")


def test_read_capped_returns_everything_up_to_the_cap():
    assert inputs.read_capped(io.BytesIO(b"x" * 1000), 1000, "content") == b"x" * 1000


def test_open_file_refuses_a_fifo_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "notes.md"
    os.mkfifo(fifo)
    with pytest.raises(Invalid, match="not a regular file"):
        inputs.open_file(fifo, "markdown")


def test_open_file_refuses_a_device_and_a_directory(tmp_path):
    with pytest.raises(Invalid, match="not a regular file"):
        inputs.open_file("/dev/zero", "content")
    with pytest.raises(Invalid, match="not a regular file"):
        inputs.open_file(tmp_path, "content")


def test_lines_cut_an_overlong_line_and_keep_the_next():
    stream = io.BytesIO(b'{"a": 1}\n' + b"y" * 50 + b"\n" + b'{"b": 2}')
    got = list(inputs.lines(stream, cap=20))
    assert got[0] == b'{"a": 1}\n' and got[2] == b'{"b": 2}'
    assert isinstance(got[1], inputs.Overlong)
    with pytest.raises(Invalid, match="longer than"):
        inputs.json_object(got[1])


def test_inside_refuses_a_link_out_of_the_folder(tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("root:x:0:0", encoding="utf-8")
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "link.md").symlink_to(outside)
    (folder / "real.md").write_text("fine", encoding="utf-8")
    inputs.inside(folder, folder / "real.md")
    with pytest.raises(Invalid, match="links outside"):
        inputs.inside(folder, folder / "link.md")


# ---- the commands -----------------------------------------------------------------------------


def test_add_from_dev_zero_is_refused_at_once(run, db_path):
    result = run("add", "-f", "/dev/zero")
    assert result.exit_code == 2
    assert "not a regular file" in _one_error_line(result.stderr)
    assert _count(db_path) == 0


def test_an_endless_stdin_is_refused_after_the_cap(cli_env, tmp_path, db_path):
    with open("/dev/zero", "rb") as endless:
        done = subprocess.run(
            [sys.executable, "-m", "memlane", "add", "-"],
            stdin=endless,
            capture_output=True,
            text=True,
            env={**os.environ, **cli_env},
            cwd=tmp_path,
            timeout=120,
        )
    assert done.returncode == 2
    assert "larger than the limit of 65536 bytes" in _one_error_line(done.stderr)
    assert _count(db_path) == 0


def test_stdin_just_past_the_body_limit_is_refused_and_at_it_accepted(run, db_path):
    refused = run("add", "-", input="word " * 13108)  # 65540 bytes
    assert refused.exit_code == 2 and "limit of 65536" in refused.stderr
    assert run("add", "-", input="word " * 13107).exit_code == 0  # 65535 bytes
    assert _count(db_path) == 1


def test_a_fifo_as_a_content_file_is_refused_without_hanging(run, tmp_path):
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    result = run("add", "-f", str(fifo))
    assert result.exit_code == 2 and "not a regular file" in result.stderr


def test_source_ref_to_a_device_is_kept_unpinned_and_the_add_lands(run, db_path):
    result = run("add", "Config lives in the device file.", "--source-ref", "file:/dev/zero",
                 "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    with sqlite3.connect(db_path) as conn:
        (ref,) = conn.execute("SELECT source_ref FROM memory").fetchone()
    assert ref == "file:/dev/zero"


def test_import_markdown_skips_a_symlink_out_and_a_fifo_and_keeps_the_rest(run, tmp_path, db_path):
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:root:/root:/bin/bash", encoding="utf-8")
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "passwd.md").symlink_to(secret)
    os.mkfifo(folder / "pipe.md")
    (folder / "real.md").write_text("---\ntitle: Real\n---\nThe deploy runs at 09:00.\n")
    result = run("import", "markdown", str(folder), "--json")
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert [Path(a["file"]).name for a in report["imported"]] == ["real.md"]
    errors = {Path(f["file"]).name: f["error"] for f in report["failed"]}
    assert "links outside" in errors["passwd.md"]
    assert "not a regular file" in errors["pipe.md"]
    with sqlite3.connect(db_path) as conn:
        bodies = [b for (b,) in conn.execute("SELECT body FROM memory")]
    assert not any("root:x" in b for b in bodies)


def test_import_jsonl_reports_an_overlong_line_and_lands_the_good_ones(run, tmp_path, db_path):
    with Memory.open(tmp_path / "source.db", agent="tester", context=Context()) as source:
        source.add("The deploy runs from the release branch.")
        source.add("Staging uses the db-7 host.")
        records = [ln for ln in source.transfer.export_jsonl() if '"kind":"memory"' in ln]
    file = tmp_path / "dump.jsonl"
    lines = [records[0].rstrip("\n"), "x" * (inputs.LINE_CAP + 10), records[1].rstrip("\n")]
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run("import", str(file))
    assert result.exit_code == 2
    assert f"{file}:2: line is longer than the limit" in result.stderr
    assert _count(db_path) == 2


def test_import_jsonl_of_a_device_is_refused(run, db_path):
    result = run("import", "/dev/zero")
    assert result.exit_code == 2 and "not a regular file" in _one_error_line(result.stderr)
    assert _count(db_path) == 0


def test_add_batch_reports_an_overlong_line_and_lands_the_good_ones(run, tmp_path, db_path):
    file = tmp_path / "batch.jsonl"
    file.write_text(
        json.dumps({"content": "First good line."}) + "\n" + "z" * (inputs.LINE_CAP + 1) + "\n"
        + json.dumps({"content": "Second good line."}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    result = run("add-batch", "-f", str(file))
    assert result.exit_code == 2
    assert "[2] error: line is longer than the limit" in result.stderr
    assert _count(db_path) == 2


def test_a_hook_payload_past_its_cap_is_read_no_further(cli_env, tmp_path):
    with open("/dev/zero", "rb") as endless:
        done = subprocess.run(
            [sys.executable, "-m", "memlane", "hook", "user-prompt"],
            stdin=endless,
            capture_output=True,
            env={**os.environ, **cli_env},
            cwd=tmp_path,
            timeout=120,
        )
    assert done.returncode == 0  # a hook never blocks its host
    assert done.stdout.strip() in (b"{}", b"")


@pytest.mark.parametrize("args", [("import", "\x00"), ("add", "-f", "a\x00b"), ("show", "m-\x00")])
def test_an_argument_holding_nul_is_one_line_exit_2(run, args, db_path):
    result = run(*args)
    assert result.exit_code == 2
    assert "NUL" in _one_error_line(result.stderr)
    assert _count(db_path) == 0


def test_a_merge_naming_a_missing_id_merges_nothing(run, db_path):
    victim = run("add", "The victim memory about staging hosts.", "--json").json()["id"]
    result = run("merge", "m-typo0000", victim, "--into", "Merged text.")
    assert result.exit_code == 1
    assert "nothing was merged" in _one_error_line(result.stderr)
    shown = run("show", victim, "--json").json()
    assert shown["superseded_by"] is None and _count(db_path) == 1


def test_import_markdown_reports_an_impossible_date_and_keeps_the_good_files(run, tmp_path):
    folder = tmp_path / "md"
    folder.mkdir()
    (folder / "a.md").write_text("---\ntitle: Fine\n---\nThe good file.\n", encoding="utf-8")
    (folder / "b.md").write_text("---\noccurred_at: 2020-02-30\n---\nBad date.\n", encoding="utf-8")
    (folder / "c.md").write_text("---\ntitle: [open\n---\nBad YAML.\n", encoding="utf-8")
    result = run("import", "markdown", str(folder), "--json")
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    assert [Path(a["file"]).name for a in report["imported"]] == ["a.md"]
    errors = {Path(f["file"]).name: f["error"] for f in report["failed"]}
    assert "impossible value" in errors["b.md"] and "\n" not in errors["c.md"]


def test_history_and_restore_lists_write_out_stored_terminal_controls(run):
    memory_id = run(
        "add", "Body.", "--title", "T\x1b[2J\x1b]52;c;aGk=\x07X\u202eY", "--json"
    ).json()["id"]
    for args in (("history", memory_id), ("restore", memory_id, "--list")):
        out = run(*args).stdout
        assert not any(c in out for c in "\x1b\x07\u202e"), (args, repr(out))
        assert "\\x1b[2J" in out and "\\u202e" in out


READERS = [("tags", "list"), ("entities", "list"), ("sessions", "list"), ("reminders", "list"),
           ("agents", "list"), ("categories", "list"), ("projects", "list"), ("browse",),
           ("review",), ("health",), ("pack",), ("consolidate", "--dry-run"),
           ("organize", "--dry-run"), ("links", "list", "m-abc"), ("wake-log", "report")]  # fmt: skip


@pytest.mark.parametrize("args", READERS, ids=" ".join)
def test_a_reading_subcommand_creates_no_store(run, tmp_path, args):
    missing = tmp_path / "fresh" / "m.db"
    missing.parent.mkdir()
    result = run("--db", str(missing), *args)
    assert result.exit_code in (0, 1, 2) and "Traceback" not in result.stderr
    assert not list(missing.parent.iterdir()), args
