"""What the tools hand back: memlane's values as small JSON objects a model reads.

Each answer costs the model's context, so each read shows what its caller acts on:
a search, a line per memory to pick from (`brief`); recall, the memories to answer
with (`recalled`: text, kind, scope, when, provenance marks, why); get, one memory in
full (`memory`). The full record stays with `memlane show --json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mcp_types import CallToolResult, TextContent

from memlane.lifecycle.pack import Pack
from memlane.model import Link, Record, Reminder, WriteResult
from memlane.retrieve.present import fenced, lane_warnings, provenance_marks

if TYPE_CHECKING:
    from memlane.lifecycle.reflect import Proposal
    from memlane.retrieve.result import Extra, Prior, RecallResult, Searched
    from memlane.services.reflect import Applied, Reflection

JSON = dict[str, Any]
# What a passive read says when nothing cleared its gate.
NOTHING_FOR_SESSION = "no durable memories retrieved for this session."
# Characters of a memory's text a search result shows past its title: about a
# sentence, enough to tell results apart; get shows the rest.
SNIPPET_CHARS = 160
# What a title drawn from the first sentence leaves at the start of the rest: that
# sentence's stop.
SENTENCE_STOPS = ".!?:;,… "


def result(answer: JSON) -> CallToolResult:
    """`answer` as a tool's result: the JSON on one line for the model to read, and
    the same as structured content."""
    text = json.dumps(answer, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=answer)


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


def hits(found: Searched) -> JSON:
    results = [brief(h.record, h.score) for h in found.hits]
    said = _abstained(found) or ({} if results else {"note": "nothing found"})
    return {"results": results, **said}


def brief(record: Record, score: float) -> JSON:
    """A search result: enough to choose a memory and get it by id."""
    out: JSON = {"id": record.id, "title": record.title}
    rest = _past_title(record)
    if rest:
        cut = rest[:SNIPPET_CHARS].rsplit(" ", 1)[0] if len(rest) > SNIPPET_CHARS else rest
        out["snippet"] = cut if cut == rest else cut + "…"
    return {**out, **_marks(record), "score": round(score, 3)}


def recalled(result: RecallResult) -> JSON:
    from memlane.retrieve.recall import why

    results = [
        {
            **_read(h.record),
            "score": round(h.score, 3),
            "why": why(h),
            **_previously(result.priors_of(h.record.id)),
        }
        for h in result.hits
    ]
    optional = {
        "linked": [_extra(e) for e in result.extras],
        "entities": [card.text for card in result.entities],
        "omitted": result.omitted,
        "warnings": lane_warnings(result.skipped),
    }
    return {"results": results, **{k: v for k, v in optional.items() if v}, **_abstained(result)}


def _read(record: Record) -> JSON:
    """A memory as recall shows it: what to answer with and how far to trust it."""
    out: JSON = {"id": record.id}
    if not _opens_with_title(record):  # then the title says what the text is about
        out["title"] = record.title
    out.update(content=record.body, kind=record.kind.value, scope=record.scope)
    dates = {"occurred_at": when(record.occurred_at), "updated_at": when(record.updated_at)}
    out.update({k: v for k, v in dates.items() if v})
    return {**out, **_marks(record)}


def _past_title(record: Record) -> str:
    """The memory's text on one line, without the title it opens with, if it does."""
    text = _one_line(record.body)
    if not _opens_with_title(record):
        return text
    return text[len(_one_line(record.title.rstrip("…"))) :].lstrip(SENTENCE_STOPS)


def _opens_with_title(record: Record) -> bool:
    """Whether the text opens with the title (as a title drawn from it does)."""
    opening = _one_line(record.title.rstrip("…"))
    return bool(opening) and _one_line(record.body).startswith(opening)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _marks(record: Record) -> JSON:
    """What a model should weigh before trusting the text (untrusted, injection risk,
    no longer valid, stale source), when anything."""
    marks = provenance_marks(record).strip()
    return {"marks": marks} if marks else {}


def _abstained(result: RecallResult | Searched) -> JSON:
    """What an agent reads when a read answered with nothing, and why (else nothing)."""
    if not result.abstained or result.evidence is None:
        return {}
    return {
        "abstained": True,
        "note": f"nothing relevant found: {result.evidence.reason()}",
        "evidence": result.evidence.to_json(),
    }


def _previously(priors: list[Prior]) -> JSON:
    """The states a result replaced, when the question asked about a change."""
    if not priors:
        return {}
    told = [
        {
            "id": p.record.id,
            **({"version": p.version} if p.version is not None else {}),
            "content": p.record.body,
            "valid_to": when(p.valid_to),
            "reason": p.reason,
            **_marks(p.record),
        }
        for p in priors
    ]
    return {"previously": told}


def _extra(extra: Extra) -> JSON:
    n = extra.neighbour
    contested = {"contested": True} if n.contested else {}
    hop = {"hop": n.hop} if n.hop > 1 else {}
    return {**_read(extra.record), "linked_from": n.via, "link": n.link.value, **contested, **hop}


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


def reminder(found: Reminder) -> JSON:
    """A reminder: its time in UTC and in the server's local time, for the person."""
    out: JSON = {
        "id": found.id,
        "text": found.text,
        "due_at": when(found.due_at),
        "due_local": found.due_at.astimezone().strftime("%Y-%m-%d %H:%M %Z"),
    }
    optional = {"project": found.project, "dismissed_at": when(found.dismissed_at)}
    out.update({k: v for k, v in optional.items() if v})
    return out


def reminders(found: Sequence[Reminder], empty: str) -> JSON:
    out: JSON = {"reminders": [reminder(r) for r in found], "count": len(found)}
    return out if found else {**out, "note": empty}


def reflection(done: Reflection, titles: Mapping[str, str]) -> JSON:
    """A reflection run: what it read, wrote and proposed; without a model, what it
    would reflect on (`batch`, with `titles`) and the deterministic findings."""
    out: JSON = {"scope": done.scope, "new": done.new, "reflected": done.reflected}
    f = done.findings
    optional = {
        "skipped": done.skipped,
        "breach": done.breach,
        "malformed": list(done.malformed),
        "insights": [{"id": i, "title": titles.get(i, "")} for i in done.insights],
        "proposals": [proposal(p) for p in done.proposals],
        "batch": [{"id": i, "title": titles.get(i, "")} for i in done.batch],
        "clusters": [list(c) for c in f.clusters] if f else None,
        "stale": [{"id": i, "recall_probability": p} for i, p in f.stale] if f else None,
        "contradictions": [list(pair) for pair in f.contradictions] if f else None,
        "calls": done.calls,
        "tokens": done.tokens,
    }
    out.update({k: v for k, v in optional.items() if v})
    return out


def proposal(p: Proposal) -> JSON:
    """A pack operation waiting for approval, with the diff of the pack it would make."""
    out: JSON = {"id": p.id, "op": p.op, "ids": list(p.ids), "reason": p.reason}
    optional = {"title": p.title, "content": p.content, "diff": p.diff}
    out.update({k: v for k, v in optional.items() if v})
    return out


def applied(done: Sequence[Applied]) -> JSON:
    return {
        "applied": [
            {"id": a.proposal.id, "op": a.proposal.op, "result": list(a.result)}
            | ({"error": a.error} if a.error else {})
            for a in done
        ]
    }
