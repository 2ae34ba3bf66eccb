"""The administration namespace (`Memory.admin`): the self-checks of `doctor` and
verified backups of the store."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from memlane.errors import MemlaneError
from memlane.model import Check
from memlane.runtime import Runtime
from memlane.services import doctor
from memlane.services.backup import DEFAULT_RETENTION, BackupReport, Backups
from memlane.services.doctor import Doctor
from memlane.store import EMBED_PROFILE_META


class Admin:
    """Self-checks and backups of one store."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._doctor = Doctor(rt)
        self._backups = Backups(rt)

    def doctor(
        self, backup_dir: Path | None = None, backup_every: timedelta | None = None
    ) -> list[Check]:
        """Every self-check once, the maintenance lock's last; a failed one never stops
        the others. `backup_dir` and `backup_every`: where snapshots go and how old the
        newest may be."""
        return [*self._doctor.doctor(backup_dir, backup_every), self.rt.lock.check()]

    def vector_profile(self) -> str | None:
        """The profile the store's vectors were made with (name/model/dimension), as
        the store records it; None before its first vector."""
        return self.rt.store.meta(EMBED_PROFILE_META)

    @staticmethod
    def diagnose(location: str | Path, problem: MemlaneError) -> list[Check]:
        """`doctor`'s checks of a store that could not be opened: the reason, and what
        a read-only look at its pages finds."""
        return doctor.diagnose(str(location), problem)

    def backup(
        self,
        out_dir: Path | None = None,
        retention: int = DEFAULT_RETENTION,
        due_after: timedelta | None = None,
    ) -> BackupReport:
        """Snapshot the store into `out_dir` (default: `backups/` beside the store),
        verify it, then delete the oldest snapshots beyond `retention`. With
        `due_after`, skip when the newest snapshot is younger than that."""
        return self._backups.backup(out_dir, retention, due_after)
