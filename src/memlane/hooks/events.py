"""What each hook event does, over the `Memory` facade.

- session-start: a fenced block of due reminders, core memories and recent ones,
  within the injection budget; then, when due, `memlane upkeep` started in the
  background (hooks.upkeep), which never delays or changes the answer.
- user-prompt: a passive recall on the prompt (and the session's recent tool
  operations); only what clears the gate (hooks.gate) is injected. Neither shows a
  memory twice in a session unless it changed since: each notes what it showed in the
  hook dir (hooks.state), under the host's session id.
- pre-tool: the rules (lessons, constraints, conventions, preferences) that name what
  a shell command or a file edit is about to touch (hooks.tool); silence otherwise,
  and never a decision to deny the call.
- subagent-start: the delegated task read as a prompt is, for the subagent's fresh
  context (which was shown nothing yet).
- stop: the new turns since the last capture, through the cue-phrase extractor (cheap:
  the host waits for a Stop hook); then, when a test, compile or lint run failed and
  later succeeded since the last Stop, the agent is asked (once a session) to save what
  fixed it (hooks.reflect).
- pre-compact, session-end: the same, or with `MEMLANE_LLM_CMD` set, the command under
  its budget (turns it never saw still go through the extractor); session-end then
  closes the session and writes its episode summary (Packs.close_session: the
  command's when `MEMLANE_LLM_CMD` is set and answers, else extractive; as tainted as
  the memories it draws on).

Every capture lands through `Memory.add` (the write policy: redaction, injection
tagging, dedup), tainted untrusted_tool, and (unless the capture log is off) is appended
to the day's capture log (hooks.captures). Each session keeps a cursor per capture mode,
so a transcript is read once, however often the hooks fire.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from memlane.errors import Invalid, MemlaneError, NotFound, Unavailable
from memlane.hooks import (
    captures,
    context,
    extract,
    gate,
    llm,
    reflect,
    state,
    tool,
    transcript,
    upkeep,
)
from memlane.hooks.host import STOP, Event
from memlane.lifecycle.wake import CORE_MIN_IMPORTANCE, excluded_by
from memlane.model import Record
from memlane.runtime import passive_ok
from memlane.timeutil import utcnow
from memlane.write import capturelog

if TYPE_CHECKING:
    from memlane.memory import Memory
    from memlane.retrieve.result import Prior

OpenMemory = Callable[[], "Memory"]
# The prompt's share of the recall query, and the tool-operation tokens' reserved slice
# after it: 500 characters in all, the prompt first, so what the agent is doing now
# still shapes the query.
PROMPT_CHARS = 400
OPS_CHARS = 100
# Hits the gate weighs: the gate lets at most gate.MAX_INJECTED through, and a memory
# ranked below the fifth rarely clears it.
RECALL_LIMIT = 5
# Session start: the wake cascade's size, and without an agent the core and recent reads.
WAKE_LIMIT = 20
CORE_LIMIT = 10
RECENT_LIMIT = 8
RECENT_DAYS = 7
# A captured statement is worth a little more than an unmarked note (5): someone said
# it was a rule or a decision.
CAPTURE_IMPORTANCE = llm.PROPOSED_IMPORTANCE
CAPTURE_TAG = "captured"
# Where from_llm hands a relation's parts (subject, predicate, object, context) to write.
RELATION_FIELD = "_relation"
# A cue phrase matched, but nothing read the sentence in its context: a capture by the
# deterministic extractor is believed less than a model's (or a person's) note (0.6),
# and still above the passive floor (0.25), so hooks show it.
CUE_CONFIDENCE = 0.45
CUE, LLM = "cue", "llm"
REFLECT = "reflect"  # the failure reflection's cursor
REFLECTED = "reflected"  # 1 once the session was asked to reflect
# The settings' defaults (memlane.config), for callers that build Options by hand.
DEFAULT_LLM_BUDGET = llm.Budget(calls=4, tokens=32000, seconds=20)


class Options(msgspec.Struct, frozen=True):
    """What the settings say about hooks (the interface reads them, not this module)."""

    budget: int = 1500
    hook_dir: Path | None = None  # cursors live here; None: every capture reads it all
    llm_cmd: str | None = None
    llm_budget: llm.Budget = DEFAULT_LLM_BUDGET
    command: str = context.COMMAND  # what the hints name (hooks.run.hint_command)
    capture_log: bool = False  # append what is captured to the hook dir's capture log
    upkeep: tuple[str, ...] = ()  # the command session-start starts when due; (): none


class Outcome(msgspec.Struct, frozen=True):
    """What a hook did: the context to inject (None: silence) and why."""

    reason: str
    context: str | None = None
    injected: tuple[str, ...] = ()
    captured: tuple[str, ...] = ()
    details: Mapping[str, Any] = msgspec.field(default_factory=dict)
    # Stop: what the agent is asked to do before it stops (None: let it stop).
    request: str | None = None


# ---- session start ---------------------------------------------------------------------


def session_start(event: Event, open_memory: OpenMemory, options: Options) -> Outcome:
    """The session's context (`session_context`), then the upkeep started when due; what
    the upkeep start did is in the details."""
    outcome = session_context(event, open_memory, options)
    if not options.upkeep or options.hook_dir is None:
        return outcome
    started = upkeep.start(options.upkeep, options.hook_dir, utcnow(), event.cwd)
    return msgspec.structs.replace(outcome, details={**outcome.details, "upkeep": started})


def session_context(event: Event, open_memory: OpenMemory, options: Options) -> Outcome:
    """Due reminders, core and recent memories; on a resumed session, less those it
    was shown already (any other start begins a new context)."""
    mem = open_memory()
    reset = event.source != state.RESUMED
    seen = {} if reset else state.shown(options.hook_dir, event.session_id)
    core, recent = remembered(mem)
    core, recent = context.unseen(core, seen), context.unseen(recent, seen)
    due = mem.lifecycle.due_reminders()
    sections = [
        ("Reminders due", [context.reminder_item(r) for r in due]),
        ("Core", [context.memory_item(r, options.command) for r in core]),
        ("Recent", [context.memory_item(r, options.command) for r in recent]),
    ]
    made = context.block(
        "session", context.session_header(options.command), sections, options.budget
    )
    shown = [r for r in (*core, *recent) if r.id in made.ids]
    state.note_shown(options.hook_dir, event.session_id, context.stamps(shown), reset=reset)
    if made.text is None:
        return Outcome("budget-drop" if made.omitted else "empty-pool")
    mem.surfaced([r.id for r in shown])  # not the reminders
    return Outcome(
        "injected", made.text, made.ids, details={"tokens": made.tokens, "omitted": made.omitted}
    )


def remembered(mem: Memory) -> tuple[list[Record], list[Record]]:
    """Core and recent memories for a session in this place: the agent's wake cascade
    (core, then recent and bridges) when there is an agent; else the most important
    memories and the latest ones. Only what a passive read may show, in this scope chain,
    without the wake cascade's excluded tags (archive, wake-exclude)."""
    floor = mem.recall_settings.passive_floor
    chain = set(mem.context.chain)

    def shown(r: Record) -> bool:
        return passive_ok(r, floor) and r.scope in chain and not excluded_by(r, False)

    if mem.agent:
        cascade = mem.wake(activate=False, limit=WAKE_LIMIT)
        core = [r for r in cascade.blooms if cascade.layers[r.id] == "core" and shown(r)]
        recent = [r for r in cascade.blooms if cascade.layers[r.id] != "core" and shown(r)]
        return core, recent
    important = mem.list(min_importance=CORE_MIN_IMPORTANCE, order="importance", limit=CORE_LIMIT)
    core = [r for r in important if shown(r)]
    taken = {r.id for r in core}
    latest = mem.recent(days=RECENT_DAYS, all_types=True, limit=RECENT_LIMIT)
    return core, [r for r in latest if shown(r) and r.id not in taken]


# ---- user prompt -----------------------------------------------------------------------


def user_prompt(event: Event, open_memory: OpenMemory, options: Options) -> Outcome:
    prompt = (event.prompt or "").strip()
    if not prompt or prompt.startswith("/"):  # a slash command is for the host
        return Outcome("trivial-prompt")
    text = prompt[:PROMPT_CHARS]
    asked, named = gate.terms(text), gate.requested(text)
    ops = recent_ops(event)
    hints = gate.terms(" ".join(ops)) - asked
    # Trigger: too few content words to ever clear the gate. Why: recall would open
    # the store and load a model for nothing. Outcome: silence, before any of it.
    if not gate.could_clear(asked, hints, named=named) or options.budget <= 0:
        return Outcome("trivial-prompt")
    mem = open_memory()
    result = mem.recall(
        query(text, ops), passive=True, count=False, limit=RECALL_LIMIT, max_tokens=options.budget
    )
    verdict = gate.judge(asked, hints, result, named=named)
    details: dict[str, Any] = {
        "ops": len(ops),
        "hits": len(result.hits),
        "held_back": len(result.held_back),
    }
    if result.skipped:  # the log says why the prompt was answered without a lane
        details["skipped_lanes"] = dict(result.skipped)
    if not result.hits and result.omitted:  # recall's own packing dropped them all
        return Outcome("budget-drop", details=details)
    if not verdict.admitted:
        return Outcome(verdict.reason, details=details)
    # Trigger: a memory this session was shown, by its start or an earlier prompt, and
    # not changed since. Why: the model still has it; again it only takes room.
    # Outcome: left out; silence when it leaves nothing.
    admitted = [h.record for h in verdict.admitted]
    fresh = context.unseen(admitted, state.shown(options.hook_dir, event.session_id))
    if len(fresh) < len(admitted):
        details["already_shown"] = len(admitted) - len(fresh)
    if not fresh:
        return Outcome("already-shown", details=details)
    priors = {r.id: result.priors_of(r.id) for r in fresh}
    cards = [context.card_item(c) for c in result.entities]
    outcome = shown(mem, "recall", context.RECALL_HEADER, fresh, options, details, priors, cards)
    made = [r for r in fresh if r.id in outcome.injected]
    state.note_shown(options.hook_dir, event.session_id, context.stamps(made))
    return outcome


def shown(
    mem: Memory,
    kind: str,
    header: str,
    records: Sequence[Record],
    options: Options,
    details: Mapping[str, Any],
    priors: Mapping[str, Sequence[Prior]] | None = None,
    cards: Sequence[context.Item] = (),
) -> Outcome:
    """The records (then any entity cards, in the room left) as a fenced block within
    the budget, counted as surfaced: injected, or a budget-drop when no record fits.
    `priors`: the states a record replaced, shown under it when they fit (a question
    about a change)."""
    items = [context.memory_item(r, options.command) for r in records]
    items = context.with_priors(items, priors or {})
    sections = [(None, items), *([("Entities", cards)] if cards else [])]
    made = context.block(kind, header, sections, options.budget)
    ids = tuple(i for i in made.ids if not i.startswith(context.CARD_KEY))
    if made.text is None or not ids:
        return Outcome("budget-drop", details=details)
    mem.surfaced(ids)
    return Outcome("injected", made.text, ids, details={**details, "tokens": made.tokens})


def query(prompt: str, ops: Sequence[str]) -> str:
    """The recall query: the prompt, then as many newest operation tokens as fit in
    their slice (whole tokens only)."""
    tail: list[str] = []
    for token in reversed(ops):
        if len(" ".join([token, *tail])) > OPS_CHARS:
            break
        tail.insert(0, token)
    return f"{prompt} {' '.join(tail)}".strip()


def recent_ops(event: Event) -> list[str]:
    """The session's recent tool-operation tokens; none when there is no transcript."""
    if not event.transcript_path:
        return []
    try:
        return transcript.recent_ops(event.transcript_path)
    except OSError:
        return []


# ---- before a tool runs, and a subagent's start ----------------------------------------

# Rules recall brings for the call's anchors, for hooks.tool to weigh.
TOOL_RECALL_LIMIT = 10


def pre_tool(event: Event, open_memory: OpenMemory, options: Options) -> Outcome:
    """The rules that bear on the tool call about to run (see hooks.tool)."""
    about = tool.subject(event.tool_name or "", event.tool_input or {}, event.cwd)
    if about is None or about.empty or options.budget <= 0:
        return Outcome("not-a-touch")
    mem = open_memory()
    # No relevance floor: the query is a list of anchors, not a sentence, and
    # hooks.tool asks for stronger evidence than any cosine.
    result = mem.recall(
        about.query,
        passive=True,
        count=False,
        limit=TOOL_RECALL_LIMIT,
        min_score=0.0,
        kind=[k.value for k in tool.RULE_KINDS],
    )
    chosen = tool.bearing(about, [h.record for h in result.hits])
    details = {"anchors": len(about.files) + len(about.words), "hits": len(result.hits)}
    if not chosen:
        return Outcome("below-bar", details=details)
    return shown(mem, "tool", context.TOOL_HEADER, chosen, options, details)


def subagent_start(event: Event, open_memory: OpenMemory, options: Options) -> Outcome:
    """The delegated task read as a prompt (user_prompt), for the subagent's context,
    which holds none of what its parent was shown. The task is the event's prompt when
    the host sends one, else the newest subagent call in the parent's transcript."""
    task = event.prompt
    if not task and event.transcript_path:
        try:
            task = transcript.delegated_task(event.transcript_path)
        except OSError:
            task = None
    if not task:
        return Outcome("no-task")
    # No session: what the parent was shown is not in the subagent's context.
    asked = msgspec.structs.replace(event, prompt=task, session_id=None)
    return user_prompt(asked, open_memory, options)


# ---- capture ---------------------------------------------------------------------------


def capture(event: Event, open_memory: OpenMemory, options: Options) -> Outcome:
    """New turns of the transcript into memories (see the module docstring)."""
    if event.name == STOP and event.stop_hook_active:
        return Outcome("stop-hook-active")
    path = event.transcript_path
    if not path or not Path(path).is_file():
        return Outcome("no-transcript")
    use_llm = bool(options.llm_cmd) and event.name != STOP
    return capture_transcript(
        path, event.session_id, event.host, open_memory, options, use_llm, event=event.name
    )


def capture_transcript(
    path: str,
    session_id: str | None,
    host: str,
    open_memory: OpenMemory,
    options: Options,
    use_llm: bool,
    *,
    event: str = "extract",
) -> Outcome:
    """The turns of the transcript at `path` not read before (a cursor per session and
    mode in the hook dir) into memories: through `options.llm_cmd` under its budget when
    `use_llm`, and the cue extractor for every turn it did not take."""
    mode = LLM if use_llm and options.llm_cmd else CUE
    session = session_id or path
    cursors = state.load_cursors(options.hook_dir, session, path) if options.hook_dir else {}
    chunk = transcript.read(path, cursors.get(mode, 0))
    details: dict[str, Any] = {"mode": mode, "turns": len(chunk.turns)}
    proposals: list[dict[str, Any]] = []
    unread = chunk.turns
    if mode == LLM and chunk.turns and options.llm_cmd:
        run = llm.run(options.llm_cmd, chunk.turns, options.llm_budget)
        proposals += [from_llm(item) for item in run.items]
        unread = run.left
        details.update(
            llm_calls=run.calls,
            llm_tokens=run.tokens,
            llm_breach=run.breach,
            llm_malformed=list(run.malformed),
        )
    proposals += [from_cue(c) for c in extract.extract(unread)]
    wrote = write(open_memory, session_id, host, proposals) if proposals else Wrote()
    if options.capture_log and options.hook_dir and wrote.written:
        at = utcnow()
        lines = [capturelog.entry(i, fields, at, event, host) for i, fields in wrote.written]
        if not captures.append(options.hook_dir, at, lines):
            details["capture_log"] = "not written"
    # Turns whose memories could not be stored are read again by the next capture (what
    # did land is then found known): the cursor moves only past turns fully handled.
    if options.hook_dir and not wrote.failed:
        state.save_cursors(options.hook_dir, session, path, {**cursors, mode: chunk.end})
    details.update(proposed=len(proposals), known=wrote.known, refused=wrote.refused)
    if wrote.failed:
        details.update(failed=len(wrote.failed), error=wrote.failed[0])
        return Outcome("capture-failed", captured=wrote.landed, details=details)
    reason = "captured" if wrote.landed else "nothing-new"
    return Outcome(reason, captured=wrote.landed, details=details)


def stop(event: Event, open_memory: OpenMemory, options: Options) -> Outcome:
    """The capture, then the failure reflection over the transcript since the last Stop
    (see hooks.reflect); never while the host is already continuing for a hook."""
    captured = capture(event, open_memory, options)
    path = event.transcript_path
    if event.stop_hook_active or not path or not options.hook_dir or not Path(path).is_file():
        return captured
    session = event.session_id or path
    cursors = state.load_cursors(options.hook_dir, session, path)
    if cursors.get(REFLECTED):  # a session is asked once
        return captured
    read, end = transcript.lines(path, cursors.get(REFLECT, 0))
    fixed = reflect.fixes(reflect.calls(read))
    asked = reflect.request(fixed, options.command, event.session_id)
    marks = {REFLECT: end, **({REFLECTED: 1} if asked else {})}
    state.save_cursors(options.hook_dir, session, path, {**cursors, **marks})
    if asked is None:
        return captured
    details = {**captured.details, "capture": captured.reason, "fixed": [f.what for f in fixed]}
    return msgspec.structs.replace(captured, reason="reflection", details=details, request=asked)


def session_end(event: Event, open_memory: OpenMemory, options: Options) -> Outcome:
    """The capture, then the session closed with its episode summary. A session that
    wrote no memory has no row to close; one closed already stays as it is."""
    captured = capture(event, open_memory, options)
    if not event.session_id or captured.reason == "capture-failed":
        return captured
    mem = open_memory()
    summarize = llm.summarizer(options.llm_cmd, options.llm_budget) if options.llm_cmd else None
    try:
        closed = mem.packs.close_session(event.session_id, summarize=summarize)
    except NotFound:
        return captured
    summary = {"closed": closed.id, "summary": closed.summary_id}
    return msgspec.structs.replace(captured, details={**captured.details, **summary})


def from_cue(candidate: extract.Candidate) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "content": candidate.content,
        "kind": candidate.kind,
        "tags": [CAPTURE_TAG, f"cue-{candidate.family}"],
        "importance": CAPTURE_IMPORTANCE,
        "confidence": CUE_CONFIDENCE,
    }
    if candidate.role == transcript.USER:
        fields["signal"] = "user"  # the person said it: grounded as a user statement
    return fields


def from_llm(item: llm.Proposal) -> dict[str, Any]:
    """A model's proposal (checked against its schema) as add fields: the entities it
    names as `entity:` tags (memlane's entities then link them), a relation as a fact
    and, under RELATION_FIELD, its parts for the entity graph."""
    relation = item.kind == "relation"
    fields: dict[str, Any] = {
        "content": item.text,
        "kind": "fact" if relation else item.kind,
        "tags": [
            CAPTURE_TAG,
            "llm",
            *(["relation"] if relation else []),
            *item.tags,
            *(f"entity:{name}" for name in item.about),
        ],
        "importance": item.importance,
    }
    if item.title and item.title.strip():
        fields["title"] = item.title.strip()
    if relation:
        fields[RELATION_FIELD] = (item.subject, item.predicate, item.object, item.content)
    return fields


class Wrote(msgspec.Struct, frozen=True):
    """What a capture's writes did."""

    landed: tuple[str, ...] = ()  # ids of the memories added
    known: int = 0  # found already (refreshed, or skipped as duplicates)
    refused: int = 0  # refused for what they say: the write policy, a bad value
    failed: tuple[str, ...] = ()  # why each write the store could not take failed
    written: tuple[tuple[str, dict[str, Any]], ...] = ()  # each landed id, its fields


def write(
    open_memory: OpenMemory, session: str | None, host: str, proposals: Sequence[Mapping[str, Any]]
) -> Wrote:
    """Each proposal through `Memory.add`, all of them even after a failure."""
    mem = open_memory()
    project = mem.context.project
    common: dict[str, Any] = {
        "taint": "untrusted_tool",
        "source_type": "agent_session",
        "source_agent": mem.agent or host,
        # Conventions and decisions belong to the project, not to the branch they were
        # said on; outside a project they are global.
        "scope": f"project:{project}" if project else "global",
    }
    if session:
        common |= {"session_id": session, "source_ref": f"session:{session}"}
    landed: list[str] = []
    written: list[tuple[str, dict[str, Any]]] = []
    failed: list[str] = []
    known = refused = 0
    for proposal in proposals:
        fields = {**common, **proposal}
        content, title = fields.pop("content"), fields.pop("title", None)
        said = fields.pop(RELATION_FIELD, None)
        try:
            result = mem.add(content, title, **fields)
        except Unavailable as exc:  # the store, not the text: worth another try
            failed.append(str(exc))
            continue
        except MemlaneError:
            refused += 1
            continue
        if said and result.id:
            _relate(mem, said, result.id)
        if result.landed and result.id:
            landed.append(result.id)
            written.append((result.id, {**common, **proposal}))
        else:
            known += 1
    return Wrote(tuple(dict.fromkeys(landed)), known, refused, tuple(failed), tuple(written))


def _relate(mem: Memory, said: tuple[str, str, str, str], memory_id: str) -> None:
    """A relation the model proposed, into the entity graph, learned from its fact.

    Trigger: the graph refuses it (its two ends are one entity, a name of no letters).
    Why: the fact it came with has landed and says the same. Outcome: left out."""
    subject, predicate, object, context = said
    try:
        mem.graph.relate(subject, predicate, object, context.strip() or None, memory_id)
    except (Invalid, NotFound):
        return
