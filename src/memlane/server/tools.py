"""memlane's own tools. Each parses its arguments, calls one Memory method, renders.

A tool's docstring is its description, which a client sends the model on every turn:
it says when to use the tool and what comes back, and nothing more.

session_start is a passive, budgeted prefetch (it counts what it shows as surfaced,
never as used, and never shows injection-risk or untrusted-web memories); session_end
writes nothing unless given a note, so a client may pair the two freely.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from memlane.errors import Invalid
from memlane.lifecycle.pack import Pack
from memlane.memory import Memory
from memlane.model import MAX_IMPORTANCE, Kind, Signal, SourceType, Taint
from memlane.retrieve.expand import LINK_HOPS, MAX_LINK_HOPS
from memlane.server import render
from memlane.server.auth import Grant
from memlane.server.backend import Backend

JSON = dict[str, Any]
Ctx = Context[Any, Any]
# The fields of an answer listing other memories' ids (see `unseen_left_out`).
ID_LISTS = ("anchors", "scrubbed", "removed")


def _about(description: str) -> Any:
    return Field(description=description)


Id = Annotated[str, _about("A memory id such as m-3k9x2ab7, or a unique prefix.")]
Query = Annotated[str, _about("What you want to know, in plain words.")]
ReadScope = Annotated[
    str | None,
    _about(
        "Scopes to read, comma-separated: global, project:NAME[@BRANCH] or all. "
        "Default: this branch, project and global."
    ),
]
WriteScope = Annotated[
    str | None,
    _about("global (true everywhere) or project:NAME[@BRANCH]. Default: this project and branch."),
]
Content = Annotated[str, _about("One idea, complete on its own.")]
Title = Annotated[str | None, _about("Default: its first sentence.")]
KindArg = Annotated[Kind, _about("What sort of memory it is.")]
Tags = Annotated[list[str] | None, _about("Short labels, e.g. ['deploy', 'ci'].")]
Importance = Annotated[
    int | None,
    Field(ge=1, le=MAX_IMPORTANCE, description="1-10 usual; default 5."),
]
SignalArg = Annotated[
    Signal | None,
    _about("What verified it; none: your own unverified view."),
]
Source = Annotated[
    Literal["tool", "web"],
    _about("web: the text came from a web page or other fetched text."),
]
Limit = Annotated[int, Field(ge=1, le=50, description="Most memories.")]
MaxTokens = Annotated[
    int | None, Field(ge=1, description="Token budget for the results, best first.")
]
Mode = Annotated[
    Literal["keyword", "vector", "hybrid"],
    _about("By words (keyword), meaning (vector) or both."),
]
SearchLimit = Annotated[int, Field(ge=1, le=200, description="Most results.")]
MinScore = Annotated[
    float | None,
    Field(ge=0, le=1, description="Relevance floor (cosine), 0: none. Default: calibrated."),
]
IncludeGlobal = Annotated[bool | None, _about("false: no global memories.")]
GlobalLimit = Annotated[int | None, Field(ge=0, description="Most global memories.")]
LinkBudget = Annotated[int | None, Field(ge=0, description="Most linked memories.")]
LinkHops = Annotated[int, Field(ge=0, le=MAX_LINK_HOPS, description="Link steps.")]
Mmr = Annotated[bool, _about("false: no diversity re-ranking.")]
Reason = Annotated[str | None, _about("Why, in a few words.")]
NewText = Annotated[str | None, _about("New full text.")]
NewTitle = Annotated[str | None, _about("New title.")]
NewImportance = Annotated[int | None, Field(ge=1, le=MAX_IMPORTANCE, description="New importance.")]
Appended = Annotated[str | None, _about("Text to add at the end.")]
NewTags = Annotated[list[str] | None, _about("Replace all tags with these.")]
TagsAdded = Annotated[list[str] | None, _about("Tags to add.")]
TagsRemoved = Annotated[list[str] | None, _about("Tags to remove.")]
NewKind = Annotated[Kind | None, _about("New kind.")]
Ended = Annotated[str, _about("What changed, in a few words.")]
LinkKind = Literal[
    "related",
    "supports",
    "contradicts",
    "supersedes",
    "extends",
    "implements",
    "updates",
    "derives",
    "example_of",
]
LinkSource = Annotated[str, _about("The id the link starts from.")]
Target = Annotated[str, _about("The id it points to.")]
LinkArg = Annotated[LinkKind, _about("How source relates to target.")]
ForgetReason = Annotated[str | None, _about("Why, without repeating the content.")]
Task = Annotated[str | None, _about("The task or first request, if known.")]
Note = Annotated[str | None, _about("What is worth keeping; without it nothing is written.")]


def _hints(read_only: bool, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


READ, WRITE, DESTROY = (
    _hints(True, False, True),
    _hints(False, False, False),
    _hints(False, True, False),
)
HINTS: dict[str, ToolAnnotations] = {
    "remember": WRITE,
    "recall": READ,
    "search": READ,
    "get": READ,
    "update": WRITE,
    "invalidate": DESTROY,
    "link": _hints(False, False, True),  # linking again changes nothing
    "forget": DESTROY,
    "session_start": READ,
    "session_end": WRITE,
}


class ToolSet:
    """A set of tools: the methods `hints` names, each with its annotations, answered
    on `backend`'s store thread."""

    hints: dict[str, ToolAnnotations]

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    def tools(self) -> list[Tool]:
        return [
            Tool.from_function(getattr(self, name), annotations=hints)
            for name, hints in self.hints.items()
        ]


class MemoryTools(ToolSet):
    """remember, recall, search, get, update, invalidate, link, forget, session_start,
    session_end."""

    hints = HINTS

    async def _answer(self, ctx: Ctx, work: Callable[[Memory, Grant], JSON]) -> CallToolResult:
        """`work`'s answer, on the store's thread, with what the grant may not see
        left out (see `unseen_left_out`)."""

        def answer(mem: Memory, grant: Grant) -> JSON:
            return unseen_left_out(mem, grant, work(mem, grant))

        return render.result(await self.backend.call(ctx, answer))

    async def remember(
        self,
        content: Content,
        ctx: Ctx,
        title: Title = None,
        kind: KindArg = Kind.FACT,
        scope: WriteScope = None,
        tags: Tags = None,
        importance: Importance = None,
        signal: SignalArg = None,
        source: Source = "tool",
    ) -> CallToolResult:
        """Save what a later session should know: a fact, decision, preference, lesson,
        procedure or constraint; one idea, naming the project, tool or person it is
        about. A restatement refreshes the saved memory; a contradiction is saved and
        reported. Returns the id and status."""
        taint = Taint.UNTRUSTED_WEB if source == "web" else None  # None: the surface's own

        def work(mem: Memory, grant: Grant) -> JSON:
            where = grant.write_scope(scope)
            fields = {"kind": kind, "tags": tags, "importance": importance, "signal": signal}
            return render.written(mem.add(content, title, scope=where, taint=taint, **fields))

        return await self._answer(ctx, work)

    async def recall(
        self,
        query: Query,
        ctx: Ctx,
        scope: ReadScope = None,
        limit: Limit = 10,
        max_tokens: MaxTokens = None,
        min_score: MinScore = None,
        include_global: IncludeGlobal = None,
        global_limit: GlobalLimit = None,
        link_budget: LinkBudget = None,
        link_hops: LinkHops = LINK_HOPS,
        mmr: Mmr = True,
    ) -> CallToolResult:
        """The memories that matter for a question or task, best first, each with its
        text and why it was chosen, then memories linked to them. Use it when earlier
        decisions, conventions, preferences or mistakes may matter. Says so when nothing
        relevant is stored."""
        controls: JSON = {
            "include_global": include_global,
            "global_limit": global_limit,
            "link_budget": link_budget,
            "link_hops": link_hops,
            "mmr": mmr,
        }

        def work(mem: Memory, grant: Grant) -> JSON:
            scopes = grant.read_scopes(scope)
            found = mem.recall(
                query,
                limit=limit,
                max_tokens=max_tokens,
                min_score=min_score,
                scope=scopes,
                **controls,
            )
            return render.recalled(found)

        return await self._answer(ctx, work)

    async def search(
        self,
        query: Query,
        ctx: Ctx,
        scope: ReadScope = None,
        mode: Mode = "keyword",
        limit: SearchLimit = 20,
    ) -> CallToolResult:
        """Memories matching words or meaning, each as id, title, a snippet and score;
        read one in full with get. Use it to browse or to find an id."""

        def work(mem: Memory, grant: Grant) -> JSON:
            scopes = grant.read_scopes(scope)
            return render.hits(mem.searched(query, mode=mode, scope=scopes, limit=limit))

        return await self._answer(ctx, work)

    async def get(self, id: Id, ctx: Ctx) -> CallToolResult:
        """One memory in full by id: text, kind, scope, tags, dates, source, and whether
        it is still valid."""

        def work(mem: Memory, grant: Grant) -> JSON:
            return render.memory(mem.get(confined(mem, grant, id)))

        return await self._answer(ctx, work)

    async def update(
        self,
        id: Id,
        ctx: Ctx,
        reason: Reason = None,
        content: NewText = None,
        append: Appended = None,
        title: NewTitle = None,
        tags: NewTags = None,
        add_tags: TagsAdded = None,
        remove_tags: TagsRemoved = None,
        kind: NewKind = None,
        importance: NewImportance = None,
    ) -> CallToolResult:
        """Correct or extend a memory; its earlier text stays as a version. For what
        stopped being true, use invalidate."""
        given: JSON = {
            "content": content,
            "append": append,
            "title": title,
            "tags": tags,
            "add_tags": add_tags,
            "remove_tags": remove_tags,
            "kind": kind,
            "importance": importance,
        }
        changes = {name: value for name, value in given.items() if value is not None}

        def work(mem: Memory, grant: Grant) -> JSON:
            return render.written(mem.update(confined(mem, grant, id), reason=reason, **changes))

        return await self._answer(ctx, work)

    async def invalidate(self, id: Id, ctx: Ctx, reason: Ended) -> CallToolResult:
        """Mark a memory no longer true, from now on: when a fact, decision or plan has
        changed. It stays on record and stops surfacing."""

        def work(mem: Memory, grant: Grant) -> JSON:
            return render.memory(mem.invalidate(confined(mem, grant, id), reason))

        return await self._answer(ctx, work)

    async def link(
        self,
        source: LinkSource,
        target: Target,
        ctx: Ctx,
        type: LinkArg = "related",
        reason: Reason = None,
    ) -> CallToolResult:
        """Link two memories, so they surface together in recall."""

        def work(mem: Memory, grant: Grant) -> JSON:
            ends = confined(mem, grant, source), confined(mem, grant, target)
            return render.link(mem.graph.link(*ends, type, reason))

        return await self._answer(ctx, work)

    async def forget(self, id: Id, ctx: Ctx, reason: ForgetReason = None) -> CallToolResult:
        """Delete a memory for good, with no version kept: for what must not be kept (a
        mistake, private data). For a changed fact, use invalidate."""

        def work(mem: Memory, grant: Grant) -> JSON:
            done = mem.forget(confined(mem, grant, id), reason)
            return {
                "id": done.ids[0],
                "forgotten": True,
                "scrubbed": list(done.scrubbed),
                "removed": list(done.removed),
            }

        return await self._answer(ctx, work)

    async def session_start(
        self, ctx: Ctx, query: Task = None, scope: ReadScope = None, limit: Limit = 10
    ) -> CallToolResult:
        """The memories to keep in mind for a task (else the most important), as one
        block within the injection budget. For a client without memlane's hooks, which
        add it at session start."""
        budget = self.backend.inject_budget

        def work(mem: Memory, grant: Grant) -> JSON:
            scopes = grant.read_scopes(scope)
            if budget == 0:  # injection switched off: nothing is read
                return render.session_packed(None, budget)
            if query and query.strip():
                found = mem.recall(
                    query, passive=True, max_tokens=budget, limit=limit, scope=scopes
                )
                return render.session_recalled(found, budget)
            return render.session_packed(curated(mem, scopes, budget), budget)

        return await self._answer(ctx, work)

    async def session_end(
        self, ctx: Ctx, note: Note = None, scope: WriteScope = None
    ) -> CallToolResult:
        """Save a session's note as one unverified memory; without one, nothing. For a
        client without memlane's hooks, which capture sessions themselves."""

        def work(mem: Memory, grant: Grant) -> JSON:
            where = grant.write_scope(scope)
            if note is None or not note.strip():
                return {"written": False, "note": "session ended; nothing written"}
            # The agent's own note: a fact grounded in nothing, secrets redacted.
            unverified = {"signal": Signal.NONE, "source_type": SourceType.AGENT_SESSION}
            result = mem.add(note, scope=where, capture_mode="auto", **unverified)
            return {"written": True, **render.written(result)}

        return await self._answer(ctx, work)


def confined(mem: Memory, grant: Grant, memory_id: str) -> str:
    """The memory's id, resolved (a prefix too) among the grant's scopes only.

    Trigger: a confined grant names a memory by id or prefix. Why: resolving across
    the store would tell it, by ambiguous_id or scope_not_allowed, that ids, and how
    many, exist in scopes it does not hold. Outcome: a memory outside them is
    not_found, exactly as one that does not exist.
    """
    return memory_id if grant.scopes is None else mem.resolve(memory_id, grant.scopes)


def unseen_left_out(mem: Memory, grant: Grant, answer: JSON) -> JSON:
    """`answer` with its lists of other memories' ids (ID_LISTS) holding only memories
    in a confined grant's scopes.

    Trigger: an answer names memories besides those asked for: a memory's anchors,
    what a forget scrubbed or removed. Why: an anchor set at the CLI, or a memory
    derived from the one forgotten, may lie in a scope the grant does not hold.
    Outcome: such ids are left out (a removed memory, gone, with them).
    """
    if grant.scopes is None:
        return answer
    found = [(d, key) for d in _objects(answer) for key in ID_LISTS if key in d]
    seen = mem.in_scopes([i for d, key in found for i in d[key]], grant.scopes)
    for d, key in found:
        d[key] = [i for i in d[key] if i in seen]
    return answer


def _objects(value: Any) -> list[JSON]:
    """Every JSON object in `value`, itself included."""
    if isinstance(value, list):
        return [inner for item in value for inner in _objects(item)]
    if not isinstance(value, dict):
        return []
    return [value, *(inner for item in value.values() for inner in _objects(item))]


def curated(mem: Memory, scopes: list[str] | None, budget: int) -> Pack | None:
    """The pack within `budget` tokens, or None when there is nothing to show.

    Trigger: nothing in reach belongs in a curated tier, or the budget cannot hold
    the pack's header (pack refuses both; the scopes were checked already). Why: a
    session with nothing to start from is not an error. Outcome: an empty context.
    """
    try:
        return mem.packs.build(",".join(scopes) if scopes else None, max_tokens=budget)
    except Invalid:
        return None
