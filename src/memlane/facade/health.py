"""`doctor`: what works in this store and this setup, and what to do about what does not.

Read-only. Each check has a status and, when it is not ok, the command that fixes it.
Checks that need the settings (backups, tokens, the settings themselves) are made by
the interface and passed in or added to these.
"""

from __future__ import annotations

import re
import sqlite3
import stat
from datetime import timedelta
from pathlib import Path

from memlane.errors import MemlaneError
from memlane.facade.core import ENTITY_META, Core
from memlane.model import FAIL, OK, WARN, Check
from memlane.timeutil import utcnow

# A store file others may read holds every memory in plain text.
_OTHERS = stat.S_IRWXG | stat.S_IRWXO


class HealthOps(Core):
    """Self-checks of the store and the recall lanes."""

    def doctor(
        self, backup_dir: Path | None = None, backup_every: timedelta | None = None
    ) -> list[Check]:
        """Each check once; a failed one never stops the others."""
        return [
            self._store_check(),
            self._file_check(),
            self._sqlite_check(),
            *self._vector_checks(),
            self._index_check(),
            self._entity_check(),
            self._backup_check(backup_dir, backup_every),
        ]

    def _store_check(self) -> Check:
        stats = self.store.stats()
        return Check(
            "store",
            OK,
            f"{stats.path}: schema {stats.schema_version}, {stats.live} live of "
            f"{stats.total} memories, {stats.versions} versions, {stats.links} links",
        )

    def _location(self) -> Path | None:
        location = str(getattr(self.store, "location", ""))
        return (
            Path(location)
            if location and location != ":memory:" and "://" not in location
            else None
        )

    def _file_check(self) -> Check:
        path = self._location()
        if path is None or not path.exists():
            return Check("permissions", OK, "no store file (in memory)")
        mode = path.stat().st_mode
        if mode & _OTHERS:
            return Check("permissions", WARN, f"{path} is {stat.filemode(mode)}: others may read "
                         "every memory", f"chmod 600 {path}")  # fmt: skip
        return Check("permissions", OK, f"{path} is {stat.filemode(mode)} (yours only)")

    def _sqlite_check(self) -> Check:
        conn = getattr(self.store, "conn", None)
        if not isinstance(conn, sqlite3.Connection):
            return Check("sqlite", OK, "not a SQLite store")
        options = {r[0] for r in conn.execute("PRAGMA compile_options")}
        journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
        missing = [f for f in ("ENABLE_FTS5",) if f not in options]
        detail = f"SQLite {sqlite3.sqlite_version}, journal {journal}, FTS5 " + (
            "missing" if missing else "present")  # fmt: skip
        if missing:
            return Check("sqlite", FAIL, detail, "install a Python whose SQLite has FTS5")
        if journal != "wal":
            return Check("sqlite", WARN, detail + ": readers wait for writers",
                         "close other programs holding the store, then run any memlane command")  # fmt: skip
        return Check("sqlite", OK, detail)

    def _vector_checks(self) -> list[Check]:
        embedder = self.embedder
        if embedder is None:
            if self.embed_problem:  # one is configured, and it cannot be used
                return [Check("vector lane", FAIL, f"unusable: {self.embed_problem}",
                              _command_in(self.embed_problem) or "memlane doctor --json")]  # fmt: skip
            why = "no embedding profile (MEMLANE_EMBED_PROFILE=none)"
            return [Check("vector lane", WARN, f"absent: {why}; recall uses keyword and entities",
                          "export MEMLANE_EMBED_PROFILE=minilm")]  # fmt: skip
        from memlane.write import embedding

        try:
            embedding.check_profile(self.store, embedder)
        except MemlaneError as exc:
            return [Check("vector lane", FAIL, str(exc), _command_in(str(exc)))]
        profile = embedder.profile
        model = f", model sha256 {profile.sha256[:12]}… verified" if profile.sha256 else ""
        lane = Check("vector lane", OK,
                     f"{profile.signature}, {profile.dimension} dimensions{model}")  # fmt: skip
        pending = len(self.store.unembedded(profile.signature))
        if pending:
            detail = f"{pending} memories without current vectors: run `memlane embed --pending`"
            return [lane, Check("vectors", WARN, detail, "memlane embed --pending")]
        return [lane, Check("vectors", OK, "every live memory has current vectors")]

    def _index_check(self) -> Check:
        """The vector index file beside the store: how far behind the vectors it is."""
        from memlane.retrieve.vectors import file_stamp, index_path

        path = index_path(str(getattr(self.store, "location", "")))
        if path is None or self.embedder is None or not path.exists():
            return Check("vector index", OK, "built by the first vector search (no file yet)")
        stamp = file_stamp(path) or {}
        if stamp.get("profile") != self.embedder.profile.signature:
            return Check("vector index", WARN, f"{path} was built for another profile",
                         f"rm {path}")  # fmt: skip
        behind = self.store.last_vector_change() - int(stamp.get("change", 0))
        caught = (
            "current"
            if behind <= 0
            else f"{behind} vector changes behind; caught up by the next search"
        )
        return Check("vector index", OK, f"{path.name}: {caught}")

    def _backup_check(self, directory: Path | None, every: timedelta | None) -> Check:
        from memlane.store.sqlite.backup import snapshot_time, snapshots

        where = directory or ((self._location() or Path(".")).parent / "backups")
        found = snapshots(where)
        if not found:
            return Check("backup", WARN, f"no snapshot in {where}", "memlane backup")
        age = utcnow() - snapshot_time(found[-1])
        detail = f"newest snapshot {found[-1].name}, {_age(age)} old, {len(found)} kept"
        if every is not None and age > every:
            return Check("backup", WARN, detail, "memlane backup")
        return Check("backup", OK, detail)

    def _entity_check(self) -> Check:
        from memlane.graph.entities import EXTRACTOR_VERSION

        recorded = self.store.meta(ENTITY_META)
        if recorded == EXTRACTOR_VERSION:
            return Check("entity lane", OK, f"mentions current (extractor {EXTRACTOR_VERSION})")
        return Check(
            "entity lane",
            WARN,
            f"mentions from extractor {recorded or 'none'}, current {EXTRACTOR_VERSION}: "
            "the first recall or `entities` command re-reads them",
        )


def _command_in(message: str) -> str | None:
    """The `memlane ...` command a message names (quoted in backticks or at its end)."""
    found = re.search(r"`(memlane [^`]+)`", message) or re.search(r"(memlane [^;:,()]+)$", message)
    return found.group(1).strip() if found else None


def _age(age: timedelta) -> str:
    hours = age.total_seconds() / 3600
    return f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.0f} days"
