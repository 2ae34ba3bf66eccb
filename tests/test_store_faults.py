"""A damaged, empty, full or read-only store file: every command answers with one line
naming the problem and its fix (exit 1), never a traceback; reads never write;
`doctor` diagnoses the damage without crashing and without changing the file."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memlane import Memory, StoreDamaged, Unavailable
from memlane.embed import get_embedder
from memlane.scope import Context
from memlane.store.sqlite.store import SQLiteStore

pytestmark = pytest.mark.sqlite_only
MARK = "QZXVMARKERWORD"


def _store(path: Path, count: int = 30, words: int = 40) -> None:
    with Memory.open(path, agent="tester", context=Context(), embedder=get_embedder("hash")) as m:
        for i in range(count):
            m.add(f"Note {i} on the deploy of service {i}: {MARK} padding " + "words " * words)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _spoil_text(path: Path) -> None:
    """Every stored copy of MARK made invalid UTF-8 (same length)."""
    data = bytearray(path.read_bytes())
    start = data.find(MARK.encode())
    assert start >= 0
    while start >= 0:
        data[start : start + len(MARK)] = b"\xff" * len(MARK)
        start = data.find(MARK.encode(), start)
    path.write_bytes(bytes(data))


def _spoil_pages(path: Path) -> None:
    """The b-tree header of every page holding MARK overwritten: malformed pages."""
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    start = data.find(MARK.encode())
    while start >= 0:
        at = start - start % page
        data[at : at + 12] = b"\xee" * 12
        start = data.find(MARK.encode(), at + page)
    path.write_bytes(bytes(data))


def _cli(db: Path, *args: str, limit_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    env = {**os.environ, "MEMLANE_DB": str(db), "MEMLANE_EMBED_PROFILE": "hash",
           "MEMLANE_AGENT": "tester", "MEMLANE_BACKUP_DIR": str(db.parent / "backups")}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "memlane", *args], capture_output=True, text=True, env=env,
        cwd=db.parent, timeout=120, preexec_fn=limit,
    )  # fmt: skip


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("memlane: error:")]
    assert len(lines) == 1, done.stderr
    return lines[0]


COMMANDS = [("list",), ("search", "deploy"), ("recall", "deploy"), ("recent",), ("journal",),
            ("add", "A new note about the deploy."), ("stats",), ("export",)]  # fmt: skip
# Commands that read every memory's text, so they cannot miss the damage.
READ_ALL = {"list", "export"}


@pytest.mark.parametrize("spoil", [_spoil_text, _spoil_pages], ids=["text", "pages"])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_damaged_store_gets_one_line_naming_the_damage(tmp_path, spoil, args):
    db = tmp_path / "m.db"
    _store(db)
    spoil(db)
    done = _cli(db, *args)
    if done.returncode == 0 and args[0] not in READ_ALL:  # it never read the damaged part
        return
    assert done.returncode == 1
    line = _one_line(done)
    assert "damaged" in line and "restore --from" in line


@pytest.mark.parametrize("spoil", [_spoil_text, _spoil_pages], ids=["text", "pages"])
def test_doctor_diagnoses_damage_without_crashing_or_writing(tmp_path, spoil):
    db = tmp_path / "m.db"
    _store(db)
    spoil(db)
    before = _digest(db)
    done = _cli(db, "doctor", "--json")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    checks = {c["name"]: c for c in __import__("json").loads(done.stdout)}
    assert checks["integrity"]["status"] == "fail"
    assert "restore --from" in checks["integrity"]["fix"]
    assert _digest(db) == before
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0


def test_doctor_on_a_whole_store_checks_pages_and_keyword_indexes(tmp_path):
    db = tmp_path / "m.db"
    _store(db, count=3)
    with Memory.open(db, agent="tester", context=Context()) as mem:
        check = next(c for c in mem.admin.doctor() if c.name == "integrity")
    assert (check.status, check.detail) == ("ok", "pages, indexes and keyword indexes whole")


def test_a_damaged_keyword_index_is_found_by_doctor(tmp_path):
    db = tmp_path / "m.db"
    _store(db, count=3)
    with sqlite3.connect(db) as conn:  # the FTS index loses its rows; the memories stay
        conn.execute("DELETE FROM memory_fts_data WHERE id > 10")
    with Memory.open(db, agent="tester", context=Context()) as mem:
        check = next(c for c in mem.admin.doctor() if c.name == "integrity")
    assert check.status == "fail" and "memory_fts" in check.detail


def test_reads_of_a_whole_store_do_not_write_it(tmp_path):
    db = tmp_path / "m.db"
    _store(db, count=5)
    before = _digest(db)
    for args in (("list",), ("search", "deploy"), ("stats",), ("show", "m-"), ("doctor",)):
        _cli(db, *args)
        assert _digest(db) == before, args


def test_an_empty_store_file_is_refused_not_started_afresh(tmp_path):
    db = tmp_path / "m.db"
    db.touch()
    for args in (("list",), ("add", "A note that must not land in a fresh store.")):
        done = _cli(db, *args)
        assert done.returncode == 1
        assert "empty (0 bytes)" in _one_line(done)
    assert db.stat().st_size == 0
    doctor = _cli(db, "doctor")
    assert doctor.returncode == 1 and "empty (0 bytes)" in doctor.stdout


def test_a_new_store_appears_whole_and_owner_only(tmp_path):
    db = tmp_path / "deep" / "er" / "m.db"
    with Memory.open(db, agent="tester", context=Context()) as mem:
        assert mem.store.schema_version > 0  # type: ignore[attr-defined]
    assert db.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "deep").stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in db.parent.iterdir()) == ["m.db"]  # no draft left


def test_a_write_past_the_file_size_limit_is_one_line_and_loses_nothing(tmp_path):
    db = tmp_path / "m.db"
    _store(db, count=5)
    done = _cli(db, "add", "A long note. " + "filler " * 8000, limit_bytes=16 * 1024)
    assert done.returncode == 1
    line = _one_line(done)
    assert "disk is full or the file size limit" in line or "I/O error" in line
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM memory").fetchone()[0] == 5
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"


def test_a_read_only_store_reads_without_counting_and_refuses_writes(tmp_path):
    db = tmp_path / "m.db"
    _store(db, count=5)
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = _digest(db)
    store = SQLiteStore(db, read_only=True)
    with Memory(store, agent="tester", context=Context(), embedder=get_embedder("hash")) as mem:
        assert mem.recall("deploy", limit=3).hits
        assert mem.wake().blooms is not None
        with pytest.raises(Unavailable, match="read-only: nothing was written"):
            mem.add("A note that cannot land.")
    assert _digest(db) == before


def test_counting_what_is_due_for_review_writes_nothing(tmp_path):
    db = tmp_path / "m.db"
    _store(db, count=3)
    with sqlite3.connect(db) as conn:  # written long ago, and important
        conn.execute("UPDATE memory SET importance = 7, created_at = '2020-01-01T00:00:00Z'")
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = _digest(db)
    with Memory(SQLiteStore(db, read_only=True), agent="tester", context=Context()) as mem:
        assert mem.review_due_count() == 3
    assert '"due_for_review": 3' in _cli(db, "stats", "--json").stdout
    assert '"due_for_review": 3' in _cli(db, "health", "--json").stdout
    doctor = _cli(db, "doctor")
    assert "warn  review           3 due for review" in doctor.stdout and doctor.returncode == 0
    assert "3 due for review (memlane review)" in _cli(db).stdout
    assert _digest(db) == before


def test_a_read_only_open_of_a_missing_store_creates_nothing(tmp_path):
    from memlane.errors import NotFound

    with pytest.raises(NotFound):
        SQLiteStore(tmp_path / "nope.db", read_only=True)
    assert not list(tmp_path.iterdir())


def test_api_damage_is_store_damaged(tmp_path):
    db = tmp_path / "m.db"
    _store(db)
    _spoil_text(db)
    with (
        pytest.raises(StoreDamaged, match="not UTF-8"),
        Memory.open(db, agent="tester", context=Context()) as mem,
    ):
        mem.list(limit=100)


def test_a_write_to_a_missing_directory_named_by_db_is_refused(tmp_path):
    db = tmp_path / "typo" / "m.db"
    done = _cli(tmp_path / "x.db", "--db", str(db), "add", "A note.")
    assert done.returncode == 2
    assert "mkdir -p" in _one_line(done)
    assert not (tmp_path / "typo").exists()
    listed = _cli(tmp_path / "x.db", "--db", str(db), "list")
    assert listed.returncode == 0 and not (tmp_path / "typo").exists()


def test_exports_wake_files_and_hook_state_are_owner_only(tmp_path):
    old = os.umask(0o022)
    try:
        db = tmp_path / "m.db"
        _store(db, count=2)
        hooks = tmp_path / "hookstate"
        (tmp_path / "out").mkdir()
        assert _cli(db, "export", "-o", str(tmp_path / "out" / "all.jsonl")).returncode == 0
        assert _cli(db, "export", "-f", "md", "-o", str(tmp_path / "md")).returncode == 0
        hook = subprocess.run(
            [sys.executable, "-m", "memlane", "hook", "user-prompt"], input="not json",
            capture_output=True, text=True, cwd=tmp_path, timeout=120,
            env={**os.environ, "MEMLANE_DB": str(db), "MEMLANE_HOOK_DIR": str(hooks),
                 "MEMLANE_EMBED_PROFILE": "hash"},
        )  # fmt: skip
        assert hook.returncode == 0
        files = [tmp_path / "out" / "all.jsonl", *(tmp_path / "md").iterdir(),
                 *(p for p in hooks.rglob("*") if p.is_file())]  # fmt: skip
        assert len(files) >= 4
        assert {p.stat().st_mode & 0o777 for p in files} == {0o600}
        for directory in (tmp_path / "md", hooks):
            assert directory.stat().st_mode & 0o777 == 0o700
    finally:
        os.umask(old)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions: run as a user")
def test_a_store_file_this_user_may_not_write_opens_read_only(tmp_path):
    db = tmp_path / "m.db"
    _store(db, count=3)
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.chmod(0o400)
    before = _digest(db)
    recall = _cli(db, "recall", "deploy")
    assert recall.returncode == 0, recall.stderr
    add = _cli(db, "add", "A note that cannot land.")
    assert add.returncode == 1 and "read-only" in _one_line(add)
    assert _digest(db) == before


# ---- what an independent tester found ---------------------------------------------------


def test_pack_out_refuses_a_device_a_fifo_and_a_symlink_and_is_private(tmp_path):
    db = tmp_path / "m.db"
    _store(db, count=3)
    fifo, link = tmp_path / "pipe.md", tmp_path / "link.md"
    os.mkfifo(fifo)
    link.symlink_to(tmp_path / "target.md")
    for out in (fifo, link, Path("/dev/null")):
        done = _cli(db, "pack", "--scope", "all", "--out", str(out))
        assert done.returncode == 1 and "not a regular file" in _one_line(done), out
    assert stat_mode(fifo) == "FIFO" and link.is_symlink() and not (tmp_path / "target.md").exists()
    old = os.umask(0o022)
    try:
        mine = tmp_path / "mine.md"
        assert (
            _cli(db, "pack", "--scope", "all", "--include-private", "--out", str(mine)).returncode
            == 0
        )
        assert mine.stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)


def stat_mode(path: Path) -> str:
    import stat

    return "FIFO" if stat.S_ISFIFO(os.lstat(path).st_mode) else "other"


def test_export_to_a_missing_folder_is_refused_and_a_failed_export_leaves_no_part(tmp_path):
    db = tmp_path / "m.db"
    _store(db, count=20, words=500)  # an export of about 120 KiB
    done = _cli(db, "export", "-o", str(tmp_path / "nope" / "x.jsonl"))
    assert done.returncode == 2 and "no directory" in _one_line(done)
    assert not (tmp_path / "nope").exists()
    out = tmp_path / "x.jsonl"
    cut = _cli(db, "export", "-o", str(out), limit_bytes=64 * 1024)
    assert cut.returncode == 1 and "cannot write" in _one_line(cut)
    assert not out.exists() and not [p for p in tmp_path.iterdir() if ".partial" in p.name]


def test_backup_into_a_file_is_one_line(tmp_path):
    db = tmp_path / "m.db"
    _store(db, count=2)
    done = _cli(db, "backup", "--out-dir", "/dev/null")
    assert done.returncode == 2 and "not a directory" in _one_line(done)


def test_a_store_on_a_read_only_file_system_reads_and_refuses_writes(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    _store(source / "m.db", count=3)
    mount = tmp_path / "ro"
    mount.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("a read-only file system is made with `mount`, which is not installed")
    bound = subprocess.run(["mount", "--bind", str(source), str(mount)], capture_output=True)
    if bound.returncode != 0:
        pytest.skip(f"a bind mount needs privileges this user lacks: {bound.stderr.strip()!r}")
    try:
        remount = ["mount", "-o", "remount,ro,bind", str(mount)]
        refused = subprocess.run(remount, capture_output=True)
        if refused.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {refused.stderr.strip()!r}")
        db = mount / "m.db"
        for args in (
            ("list", "--scope", "all"),
            ("stats",),
            ("search", "deploy", "--scope", "all"),
        ):
            done = _cli(db, *args)
            assert done.returncode == 0, (args, done.stderr)
        assert "Note 1" in _cli(db, "list", "--scope", "all").stdout
        add = _cli(db, "add", "A note that cannot land.")
        assert add.returncode == 1 and "read-only" in _one_line(add)
        doctor = _cli(db, "doctor", "--json")
        checks = {c["name"]: c for c in json.loads(doctor.stdout)}
        assert checks["store"]["status"] == "ok" and checks["integrity"]["status"] == "ok"
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


@pytest.mark.parametrize("where", ["/dev/zero", "folder"])
def test_a_store_path_that_is_no_file_is_one_line(tmp_path, where):
    db = tmp_path if where == "folder" else Path(where)
    done = _cli(tmp_path / "unused.db", "--db", str(db), "list")
    assert done.returncode == 2 and "not a regular file" in _one_line(done)
