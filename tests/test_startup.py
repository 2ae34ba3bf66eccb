"""A read starts fast: it never loads what only other commands need (a cold `memlane
recall` is measured by `memlane bench`; guarded here by what gets imported)."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

from memlane import Packs, Wake
from memlane.lifecycle import pack, wake

LATER = (
    "memlane.lifecycle.wake", "memlane.lifecycle.pack", "memlane.lifecycle.summary",
    "memlane.lifecycle.consolidate", "memlane.lifecycle.organize", "memlane.write.capture",
    "memlane.write.frontmatter", "memlane.write.dedup", "memlane.write.draft",
    "memlane.write.patch", "memlane.write.pipeline", "memlane.write.normalize",
    "memlane.write.screen", "memlane.write.injection", "memlane.write.secrets", "rapidfuzz",
    "memlane.services.writing", "memlane.services.admin", "memlane.services.maintenance",
    "memlane.services.reflect", "memlane.lifecycle.llm", "yaml", "tomlkit", "csv", "mcp",
    "dateparser", "numpy", "rich",
)  # fmt: skip


def test_reads_load_none_of_the_other_commands_modules(cli_env, tmp_path, run):
    # A memory the reads find, so the recall counts a retrieval (a write transaction).
    run("add", "--content", "Deploy the staging cluster with the blue pipeline")
    script = (
        "import sys\n"
        f"LATER = {LATER!r}\n"
        "from memlane.cli.main import cli\n"
        "cli.main(['list', '--json'], standalone_mode=False)\n"
        "cli.main(['search', 'anything'], standalone_mode=False)\n"
        "cli.main(['recall', 'staging cluster'], standalone_mode=False)\n"
        "loaded = [m for m in LATER if m in sys.modules\n"
        "          and type(sys.modules[m]).__name__ != '_LazyModule']  # not run yet\n"
        "print(sorted(loaded), file=sys.stderr)\n"
    )
    env = {**os.environ, **cli_env, "MEMLANE_EMBED_PROFILE": "none"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, cwd=tmp_path / "proj", timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "blue pipeline" in done.stdout  # the recall found it, and counted it
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_the_lazily_loaded_defaults_match_their_modules():
    defaults = inspect.signature(Wake.__call__).parameters
    assert defaults["limit"].default == wake.DEFAULT_LIMIT
    assert defaults["days"].default == wake.DEFAULT_DAYS
    assert inspect.signature(Wake.begin).parameters["limit"].default == wake.DEFAULT_LIMIT
    assert inspect.signature(Packs.build).parameters["max_bytes"].default == pack.PACK_MAX_BYTES
