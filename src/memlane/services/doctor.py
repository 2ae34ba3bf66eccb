"""`doctor`: what works in this store and this setup, and what to do about what does not.

Read-only. Each check has a status and, when it is not ok, the command that fixes it.
Checks that need the settings (backups, tokens, the settings themselves) are made by
the interface and passed in or added to these.
"""

from __future__ import annotations

import re
import sqlite3
import stat
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from memlane.errors import MemlaneError, StoreDamaged
from memlane.model import FAIL, OK, WARN, Check
from memlane.runtime import ENTITY_META, Runtime
from memlane.timeutil import utcnow

# A store file others may read holds every memory in plain text.
_OTHERS = stat.S_IRWXG | stat.S_IRWXO
# PostgreSQL 12 brought the generated columns the keyword lane's tsvector is; pgvector
# 0.5.0 the HNSW index.
MIN_SERVER_VERSION = 120000
MIN_PGVECTOR = (0, 5, 0)
KEYWORD_INDEXES = ("memory_terms", "memory_version_terms")  # GIN over FTS5's terms
_NOT_HERE = "n/a on PostgreSQL"
_RESTORE = "memlane restore --from SNAPSHOT --force (a snapshot `memlane backup` made)"


class Doctor:
    """Self-checks of the store and the recall lanes."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def doctor(
        self, backup_dir: Path | None = None, backup_every: timedelta | None = None
    ) -> list[Check]:
        """Each check once; a failed one never stops the others."""
        if getattr(self.rt.store, "pool", None) is not None:  # a database server's store
            return [
                self._store_check(),
                *self._server_checks(),
                Check("permissions", OK, f"{_NOT_HERE}: the server's roles guard the data"),
                *self._vector_checks(),
                Check("vector index", OK, f"{_NOT_HERE}: the server keeps its HNSW index"),
                self._entity_check(),
                *_guarded("review", self._review_check),
                Check("backup", OK, f"{_NOT_HERE}: back up with `pg_dump` (see `memlane backup`)"),
            ]
        checks = (
            ("store", self._store_check),
            ("permissions", self._file_check),
            ("sqlite", self._sqlite_check),
            ("integrity", self._integrity_check),
            ("vectors", self._vector_checks),
            ("vector index", self._index_check),
            ("entities", self._entity_check),
            ("review", self._review_check),
            ("backup", lambda: self._backup_check(backup_dir, backup_every)),
        )
        return [c for name, check in checks for c in _guarded(name, check)]

    def _integrity_check(self) -> Check:
        problems = self.rt.store.integrity()
        if problems:
            return Check(
                "integrity",
                FAIL,
                f"{len(problems)} problem(s): " + "; ".join(problems[:3]),
                _RESTORE,
            )
        if self.rt.store.read_only:
            return Check(
                "integrity", OK, "pages and indexes whole (read-only: keyword indexes not checked)"
            )
        return Check("integrity", OK, "pages, indexes and keyword indexes whole")

    def _store_check(self) -> Check:
        stats = self.rt.store.stats(self.rt.agent)
        return Check(
            "store",
            OK,
            f"{stats.path}: schema {stats.schema_version}, {stats.live} live of "
            f"{stats.total} memories, {stats.versions} versions, {stats.links} links",
        )

    def _server_checks(self) -> list[Check]:
        """The server version, the vector extension, the indexes and the pool."""
        try:
            with self.rt.store.pool.connection() as conn:  # type: ignore[attr-defined]
                version = int(conn.execute("SHOW server_version_num").fetchone()[0])
                shown = conn.execute("SHOW server_version").fetchone()[0]
                row = conn.execute(
                    "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
                ).fetchone()
                indexes = {
                    r[0]
                    for r in conn.execute(
                        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
                    )
                }
                dims = [r[0] for r in conn.execute("SELECT DISTINCT dim FROM embedding")]
        except Exception as exc:  # any driver error is this check's failure
            return [
                Check(
                    "server",
                    FAIL,
                    f"cannot query the server: {exc}".splitlines()[0],
                    "check the URL, the server and its logs",
                )
            ]
        return [
            _version_check(version, shown),
            _extension_check(row[0] if row else None),
            _index_check(indexes, dims),
            self._pool_check(),
        ]

    def _pool_check(self) -> Check:
        stats = self.rt.store.pool.get_stats()  # type: ignore[attr-defined]
        detail = (
            f"{stats.get('pool_size', 0)} open (min {stats.get('pool_min')}, max "
            f"{stats.get('pool_max')}), {stats.get('pool_available', 0)} idle, "
            f"{stats.get('requests_waiting', 0)} waiting"
        )
        if self.rt.store.pool.closed:  # type: ignore[attr-defined]
            return Check("pool", FAIL, f"closed: {detail}", "open the store again")
        if stats.get("requests_waiting", 0):
            return Check(
                "pool",
                WARN,
                detail,
                "raise the server's max_connections or run fewer memlane processes at once",
            )
        return Check("pool", OK, detail)

    def _location(self) -> Path | None:
        location = str(getattr(self.rt.store, "location", ""))
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
            return Check(
                "permissions",
                WARN,
                f"{path} is {stat.filemode(mode)}: others may read every memory",
                f"chmod 600 {path}",
            )
        return Check("permissions", OK, f"{path} is {stat.filemode(mode)} (yours only)")

    def _sqlite_check(self) -> Check:
        conn = getattr(self.rt.store, "conn", None)
        if not isinstance(conn, sqlite3.Connection):
            return Check("sqlite", OK, "not a SQLite store")
        options = {r[0] for r in conn.execute("PRAGMA compile_options")}
        journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
        missing = [f for f in ("ENABLE_FTS5",) if f not in options]
        detail = f"SQLite {sqlite3.sqlite_version}, journal {journal}, FTS5 " + (
            "missing" if missing else "present"
        )
        if missing:
            return Check("sqlite", FAIL, detail, "install a Python whose SQLite has FTS5")
        if journal != "wal" and not self.rt.store.read_only:  # a reader cannot change it
            return Check(
                "sqlite",
                WARN,
                detail + ": readers wait for writers",
                "close other programs holding the store, then run any memlane command",
            )
        return Check("sqlite", OK, detail)

    def _vector_checks(self) -> list[Check]:
        embedder = self.rt.embedder
        if embedder is None:
            if self.rt.embed_problem:  # one is configured, and it cannot be used
                return [
                    Check(
                        "vector lane",
                        FAIL,
                        f"unusable: {self.rt.embed_problem}",
                        _command_in(self.rt.embed_problem) or "memlane doctor --json",
                    )
                ]
            why = "no embedding profile (MEMLANE_EMBED_PROFILE=none)"
            return [
                Check(
                    "vector lane",
                    WARN,
                    f"absent: {why}; recall uses keyword and entities",
                    "export MEMLANE_EMBED_PROFILE=minilm",
                )
            ]
        from memlane.write import embedding

        try:
            embedding.check_profile(self.rt.store, embedder)
        except MemlaneError as exc:
            return [Check("vector lane", FAIL, str(exc), _command_in(str(exc)))]
        profile = embedder.profile
        model = f", model sha256 {profile.sha256[:12]}… verified" if profile.sha256 else ""
        lane = Check(
            "vector lane", OK, f"{profile.signature}, {profile.dimension} dimensions{model}"
        )
        pending = len(self.rt.unembedded(profile.signature))
        if pending:
            detail = f"{pending} memories without current vectors: run `memlane embed --pending`"
            return [lane, Check("vectors", WARN, detail, "memlane embed --pending")]
        return [lane, Check("vectors", OK, "every live memory has current vectors")]

    def _index_check(self) -> Check:
        """The vector index file beside the store: how far behind the vectors it is."""
        from memlane.retrieve.vectors import file_stamp, index_path

        path = index_path(str(getattr(self.rt.store, "location", "")))
        if path is None or self.rt.embedder is None or not path.exists():
            return Check("vector index", OK, "built by the first vector search (no file yet)")
        stamp = file_stamp(path) or {}
        if stamp.get("profile") != self.rt.embedder.profile.signature:
            return Check(
                "vector index", WARN, f"{path} was built for another profile", f"rm {path}"
            )
        behind = self.rt.store.last_vector_change() - int(stamp.get("change", 0))
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

        recorded = self.rt.store.meta(ENTITY_META)
        if recorded == EXTRACTOR_VERSION:
            return Check("entity lane", OK, f"mentions current (extractor {EXTRACTOR_VERSION})")
        return Check(
            "entity lane",
            WARN,
            f"mentions from extractor {recorded or 'none'}, current {EXTRACTOR_VERSION}: "
            "the first recall or `entities` command re-reads them",
        )

    def _review_check(self) -> Check:
        """How many memories `memlane review` lists here. Memories due are a chore, not
        damage: a warning that names the command, never a failure."""
        due = self.rt.review_due_count()
        if due:
            return Check(
                "review",
                WARN,
                f"{due} due for review in this project and global: "
                "their recall has decayed since they were last reviewed",
                "memlane review",
            )
        return Check("review", OK, "nothing due for review in this project and global")


def diagnose(location: str, problem: MemlaneError) -> list[Check]:
    """The checks of a store file that cannot be opened: why, and what its pages say."""
    damaged = isinstance(problem, StoreDamaged)
    checks = [Check("store", FAIL, str(problem), _RESTORE if damaged else None)]
    if Path(location).is_file() and Path(location).stat().st_size:
        from memlane.store.sqlite.faults import check_file

        found = check_file(location)
        detail = "; ".join(found[:3]) if found else "pages and indexes whole"
        checks.append(
            Check("integrity", FAIL if found else OK, detail, _RESTORE if found else None)
        )
    return checks


def _guarded(name: str, check: Callable[[], Check | list[Check]]) -> list[Check]:
    """A check's result; a store error on the way is that check's failure, so one
    damaged part never hides what the others find."""
    try:
        result = check()
    except MemlaneError as exc:
        return [Check(name, FAIL, str(exc), _RESTORE if isinstance(exc, StoreDamaged) else None)]
    return result if isinstance(result, list) else [result]


def _version_check(version: int, shown: str) -> Check:
    if version < MIN_SERVER_VERSION:
        return Check(
            "server",
            FAIL,
            f"PostgreSQL {shown}: memlane needs 12 or newer",
            "upgrade the server to PostgreSQL 12+ (16 is tested)",
        )
    return Check("server", OK, f"PostgreSQL {shown}")


def _extension_check(version: str | None) -> Check:
    fix = "as a superuser: CREATE EXTENSION vector (install pgvector 0.5+ on the server)"
    if version is None:
        return Check("vector extension", FAIL, "pgvector is not installed in this database", fix)
    parts = tuple(int(p) for p in re.findall(r"\d+", version)[:3])
    if parts < MIN_PGVECTOR:
        return Check(
            "vector extension",
            FAIL,
            f"pgvector {version}: HNSW needs 0.5.0+",
            "ALTER EXTENSION vector UPDATE (after upgrading pgvector)",
        )
    return Check("vector extension", OK, f"pgvector {version}")


def _index_check(indexes: set[str], dims: list[int]) -> Check:
    """The GIN indexes of the keyword lane and an HNSW index per vector dimension."""
    missing = [name for name in KEYWORD_INDEXES if name not in indexes]
    if missing:
        return Check(
            "indexes",
            FAIL,
            f"keyword index(es) missing: {', '.join(missing)}",
            "CREATE INDEX memory_terms ON memory USING gin(terms) (and "
            "memory_version_terms on memory_version)",
        )
    hnsw = [d for d in dims if f"embedding_hnsw_{d}" not in indexes]
    if hnsw:
        d = hnsw[0]
        return Check(
            "indexes",
            FAIL,
            f"no HNSW index for {d}-dimension vectors",
            f"CREATE INDEX embedding_hnsw_{d} ON embedding USING hnsw "
            f"((vector::vector({d})) vector_cosine_ops) WHERE dim = {d}",
        )
    vectors = ", ".join(f"embedding_hnsw_{d}" for d in dims) or "none yet (no vectors)"
    return Check("indexes", OK, f"GIN {', '.join(KEYWORD_INDEXES)}; HNSW {vectors}")


def _command_in(message: str) -> str | None:
    """The `memlane ...` command a message names (quoted in backticks or at its end)."""
    found = re.search(r"`(memlane [^`]+)`", message) or re.search(r"(memlane [^;:,()]+)$", message)
    return found.group(1).strip() if found else None


def _age(age: timedelta) -> str:
    hours = age.total_seconds() / 3600
    return f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.0f} days"
