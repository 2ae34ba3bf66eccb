"""Code-aware sources: a file: source's hash is kept at write time; reads
flag [STALE SOURCE] and halve confidence when the file changed or vanished."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlane.write.sources import SourceState, file_hash, pinned, source_state


def test_pinning_hashes_the_file_a_ref_names_wherever_it_is_read_from(tmp_path):
    (tmp_path / "app.py").write_text("RETRIES = 3\n")
    recorded = pinned("file:app.py#L10", tmp_path)
    assert recorded and recorded.startswith("sha256:")
    assert recorded.endswith(f" {tmp_path / 'app.py'}")  # the fragment is not the file
    assert pinned("commit:3f9a2c1", tmp_path) is None
    assert pinned("file:missing.py", tmp_path) is None
    assert source_state(recorded) is SourceState.FRESH
    (tmp_path / "app.py").write_text("RETRIES = 5\n")
    assert source_state(recorded) is SourceState.CHANGED
    (tmp_path / "app.py").unlink()
    assert source_state(recorded) is SourceState.VANISHED
    assert source_state(None) is None and file_hash(tmp_path) is None


@pytest.fixture
def source(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "retry.py"
    path.write_text("RETRIES = 3\n")
    return path


def test_a_memory_about_a_file_is_flagged_when_the_file_changes(mem, source):
    memory_id = mem.add("Billing retries three times.", source_ref="file:retry.py",
                        confidence=0.8).id  # fmt: skip
    fresh = mem.get(memory_id)
    assert fresh.source_ref == "file:retry.py" and fresh.source_state == "fresh"  # as given
    assert fresh.source_hash.endswith(f" {source}")
    assert fresh.confidence == pytest.approx(0.8)
    source.write_text("RETRIES = 5\n")
    stale = mem.get(memory_id)
    assert (stale.source_state, stale.confidence) == ("changed", pytest.approx(0.4))
    assert [r.source_state for r in mem.list()] == ["changed"]
    assert mem.recall("billing retries").hits[0].record.source_state == "changed"
    mem.update(memory_id, content="Billing retries five times.")  # re-read the file
    assert mem.get(memory_id).source_state == "fresh"
    source.unlink()
    assert mem.get(memory_id).source_state == "vanished"


def test_commit_refs_are_kept_as_given(mem):
    record = mem.get(mem.add("Fixed in this commit.", source_ref="commit:3f9a2c1e").id)
    assert (record.source_ref, record.source_hash, record.source_state) == (
        "commit:3f9a2c1e", None, None,
    )  # fmt: skip


def test_cli_marks_a_stale_source(run, tmp_path):
    path = Path.cwd() / "retry.py"  # `run` works from the project directory
    path.write_text("RETRIES = 3\n")
    memory_id = run("add", "--content", "Billing retries three times.",
                    "--source-ref", "file:retry.py", "--json").json()["id"]  # fmt: skip
    assert "STALE" not in run("recall", "billing retries").stdout
    path.write_text("RETRIES = 5\n")
    assert "[STALE SOURCE: changed]" in run("recall", "billing retries").stdout
    assert "[STALE SOURCE: changed]" in run("list").stdout
    shown = run("show", memory_id, "--json").json()
    assert shown["source_state"] == "changed" and shown["source_hash"].startswith("sha256:")
