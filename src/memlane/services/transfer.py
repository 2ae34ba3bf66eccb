"""Export and import: everything out as lossless JSONL (or CSV and Markdown for
people), and each of them back in, validated before anything is written.

JSONL: a header line, then one record per line, `kind` first: registry, session,
memory (every field), version, link, entity, alias, mention, reminder. Export, import
into an empty store and export again gives the same bytes; importing a file twice
changes nothing the second time. CSV and Markdown carry the memories alone, every
field of each; importing them restores each memory as its JSONL record would.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import msgspec

from memlane.errors import Conflict, Invalid, Unavailable
from memlane.model import BatchLine, Filters, Record, WriteStatus, replace
from memlane.runtime import BatchItem, Runtime
from memlane.store import Selection
from memlane.store.dialect.transfer import missing_ref
from memlane.write import inputs

FORMAT, FORMAT_VERSION = "memlane-export", 1
# Ids per read when an agent's import checks which memories it names it may see: each
# is a bound parameter, and SQLite takes a few thousand at most per statement.
ID_CHUNK = 500
# New memories embedded per step after an import's rows land: each step one
# transaction, and one tick of the caller's progress (a model takes seconds for it).
EMBED_STEP = 256
# Lines checked between two ticks of an import's progress.
CHECK_STEP = 1000
HEADER = {"kind": FORMAT, "version": FORMAT_VERSION}

# An import's progress: done of total (None while unknown), and what it is doing
# ("checking", "loading", "adding", "embedding").
Progress = Callable[[int, int | None, str], None]


def _silent(done: int, total: int | None, what: str) -> None:
    """The progress of an import nobody watches."""


class ImportReport(msgspec.Struct):
    """What an import did, by kind and outcome, and the lines it refused."""

    counts: dict[str, dict[str, int]] = msgspec.field(default_factory=dict)
    errors: list[tuple[int, str]] = msgspec.field(default_factory=list)  # (line or CSV row, why)
    redactions: int = 0
    unembedded: int = 0  # new memories left without vectors (`embed --pending`)
    landed: list[str] = msgspec.field(default_factory=list)  # memories added (or ended)

    def count(self, kind: str, outcome: str) -> None:
        per_kind = self.counts.setdefault(kind, {})
        per_kind[outcome] = per_kind.get(outcome, 0) + 1

    @property
    def added(self) -> int:
        return sum(c.get("added", 0) for c in self.counts.values())


class MigrationReport(msgspec.Struct, frozen=True):
    """A whole store copied into another: the records sent by kind, what the import did,
    and the vectors made on the target (None: no embedding profile)."""

    sent: dict[str, int]
    imported: ImportReport
    target_counts: dict[str, int]
    embedded: int | None
    embed_failed: int = 0
    forced: bool = False


def line(kind: str, row: dict[str, Any]) -> str:
    """One JSONL line: compact, `kind` first, text as is (no ASCII escapes)."""
    return json.dumps({"kind": kind, **row}, ensure_ascii=False, separators=(",", ":"))


class Transfer:
    """Export and import of the whole store, or a selection of it (`Memory.transfer`).
    `add_batch` is the write policy's, for a table of new memories."""

    def __init__(
        self, rt: Runtime, iter_batch: Callable[[Iterable[BatchItem]], Iterator[BatchLine]]
    ) -> None:
        self.rt = rt
        self._iter_batch = iter_batch

    def _selection(
        self, scope: str | None, include_superseded: bool, include_private: bool
    ) -> Selection:
        name = None
        if scope is not None and scope.strip().lower() != "all":
            [name] = self.rt.filters(scope=scope).scopes or [scope]
        return Selection(name, include_superseded, include_private, self.rt.agent)

    def export_records(
        self,
        scope: str | None = None,
        *,
        include_superseded: bool = False,
        include_private: bool = False,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(kind, columns) of the selection: live public memories by default; with
        `include_private`, this agent's own private memories and reminders too."""
        return self.rt.store.dump(self._selection(scope, include_superseded, include_private))

    def migration_records(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(kind, columns) of everything a full copy of the store carries: superseded
        and invalidated memories, every agent's private memories and reminders.

        Trigger: an export sees one viewer's private rows only. Why: a migration must
        carry every agent's. Outcome: one export per agent owning private memories or
        reminders (plus the public one), merged without repeats, memories in the
        store's own order (`iter_all`), so the target numbers them as the source did.
        Embeddings, the journal and the wake log stay behind (store-local).
        """
        order: dict[str, int] = {}
        viewers: dict[str | None, None] = {None: None}
        for position, record in enumerate(self.rt.store.iter_all()):
            order[record.id] = position
            if record.owner:
                viewers.setdefault(record.owner, None)
            if record.source_agent:
                viewers.setdefault(record.source_agent, None)
        viewers.update(dict.fromkeys(s.agent for s in self.rt.store.sessions.listing() if s.agent))
        viewers.update(dict.fromkeys(e.key for e in self.rt.store.registries.entries("agents")))
        merged: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in _ORDER}
        for viewer in viewers:
            for kind, row in self.rt.store.dump(Selection(None, True, True, viewer)):
                merged[kind].setdefault(json.dumps(row, sort_keys=True, default=str), row)
        memories = sorted(merged["memory"].values(), key=lambda row: order[row["id"]])
        for kind in sorted(_ORDER, key=_ORDER.__getitem__):
            rows = memories if kind == "memory" else list(merged[kind].values())
            yield from ((kind, row) for row in rows)

    def migrate_to(
        self, target: Transfer, *, force: bool = False, progress: Progress = _silent
    ) -> MigrationReport:
        """Copy this whole store into `target` (see `migration_records`), then check
        that the target holds as many records of each kind, then embed what lacks
        vectors there when the target has an embedding profile.

        A target that already holds memories is refused unless `force` (the import
        then merges: records already there are left alone). `progress` is told as
        records are checked and land and as vectors are made."""
        there = target.rt.store.stats(None, everyone=True)
        if there.total and not force:
            raise Conflict(f"{there.path} already holds memories: pass --force to merge into it")
        sent: dict[str, int] = {}
        lines = [json.dumps(HEADER, separators=(",", ":"))]
        for kind, row in self.migration_records():
            sent[kind] = sent.get(kind, 0) + 1
            lines.append(line(kind, row))
        # Vectors are made once, after the counts are checked, not per import batch.
        on_write, target.rt.embed_on_write = target.rt.embed_on_write, False
        try:
            imported = target._import(
                lines, None, allow_tombstones=True, restore=True, progress=progress
            )
        finally:
            target.rt.embed_on_write = on_write
        if imported.errors:
            number, why = imported.errors[0]
            raise Unavailable(
                f"the target refused {len(imported.errors)} record(s); line {number}: {why}"
            )
        counts = _kind_counts(target.migration_records())
        short = {
            k: (n, counts.get(k, 0))
            for k, n in sent.items()
            if counts.get(k, 0) != n and not (force and counts.get(k, 0) > n)
        }
        if short:
            detail = ", ".join(f"{k}: {a} sent, {b} there" for k, (a, b) in short.items())
            raise Unavailable(f"the counts differ after the copy ({detail})")
        embedded, failed = target._embed_pending(progress)
        return MigrationReport(sent, imported, counts, embedded, failed, force)

    def _embed_pending(self, progress: Progress = _silent) -> tuple[int | None, int]:
        """(embedded, failed) over the live memories without current vectors, a step
        at a time; None embedded when no profile is set."""
        if self.rt.embedder is None:
            return None, 0
        from memlane.write import embedding

        pending = self.rt.store.unembedded(self.rt.embedder.profile.signature)
        outcome = embedding.embed_parts(
            self.rt.store,
            self.rt.embedder,
            pending,
            EMBED_STEP,
            lambda done: progress(done, len(pending), "embedding"),
        )
        return len(outcome.embedded), len(outcome.failed)

    def export_jsonl(self, **options: Any) -> Iterator[str]:
        yield json.dumps(HEADER, separators=(",", ":"))
        for kind, row in self.export_records(**options):
            yield line(kind, row)

    def export_csv(self, progress: Progress = _silent, **options: Any) -> str:
        """One row per memory with every column of its JSONL record, those a
        spreadsheet wants first; lists as JSON arrays, null as an empty cell (see
        memlane.write.csvrows). `import_csv` restores it exactly. `progress` is told
        the rows written so far."""
        from memlane.write import csvrows

        memories = (row for kind, row in self.export_records(**options) if kind == "memory")
        return csvrows.table(_told(memories, progress, "rows"))

    def import_csv(
        self,
        lines: Iterable[str | bytes],
        *,
        capture_mode: str | None = None,
        source: str = "csv",
        progress: Progress = _silent,
    ) -> ImportReport:
        """Load a CSV. memlane's own export (its header names id or dedup_hash) is
        restored as `import_jsonl` restores its records: ids, times, counters and
        state kept. Any other table adds each row as a new memory through the write
        policy, in session `import:<source>`, so importing it again adds nothing.

        Every row is read before anything is written. A bad row is reported by its
        number (the header is row 1, as a spreadsheet numbers them) and skipped; a
        header at fault, or a text that is not CSV, is Invalid and nothing lands."""
        from memlane.write import csvrows

        table = csvrows.read(lines)
        rows = [row for _, row in table.rows]
        if table.restore:
            report = self.import_jsonl(
                map(json.dumps, rows), capture_mode=capture_mode, progress=progress
            )
        else:
            session = {"session_id": f"import:{source}"}
            report = self._added(
                [{**session, **row, "capture_mode": capture_mode} for row in rows], progress
            )
        done = [(table.rows[n - 1][0], why) for n, why in report.errors]
        report.errors = sorted(table.bad + done)
        return report

    def import_captures(
        self, lines: Iterable[str | bytes], progress: Progress = _silent
    ) -> ImportReport:
        """Replay a capture log (write.capturelog): each line added through the write
        policy in its own session, so a memory the store has already is found, not added
        again. A line that is not the log's is reported by number and skipped; blank
        lines keep their numbers."""
        from memlane.write.capturelog import as_item

        items: list[BatchItem] = []
        bad: list[tuple[int, str]] = []
        numbers: list[int] = []
        for number, raw in enumerate(lines, start=1):
            if isinstance(raw, (str, bytes)) and not raw.strip():
                continue
            try:
                items.append(as_item(inputs.json_object(raw)))
            except Invalid as exc:
                bad.append((number, str(exc)))
                continue
            numbers.append(number)
        report = self._added(items, progress)
        report.errors = sorted(bad + [(numbers[n - 1], why) for n, why in report.errors])
        return report

    def _added(self, items: list[BatchItem], progress: Progress) -> ImportReport:
        """add-batch over these items, as an import's report (item numbers from 1);
        `progress` told as each chunk of them commits."""
        report = ImportReport()
        for line in self._iter_batch(items):
            progress(line.line, len(items), "adding")
            if line.result is None:
                report.errors.append((line.line, line.error or "not added"))
                continue
            report.count("memory", line.result.status.value)
            report.redactions += len(line.result.redactions)
            report.unembedded += line.result.status is WriteStatus.EMBED_DEFERRED
            if line.result.landed and line.result.id is not None:
                report.landed.append(line.result.id)
        return report

    def export_markdown(self, **options: Any) -> Iterator[tuple[str, str]]:
        """(file name, text) per memory: YAML front matter with every other field, then
        the body."""
        from memlane.write.frontmatter import join

        for kind, row in self.export_records(**options):
            if kind != "memory":
                continue
            meta = {k: _plain(k, v) for k, v in row.items() if k != "body" and v is not None}
            yield f"{row['id']}.md", join(meta, row["body"] + "\n")  # the file's last line ends

    @staticmethod
    def exported_record(meta: dict[str, Any], body: str) -> str | None:
        """The JSONL record a memlane Markdown export file holds (front matter naming
        its id, memory_kind and dedup_hash; None for any other Markdown), so that
        importing the folder restores each memory exactly as `import` restores JSONL:
        its id, times, counters and state, not a new memory made of its text."""
        if not {"id", "memory_kind", "dedup_hash"} <= set(meta):
            return None
        record: dict[str, Any] = {name: None for name in _MEMORY_COLUMNS}
        for name, value in meta.items():
            listed = name in _LIST_FIELDS and isinstance(value, list)
            record[name] = json.dumps(value, ensure_ascii=False) if listed else value
        record["body"] = body.removesuffix("\n")  # the newline export_markdown added
        return json.dumps({"kind": "memory", **record}, default=str)

    def import_jsonl(
        self,
        lines: Iterable[str | bytes],
        *,
        capture_mode: str | None = None,
        allow_tombstones: bool = False,
        progress: Progress = _silent,
    ) -> ImportReport:
        """Load a JSONL export. Every line is checked before anything is written; a bad
        line is reported by number and skipped, the good ones land in one transaction.
        Every record's text is screened as `add` screens it (secrets redacted,
        injection tagged) unless `capture_mode` keeps it (reviewed, manual: for a
        trusted file); `allow_tombstones` lets a record end a live memory of the same
        id.

        Without an agent identity an import is a restore: every owner's private
        memories and every agent's reminders land as they are. An agent imports only
        shared memories and its own private ones and reminders; a line holding another
        owner's, or naming a memory this agent may not see, is reported as bad.
        `progress` is told as lines are checked, kinds land and new memories are
        embedded."""
        return self._import(
            lines, capture_mode, allow_tombstones, restore=self.rt.agent is None, progress=progress
        )

    def _import(
        self,
        lines: Iterable[str | bytes],
        capture_mode: str | None,
        allow_tombstones: bool,
        *,
        restore: bool,
        progress: Progress = _silent,
    ) -> ImportReport:
        """`import_jsonl`; `restore`: every owner's records kept as they are."""
        from memlane.write.capture import CaptureMode, parse_mode

        report = ImportReport()
        mode = parse_mode(capture_mode or self.rt.capture_mode)
        checked = self._checked(lines, report, progress)
        if not restore:
            checked = self._agents_own(checked, report)
        by_kind = sorted(checked, key=lambda item: _ORDER[item[1]])
        landed: list[str] = []
        loaded = 0
        with self.rt.transaction() as w:
            if mode is not CaptureMode.AUTO:
                w.keep_everything()
            for kind, group in itertools.groupby(by_kind, key=lambda item: item[1]):
                batch = list(group)
                rows = [row for _, _, row in batch]
                outcomes = w.load_many(kind, rows, allow_tombstones)
                for (number, _, _), row, outcome in zip(batch, rows, outcomes, strict=True):
                    if isinstance(outcome, Invalid):
                        report.errors.append((number, str(outcome)))
                        continue
                    report.count(kind, outcome)
                    if kind == "memory" and outcome in ("added", "tombstoned"):
                        landed.append(row["id"])
                loaded += len(batch)
                progress(loaded, len(by_kind), "loading")
            if landed:
                w.journal("import", landed, self.rt.agent)
            report.redactions = len(w.found)
        report.errors.sort()
        report.landed = landed
        report.unembedded = self._embedded(landed, progress)
        return report

    def _embedded(self, ids: Sequence[str], progress: Progress) -> int:
        """Embed the memories an import landed, a step at a time; how many were left
        without vectors."""
        left = 0
        for start in range(0, len(ids), EMBED_STEP):
            left += len(self.rt.embed_changed(ids[start : start + EMBED_STEP]))
            progress(min(start + EMBED_STEP, len(ids)), len(ids), "embedding")
        return left

    def _agents_own(self, checked: Checked, report: ImportReport) -> Checked:
        """The checked lines an agent may import; the others reported as bad lines."""
        refs = sorted({ref for _, kind, row in checked for ref in _memory_refs(kind, row)})
        refused = {
            row["id"]
            for _, kind, row in checked
            if kind == "memory" and _foreign(kind, row, self.rt.agent)
        }
        hidden = self._unseen(refs) | refused
        out = []
        for number, kind, row in checked:
            why = _foreign(kind, row, self.rt.agent) or _hidden_ref(kind, row, hidden)
            if why:
                report.errors.append((number, why))
            else:
                out.append((number, kind, row))
        return out

    def _unseen(self, ids: Sequence[str]) -> set[str]:
        """Those of `ids` naming a stored memory this agent may not see."""
        out: set[str] = set()
        for start in range(0, len(ids), ID_CHUNK):
            every = Filters(
                ids=tuple(ids[start : start + ID_CHUNK]),
                any_visibility=True,
                include_superseded=True,
                limit=None,
            )
            seen = replace(every, any_visibility=False, viewer=self.rt.agent, include_private=True)
            out |= set(self.rt.store.admitted(every)) - set(self.rt.store.admitted(seen))
        return out

    def _checked(
        self, lines: Iterable[str | bytes], report: ImportReport, progress: Progress = _silent
    ) -> list[tuple[int, str, dict[str, Any]]]:
        from memlane.write.draft import check_loaded

        out = []
        for number, raw in enumerate(lines, start=1):
            if number % CHECK_STEP == 0:
                progress(number, None, "checking")
            if isinstance(raw, (str, bytes)) and not raw.strip():
                continue
            try:
                record = dict(inputs.json_object(raw))
                kind = record.get("kind")
                if kind == FORMAT:
                    _check_header(record)
                    continue
                row = self.rt.store.check_record(str(kind), record)
                if kind == "memory":
                    check_loaded(_fields(row), self.rt.limits)
                out.append((number, str(kind), row))
            except (ValueError, Invalid) as exc:
                report.errors.append((number, str(exc).splitlines()[0]))
        return out


Checked = list[tuple[int, str, dict[str, Any]]]  # (line number, kind, row)
Row = dict[str, Any]


def _told(rows: Iterable[Row], progress: Progress, what: str) -> Iterator[Row]:
    """ROWS as they are, `progress` told how many have passed."""
    for number, row in enumerate(rows, start=1):
        progress(number, None, what)
        yield row


def _memory_refs(kind: str, row: dict[str, Any]) -> tuple[str, ...]:
    """The memories a record names: a memory its own id; a version or mention its
    memory; a link both ends."""
    if kind == "memory":
        return (row["id"],)
    if kind in ("version", "mention"):
        return (row["memory_id"],)
    if kind == "link":
        return (row["source"], row["target"])
    return ()


def _foreign(kind: str, row: dict[str, Any], agent: str | None) -> str | None:
    """Why an agent may not import a record that belongs to someone else: a memory
    another owner owns, another agent's reminder (None: it may)."""
    if kind == "memory" and row["owner"] not in (None, agent):
        return (
            f"memory {row['id']}: owned by {row['owner']!r}; "
            "an agent imports only shared memories and its own"
        )
    if kind == "reminder" and row["agent"] != agent:
        return f"reminder {row['id']}: another agent's reminder"
    return None


def _hidden_ref(kind: str, row: dict[str, Any], hidden: set[str]) -> str | None:
    """Why a record may not land: it names a memory the importing agent may not see
    (another owner's private memory, in the store or refused in the file)."""
    if any(ref in hidden for ref in _memory_refs(kind, row)):
        return missing_ref(kind)
    return None


_ORDER = {
    kind: i
    for i, kind in enumerate(
        (
            "registry",
            "session",
            "memory",
            "version",
            "link",
            "entity",
            "alias",
            "mention",
            "sighting",
            "relation",
            "reminder",
        )
    )
}


def _fields(row: dict[str, Any]) -> dict[str, Any]:
    """A memory row's values as a Record holds them, for check_loaded: its lists (kept
    as JSON text in the row) as lists."""
    out = dict(row)
    for name in _LIST_FIELDS:
        value = out.get(name)
        if isinstance(value, str):
            try:
                out[name] = json.loads(value or "[]")
            except ValueError:
                raise Invalid(f"memory.{name} must be a JSON list") from None
    return out


_LIST_FIELDS = ("tags", "applicability", "wake_phrases", "anchors")
# A memory record's columns: a Record's fields but what a read adds (its anchors, its
# source's state), its kind under the name an export gives it.
_MEMORY_COLUMNS = tuple(
    "memory_kind" if name == "kind" else name
    for name in Record.__struct_fields__
    if name not in ("anchors", "source_state")
)


def _kind_counts(records: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for kind, _ in records:
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def _check_header(record: dict[str, Any]) -> None:
    if record.get("version") != FORMAT_VERSION:
        raise Invalid(
            f"export format version {record.get('version')!r}: this memlane reads {FORMAT_VERSION}"
        )


def _plain(name: str, value: Any) -> Any:
    """A column value as front matter: JSON lists as YAML lists."""
    if (
        isinstance(value, str)
        and value.startswith("[")
        and name in ("tags", "applicability", "wake_phrases")
    ):
        return json.loads(value)
    return value
