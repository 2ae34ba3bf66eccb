"""Forget: a memory, or a whole scope, out of every table and index (issue 7 §4)."""

from __future__ import annotations

from memlane.errors import Invalid
from memlane.facade.core import Core
from memlane.model import Filters


class ForgetOps(Core):
    """Removal without a trace: only a journal line (who, when, why) stays."""

    def delete(self, memory_id: str) -> str:
        """Remove a memory from every table and index; the journal keeps one line, no content."""
        return self.forget(memory_id, operation="delete")

    def forget(
        self, memory_id: str, reason: str | None = None, *, operation: str = "forget"
    ) -> str:
        """Remove a memory from every table and index: content, versions, keyword index,
        vectors and chunks (the vector index file is rebuilt), links, mentions (and
        entities only it named), the wake log. The journal keeps one line: who, when,
        and `reason`, which must not repeat the content."""
        with self._transaction() as w:
            record = self._load(w, memory_id)
            w.delete(record.id)
            w.journal(operation, [record.id], self.agent, _reason(reason))
        self._drop_vector_file()
        return record.id

    def forget_scope(
        self, scope: str, *, confirm: bool = False, reason: str | None = None
    ) -> list[str]:
        """Forget every memory of one scope (a project's with its branches), whatever
        its state or visibility, in one transaction. Without `confirm`, Invalid saying
        how many it would forget."""
        if scope.strip().lower() in ("", "all"):
            raise Invalid("forget --scope needs one scope (not all)")
        [name] = self.filters(scope=scope).scopes or [scope]
        covered = tuple(s for s in self.store.scopes() if s == name or s.startswith(f"{name}@"))
        ids = self.store.admitted(
            Filters(scopes=covered, any_visibility=True, include_superseded=True, limit=None)
        )
        if not confirm:
            raise Invalid(f"would forget {len(ids)} memories in {name}; pass --confirm")
        with self._transaction() as w:
            for memory_id in ids:
                w.delete(memory_id)
            w.journal("forget", ids, self.agent, _reason(reason))
        self._drop_vector_file()
        return ids

    def _drop_vector_file(self) -> None:
        """The vector index file holds forgotten vectors until rebuilt: remove it now."""
        from memlane.retrieve.vectors import index_path

        path = index_path(self.store.location)
        if path is not None:
            path.unlink(missing_ok=True)
        self._index = None


def _reason(reason: str | None) -> str | None:
    text = " ".join((reason or "").split())
    return text[:200] or None
