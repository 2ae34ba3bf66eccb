"""Lifecycle: what keeps a memory alive over months (issue 5). So far: explicit
reinforcement and usage feedback (reference/000 "Reinforcement", reference/002
"feedback")."""

from __future__ import annotations

from dataclasses import replace

from memlane.errors import Invalid
from memlane.facade.core import Core
from memlane.model import Record
from memlane.timeutil import utcnow
from memlane.write.dedup import clamp

MAX_IMPORTANCE = 10
# The second violation of a lesson costs it this much trust, once (reference/002's
# TRUST_VIOLATION_FLOOR_DROP, applied at the violated_count 1 -> 2 crossing).
TRUST_VIOLATION_DROP = 0.15
_SECOND_VIOLATION = 2


class LifecycleOps(Core):
    """Reinforcement and feedback: the writers of importance, activation and usage."""

    def reinforce(self, memory_id: str, amount: int = 1, cap: int = MAX_IMPORTANCE) -> Record:
        """Raise a memory's importance by `amount` (at most `cap`), reset its decay clock
        and count the activation: the memory is still relevant."""
        if amount < 1:
            raise Invalid("--amount must be at least 1")
        if not 1 <= cap <= MAX_IMPORTANCE:
            raise Invalid(f"--cap must be between 1 and {MAX_IMPORTANCE}")
        with self._transaction() as w:
            old = self._live(w, memory_id)
            now = utcnow()
            new = replace(
                old,
                importance=max(old.importance, min(cap, old.importance + amount)),
                last_activated=now,
                activation_count=old.activation_count + 1,
            )
            w.replace(new, None)
            self._journal(w, "reinforce", old.id)
        return self._sourced(new)

    def feedback(self, memory_id: str, *, applied: bool) -> Record:
        """Count one use of a memory: it was applied, or it was violated (followed and
        wrong, or ignored and missed). The second violation costs 0.15 trust, once."""
        with self._transaction() as w:
            old = self._live(w, memory_id)
            if applied:
                new = replace(old, applied_count=old.applied_count + 1)
            else:
                violated = old.violated_count + 1
                trust = old.trust_score
                if violated == _SECOND_VIOLATION:
                    trust = clamp(trust - TRUST_VIOLATION_DROP)
                new = replace(old, violated_count=violated, trust_score=trust)
            w.replace(new, None)
            self._journal(w, "feedback.applied" if applied else "feedback.violated", old.id)
        return self._sourced(new)
