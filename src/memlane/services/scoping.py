"""Moving memories between scopes: rekeying a scope (a renamed project), folding the
projects an alias map names as one under its canonical name, promoting a memory one
rung up the scope ladder (lifecycle.promote decides when), and the scopes a narrowing
to a project reads (`Memory.scopes`).

A move rewrites a memory's scope in place under the same id: its prior version is
archived with a reason naming the old scope, and the journal gets a `move` line, so
`history` and `journal` show where it was. Every state moves (superseded, invalidated
and retired memories too), so a project's history stays in one place.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec

from memlane.errors import Invalid, NotFound
from memlane.lazy import lazy_module
from memlane.lifecycle import promote
from memlane.lifecycle.promote import Verdict
from memlane.model import Filters, Record, replace
from memlane.runtime import Runtime
from memlane.scope import (
    ALL,
    GLOBAL,
    canonical_project,
    canonical_scope,
    parse_scope,
    rekeyed,
    scope_project,
    with_branches,
)
from memlane.store import Writer
from memlane.timeutil import utcnow

if TYPE_CHECKING:
    from memlane.write import patch as patching
else:  # the write code loads with the first write: a read never runs it
    patching = lazy_module("memlane.write.patch")

# Memories moved per transaction: a long rekey commits as it goes (a rerun moves the
# rest) and reports progress between chunks, without holding the writer lock for long.
MOVE_CHUNK = 200


class Move(msgspec.Struct, frozen=True):
    """One memory's move: from scope `old` to scope `new` (and its project's name)."""

    id: str
    old: str
    new: str
    title: str


class Moves(msgspec.Struct, frozen=True):
    """What a rekey or a canonicalization moved (or, in a dry run, would move)."""

    moves: tuple[Move, ...]
    dry_run: bool

    def by_scope(self) -> dict[tuple[str, str], int]:
        """How many memories go from each old scope to each new one."""
        counts: dict[tuple[str, str], int] = {}
        for move in self.moves:
            counts[(move.old, move.new)] = counts.get((move.old, move.new), 0) + 1
        return counts


class Scoping:
    """Rekeying scopes, canonicalizing projects and promotion up the scope ladder
    (`Memory.scopes`)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def covering(self, scope: str | None) -> tuple[str, ...] | None:
        """The scopes a narrowing to `scope` reads: a project's with its branches;
        None for every scope (`all`), the caller's chain when `scope` is None."""
        if scope is None:
            return self.rt.context.chain
        if scope.strip().lower() == ALL:
            return None
        return with_branches(parse_scope(scope), self.rt.store.scopes())

    def rekey(
        self,
        old: str,
        new: str,
        *,
        dry_run: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> Moves:
        """Move every memory of scope `old` this agent may see to `new`; when both are
        whole projects, `old`'s branches go to the same branches of `new`."""
        old, new = parse_scope(old), parse_scope(new)
        if old == new:
            raise Invalid(f"{old} is already the scope: nothing to move")
        known = self.rt.store.scopes()
        records = self._records(with_branches(old, known))
        if not records:
            near = difflib.get_close_matches(old, known, n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise NotFound(f"no memories in scope {old}{hint}")
        moves = [(r, rekeyed(r.scope, old, new)) for r in records]
        return self._apply([(r, s, r.project) for r, s in moves if s], dry_run, progress)

    def canonicalize(
        self,
        aliases: Mapping[str, str],
        *,
        dry_run: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> Moves:
        """Fold the projects the alias map names as one under the canonical name: each
        memory of an aliased project's scope (or its branches) moves to the canonical
        project's, a memory written in an aliased project names the canonical one, and
        so do the sessions and reminders of an aliased project."""
        aliased = {name for name in aliases if canonical_project(name, aliases) != name}
        if not aliased:
            return Moves((), dry_run)
        prefixes = tuple(f"project:{name}" for name in aliased)
        scopes = [s for s in self.rt.store.scopes() if s.split("@")[0] in prefixes]
        # A global memory names the project it was written in: that name folds too.
        written_in = [r for r in self._records([GLOBAL]) if r.project in aliased]
        changes = []
        for record in [*self._records(scopes), *written_in]:
            scope = canonical_scope(record.scope, aliases)
            project = canonical_project(record.project, aliases) if record.project else None
            if (scope, project) != (record.scope, record.project):
                changes.append((record, scope, project))
        moves = self._apply(changes, dry_run, progress)
        if not dry_run:  # the sessions and reminders of the old names follow
            with self.rt.transaction() as w:
                for name in sorted(aliased):
                    w.rename_project(name, canonical_project(name, aliases))
        return moves

    def promotion(self, memory_id: str) -> Verdict:
        """Whether a memory may climb one rung of the scope ladder now, and why."""
        return promote.judge(self.rt.read(self.rt.store, memory_id), utcnow())

    def promotion_candidates(self, scope: str | None = ALL) -> list[Verdict]:
        """The live memories this agent may see (of `scope`: a project's with its
        branches; `all` by default) that may climb a rung now, most applied first."""
        now = utcnow()
        filters = replace(self._selection(()), scopes=self.covering(scope))
        filters = replace(filters, include_superseded=False)
        found = [r for r in self.rt.store.query(filters) if r.applied_count >= promote.MIN_APPLIED]
        found.sort(key=lambda r: (-r.applied_count, r.id))
        return [v for v in (promote.judge(r, now) for r in found) if v.eligible]

    def promote(self, memory_id: str, reason: str | None = None) -> Move:
        """Move a memory one rung up the scope ladder (branch to project, project to
        global), when it is eligible (see lifecycle.promote); Invalid saying why not."""
        with self.rt.transaction() as w:
            record = self.rt.read(w, memory_id)
            verdict = promote.judge(record, utcnow())
            if not verdict.eligible or verdict.target is None:
                raise Invalid(f"{record.id} cannot be promoted: {verdict.why}")
            self._move(w, record, verdict.target, record.project, reason or "promoted")
        return Move(record.id, record.scope, verdict.target, record.title)

    def _selection(self, scopes: Sequence[str]) -> Filters:
        return Filters(
            scopes=tuple(scopes),
            viewer=self.rt.agent,
            include_private=self.rt.agent is not None,
            include_superseded=True,
            limit=None,
        )

    def _records(self, scopes: Sequence[str]) -> list[Record]:
        """Every memory of `scopes` this agent may see, in any state, oldest first."""
        if not scopes:
            return []
        return sorted(self.rt.store.query(self._selection(scopes)), key=lambda r: r.id)

    def _apply(
        self,
        changes: Sequence[tuple[Record, str, str | None]],
        dry_run: bool,
        progress: Callable[[int, int], None] | None,
    ) -> Moves:
        moves = tuple(Move(r.id, r.scope, scope, r.title) for r, scope, _ in changes)
        if dry_run:
            return Moves(moves, dry_run=True)
        for start in range(0, len(changes), MOVE_CHUNK):
            with self.rt.transaction() as w:
                for record, scope, project in changes[start : start + MOVE_CHUNK]:
                    self._move(w, record, scope, project)
            if progress is not None:
                progress(min(start + MOVE_CHUNK, len(changes)), len(changes))
        return Moves(moves, dry_run=False)

    def _move(
        self,
        w: Writer,
        listed: Record,
        scope: str,
        project: str | None,
        why: str | None = None,
    ) -> None:
        """Move one memory as it is now (read again inside the transaction); `project`
        is the project a memory moved to a scope of no project is written in; `why`
        goes before the old scope in its prior version's reason."""
        record = w.get(listed.id)
        if record is None:  # forgotten since it was listed
            return
        moved = patching.relocated(record, scope)
        if scope_project(scope)[0] is None:
            moved = replace(moved, project=project)
        if moved == record:
            return
        if scope == record.scope:
            reason = f"project {record.project} renamed to {project}"
        else:
            reason = patching.move_reason(record.scope, scope, why)
            w.journal("move", [record.id], self.rt.agent, f"{record.scope} -> {scope}")
        self.rt.commit_version(w, record, moved, reason)
