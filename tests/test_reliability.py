"""The reliability proof, with real processes on a real store file:

- 20 SIGKILLs at random moments during large add-batch and update runs: after each,
  integrity_check is ok, no memory is partial, and every write the killed process had
  acknowledged is there;
- 8 processes writing and reading at once for 20 seconds: no error, no lost write;
- a backup taken under that load is verified and restores to a consistent store.

These take about a minute and run in CI with the rest.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from memlane import Context, Memory
from store_checks import assert_consistent, env

KILLS = 20
SEED_MEMORIES = 60
LOAD_SECONDS = 20
WRITERS, READERS = 4, 4

# Updates one memory after another, printing each acknowledged (id, version).
UPDATER = """
import sys
from memlane import Memory
from memlane.scope import Context
ids = sys.argv[2].split(",")
with Memory.open(sys.argv[1], agent="tester", context=Context("proj")) as mem:
    i = 0
    while True:
        memory_id = ids[i % len(ids)]
        result = mem.update(memory_id, append=f" Revision {i}.")
        print(memory_id, result.version, flush=True)
        i += 1
"""

# Adds and updates for `seconds`, printing each acknowledged write.
WRITER = """
import sys, time
from memlane import Memory
from memlane.scope import Context
path, name, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
end = time.monotonic() + seconds
with Memory.open(path, agent="tester", context=Context("proj")) as mem:
    i = 0
    mine = []
    while time.monotonic() < end:
        if i % 3 == 2 and mine:
            r = mem.update(mine[i % len(mine)], append=f" {name} revision {i}.")
            print("update", r.id, r.version, flush=True)
        else:
            r = mem.add(f"{name} wrote memory {i} under load; nothing may be lost.", tags=[name])
            mine.append(r.id)
            print("add", r.id, 1, flush=True)
        i += 1
"""

# Searches, lists and recalls for `seconds`, printing how many reads it made.
READER = """
import sys, time
from memlane import Memory
from memlane.scope import Context
path, seconds = sys.argv[1], float(sys.argv[2])
end = time.monotonic() + seconds
reads = 0
with Memory.open(path, agent="tester", context=Context("proj")) as mem:
    while time.monotonic() < end:
        mem.search("memory under load")
        mem.list(limit=20)
        mem.recall("what was written under load", count=False)
        reads += 3
print(reads, flush=True)
"""


def _seed(db: Path) -> list[str]:
    with Memory.open(db, agent="tester", context=Context("proj")) as mem:
        return [mem.add(f"Seed memory {i} about service {i}.").id for i in range(SEED_MEMORIES)]


def _acknowledged_updates(stdout: str) -> dict[str, int]:
    seen: dict[str, int] = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            seen[parts[0]] = max(seen.get(parts[0], 0), int(parts[1]))
    return seen


def _acknowledged_adds(stdout: str) -> list[str]:
    return [line.split()[3] for line in stdout.splitlines() if "Added entry:" in line]


def _versions(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return {str(i): int(v) for i, v in conn.execute("SELECT id, version FROM memory")}


def _kill_after(proc: subprocess.Popen[str], delay: float, after_first: bool) -> str:
    """SIGKILL `proc` `delay` seconds after it started or, `after_first`, after it
    acknowledged its first write (however long starting took on a loaded machine);
    everything it printed."""
    assert proc.stdout is not None
    first = proc.stdout.readline() if after_first else ""
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the run finished before it was killed"
    return first + out


def test_twenty_kills_during_batches_and_updates(tmp_path):
    db = tmp_path / "killed.db"
    ids = _seed(db)
    batch = tmp_path / "batch.jsonl"
    batch.write_text("".join(
        json.dumps({"title": f"Batch line {i}", "content": f"Line {i} of a long batch. " * 6})
        + "\n" for i in range(20_000)
    ))  # fmt: skip
    rng = random.Random(7)
    acknowledged = 0
    for round_ in range(KILLS):
        delay = rng.uniform(0.9, 2.5)  # add-batch starts in about 0.6 s
        if round_ % 2 == 0:
            argv = [sys.executable, "-m", "memlane", "add-batch", "--file", str(batch)]
        else:
            argv = [sys.executable, "-c", UPDATER, str(db), ",".join(ids)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True, env=env(tmp_path, db), cwd=tmp_path)  # fmt: skip
        out = _kill_after(proc, delay, after_first=round_ % 2 == 1)
        assert_consistent(db)
        stored = _versions(db)
        if round_ % 2 == 0:
            added = _acknowledged_adds(out)
            assert all(memory_id in stored for memory_id in added)
            acknowledged += len(added)
        else:
            updated = _acknowledged_updates(out)
            assert all(stored[i] >= v for i, v in updated.items())
            acknowledged += len(updated)
    assert acknowledged > KILLS  # the kills landed mid-run, after real work
    with Memory.open(db, agent="tester", context=Context("proj")) as mem:
        assert mem.add("The store takes writes after twenty kills.").id


def test_eight_processes_for_twenty_seconds_and_a_backup_under_load(tmp_path):
    db = tmp_path / "busy.db"
    _seed(db)
    run = lambda code, *args: subprocess.Popen(  # noqa: E731
        [sys.executable, "-c", code, str(db), *args], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env(tmp_path, db), cwd=tmp_path,
    )  # fmt: skip
    writers = [run(WRITER, f"w{n}", str(LOAD_SECONDS)) for n in range(WRITERS)]
    readers = [run(READER, str(LOAD_SECONDS)) for _ in range(READERS)]
    # The backup is taken once the writers have started writing (starting takes
    # longer on a loaded machine), and a quarter of their run later.
    deadline = time.monotonic() + LOAD_SECONDS
    while len(_versions(db)) <= SEED_MEMORIES and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(LOAD_SECONDS / 4)
    with Memory.open(db, agent="tester", context=Context("proj")) as mem:
        snapshot = mem.admin.backup(tmp_path / "snaps")
    results = [(p, *p.communicate(timeout=LOAD_SECONDS * 6)) for p in writers + readers]
    for proc, _, err in results:
        assert proc.returncode == 0, err
        assert "locked" not in err and "Traceback" not in err
    stored = _versions(db)
    writes = 0
    for _, out, _ in results[:WRITERS]:
        for kind, memory_id, version in (line.split() for line in out.splitlines()):
            assert stored[memory_id] >= int(version), f"lost {kind} of {memory_id}"
            writes += 1
    reads = sum(int(out.strip()) for _, out, _ in results[WRITERS:])
    assert writes > 100 and reads > 100
    assert assert_consistent(db) >= SEED_MEMORIES + writes // 3
    assert snapshot.path is not None and snapshot.counts is not None
    restored = tmp_path / "restored.db"
    Memory.restore_snapshot(restored, snapshot.path)
    assert assert_consistent(restored) == snapshot.counts.total
    assert SEED_MEMORIES < snapshot.counts.total < len(stored)
    print(f"\n8 processes, {LOAD_SECONDS} s: {writes} acknowledged writes, {reads} reads, "
          f"0 errors; backup under load held {snapshot.counts.total} memories")  # fmt: skip
