"""`doctor`: what works in this store and this setup, and what to do about what does not."""

from __future__ import annotations

from dataclasses import dataclass

from memlane.errors import MemlaneError
from memlane.facade.core import ENTITY_META, Core

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str


class HealthOps(Core):
    """Self-checks of the store and the recall lanes."""

    def doctor(self) -> list[Check]:
        """Each check once; a failed one never stops the others."""
        return [self._store_check(), *self._vector_checks(), self._entity_check()]

    def _store_check(self) -> Check:
        stats = self.store.stats()
        return Check(
            "store",
            OK,
            f"{stats.path}: schema {stats.schema_version}, {stats.live} live of "
            f"{stats.total} memories, {stats.versions} versions, {stats.links} links",
        )

    def _vector_checks(self) -> list[Check]:
        embedder = self.embedder
        if embedder is None:
            why = self.embed_problem or "no embedding profile (MEMLANE_EMBED_PROFILE=none)"
            return [Check("vector lane", WARN, f"absent: {why}; recall uses keyword and entities")]
        from memlane.write import embedding

        try:
            embedding.check_profile(self.store, embedder)
        except MemlaneError as exc:
            return [Check("vector lane", FAIL, str(exc))]
        profile = embedder.profile
        lane = Check("vector lane", OK, f"{profile.signature}, {profile.dimension} dimensions")
        pending = len(self.store.unembedded(profile.signature))
        if pending:
            detail = f"{pending} memories without current vectors: run `memlane embed --pending`"
            return [lane, Check("vectors", WARN, detail)]
        return [lane, Check("vectors", OK, "every live memory has current vectors")]

    def _entity_check(self) -> Check:
        from memlane.graph.entities import EXTRACTOR_VERSION

        recorded = self.store.meta(ENTITY_META)
        if recorded == EXTRACTOR_VERSION:
            return Check("entity lane", OK, f"mentions current (extractor {EXTRACTOR_VERSION})")
        return Check(
            "entity lane",
            WARN,
            f"mentions from extractor {recorded or 'none'}, current {EXTRACTOR_VERSION}: "
            "the first recall or `entities` command re-reads them",
        )
