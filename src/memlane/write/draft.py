"""Turn the fields of an add (API keyword arguments or one add-batch line) into a record.

Every write funnel — `add`, the `--type` fact shortcut and each add-batch line —
comes through `build_draft`, so they validate and default identically.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import msgspec

from memlane.errors import Invalid
from memlane.model import (
    MAX_IMPORTANCE,
    SIGNAL_CONFIDENCE,
    UNSIGNALLED_CONFIDENCE,
    ContentType,
    EntryType,
    FactType,
    Kind,
    Record,
    ResonanceType,
    Signal,
    SourceType,
    State,
    Taint,
    Visibility,
    parse_enum,
    worst_taint,
)
from memlane.scope import Context, parse_scope, scope_project
from memlane.timeutil import parse_instant
from memlane.write.normalize import check_unicode, clean_text, dedup_hash, derive_title
from memlane.write.settings import Limits

# Alternative spellings accepted on input, mapped to the canonical field name.
ALIASES = {
    "resonance": "importance",
    "body": "content",
    "wake_phrase": "wake_phrases",
    "session": "fact_session",
    "type": "fact_type",
}
FIELDS = frozenset(
    {
        "content",
        "title",
        "kind",
        "fact_type",
        "category",
        "tags",
        "importance",
        "resonance_type",
        "scope",
        "source_agent",
        "source_ref",
        "source_type",
        "entry_type",
        "content_type",
        "session_id",
        "fact_session",
        "private",
        "visibility",
        "owner",
        "wake_phrases",
        "wake_order",
        "applicability",
        "domain",
        "occurred_at",
        "ephemeral",
        "allow_duplicate",
        "no_embed",
        "signal",
        "confidence",
        "taint",
        "thread_id",
        "state",
        "anchors",
    }
)

# Where each typed fact goes: kind, category, and the state it opens with.
FACT_ROUTES: dict[FactType, tuple[Kind, str, State | None]] = {
    FactType.DECISION: (Kind.DECISION, "decision", None),
    FactType.INSIGHT: (Kind.INSIGHT, "insight", None),
    FactType.PERSON: (Kind.PERSON, "person", None),
    FactType.QUOTE: (Kind.QUOTE, "quote", None),
    FactType.THREAD_OPENED: (Kind.THREAD, "thread", State.OPEN),
    FactType.COMMITMENT: (Kind.COMMITMENT, "commitment", State.OPEN),
    FactType.THREAD_CLOSED: (Kind.EVENT, "thread", None),
}


class WriteContext(msgspec.Struct, frozen=True):
    """What a write needs besides its fields: time, identity, place, limits."""

    now: datetime
    new_id: Callable[[], str]
    agent: str | None = None
    context: Context = msgspec.field(default_factory=Context)
    limits: Limits = msgspec.field(default_factory=Limits)
    default_taint: Taint = Taint.TRUSTED_INTERNAL


class Draft(msgspec.Struct, frozen=True):
    record: Record
    allow_duplicate: bool = False
    no_embed: bool = False
    close_thread: str | None = None
    anchors: tuple[str, ...] = ()


def canonical_fields(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Map aliases to canonical names; refuse unknown fields (a typo must not vanish)."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = ALIASES.get(str(key).replace("-", "_"), str(key).replace("-", "_"))
        if name not in FIELDS:
            raise Invalid(f"unknown field {key!r}")
        if name in out and out[name] != value:
            raise Invalid(f"field {key!r} given twice with different values")
        out[name] = value
    return out


def as_text(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise Invalid(f"{name} must be a string, not {type(value).__name__}")
    text = clean_text(value, name)
    return text or None


def as_list(value: Any, name: str) -> tuple[str, ...]:
    """A list of strings from a list or a comma-separated string, without blanks or repeats."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
        raise Invalid(f"{name} must be a list of strings or a comma-separated string")
    return tuple(dict.fromkeys(check_unicode(i.strip(), name) for i in items if i.strip()))


def as_int(value: Any, name: str, low: int, high: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise Invalid(f"{name} must be a whole number")
    try:
        number = int(value)
    except ValueError:
        raise Invalid(f"{name} must be a whole number, not {value!r}") from None
    if not low <= number <= high:
        usual = " (1-10 is the usual scale)" if name == "importance" else ""
        raise Invalid(f"{name} must be between {low} and {high}{usual}, not {number}")
    return number


def as_bool(value: Any, name: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise Invalid(f"{name} must be true or false")
    return value


def as_float(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid(f"{name} must be a number between 0 and 1")
    if not 0.0 <= float(value) <= 1.0:
        raise Invalid(f"{name} must be between 0 and 1, not {value}")
    return float(value)


def check_title(title: str, limits: Limits) -> str:
    if len(title) > limits.title_chars:
        raise Invalid(f"title is {len(title)} characters; the limit is {limits.title_chars}")
    return title


# Fillers that are letters to Unicode but show nothing (Hangul fillers), and variation
# selectors, which only change the look of the character before them.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0") | frozenset(map(chr, range(0xFE00, 0xFE10)))
_BLANK_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})


def shows_nothing(text: str) -> bool:
    """Whether a text is only controls, format characters (zero-width spaces and
    joiners, marks of direction), white space and fillers."""
    return all(c in _FILLERS or unicodedata.category(c) in _BLANK_CATEGORIES for c in text)


def check_body(body: str | None, limits: Limits) -> str:
    if not body:
        raise Invalid("content is empty")
    if shows_nothing(body):
        raise Invalid("content shows nothing (only invisible characters)")
    size = len(body.encode("utf-8"))
    if size > limits.body_bytes:
        raise Invalid(f"content is {size} bytes; the limit is {limits.body_bytes} bytes")
    return body


def check_tags(tags: tuple[str, ...], limits: Limits) -> tuple[str, ...]:
    if len(tags) > limits.tags:
        raise Invalid(f"{len(tags)} tags; the limit is {limits.tags}")
    for tag in tags:
        if len(tag) > limits.tag_chars:
            raise Invalid(
                f"tag {tag[:20]!r}… is {len(tag)} characters; the limit is {limits.tag_chars}"
            )
    return tags


def resolve_visibility(
    private: bool, visibility: Any, owner: str | None, agent: str | None
) -> tuple[Visibility, str | None]:
    chosen = parse_enum(Visibility, visibility, "visibility") if visibility is not None else None
    if private and chosen is Visibility.PUBLIC:
        raise Invalid("private and visibility public contradict each other")
    final = Visibility.PRIVATE if private else chosen or Visibility.PUBLIC
    if final is Visibility.PUBLIC:
        if owner:
            raise Invalid("owner applies only to private memories (add --private)")
        return final, None
    return final, private_owner(owner, agent)


def private_owner(given: str | None, agent: str | None) -> str:
    """The owner of a private memory being written: the agent writing it, always.

    Trigger: a write makes a memory private, or names its owner. Why: a private
    memory is shown to its owner as their own (a session start injects it), so a
    write naming someone else would speak in their memory; the author field is no
    identity either, anyone may type it. Outcome: the writing agent owns it; another
    name, or a private write with no agent identity, is Invalid.
    """
    if agent is None:
        raise Invalid("a private memory's owner is the agent writing it: set MEMLANE_AGENT")
    if given is not None and given != agent:
        raise Invalid(
            f"owner {given!r} refused: a private memory's owner is the agent writing it ({agent})"
        )
    return agent


def _routing(f: dict[str, Any]) -> tuple[Kind, str | None, State | None, ResonanceType | None]:
    """Kind, category, state and resonance type after the fact shortcut, if any."""
    kind = parse_enum(Kind, f["kind"], "kind") if f.get("kind") is not None else None
    rtype = f.get("resonance_type")
    resonance = parse_enum(ResonanceType, rtype, "resonance type") if rtype is not None else None
    state = parse_enum(State, f["state"], "state") if f.get("state") is not None else None
    if f.get("fact_type") is None:
        if f.get("thread_id") or f.get("fact_session"):
            raise Invalid("thread_id and session (fact session) require a fact type (--type)")
        return kind or Kind.FACT, None, state, resonance
    fact = parse_enum(FactType, f["fact_type"], "fact type")
    if fact is not FactType.THREAD_CLOSED and f.get("thread_id"):
        raise Invalid("thread_id is only valid with type thread_closed")
    routed_kind, category, opened = FACT_ROUTES[fact]
    return kind or routed_kind, category, state or opened, resonance or ResonanceType.EPHEMERAL


MAX_ID_CHARS = 64
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")


def _check_types(fields: Mapping[str, Any]) -> None:
    """Every field of the type a Record holds (text that is a string, a count that is
    a number, a list of strings, a time, a known enum value), as msgspec converts them:
    a value that only passes the store's column types would break every read."""
    given = {k: v for k, v in fields.items() if k in _RECORD_FIELDS and v is not None}
    try:
        msgspec.convert(given, Record, strict=False)
    except msgspec.ValidationError as exc:
        raise Invalid(f"memory: {exc}") from None


_RECORD_FIELDS = frozenset(Record.__struct_fields__)


def check_loaded(fields: Mapping[str, Any], limits: Limits) -> None:
    """A memory record read from a file (its fields as a Record holds them), held to
    what `add` accepts: Invalid naming the first field that is not. A record that
    only passes the store's column types (an importance of "high", a scope of
    `project:../x`, a 70 KB body) would land and break every read after it."""
    _check_types(fields)
    memory_id = fields["id"]
    if len(memory_id) > MAX_ID_CHARS or not _ID.fullmatch(memory_id):
        raise Invalid(f"id {memory_id[:40]!r}: letters, digits and . _ : -, at most {MAX_ID_CHARS}")
    if parse_scope(fields["scope"]) != fields["scope"]:
        raise Invalid(f"scope {fields['scope']!r} has blanks around it")
    for name, low, high in (("importance", 1, MAX_IMPORTANCE), ("wake_order", -(10**9), 10**9)):
        value = fields.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise Invalid(f"{name} must be a whole number, not {value!r}")
        as_int(value, name, low, high)
    for name in ("confidence", "trust_score"):
        as_float(fields.get(name), name)
    if fields.get("visibility") == Visibility.PRIVATE.value and not fields.get("owner"):
        raise Invalid("a private memory needs an owner")
    check_title(fields["title"], limits)
    check_body(fields["body"], limits)
    check_tags(tuple(fields.get("tags") or ()), limits)


def build_draft(raw: Mapping[str, Any], ctx: WriteContext) -> Draft:
    """Validate and default one add; raise Invalid naming the first problem."""
    f = canonical_fields(raw)
    lim = ctx.limits
    body = check_body(as_text(f.get("content"), "content"), lim)
    title = check_title(as_text(f.get("title"), "title") or derive_title(body), lim)
    kind, routed_category, state, resonance = _routing(f)
    category = as_text(f.get("category"), "category") or routed_category or kind.value
    scope = parse_scope(f["scope"]) if f.get("scope") is not None else ctx.context.default_scope
    project, branch = scope_project(scope)
    author = as_text(f.get("source_agent"), "source_agent") or ctx.agent
    visibility, owner = resolve_visibility(
        as_bool(f.get("private"), "private"),
        f.get("visibility"),
        as_text(f.get("owner"), "owner"),
        ctx.agent,
    )
    signal = parse_enum(Signal, f["signal"], "signal") if f.get("signal") is not None else None
    confidence = as_float(f.get("confidence"), "confidence")
    if confidence is None:
        confidence = SIGNAL_CONFIDENCE[signal] if signal else UNSIGNALLED_CONFIDENCE
    session = as_text(f.get("session_id"), "session_id") or as_text(
        f.get("fact_session"), "session"
    )
    occurred = f.get("occurred_at")
    record = Record(
        id=ctx.new_id(),
        scope=scope,
        title=title,
        body=body,
        kind=kind,
        category=category,
        created_at=ctx.now,
        updated_at=ctx.now,
        valid_from=ctx.now,
        version_from=ctx.now,
        dedup_hash=dedup_hash(title, body),
        content_type=_enum_or(ContentType, f.get("content_type"), ContentType.TEXT, "content type"),
        tags=check_tags(as_list(f.get("tags"), "tags"), lim),
        importance=as_int(f.get("importance"), "importance", 1, MAX_IMPORTANCE) or 5,
        resonance_type=resonance,
        signal=signal,
        confidence=confidence,
        taint=_enum_or(Taint, f.get("taint"), default_taint(signal, ctx.default_taint), "taint"),
        source_agent=author,
        session_id=session,
        source_ref=as_text(f.get("source_ref"), "source_ref"),
        source_type=_enum_or(SourceType, f.get("source_type"), SourceType.MANUAL, "source type"),
        entry_type=_enum_or(EntryType, f.get("entry_type"), EntryType.PRIMARY, "entry type"),
        project=project or ctx.context.project,
        branch=branch if project else ctx.context.branch,
        visibility=visibility,
        owner=owner,
        domain=as_text(f.get("domain"), "domain"),
        applicability=as_list(f.get("applicability"), "applicability"),
        ephemeral=as_bool(f.get("ephemeral"), "ephemeral"),
        state=state,
        wake_phrases=as_list(f.get("wake_phrases"), "wake phrases"),
        wake_order=as_int(f.get("wake_order"), "wake order", -(10**9), 10**9),
        occurred_at=_instant(occurred) if occurred is not None else None,
    )
    return Draft(
        record=record,
        allow_duplicate=as_bool(f.get("allow_duplicate"), "allow_duplicate"),
        no_embed=as_bool(f.get("no_embed"), "no_embed"),
        close_thread=as_text(f.get("thread_id"), "thread_id"),
        anchors=as_list(f.get("anchors"), "anchors"),
    )


def inherited_fields(old: Record) -> dict[str, Any]:
    """Fields a successor (supersede, merge) takes from its predecessor unless overridden."""
    return {
        "kind": old.kind.value,
        "category": old.category,
        "scope": old.scope,
        "tags": list(old.tags),
        "importance": old.importance,
        "resonance_type": old.resonance_type.value if old.resonance_type else None,
        "content_type": old.content_type.value,
        "private": old.visibility is Visibility.PRIVATE,
        "owner": old.owner,
        "session_id": old.session_id,
    }


def default_taint(signal: Signal | None, surface: Taint) -> Taint:
    """A write's taint when none is given: the surface's default, except
    that `--signal none` (the agent's own opinion, grounded in nothing) is at least
    untrusted_tool."""
    if signal is Signal.NONE:
        return worst_taint(surface, Taint.UNTRUSTED_TOOL)
    return surface


def _enum_or(cls: Any, value: Any, default: Any, name: str) -> Any:
    return parse_enum(cls, value, name) if value is not None else default


def _instant(value: Any) -> datetime:
    if not isinstance(value, (str, datetime)):
        raise Invalid("occurred_at must be an ISO-8601 string")
    return parse_instant(value, "occurred_at")
