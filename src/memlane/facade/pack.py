"""The curated pack and episode summaries (issue 5 §4, §7)."""

from __future__ import annotations

from memlane.facade.core import Core


class PackOps(Core):
    """The curated pack and episode summaries (issue 5 §4, §7)."""
