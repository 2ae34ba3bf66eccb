"""Export and import (issue 7 §2): everything out as lossless JSONL (or CSV and
Markdown for people), and JSONL back in, validated before anything is written.

JSONL: a header line, then one record per line, `kind` first: registry, session,
memory (every field), version, link, entity, alias, mention, reminder. Export, import
into an empty store and export again gives the same bytes; importing a file twice
changes nothing the second time.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from memlane.errors import Invalid
from memlane.facade.core import Core
from memlane.store import Selection
from memlane.write.normalize import dedup_hash

FORMAT, FORMAT_VERSION = "memlane-export", 1
HEADER = {"kind": FORMAT, "version": FORMAT_VERSION}
CSV_COLUMNS = (
    "id", "scope", "kind", "category", "title", "body", "tags", "importance", "confidence",
    "visibility", "owner", "source_agent", "created_at", "updated_at", "valid_from",
    "valid_until", "superseded_by",
)  # fmt: skip


@dataclass
class ImportReport:
    """What an import did, by kind and outcome, and the lines it refused."""

    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    errors: list[tuple[int, str]] = field(default_factory=list)  # (line, why)
    redactions: int = 0
    unembedded: int = 0  # new memories left without vectors (`embed --pending`)

    def count(self, kind: str, outcome: str) -> None:
        per_kind = self.counts.setdefault(kind, {})
        per_kind[outcome] = per_kind.get(outcome, 0) + 1

    @property
    def added(self) -> int:
        return sum(c.get("added", 0) for c in self.counts.values())


def line(kind: str, row: dict[str, Any]) -> str:
    """One JSONL line: compact, `kind` first, text as is (no ASCII escapes)."""
    return json.dumps({"kind": kind, **row}, ensure_ascii=False, separators=(",", ":"))


class TransferOps(Core):
    """Export and import of the whole store, or a selection of it."""

    def _selection(
        self, scope: str | None, include_superseded: bool, include_private: bool
    ) -> Selection:
        name = None
        if scope is not None and scope.strip().lower() != "all":
            [name] = self.filters(scope=scope).scopes or [scope]
        return Selection(name, include_superseded, include_private, self.agent)

    def export_records(
        self,
        scope: str | None = None,
        *,
        include_superseded: bool = False,
        include_private: bool = False,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(kind, columns) of the selection: live public memories by default; with
        `include_private`, this agent's own private memories and reminders too."""
        return self.store.dump(self._selection(scope, include_superseded, include_private))

    def export_jsonl(self, **options: Any) -> Iterator[str]:
        yield json.dumps(HEADER, separators=(",", ":"))
        for kind, row in self.export_records(**options):
            yield line(kind, row)

    def export_csv(self, **options: Any) -> str:
        """One row per memory, the columns a spreadsheet wants (tags joined by `;`)."""
        import csv

        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for kind, row in self.export_records(**options):
            if kind == "memory":
                tags = ";".join(json.loads(row["tags"] or "[]"))
                values = {**row, "kind": row["memory_kind"], "tags": tags}
                writer.writerow([values[c] for c in CSV_COLUMNS])
        return out.getvalue()

    def export_markdown(self, **options: Any) -> Iterator[tuple[str, str]]:
        """(file name, text) per memory: YAML front matter with every other field, then
        the body."""
        from memlane.write.frontmatter import join

        for kind, row in self.export_records(**options):
            if kind != "memory":
                continue
            meta = {k: _plain(k, v) for k, v in row.items() if k != "body" and v is not None}
            yield f"{row['id']}.md", join(meta, row["body"] if row["body"].endswith("\n")
                                          else row["body"] + "\n")  # fmt: skip

    def import_jsonl(
        self,
        lines: Iterable[str | bytes],
        *,
        capture_mode: str | None = None,
        allow_tombstones: bool = False,
    ) -> ImportReport:
        """Load a JSONL export. Every line is checked before anything is written; a bad
        line is reported by number and skipped, the good ones land in one transaction.
        `capture_mode` screens each new memory as `add` would (redaction, injection
        tags) for a file from elsewhere; `allow_tombstones` lets a record end a live
        memory of the same id."""
        from memlane.write.capture import parse_mode

        report = ImportReport()
        mode = parse_mode(capture_mode) if capture_mode else None
        checked = self._checked(lines, report)
        by_kind = sorted(checked, key=lambda item: _ORDER[item[1]])
        landed: list[str] = []
        with self._transaction() as w:
            for number, kind, row in by_kind:
                if kind == "memory" and mode is not None:
                    row = self._screened_row(row, mode, report)
                try:
                    outcome = w.load(kind, row, allow_tombstones)
                except Invalid as exc:
                    report.errors.append((number, str(exc)))
                    continue
                report.count(kind, outcome)
                if kind == "memory" and outcome in ("added", "tombstoned"):
                    w.journal("import", [row["id"]], self.agent)
                    landed.append(row["id"])
        report.errors.sort()
        report.unembedded = len(self._embed_ids(landed))
        return report

    def _checked(
        self, lines: Iterable[str | bytes], report: ImportReport
    ) -> list[tuple[int, str, dict[str, Any]]]:
        out = []
        for number, raw in enumerate(lines, start=1):
            text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            if not text.strip():
                continue
            try:
                record = json.loads(text)
                if not isinstance(record, dict):
                    raise Invalid("a line must be a JSON object")
                kind = record.get("kind")
                if kind == FORMAT:
                    _check_header(record)
                    continue
                out.append((number, str(kind), self.store.check_record(str(kind), record)))
            except (ValueError, Invalid) as exc:
                report.errors.append((number, str(exc).splitlines()[0]))
        return out

    def _screened_row(self, row: dict[str, Any], mode: Any, report: ImportReport) -> dict[str, Any]:
        """A memory from an untrusted file, through the capture policy."""
        from memlane.write.capture import capture

        tags = json.loads(row["tags"] or "[]")
        got = capture({"title": row["title"], "content": row["body"], "tags": tags}, mode)
        report.redactions += len(got.redacted)
        title, body = got.fields["title"], got.fields["content"]
        return {**row, "title": title, "body": body,
                "tags": json.dumps(got.fields["tags"], ensure_ascii=False),
                "dedup_hash": dedup_hash(title, body)}  # fmt: skip


_ORDER = {kind: i for i, kind in enumerate(
    ("registry", "session", "memory", "version", "link", "entity", "alias", "mention", "reminder")
)}  # fmt: skip


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
