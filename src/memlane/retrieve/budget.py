"""Token budgets: estimate a text's tokens and pack whole results into --max-tokens. Pure.

Packing, precisely. Items arrive best first and each has a cost and a priority.
With no budget every item is kept. Otherwise items are admitted priority tier by
tier, highest first, and within a tier in the order given: an item is kept when
its whole cost fits in what is left of the budget, else it is omitted and packing
goes on (a later, smaller item may still fit). Nothing is ever cut in half.

So a lower-priority item is always dropped before a higher-priority one would be:
a decision or a constraint is omitted only when the decisions and constraints
ranked above it leave no room for it, whatever the facts around it score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, NamedTuple, TypeVar

from memlane.errors import Invalid
from memlane.model import Kind, Record
from memlane.retrieve.score import Scored

T = TypeVar("T")

# No tokenizer ships with memlane: four characters a token is the usual estimate
# for English text, and rounding up never under-counts a short memory.
CHARS_PER_TOKEN = 4
# Decisions and constraints are what an agent must not act against; they are the
# last to leave a packed recall.
PROTECTED_KINDS = frozenset({Kind.DECISION, Kind.CONSTRAINT})
PROTECTED = 1
ORDINARY = 0


class Packed(NamedTuple, Generic[T]):
    kept: tuple[T, ...]
    omitted: tuple[T, ...]
    tokens_used: int


def estimate_tokens(text: str) -> int:
    """Characters over CHARS_PER_TOKEN, rounded up: "" is 0, "abcde" is 2."""
    return -(-len(text) // CHARS_PER_TOKEN)


def pack(
    items: Sequence[T],
    max_tokens: int | None,
    cost: Callable[[T], int],
    priority: Callable[[T], int] = lambda _: ORDINARY,
) -> Packed[T]:
    """Keep whole items within `max_tokens` (None: no limit); see the module docstring.

    kept and omitted keep the input order; tokens_used is the cost of what was kept.
    """
    if max_tokens is not None and (isinstance(max_tokens, bool) or max_tokens < 0):
        raise Invalid(f"max tokens must be a whole number >= 0, not {max_tokens!r}")
    costs = [_cost(cost, item) for item in items]
    if max_tokens is None:
        return Packed(tuple(items), (), sum(costs))
    left = max_tokens
    kept: set[int] = set()
    for i in sorted(range(len(items)), key=lambda i: -priority(items[i])):  # stable
        if costs[i] <= left:
            kept.add(i)
            left -= costs[i]
    return Packed(
        tuple(item for i, item in enumerate(items) if i in kept),
        tuple(item for i, item in enumerate(items) if i not in kept),
        max_tokens - left,
    )


def _cost(cost: Callable[[T], int], item: T) -> int:
    value = cost(item)
    if value < 0:
        raise Invalid(f"a token cost cannot be negative, not {value!r}")
    return value


def kind_priority(kind: Kind) -> int:
    return PROTECTED if kind in PROTECTED_KINDS else ORDINARY


def result_text(record: Record) -> str:
    """What a recall result shows of a memory: its title and body."""
    return f"{record.title}\n{record.body}"


def pack_results(
    results: Sequence[Scored],
    max_tokens: int | None,
    count_tokens: Callable[[str], int] = estimate_tokens,
    render: Callable[[Record], str] = result_text,
) -> Packed[Scored]:
    """Pack scored results (best first) by their rendered size; protected kinds last to go."""
    return pack(
        results,
        max_tokens,
        cost=lambda s: count_tokens(render(s.record)),
        priority=lambda s: kind_priority(s.record.kind),
    )
