"""What the features of the `Memory` facade share: the runtime they work through
(memlane.runtime) and the write steps several of them take."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, cast

from memlane.lazy import lazy_module
from memlane.lifecycle.review import ReviewPolicy
from memlane.model import Filters, Record, Taint, WriteResult
from memlane.runtime import (
    BatchLines,
    Names,
    Records,
    Runtime,
)
from memlane.scope import Context
from memlane.store import Store, Writer
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
        return self.rt.write_context()

    def review_due_count(self, **options: Any) -> int:
        """How many memories `review` lists with the same `options` under the review
        policy: the count stats, health, doctor and the home screen show. Reads only."""
        return self.rt.review_due_count(**options)

    def _pinned(self, record: Record) -> Record:
        return self.rt.pinned(record)

    def _check_embed_profile(self, no_embed: bool) -> None:
        self.rt.check_embed_profile(no_embed)

    def _with_rows(self, w: Writer, made: Mapping[str, Embedded]) -> None:
        self.rt.with_vectors(w, made)

    def _reembedded(self, result: WriteResult) -> WriteResult:
        return self.rt.reembedded(result)

    def _embedded_lines(self, lines: BatchLines, ids: Names) -> BatchLines:
        return self.rt.embedded_lines(lines, ids)

    def _commit_version(self, w: Writer, old: Record, new: Record, reason: str) -> Record:
        return self.rt.commit_version(w, old, new, reason)
