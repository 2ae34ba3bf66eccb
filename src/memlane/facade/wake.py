"""Wake: the identity cascade, the one-guess token ritual and its guess log (issue 5 §3)."""

from __future__ import annotations

from memlane.facade.core import Core


class WakeOps(Core):
    """Wake: the identity cascade, the one-guess token ritual and its guess log (issue 5 §3)."""
