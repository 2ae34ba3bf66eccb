"""The write policy's settings: size limits and similarity thresholds.

Kept apart from the policy itself (draft, dedup) so that opening a store, which
applies the settings, does not load the policy: a read never runs it, and a cold
`memlane recall` must start fast.
"""

from __future__ import annotations

import msgspec

from memlane.errors import Invalid


class Limits(msgspec.Struct, frozen=True):
    """How large a memory may be: body bytes (UTF-8), title characters, tags, tag characters."""

    body_bytes: int = 64 * 1024
    title_chars: int = 300
    tags: int = 50
    tag_chars: int = 64


class Thresholds(msgspec.Struct, frozen=True):
    """The write policy's similarity cut-offs (settings)."""

    string: float = 0.85  # rapidfuzz ratio of the normalized texts: near-duplicate
    vector: float = 0.92  # cosine: near-duplicate, and the conflict band's upper edge
    conflict: float = 0.60  # cosine: the conflict band's lower edge

    def __post_init__(self) -> None:
        # The conflict band is [conflict, vector): with its lower edge at or above its
        # upper one it is empty, and no conflict would ever be reported.
        if not self.conflict < self.vector:
            raise Invalid(
                f"the conflict threshold ({self.conflict:g}) must be below the vector "
                f"threshold ({self.vector:g})"
            )
