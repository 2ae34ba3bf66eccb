"""Consolidate and organize: fold live near-duplicates without losing text (issue 5 §6)."""

from __future__ import annotations

from memlane.facade.core import Core


class ConsolidateOps(Core):
    """Consolidate and organize: fold live near-duplicates without losing text (issue 5 §6)."""
