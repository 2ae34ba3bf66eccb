"""What the tools hand back: memlane's values as small JSON objects a model reads.

A memory shows what a model needs to use and cite it (text, kind, scope, when, how
sure, where from); the full record stays with `memlane show --json`.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from memlane.lifecycle.pack import Pack
from memlane.model import Link, Record, WriteResult
from memlane.retrieve.present import fenced, lane_warnings, provenance_marks

if TYPE_CHECKING:
    from memlane.retrieve.result import Extra, RecallResult, Searched

JSON = dict[str, Any]
# What a passive read says when nothing cleared its gate.
NOTHING_FOR_SESSION = "no durable memories retrieved for this session."


def when(at: datetime | None) -> str | None:
    return at.isoformat().replace("+00:00", "Z") if at else None


def memory(record: Record) -> JSON:
    out: JSON = {
        "id": record.id,
        "title": record.title,
        "content": record.body,
        "kind": record.kind.value,
        "scope": record.scope,
        "tags": list(record.tags),
        "importance": record.importance,
        "confidence": round(record.confidence, 3),
        "taint": record.taint.value,
        "created_at": when(record.created_at),
        "updated_at": when(record.updated_at),
        "status": record.tombstone_text,
    }
    optional = {
        "source_agent": record.source_agent,
        "source_ref": record.source_ref,
        "source_state": record.source_state,
        "occurred_at": when(record.occurred_at),
        "anchors": list(record.anchors),
    }
    out.update({k: v for k, v in optional.items() if v})
    return out


def hits(query: str, found: Searched) -> JSON:
    results = [{**memory(h.record), "score": round(h.score, 4)} for h in found.hits]
    said = _abstained(found) or ({} if results else {"note": "nothing found"})
    return {"query": query, "count": len(results), "results": results, **said}


def recalled(query: str, result: RecallResult) -> JSON:
    from memlane.retrieve.recall import why

    results = [{**memory(h.record), "score": round(h.score, 4), "why": why(h)} for h in result.hits]
    return {
        "query": query,
        "count": len(results),
        "results": results,
        "linked": [_extra(e) for e in result.extras],
        "omitted": result.omitted,
        "held_back": len(result.held_back),
        "tokens_used": result.tokens_used,
        **({"warnings": lane_warnings(result.skipped)} if result.skipped else {}),
        **_abstained(result),
    }


def _abstained(result: RecallResult | Searched) -> JSON:
    """What an agent reads when a read answered with nothing, and why (else nothing)."""
    if not result.abstained or result.evidence is None:
        return {}
    return {
        "abstained": True,
        "note": f"nothing relevant found: {result.evidence.reason()}",
        "evidence": result.evidence.to_json(),
    }


def _extra(extra: Extra) -> JSON:
    n = extra.neighbour
    return {
        **memory(extra.record),
        "linked_from": n.via,
        "link": n.link.value,
        "contested": n.contested,
    }


def written(result: WriteResult) -> JSON:
    out: JSON = {"id": result.id, "status": result.status.value, "title": result.title}
    optional = {
        "version": result.version,
        "duplicate_of": result.duplicate_of,
        "similarity": result.similarity,
        "contradicts": result.contradicts,
        "warnings": list(result.warnings),
        "redactions": list(result.redactions),
        "potential_conflicts": [
            {"id": other, "similarity": round(similarity, 4)}
            for other, similarity in result.potential_conflicts
        ],
    }
    out.update({k: v for k, v in optional.items() if v})
    return out


def link(found: Link) -> JSON:
    return {
        "id": found.id,
        "source": found.source,
        "target": found.target,
        "type": found.type.value,
        "reason": found.reason,
        "created_at": when(found.created_at),
    }


def session_recalled(result: RecallResult, budget: int) -> JSON:
    """A passive recall as the context block a session starts with."""
    lines = [_line(h.record) for h in result.hits]
    return _session(
        [h.record.id for h in result.hits], lines, result.omitted, result.tokens_used, budget
    )


def session_packed(pack: Pack | None, budget: int) -> JSON:
    """The curated pack as the context block a session starts with (None: nothing)."""
    if pack is None:
        return _session([], [], 0, 0, budget)
    return _session(
        list(pack.ids), pack.markdown.splitlines(), len(pack.omitted), pack.tokens, budget
    )


def _line(record: Record) -> str:
    text = (
        record.body
        if record.body.startswith(record.title.rstrip("…"))
        else (f"{record.title}: {record.body}")
    )
    text = text.replace("\n", "\n  ")
    return f"- [{record.kind.value}] {text}{provenance_marks(record)} ({record.id}, {record.scope})"


def _session(ids: list[str], lines: list[str], omitted: int, used: int, budget: int) -> JSON:
    out: JSON = {
        "context": "\n".join(fenced("context", lines)) if ids else "",
        "ids": ids,
        "omitted": omitted,
        "tokens_used": used,
        "tokens_budget": budget,
    }
    if not ids:
        out["note"] = NOTHING_FOR_SESSION
    return out
