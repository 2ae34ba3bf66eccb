"""How memories are shown to a model: between fences, with provenance marks. Pure.

Shared by every interface that puts memory text in front of a model (the CLI's text
output, the hooks' injected context, the MCP server).
"""

from __future__ import annotations

from memlane.model import Record, Taint

# What a read says of a file: source that is no longer what a memory was written about.
STALE_STATES = frozenset({"changed", "vanished"})


def provenance_marks(record: Record) -> str:
    """Marks on fenced text output: what a model reading the memory should weigh."""
    marks = {
        "[UNTRUSTED WEB]": record.taint is Taint.UNTRUSTED_WEB,
        "[UNTRUSTED TOOL]": record.taint is Taint.UNTRUSTED_TOOL,
        "[INJECTION RISK]": "injection-risk" in record.tags,
        "[PREVIOUSLY]": not record.live,
        f"[STALE SOURCE: {record.source_state}]": record.source_state in STALE_STATES,
    }
    return "".join(f" {mark}" for mark, applies in marks.items() if applies)


def fenced(kind: str, lines: list[str]) -> list[str]:
    """Text a model will read, between fences it cannot mistake for instructions."""
    return [f"<memlane-{kind}>", *lines, f"</memlane-{kind}>"]
