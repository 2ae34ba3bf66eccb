"""The maintenance namespace (`Memory.maintenance`): consolidation, organizing and
reflection, the runs that rewrite memories, one at a time under the maintenance lock
(memlane.locking)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from memlane.lifecycle import reflect as policy
from memlane.lifecycle.llm import Model
from memlane.model import Cadence, Check, Link
from memlane.runtime import Runtime
from memlane.services.consolidate import Consolidation, MaintenanceReport
from memlane.services.reflect import Applied, Reflection, Reflector, Writes


class Maintenance:
    """Consolidate, organize and reflect over the store, and the lock their runs hold.
    Reflection's insights and approved proposals are written through `writes` and tied
    to their sources through `link`."""

    def __init__(self, rt: Runtime, writes: Writes, link: Callable[..., Link]) -> None:
        self.rt = rt
        self._consolidation = Consolidation(rt)
        self._reflector = Reflector(rt, writes, link)

    def consolidate(
        self,
        threshold: float | None = None,
        *,
        dry_run: bool = False,
        scope: str | None = None,
        force: bool = False,
        cadence: Cadence | None = None,
    ) -> MaintenanceReport:
        """Fold live near-duplicates (similarity >= `threshold`, 0.80 by default) this
        agent may see, in `scope` (every scope by default), into their best-used, most
        confident member; `dry_run` writes nothing (see memlane.services.consolidate)."""
        return self._consolidation.consolidate(
            threshold, dry_run=dry_run, scope=scope, force=force, cadence=cadence
        )

    def organize(
        self,
        *,
        dry_run: bool = False,
        force: bool = False,
        cadence: Cadence | None = None,
        working_set: int | None = None,
    ) -> MaintenanceReport:
        """Consolidate the `working_set` most recent live memories (256 by default),
        then group what is left into topics and keep one extractive summary row per
        topic."""
        return self._consolidation.organize(
            dry_run=dry_run, force=force, cadence=cadence, working_set=working_set
        )

    def merged_from(self, memory_id: str) -> list[str]:
        """The memories consolidation folded into this one, first merged first; an id
        ends `:truncated` when its text did not fit and stays on its own row."""
        return self._consolidation.merged_from(memory_id)

    def reflect(
        self,
        model: Model | None,
        *,
        scope: str | None = None,
        days: int | None = None,
        min_new: int = policy.MIN_NEW,
        batch_size: int = policy.BATCH_SIZE,
        drain: bool = False,
    ) -> Reflection:
        """Reflect on the memories not reflected on yet (oldest first, `batch_size` a
        batch; every batch with `drain`), or, without a model, report the deterministic
        findings. `days`: without a watermark, only memories of the last `days`."""
        return self._reflector.reflect(
            model, scope=scope, days=days, min_new=min_new, batch_size=batch_size, drain=drain
        )

    def proposals(self, scope: str | None = None) -> list[policy.Proposal]:
        """The pack operations reflection proposed that wait for approval."""
        return self._reflector.proposals(scope)

    def apply_proposals(self, ids: Sequence[str], scope: str | None = None) -> list[Applied]:
        """Carry out the approved proposals (in the order given) through the write
        path; each leaves the pending list, done or failed with the reason."""
        return self._reflector.apply_proposals(ids, scope)

    def lock(self, operation: str = "maintenance") -> AbstractContextManager[None]:
        """Hold the maintenance lock for `operation` (Conflict while another run holds
        it): no consolidate, organize, reflect or restore runs meanwhile."""
        return self.rt.lock.held(operation)

    def check(self) -> Check:
        """`doctor`'s check: whether a maintenance run holds the lock now."""
        return self.rt.lock.check()
