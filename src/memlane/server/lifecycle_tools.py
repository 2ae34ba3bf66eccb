"""memlane's lifecycle tools: reflect and reminders, what `memlane reflect`,
`memlane remind` and `memlane reminders` do. Each parses its arguments, calls one
Memory namespace method, renders.

Both write (reflect its insights and approved proposals, reminders what it adds and
dismisses) and neither is an agent's routine step, so neither is in the core set.
Reminders are the server's agent's across every scope: a token confined to some scopes
gets none of them (`scope_not_allowed`). Reflect covers a confined token's own scopes
only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from memlane.errors import Invalid, MemlaneError, ScopeNotAllowed
from memlane.lifecycle.reflect import BATCH_SIZE, MIN_NEW
from memlane.memory import Memory
from memlane.server import render
from memlane.server.auth import Grant
from memlane.server.tools import WRITE, ReadScope, ToolSet

JSON = dict[str, Any]
Ctx = Context[Any, Any]
HINTS: dict[str, ToolAnnotations] = {"reflect": WRITE, "reminders": WRITE}

Days = Annotated[
    int | None, Field(ge=1, description="Before the first reflection: the last N days only.")
]
MinNew = Annotated[int, Field(ge=0, description="Skip while fewer memories are new.")]
BatchSize = Annotated[int, Field(ge=1, description="Memories per batch, oldest first.")]
Drain = Annotated[bool, Field(description="Every batch, not one.")]
Listing = Annotated[bool, Field(description="Only list the proposals waiting.")]
Approved = Annotated[
    list[str] | None, Field(description="Apply these waiting proposals, once the person approves.")
]
Action = Literal["list", "add", "dismiss", "check"]
ActionArg = Annotated[
    Action, Field(description="list (pending), add, dismiss, or check (those due now).")
]
When = Annotated[str | None, Field(description='add: "in 2 hours", "friday 5pm", an ISO time.')]
Text = Annotated[str | None, Field(description="add: what to be reminded of.")]
Zone = Annotated[str | None, Field(description="add: IANA time zone of when; default UTC.")]
ReminderId = Annotated[str | None, Field(description="dismiss: the reminder's id.")]
Everything = Annotated[bool, Field(description="list: dismissed ones too.")]
# The arguments each action of `reminders` reads; any other given is refused.
READS: dict[Action, frozenset[str]] = {
    "list": frozenset({"include_dismissed"}),
    "add": frozenset({"when", "text", "tz"}),
    "dismiss": frozenset({"id"}),
    "check": frozenset(),
}


class LifecycleTools(ToolSet):
    """reflect and reminders."""

    hints = HINTS

    async def _answer(self, ctx: Ctx, work: Callable[[Memory, Grant], JSON]) -> CallToolResult:
        return render.result(await self.backend.call(ctx, work))

    async def reflect(
        self,
        ctx: Ctx,
        scope: ReadScope = None,
        days: Days = None,
        min_new: MinNew = MIN_NEW,
        batch_size: BatchSize = BATCH_SIZE,
        drain: Drain = False,
        list: Listing = False,
        apply: Approved = None,
    ) -> CallToolResult:
        """Reflect on the memories not reflected on yet. With a model (MEMLANE_LLM_CMD):
        insights linked to their sources, and changes to the curated pack proposed with a
        diff, applied only on approval (apply). Without one: the memories it would reflect
        on, and the alike, stale and contradicting ones."""
        model = self.backend.model

        def work(mem: Memory, grant: Grant) -> JSON:
            scopes = grant.read_scopes(scope)
            where = ",".join(scopes) if scopes else None
            if apply:
                return render.applied(mem.reflection.apply_proposals(apply, where))
            if list:
                waiting = mem.reflection.proposals(where)
                return {"proposals": [render.proposal(p) for p in waiting]}
            done = mem.reflection.reflect(
                model(),
                scope=where,
                days=days,
                min_new=min_new,
                batch_size=batch_size,
                drain=drain,
            )
            return render.reflection(done, _titles(mem, [*done.insights, *done.batch]))

        return await self._answer(ctx, work)

    async def reminders(
        self,
        ctx: Ctx,
        action: ActionArg = "list",
        when: When = None,
        text: Text = None,
        tz: Zone = None,
        id: ReminderId = None,
        include_dismissed: Everything = False,
    ) -> CallToolResult:
        """This agent's reminders: list the pending ones (soonest first), add one due at
        a time, dismiss one, or check which are due now. Times are stored in UTC."""
        given: JSON = {"when": when, "text": text, "tz": tz, "id": id}
        given["include_dismissed"] = include_dismissed or None
        stray = sorted(k for k, v in given.items() if v is not None and k not in READS[action])
        if stray:
            raise Invalid(f"{', '.join(stray)}: not read by action {action}")

        def work(mem: Memory, grant: Grant) -> JSON:
            unconfined(grant)
            return _reminders(mem, action, given)

        return await self._answer(ctx, work)


def _reminders(mem: Memory, action: Action, given: JSON) -> JSON:
    lifecycle = mem.lifecycle
    if action == "add":
        if not given["when"] or not given["text"]:
            raise Invalid("add needs when and text")
        return render.reminder(lifecycle.remind(given["when"], given["text"], timezone=given["tz"]))
    if action == "dismiss":
        if not given["id"]:
            raise Invalid("dismiss needs id")
        lifecycle.dismiss(given["id"])
        return {"dismissed": given["id"].strip()}
    if action == "check":
        return render.reminders(lifecycle.due_reminders(), "no reminders are due")
    found = lifecycle.reminders(include_dismissed=bool(given["include_dismissed"]))
    return render.reminders(found, "no reminders")


def unconfined(grant: Grant) -> None:
    """ScopeNotAllowed for a token confined to some scopes.

    Trigger: a confined token asks for reminders. Why: they are the server's agent's,
    across every project, and a reminder names no scope the grant could be held to.
    Outcome: such a token reads and writes none.
    """
    if grant.scopes is not None:
        raise ScopeNotAllowed("reminders span every scope; this token is confined to some")


def _titles(mem: Memory, ids: list[str]) -> dict[str, str]:
    """The title of each memory still there, by id."""
    titles = {}
    for memory_id in ids:
        try:
            titles[memory_id] = mem.get(memory_id).title
        except MemlaneError:
            continue
    return titles
