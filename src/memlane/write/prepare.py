"""A batch line made ready for the write policy: parsed, through the capture policy,
drafted, judged by the store's screen, and its entities read. Pure but for the clock and fresh ids, so
it runs in any process (services.preparing hands lines to worker processes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from memlane.errors import Conflict, Invalid, NotFound
from memlane.graph.entities import mentions_of
from memlane.model import Mention, replace
from memlane.timeutil import utcnow
from memlane.write import inputs, screen
from memlane.write.capture import Captured, capture, parse_mode
from memlane.write.draft import Draft, WriteContext, build_draft

# A batch line as given: a parsed object, or a JSON object line (str or UTF-8 bytes).
Item = Mapping[str, Any] | str | bytes


class Prepared(msgspec.Struct, frozen=True):
    """One line ready for the write policy, or why it cannot be written."""

    number: int
    captured: Captured | None = None
    draft: Draft | None = None
    cleared: bool = False  # the store's screen would store the draft's record as it is
    error: str | None = None
    mentions: tuple[Mention, ...] = ()  # the entities the draft's record names
    clean_names: tuple[str, ...] = ()  # their names and aliases that hold no secret


def prepare(number: int, item: Item, mode: str, context: WriteContext) -> Prepared:
    """Line `number` parsed, captured (`mode` unless the line names its own), drafted
    at this moment with `context`, and judged by the store's screen."""
    try:
        fields = dict(inputs.json_object(item))
        captured = capture(fields, parse_mode(fields.pop("capture_mode", None) or mode))
        draft = build_draft(captured.fields, replace(context, now=utcnow()))
    except (Invalid, NotFound, Conflict) as exc:
        return Prepared(number, error=str(exc))
    mentions = mentions_of(draft.record)
    return Prepared(
        number,
        captured,
        draft,
        screen.unchanged(draft.record),
        mentions=mentions,
        clean_names=tuple(screen.clean_names(mentions)),
    )


def prepare_lines(
    lines: Sequence[tuple[int, Item]], mode: str, context: WriteContext
) -> list[Prepared]:
    """`prepare` for each (number, item) in order."""
    return [prepare(number, item, mode, context) for number, item in lines]
