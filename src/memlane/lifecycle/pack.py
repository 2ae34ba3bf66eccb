"""The curated pack: the most important live memories as markdown for a MEMORY.md /
core.md tier, the file a host loads into every session. Pure.

Packing, precisely. The memories that belong in a curated tier are ranked by weight
(see `weight`) and walked best first. A memory's bullet is kept when it fits
whole in what the budgets leave after the header, the bullets already kept and, for
the first bullet of its topic, that topic's heading; otherwise it is skipped and the
walk goes on, so a smaller bullet further down may still fit. Nothing is ever cut.
The pack is the header, then each topic (ordered by its best bullet) with its bullets
in rank order: exactly the pieces the walk counted, so it is never over budget.

Budgets: `max_bytes` counts the UTF-8 bytes of the whole pack, header and headings
included; `max_tokens` (optional) the same token estimate recall's budget uses
(retrieve.budget.estimate_tokens) of the whole pack.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

import msgspec

from memlane.errors import Invalid
from memlane.model import Kind, Record, ResonanceType, Taint, Visibility, effective_resonance
from memlane.retrieve.budget import CHARS_PER_TOKEN

# 32 KiB (about 8k tokens): a small share of a context window, which a file loaded into
# every session may take.
PACK_MAX_BYTES = 32768
# A curated tier holds stable facts. Temporary tasks and
# in-progress work (tasks, open threads) and session-specific details (ephemeral and
# session resonance, so episode summaries too) do not belong in it.
TRANSIENT_KINDS = frozenset({Kind.TASK, Kind.THREAD})
TRANSIENT_RESONANCE = frozenset({ResonanceType.EPHEMERAL, ResonanceType.SESSION})


# What a read says of a file: source that is no longer what a memory was written about.
_STALE = frozenset({"changed", "vanished"})


class Pack(msgspec.Struct, frozen=True):
    markdown: str
    ids: tuple[str, ...]  # the memories packed, in the order shown
    omitted: tuple[str, ...]  # memories that belong but did not fit, best first
    size_bytes: int  # UTF-8 bytes of `markdown`
    tokens: int  # estimate_tokens(markdown)


class _Size(msgspec.Struct, frozen=True):
    """What a piece of the pack costs: UTF-8 bytes and characters."""

    bytes: int = 0
    chars: int = 0

    @classmethod
    def of(cls, text: str) -> _Size:
        return cls(len(text.encode("utf-8")), len(text))

    def __add__(self, other: _Size) -> _Size:
        return _Size(self.bytes + other.bytes, self.chars + other.chars)

    @property
    def tokens(self) -> int:
        """estimate_tokens of a text this long, without building the text."""
        return -(-self.chars // CHARS_PER_TOKEN)


class _Budget(msgspec.Struct, frozen=True):
    max_bytes: int
    max_tokens: int | None

    def fits(self, size: _Size) -> bool:
        within_tokens = self.max_tokens is None or size.tokens <= self.max_tokens
        return size.bytes <= self.max_bytes and within_tokens


def belongs(record: Record) -> bool:
    """Whether a memory belongs in a curated tier: live, and not transient work or a
    session's detail (see TRANSIENT_KINDS)."""
    transient = record.resonance_type in TRANSIENT_RESONANCE or record.ephemeral
    return record.live and record.kind not in TRANSIENT_KINDS and not transient


# The weight: confidence × trust × effective importance × (1 + ln(1 + uses)).
# A product: a sure triviality and an important guess both make poor core memory, so
# any factor near zero sinks a memory (a sum would let one carry the other).
# confidence × trust is how sure recall is of a memory (as retrieve.score has it);
# effective importance is importance as it has decayed since its last activation
# (model.effective_resonance; foundational and transformative never fade). Uses (explicit retrievals and confirmed
# applications; passive surfacing proves nothing) confirm rather than decide, hence
# the logarithm: 1 use ×1.7, 10 uses ×3.4, 100 uses ×5.6 — a memory read a hundred
# times still loses to one ten times as important.
def weight(record: Record, now: datetime) -> float:
    """The memory's standing for the pack: confidence × trust × effective importance
    × (1 + ln(1 + uses))."""
    clock = record.last_activated or record.created_at
    importance = effective_resonance(record.importance, record.resonance_type, clock, now)
    uses = record.retrieval_count + record.applied_count
    return record.confidence * record.trust_score * importance * (1 + math.log1p(uses))


def ranked(records: Sequence[Record], now: datetime) -> list[Record]:
    """The memories that belong, heaviest first; ties: the most recently updated, then id."""
    kept = [r for r in records if belongs(r)]
    kept.sort(key=lambda r: r.id)
    kept.sort(key=lambda r: (weight(r, now), r.updated_at), reverse=True)
    return kept


def topic(record: Record) -> str:
    """A memory's topic: its category, the one shelf every memory sits on (tags would
    repeat a memory under each of them)."""
    return record.category


def heading(name: str) -> str:
    return f"\n## {name[:1].upper()}{name[1:]}\n\n"


def header(now: datetime, scope: str) -> str:
    return (
        "# Memory\n\n"
        f"_The most important live memories ({scope}), packed by memlane on "
        f"{now.date().isoformat()}; each bullet ends with its id, author, date and "
        "source._\n"
    )


def bullet(record: Record) -> str:
    """One memory as one markdown list item: its text (continuation lines indented),
    then its provenance, on the last line or (after a multi-line text) a line of its own."""
    lines = _text(record).split("\n")
    body = "\n".join([lines[0], *(f"  {ln}" if ln.strip() else "" for ln in lines[1:])])
    sep = "\n  " if len(lines) > 1 else " "
    return f"- {body}{sep}({provenance(record)})\n"


def _text(record: Record) -> str:
    """The body, led by the title when the body does not open with it already."""
    body = record.body.strip()
    if body.startswith(record.title.rstrip("…")):
        return body
    return f"**{record.title}**: {body}"


def provenance(record: Record) -> str:
    """Id · author · date written · source, then what a reader should weigh."""
    parts = [
        record.id,
        record.source_agent,
        record.created_at.date().isoformat(),
        record.source_ref,
        "private" if record.visibility is Visibility.PRIVATE else None,
        "UNTRUSTED TOOL" if record.taint is Taint.UNTRUSTED_TOOL else None,
        f"STALE SOURCE: {record.source_state}" if record.source_state in _STALE else None,
    ]
    return " · ".join(p for p in parts if p)


def check_budget(max_bytes: int, max_tokens: int | None) -> None:
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise Invalid(f"--max-bytes must be a whole number of at least 1, not {max_bytes!r}")
    if max_tokens is not None and (isinstance(max_tokens, bool) or max_tokens < 1):
        raise Invalid(f"--max-tokens must be a whole number of at least 1, not {max_tokens!r}")


def pack(
    records: Sequence[Record],
    now: datetime,
    max_bytes: int = PACK_MAX_BYTES,
    max_tokens: int | None = None,
    scope: str = "all scopes",
) -> Pack:
    """The pack of `records` (the caller has kept only what its reader may see);
    see the module docstring. Refuses budgets the header alone does not fit in."""
    check_budget(max_bytes, max_tokens)
    budget = _Budget(max_bytes, max_tokens)
    top = header(now, scope)
    if not budget.fits(_Size.of(top)):
        need = _Size.of(top)
        raise Invalid(
            f"the budget leaves no room for the pack's header "
            f"({need.bytes} bytes, {need.tokens} tokens)"
        )
    order = ranked(records, now)
    kept = _walk(order, _Size.of(top), budget)
    shown = _grouped([r for r in order if r.id in kept])
    markdown = top + "".join(_section(name, rs) for name, rs in shown)
    size = _Size.of(markdown)
    ids = tuple(r.id for _, rs in shown for r in rs)
    omitted = tuple(r.id for r in order if r.id not in kept)
    return Pack(markdown, ids, omitted, size.bytes, size.tokens)


def _walk(order: Sequence[Record], used: _Size, budget: _Budget) -> set[str]:
    """The ids of the bullets that fit, walking best first (see the module docstring)."""
    kept: set[str] = set()
    opened: set[str] = set()
    for record in order:
        name = topic(record)
        cost = _Size.of(bullet(record))
        if name not in opened:
            cost += _Size.of(heading(name))
        if budget.fits(used + cost):
            used += cost
            kept.add(record.id)
            opened.add(name)
    return kept


def _grouped(best_first: Sequence[Record]) -> list[tuple[str, list[Record]]]:
    """Records by topic: topics in the order of their best record, records in rank order."""
    groups: dict[str, list[Record]] = {}
    for record in best_first:
        groups.setdefault(topic(record), []).append(record)
    return list(groups.items())


def _section(name: str, records: Sequence[Record]) -> str:
    return heading(name) + "".join(bullet(r) for r in records)
