"""What the features of the `Memory` facade share: the runtime they work through
(memlane.runtime) and the write steps several of them take."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, cast

from memlane import runtime
from memlane.lazy import lazy_module
from memlane.lifecycle.review import ReviewPolicy, due_for_review
from memlane.model import Filters, Record, Taint, WriteResult, WriteStatus, replace
from memlane.runtime import (
    BatchLines,
    Due,
    Names,
    Records,
    Runtime,
)
from memlane.scope import Context
from memlane.store import Store, Writer
from memlane.timeutil import utcnow
from memlane.write.settings import Limits, Thresholds

if TYPE_CHECKING:  # numpy and the models load only when vectors are used
    from memlane.embed import Embedded, Embedder
    from memlane.retrieve.recall import RecallOptions
    from memlane.write import draft, pipeline
    from memlane.write.draft import WriteContext
else:  # the write policy loads with the first write: a read never runs it
    draft = lazy_module("memlane.write.draft")
    pipeline = lazy_module("memlane.write.pipeline")

T = TypeVar("T")


class _OnRuntime(Generic[T]):
    """An attribute of the facade that is its runtime's, read and set through it."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, facade: Any, owner: Any = None) -> T:
        return cast(T, getattr(facade.rt, self.name))

    def __set__(self, facade: Any, value: T) -> None:
        setattr(facade.rt, self.name, value)


def _deferred(result: WriteResult, why: str) -> WriteResult:
    return replace(
        result,
        status=WriteStatus.EMBED_DEFERRED,
        warnings=(*result.warnings, f"embedding deferred ({why}); run `memlane embed --pending`"),
    )


class Core:
    """The runtime (`rt`) and the write steps the features share."""

    store: _OnRuntime[Store] = _OnRuntime()
    agent: _OnRuntime[str | None] = _OnRuntime()
    context: _OnRuntime[Context] = _OnRuntime()
    limits: _OnRuntime[Limits] = _OnRuntime()
    embed_problem: _OnRuntime[str | None] = _OnRuntime()
    embed_on_write: _OnRuntime[bool] = _OnRuntime()
    recall_settings: _OnRuntime[RecallOptions] = _OnRuntime()
    write_policy: _OnRuntime[Thresholds] = _OnRuntime()
    review_policy: _OnRuntime[ReviewPolicy] = _OnRuntime()
    capture_mode: _OnRuntime[str] = _OnRuntime()
    default_taint: _OnRuntime[Taint] = _OnRuntime()
    redactions: _OnRuntime[list[tuple[str, str]]] = _OnRuntime()

    def __init__(
        self,
        store: Store,
        *,
        agent: str | None = None,
        context: Context | None = None,
        limits: Limits | None = None,
        embedder: Embedder | Callable[[], Embedder | None] | None = None,
        embed_problem: str | None = None,
        embed_on_write: bool = True,
    ) -> None:
        """Memory over `store` (see Runtime for the other arguments)."""
        self.rt = Runtime(
            store,
            agent=agent,
            context=context,
            limits=limits,
            embedder=embedder,
            embed_problem=embed_problem,
            embed_on_write=embed_on_write,
        )

    def close(self) -> None:
        self.rt.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def embedder(self) -> Embedder | None:
        """The embedder, created on first use; None when there is none or it failed."""
        return self.rt.embedder

    def resolve(self, memory_id: str, scopes: Sequence[str] | None = None) -> str:
        """The full id for an id or an unambiguous prefix (with or without `m-`); with
        `scopes`, only their memories are candidates (any other is NotFound)."""
        return self.rt.resolve(memory_id, scopes)

    def in_scopes(self, ids: Sequence[str], scopes: Sequence[str]) -> set[str]:
        """Those of `ids` that are memories in `scopes`, in any state."""
        return self.rt.in_scopes(ids, scopes)

    def filters(self, **options: Any) -> Filters:
        """Filters from keyword options (see `retrieve.filters.make_filters`)."""
        return self.rt.filters(**options)

    def list(self, filters: Filters | None = None, **options: Any) -> Records:
        """The memories the filters (or these keyword options) select, as read."""
        return self.rt.list(filters, **options)

    def _write_context(self) -> WriteContext:
        return draft.WriteContext(
            now=utcnow(),
            new_id=runtime.new_id,
            agent=self.agent,
            context=self.context,
            limits=self.limits,
            default_taint=self.default_taint,
        )

    def _review_queue(self, policy: ReviewPolicy, options: Mapping[str, Any]) -> Due:
        """Live memories this agent may see that are due for review under `policy`, their
        recall decaying by the recall half-lives, most decayed first: what `review`
        lists and `review_due_count` counts. `options` are the shared filters (scope,
        kind, ...); the default scope is this project's and global. The records are as
        stored: due-ness reads no anchor and no source file, so a count checks none."""
        chosen = replace(
            self.filters(**{"limit": 0, **options}),
            min_importance=policy.min_importance,
            raw_resonance=True,
        )
        half_lives = self.recall_settings.shape.half_lives
        return due_for_review(
            self.store.query(chosen),
            utcnow(),
            policy.threshold,
            policy.min_importance,
            half_lives,
        )

    def review_due_count(self, **options: Any) -> int:
        """How many memories `review` lists with the same `options` under the review
        policy: the count stats, health, doctor and the home screen show. Reads only."""
        return len(self._review_queue(self.review_policy, options))

    def _pinned(self, record: Record) -> Record:
        """A record about to be written: a file: source's hash taken (see write.sources)."""
        from memlane.write.sources import pinned

        recorded = pinned(record.source_ref, Path.cwd())
        return record if recorded == record.source_hash else replace(record, source_hash=recorded)

    def _check_embed_profile(self, no_embed: bool) -> None:
        """A write that will embed sets aside an embedder of another profile than the
        store's vectors (see Runtime.settle_profile)."""
        if self.embed_on_write and not no_embed:
            self.rt.settle_profile()

    def _with_rows(self, w: Writer, made: Mapping[str, Embedded]) -> None:
        """Vectors made before a write's transaction, stored in it with their rows.

        Trigger: add and add-batch, whose vectors the write policy makes first. Why:
        stored by a second transaction after the rows committed, a new memory was for
        a moment without vectors, and another writer's policy judging a restatement
        then could not see the two were alike in meaning: both landed. Outcome: rows
        and vectors commit together; a memory whose embedding failed is embedded after
        the commit (deferred if it fails again).
        """
        if not made or self.embedder is None:
            return
        from memlane.write import embedding

        # One read for the chunk, on the transaction's connection (it sees its rows);
        # Writer.get would lock row by row on a server.
        records = self.store.query(Filters(ids=tuple(made), any_visibility=True, limit=None))
        documents = [made[r.id] for r in records]
        embedding.store_documents(self.store, w, self.embedder, records, documents)

    def _reembedded(self, result: WriteResult) -> WriteResult:
        """Vectors for the memory a write just created or changed; deferred on failure."""
        if result.id is None:
            return result
        failed = self.rt.embed_changed([result.id])
        return _deferred(result, failed[result.id]) if result.id in failed else result

    def _embedded_lines(self, lines: BatchLines, ids: Names) -> BatchLines:
        """Embed a committed chunk's new memories; a failure marks its lines deferred."""
        failed = self.rt.embed_changed(ids)
        if not failed:
            return lines
        return [
            replace(ln, result=_deferred(ln.result, failed[ln.result.id]))
            if ln.result and ln.result.id in failed
            else ln
            for ln in lines
        ]

    def _commit_version(self, w: Writer, old: Record, new: Record, reason: str) -> Record:
        return pipeline.revise(w, old, new, reason, self.agent)
