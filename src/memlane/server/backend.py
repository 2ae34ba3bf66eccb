"""The one Memory a server serves, the one thread that uses it, and the grant each
call runs under."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Self, TypeVar

from mcp.server.mcpserver import Context

from memlane.errors import ScopeNotAllowed
from memlane.lifecycle.llm import Model
from memlane.memory import Memory
from memlane.model import Taint
from memlane.server.auth import EVERY_SCOPE, Grant, request_grant

T = TypeVar("T")
Work = Callable[[Memory, Grant], T]
# A new model for one reflection run (each run has its own budget), or None: no
# model is configured (MEMLANE_LLM_CMD).
ModelFactory = Callable[[], Model | None]


def no_model() -> Model | None:
    return None


class StoreThread:
    """One Memory, opened and used on one worker thread, one call at a time.

    Trigger: requests arrive concurrently (several HTTP clients, or one client's
    parallel calls). Why: a SQLite connection belongs to the thread that opened it,
    and the facade's caches are not shared between threads. Outcome: every call runs
    on the one worker thread that opened the Memory, in arrival order; the event loop
    stays free to take the next request meanwhile.
    """

    def __init__(self, opener: Callable[[], Memory]) -> None:
        """`opener` makes the Memory (on the worker thread)."""
        self._opener = opener
        self._memory: Memory | None = None
        self._executor: ThreadPoolExecutor | None = None

    def __enter__(self) -> Self:
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="memlane-store")
        try:
            self._executor.submit(self._open).result()
        except BaseException:
            self._executor.shutdown()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._executor is not None:
            self._executor.submit(self._close).result()
            self._executor.shutdown()
            self._executor = None

    def _open(self) -> None:
        self._memory = self._opener()

    def _close(self) -> None:
        if self._memory is not None:
            self._memory.close()
            self._memory = None

    async def run(self, work: Callable[[Memory], T]) -> T:
        """`work(memory)` on the store's thread, awaited."""
        if self._executor is None:
            raise RuntimeError("the store thread is not open: use it in a with block")
        return await asyncio.wrap_future(self._executor.submit(self._with_memory, work))

    def _with_memory(self, work: Callable[[Memory], T]) -> T:
        assert self._memory is not None
        return work(self._memory)


class Backend(StoreThread):
    """The MCP tools' StoreThread: each call carries the request's grant."""

    def __init__(
        self,
        opener: Callable[[], Memory],
        *,
        grant: Grant = EVERY_SCOPE,
        inject_budget: int = 1500,
        authenticated: bool = False,
        model: ModelFactory = no_model,
    ) -> None:
        """`grant` is what a request without a token may touch (stdio, in-process);
        with `authenticated` (HTTP) every request must carry a token's grant instead.
        `model` makes the model the reflect tool asks."""
        super().__init__(opener)
        self._grant = grant
        self._authenticated = authenticated
        self.inject_budget = inject_budget
        self.model = model

    def _open(self) -> None:
        super()._open()
        assert self._memory is not None
        self._memory.default_taint = Taint.UNTRUSTED_TOOL  # what an agent sends is unverified

    @property
    def max_text_bytes(self) -> int:
        """The most UTF-8 bytes any text a call carries may have: the store's limit on
        a memory's body (MEMLANE_MAX_BODY_BYTES)."""
        if self._memory is None:
            raise RuntimeError("the store thread is not open: use it in a with block")
        return self._memory.limits.body_bytes

    async def call(self, ctx: Context[Any, Any], work: Work[T]) -> T:
        """`work(memory, grant)` on the store's thread. A MemlaneError it raises goes
        up to the server, which makes it the tool error a model reads."""
        grant = self.grant_of(ctx)
        return await self.run(lambda memory: work(memory, grant))

    def grant_of(self, ctx: Context[Any, Any]) -> Grant:
        """The request's grant: its token's over HTTP, the backend's otherwise."""
        found = request_grant(ctx.request_context.request)
        if found is not None:
            return found
        if self._authenticated:  # the middleware lets none through; fail closed anyway
            raise ScopeNotAllowed("this request carries no token")
        return self._grant
