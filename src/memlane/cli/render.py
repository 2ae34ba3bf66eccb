"""Records and results as JSON-ready dicts and as terminal text."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any

import click

from memlane.model import BatchResult, Hit, Link, Record, RegistryEntry, Version, WriteResult
from memlane.retrieve.abstain import Evidence
from memlane.retrieve.cards import EntityCard

# These live in retrieve.present (the hooks and the MCP server fence memories too);
# re-exported for the CLI's modules.
from memlane.retrieve.present import STALE_STATES as STALE_STATES
from memlane.retrieve.present import defanged, printable, provenance_marks
from memlane.retrieve.present import fenced as fenced


def plain(value: Any) -> Any:
    """A JSON-ready copy: enums as values, instants as ISO-8601, tuples as lists."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def record_dict(record: Record) -> dict[str, Any]:
    out = {name: plain(getattr(record, name)) for name in record.__struct_fields__}
    out["memory_class"] = record.memory_class.value
    out["live"] = record.live
    return out


def said_nothing(kind: str, evidence: Evidence) -> None:
    """An answer of nothing on stdout, fenced as results are: an agent reading it learns
    that the store was asked and holds nothing near enough, not that the read failed."""
    click.echo("\n".join(fenced(kind, [f"(nothing relevant found: {evidence.reason()})"])))


def hit_dict(hit: Hit) -> dict[str, Any]:
    return {**record_dict(hit.record), "score": round(hit.score, 6), "rank": hit.rank}


def version_dict(version: Version) -> dict[str, Any]:
    return {
        "number": version.number,
        "valid_from": plain(version.valid_from),
        "valid_until": plain(version.valid_until),
        "reason": version.reason,
        "actor": version.actor,
        "current": version.valid_until is None,
        **{k: plain(v) for k, v in version.fields.items()},
    }


def write_dict(result: WriteResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": result.id,
        "status": result.status.value,
        "warnings": list(result.warnings),
    }
    if result.title is not None:
        out["title"] = result.title
    if result.version is not None:
        out["version"] = result.version
    if result.skipped:
        out.update(
            skipped=True,
            duplicate_of=result.duplicate_of,
            note="identical entry already saved this session; nothing to do",
        )
    if result.dedup:
        out["dedup"] = result.dedup
    if result.similarity is not None:
        out["similarity"] = result.similarity
    if result.contradicts is not None:
        out["contradicts"] = result.contradicts
    if result.redactions:
        out["redactions"] = [{"type": "redacted", "kind": kind} for kind in result.redactions]
    if result.potential_conflicts:
        out["potential_conflicts"] = [
            {"id": memory_id, "similarity": similarity}
            for memory_id, similarity in result.potential_conflicts
        ]
    return out


def batch_dict(result: BatchResult) -> dict[str, Any]:
    return {
        "added": result.added,
        "refreshed": result.refreshed,
        "already_saved": result.already_saved,
        "failed": len(result.failed),
        "ids": result.ids,
        "lines": [
            {"line": ln.line, **(write_dict(ln.result) if ln.result else {"error": ln.error})}
            for ln in result.lines
        ],
    }


def link_dict(link: Link) -> dict[str, Any]:
    return {name: plain(getattr(link, name)) for name in link.__struct_fields__}


def registry_dict(entry: RegistryEntry) -> dict[str, Any]:
    return {"name": entry.key, **entry.data, "created_at": plain(entry.created_at)}


def _when(t: datetime | None) -> str:
    return t.strftime("%Y-%m-%d %H:%M") if t else "-"


def record_line(record: Record, score: float | None = None) -> str:
    tags = f"  #{' #'.join(record.tags)}" if record.tags else ""
    marks = "" if record.live else f"  [{record.tombstone_text}]"
    marks += provenance_marks(record)
    lock = " (private)" if record.visibility.value == "private" else ""
    lead = f"{score:7.3f}  " if score is not None else ""
    return printable(
        f"{lead}{record.id}  {_when(record.updated_at)}  [{record.kind.value}] "
        f"{record.title}{lock}{tags}{marks}"
    )


_SHOWN = (
    "kind",
    "category",
    "scope",
    "tags",
    "importance",
    "resonance_type",
    "memory_class",
    "content_type",
    "confidence",
    "taint",
    "trust_score",
    "signal",
    "source_agent",
    "session_id",
    "source_ref",
    "source_hash",
    "source_state",
    "source_type",
    "entry_type",
    "visibility",
    "owner",
    "domain",
    "applicability",
    "state",
    "wake_phrases",
    "wake_order",
    "anchors",
    "occurred_at",
    "created_at",
    "updated_at",
    "valid_from",
    "valid_until",
    "superseded_by",
    "superseded_at",
    "supersede_reason",
    "version",
)


def show_record(record: Record) -> None:
    click.echo(f"<memlane-memory id={record.id}>")
    click.echo(defanged(f"{record.id}  {record.title}{provenance_marks(record)}"))
    for name in _SHOWN:
        value = getattr(record, name)
        if value in (None, (), ""):
            continue
        text = ", ".join(value) if isinstance(value, tuple) else plain(value)
        click.echo(defanged(f"  {name + ':':<18}{text}"))
    click.echo("")
    click.echo(defanged(record.body))
    click.echo("</memlane-memory>")


def card_dict(card: EntityCard) -> dict[str, Any]:
    """An entity card: the entity's name, type and aliases, its newest relations."""
    e = card.entity
    relations = [
        {
            name: plain(getattr(r, name))
            for name in ("id", "subject", "predicate", "label", "object", "context", "memory_id")
        }
        for r in card.relations
    ]
    return {
        "id": e.id,
        "name": e.name,
        "type": e.type.value,
        "aliases": list(e.aliases),
        "relations": relations,
        "more": card.more,
        "text": card.text,
    }
