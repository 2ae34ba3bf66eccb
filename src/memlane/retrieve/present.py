"""How memories are shown: to a model between fences, with provenance marks; to a
person as a titled line and a history of changes. Pure.

Shared by every interface that puts memory text in front of a model (the CLI's text
output, the hooks' injected context, the MCP server) or a person (the browser, the web
view).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from datetime import datetime

from memlane.model import Record, Taint, Version, effective_resonance

# What a read says of a file: source that is no longer what a memory was written about.
STALE_STATES = frozenset({"changed", "vanished"})


def provenance_marks(record: Record) -> str:
    """Marks on fenced text output: what a model reading the memory should weigh."""
    marks = {
        "[UNTRUSTED WEB]": record.taint is Taint.UNTRUSTED_WEB,
        "[UNTRUSTED TOOL]": record.taint is Taint.UNTRUSTED_TOOL,
        "[INJECTION RISK]": "injection-risk" in record.tags,
        # A retired memory (no successor) is no prior state of anything.
        "[PREVIOUSLY]": not record.live and not record.retired,
        "[RETIRED]": record.retired,
        f"[STALE SOURCE: {record.source_state}]": record.source_state in STALE_STATES,
    }
    return "".join(f" {mark}" for mark, applies in marks.items() if applies)


def lane_warnings(skipped: Mapping[str, str]) -> list[str]:
    """What a recall that ran without some of its lanes says about it, a line each."""
    return [
        f"recall ran without its {lane} lane ({why}); the other lanes answered"
        for lane, why in skipped.items()
    ]


# A fence tag (`<memlane-...>`, `</memlane-...>`) in a memory's own text.
_FENCE_TAG = re.compile(r"<(\s*/?\s*)(memlane-)", re.IGNORECASE)


# Controls a terminal acts on (escape sequences, bell, carriage return, C1 codes) and
# the bidirectional overrides and isolates that reorder what is shown: written out as
# `\xNN` / `\uNNNN`, so stored text can neither restyle, retitle, hide nor reorder what
# is printed around it. Line breaks and tabs stay.
_CONTROLS = {
    c: f"\\x{c:02x}"
    for c in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0D, 0x20), 0x7F, *range(0x80, 0xA0))
} | {c: f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def printable(text: str) -> str:
    """Stored text as it may be printed: its control characters written out."""
    return text if text.isprintable() else text.translate(_CONTROLS)


def defanged(text: str) -> str:
    """A memory's text as it may stand between memlane's fences: printable, and a fence
    tag it holds escaped (`&lt;/memlane-recall>`), so it can neither close the fence it
    sits in nor open one a model would read as memlane's own."""
    text = printable(text)
    return _FENCE_TAG.sub(r"&lt;\1\2", text) if "memlane-" in text.lower() else text


def fenced(kind: str, lines: list[str]) -> list[str]:
    """Text a model will read, between fences it cannot mistake for instructions (nor
    break out of: see `defanged`)."""
    return [f"<memlane-{kind}>", *(defanged(line) for line in lines), f"</memlane-{kind}>"]


def titled(record: Record) -> str:
    """A memory's one line for a person: its title, (private), provenance marks."""
    lock = " (private)" if record.visibility.value == "private" else ""
    return f"{record.title}{lock}{provenance_marks(record)}"


def version_lines(version: Version) -> list[str]:
    """A version's title, body and tags as lines, the unit the history diffs."""
    tags = version.fields.get("tags") or ()
    return [
        *f"{version.title}\n\n{version.body}".splitlines(),
        *([f"tags: {', '.join(tags)}"] if tags else []),
    ]


def changes(versions: Sequence[Version]) -> list[tuple[Version, list[str]]]:
    """Each version (oldest first) with what it changed: the first one's lines whole,
    every later one's unified diff from the version before (empty: nothing shown
    changed, as when only metadata did)."""
    out: list[tuple[Version, list[str]]] = []
    for before, after in zip([None, *versions[:-1]], versions, strict=True):
        if before is None:
            out.append((after, version_lines(after)))
            continue
        diff = difflib.unified_diff(
            version_lines(before),
            version_lines(after),
            f"v{before.number}",
            f"v{after.number}",
            lineterm="",
            n=1,
        )
        out.append((after, list(diff)))
    return out


def stamp(at: datetime | None) -> str:
    """An instant to the minute, for people ("-": none)."""
    return at.strftime("%Y-%m-%d %H:%M") if at else "-"


def interval(start: datetime, end: datetime | None) -> str:
    return f"{stamp(start)} .. {stamp(end) if end else 'now'}"


def facts(record: Record, versions: int, now: datetime) -> list[tuple[str, str]]:
    """A memory's metadata for a person, as (name, value): what the browser's card and
    the web view's page show beside its text."""
    r = record
    resonance = effective_resonance(
        r.importance, r.resonance_type, r.last_activated or r.created_at, now
    )
    sources = (r.source_type.value, r.source_agent, r.source_ref)
    return [
        ("id", r.id),
        ("state", r.tombstone_text),
        ("kind", r.kind.value),
        ("scope", r.scope),
        ("tags", ", ".join(r.tags) or "-"),
        ("importance", f"{r.importance} (effective {resonance:.1f})"),
        ("trust", f"confidence {r.confidence:.2f}, trust score {r.trust_score:.2f}"),
        ("taint", r.taint.value),
        ("source", " / ".join(x for x in sources if x)),
        ("visibility", r.visibility.value + (f" ({r.owner})" if r.owner else "")),
        ("occurred", stamp(r.occurred_at)),
        ("created", stamp(r.created_at)),
        ("updated", stamp(r.updated_at)),
        ("valid", interval(r.valid_from, r.valid_until)),
        ("versions", str(versions)),
        ("session", r.session_id or "-"),
    ]
