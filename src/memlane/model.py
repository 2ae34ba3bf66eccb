"""Values that cross memlane's layers: enums and frozen records. No I/O.

Records are msgspec Structs, not dataclasses. Trigger: a cold `memlane recall` defines
dozens of these classes on its way to the answer, and recall builds about a hundred
Records a query. Why: a dataclass generates and compiles its methods when defined, and
a frozen one is many times slower to build than a Struct. Outcome: `replace` and
`as_dict` below stand in for dataclasses.replace and dataclasses.asdict.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

import msgspec

from memlane.errors import Invalid


class Kind(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    DECISION = "decision"
    PROCEDURE = "procedure"
    LESSON = "lesson"
    CONVENTION = "convention"
    CONSTRAINT = "constraint"
    EVENT = "event"
    TASK = "task"
    INSIGHT = "insight"
    PERSON = "person"
    QUOTE = "quote"
    THREAD = "thread"
    COMMITMENT = "commitment"
    SUMMARY = "summary"


class MemoryClass(StrEnum):
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"


class ContentType(StrEnum):
    TEXT = "text"
    CODE = "code"
    CONFIG = "config"
    DATA = "data"


class ResonanceType(StrEnum):
    FOUNDATIONAL = "foundational"
    TRANSFORMATIVE = "transformative"
    RELATIONAL = "relational"
    OPERATIONAL = "operational"
    EPHEMERAL = "ephemeral"
    SESSION = "session"


class Signal(StrEnum):
    TEST = "test"
    COMPILE = "compile"
    LINT = "lint"
    REVIEWER = "reviewer"
    USER = "user"
    NONE = "none"


class Taint(StrEnum):
    TRUSTED_INTERNAL = "trusted_internal"
    UNTRUSTED_TOOL = "untrusted_tool"
    UNTRUSTED_WEB = "untrusted_web"


# Taints from most to least trusted: a memory folded into another keeps the worse.
TAINT_ORDER = (Taint.TRUSTED_INTERNAL, Taint.UNTRUSTED_TOOL, Taint.UNTRUSTED_WEB)


def worst_taint(*taints: Taint) -> Taint:
    return max(taints, key=TAINT_ORDER.index)


class Visibility(StrEnum):
    PUBLIC = "public"
    PRIVATE = "private"


class SourceType(StrEnum):
    MANUAL = "manual"
    RAM = "ram"
    CACHE = "cache"
    AGENT_SESSION = "agent_session"
    IMPORT = "import"


class EntryType(StrEnum):
    PRIMARY = "primary"
    SUMMARY = "summary"
    SYNTHESIS = "synthesis"


class LinkType(StrEnum):
    RELATED = "related"
    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    SUPERSEDES = "supersedes"
    EXTENDS = "extends"
    IMPLEMENTS = "implements"
    UPDATES = "updates"
    DERIVES = "derives"
    EXAMPLE_OF = "example_of"
    ANCHOR = "anchor"


# Links that read the same both ways are stored both ways.
SYMMETRIC_LINKS = frozenset({LinkType.RELATED, LinkType.CONTRADICTS})
# A new link raises its target's importance (a memory worth linking to still matters),
# unless it disputes or replaces the target.
UNREINFORCING_LINKS = frozenset({LinkType.CONTRADICTS, LinkType.SUPERSEDES, LinkType.ANCHOR})


class SessionType(StrEnum):
    DEVELOPMENT = "development"
    REVIEW = "review"
    EXPLORATION = "exploration"
    CONVERSATION = "conversation"


class FactType(StrEnum):
    """The `--type` shortcut: a typed fact that routes kind and category."""

    DECISION = "decision"
    INSIGHT = "insight"
    PERSON = "person"
    QUOTE = "quote"
    THREAD_OPENED = "thread_opened"
    COMMITMENT = "commitment"
    THREAD_CLOSED = "thread_closed"


class State(StrEnum):
    """Open/closed state of threads and commitments."""

    OPEN = "open"
    CLOSED = "closed"


class WriteStatus(StrEnum):
    ADDED = "added"
    UPDATED = "updated"
    REFRESHED = "refreshed"
    CONTRADICTION = "contradiction"
    EMBED_DEFERRED = "embed_deferred"
    REFUSED = "refused"
    ALREADY_PERSISTED = "already_persisted"


# Kinds grouped by how they age: events fade fast, knowledge slowly, know-how slowest.
_CLASS_OF_KIND: dict[Kind, MemoryClass] = {
    **dict.fromkeys(
        (Kind.EVENT, Kind.TASK, Kind.QUOTE, Kind.THREAD, Kind.COMMITMENT), MemoryClass.EPISODIC
    ),
    **dict.fromkeys(
        (Kind.PROCEDURE, Kind.LESSON, Kind.CONVENTION, Kind.CONSTRAINT), MemoryClass.PROCEDURAL
    ),
}

# Default confidence by grounding signal: an ungrounded note (the agent's own opinion)
# sits below the passive recall floor of 0.25 on purpose.
SIGNAL_CONFIDENCE: dict[Signal, float] = {
    Signal.TEST: 0.9,
    Signal.COMPILE: 0.9,
    Signal.LINT: 0.85,
    Signal.REVIEWER: 0.6,
    Signal.USER: 0.6,
    Signal.NONE: 0.2,
}
# A write that names no signal at all is a deliberate note by its author.
UNSIGNALLED_CONFIDENCE = 0.6

ENUM_FIELDS: dict[str, type[StrEnum]] = {
    "kind": Kind,
    "content_type": ContentType,
    "resonance_type": ResonanceType,
    "signal": Signal,
    "taint": Taint,
    "visibility": Visibility,
    "source_type": SourceType,
    "entry_type": EntryType,
    "state": State,
}

# The type lists of `memlane types KIND list`.
TYPE_REGISTRIES: dict[str, type[StrEnum]] = {
    "kinds": Kind,
    "source-types": SourceType,
    "entry-types": EntryType,
    "content-types": ContentType,
    "relationship-types": LinkType,
    "session-types": SessionType,
    "resonance-types": ResonanceType,
    "fact-types": FactType,
    "signals": Signal,
    "taints": Taint,
    "memory-classes": MemoryClass,
}

E = TypeVar("E", bound=StrEnum)


def parse_enum(cls: type[E], value: Any, name: str) -> E:
    """Return `value` as a member of `cls`, or refuse it naming the valid choices."""
    if isinstance(value, cls):
        return value
    text = str(value).strip().lower().replace("-", "_") if value is not None else ""
    try:
        return cls(text)
    except ValueError:
        pass
    choices = [m.value for m in cls]
    near = difflib.get_close_matches(text, choices, n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    raise Invalid(f"invalid {name} {value!r}{hint}; choose from: {', '.join(choices)}")


def class_of(kind: Kind) -> MemoryClass:
    return _CLASS_OF_KIND.get(kind, MemoryClass.SEMANTIC)


class Record(msgspec.Struct, frozen=True):
    """One memory as stored now (or, for as-of reads, as it was then).

    A frozen msgspec Struct, not a dataclass (see the module docstring): recall builds
    about a hundred a query. `replace` below changes a copy of one.
    """

    id: str
    scope: str
    title: str
    body: str
    kind: Kind
    category: str
    created_at: datetime
    updated_at: datetime
    valid_from: datetime
    version_from: datetime
    dedup_hash: str
    content_type: ContentType = ContentType.TEXT
    tags: tuple[str, ...] = ()
    importance: int = 5
    resonance_type: ResonanceType | None = None
    signal: Signal | None = None
    confidence: float = UNSIGNALLED_CONFIDENCE
    taint: Taint = Taint.TRUSTED_INTERNAL
    trust_score: float = 1.0
    source_agent: str | None = None
    session_id: str | None = None
    source_ref: str | None = None
    # A file: source's "sha256:<hex> <absolute path>" when the memory was written.
    source_hash: str | None = None
    source_type: SourceType = SourceType.MANUAL
    entry_type: EntryType = EntryType.PRIMARY
    project: str | None = None
    branch: str | None = None
    visibility: Visibility = Visibility.PUBLIC
    owner: str | None = None
    domain: str | None = None
    applicability: tuple[str, ...] = ()
    ephemeral: bool = False
    state: State | None = None
    wake_phrases: tuple[str, ...] = ()
    wake_order: int | None = None
    anchors: tuple[str, ...] = ()
    occurred_at: datetime | None = None
    valid_until: datetime | None = None
    superseded_by: str | None = None
    superseded_at: datetime | None = None
    supersede_reason: str | None = None
    version: int = 1
    retrieval_count: int = 0
    last_retrieved: datetime | None = None
    surfaced_count: int = 0
    last_surfaced: datetime | None = None
    activation_count: int = 0
    last_activated: datetime | None = None
    reviewed_at: datetime | None = None
    applied_count: int = 0
    violated_count: int = 0
    # Read-time only, never stored: "changed" or "vanished" when a file: source is no
    # longer what the memory was written about (confidence is then halved), "fresh".
    source_state: str | None = None

    @property
    def memory_class(self) -> MemoryClass:
        return class_of(self.kind)

    @property
    def live(self) -> bool:
        return self.superseded_at is None and self.valid_until is None

    @property
    def retired(self) -> bool:
        """Ended with no successor and not invalidated: no longer kept, not untrue."""
        return (
            not self.superseded_by and self.valid_until is None and self.superseded_at is not None
        )

    @property
    def tombstone_text(self) -> str:
        """How the memory ended, for messages: live, superseded by X, invalidated, retired."""
        if self.superseded_by:
            return f"superseded by {self.superseded_by}"
        if self.valid_until is not None:
            return f"invalidated ({self.supersede_reason})"
        if self.superseded_at is not None:
            return f"retired ({self.supersede_reason})"
        return "live"

    def live_at(self, t: datetime) -> bool:
        """Valid at instant t: valid_from <= t < valid_until (half-open), not yet superseded."""
        if self.created_at > t or self.valid_from > t:
            return False
        if self.valid_until is not None and t >= self.valid_until:
            return False
        return self.superseded_at is None or t < self.superseded_at


# Fields a version snapshot keeps: everything a user can change with update.
VERSIONED_FIELDS: tuple[str, ...] = (
    "title",
    "body",
    "kind",
    "category",
    "content_type",
    "tags",
    "importance",
    "resonance_type",
    "visibility",
    "owner",
    "session_id",
    "applicability",
    "wake_phrases",
    "wake_order",
    "state",
    "domain",
    "source_ref",
    "dedup_hash",
)
# Who may see a memory: decided by its current row, never by an old version (a restore
# or an as-of read never rolls it back).
ACCESS_FIELDS = frozenset({"visibility", "owner"})


class Version(msgspec.Struct, frozen=True):
    """A prior content version of a memory, valid over [valid_from, valid_until)."""

    memory_id: str
    number: int
    valid_from: datetime
    valid_until: datetime | None  # None: the current version
    reason: str
    actor: str | None
    fields: dict[str, Any]

    @property
    def title(self) -> str:
        return str(self.fields["title"])

    @property
    def body(self) -> str:
        return str(self.fields["body"])


class Link(msgspec.Struct, frozen=True):
    source: str
    target: str
    type: LinkType
    score: float | None = None
    reason: str | None = None
    created_at: datetime | None = None
    id: str | None = None  # "l-<n>" once stored: what `links delete` names


class EntityKind(StrEnum):
    """What sort of name an entity is, as the extractor read it."""

    CODE = "code"
    PATH = "path"
    HANDLE = "handle"
    PERSON_OR_NAME = "person_or_name"
    TAG = "tag"


class Mention(msgspec.Struct, frozen=True):
    """An entity named in a text: as written, what sort, and the alias it is keyed by."""

    name: str
    kind: EntityKind
    alias: str


class EntityType(StrEnum):
    """What an entity is in the world (its kind says how its name was written)."""

    PERSON = "person"
    PROJECT = "project"
    SERVICE = "service"
    TOOL = "tool"  # a library, a program, a framework
    FILE = "file"  # a file or a directory
    ORGANISATION = "organisation"
    PLACE = "place"
    CONCEPT = "concept"
    UNKNOWN = "unknown"

    @classmethod
    def of_kind(cls, kind: EntityKind) -> EntityType:
        """The type extraction can tell from how a name was written: a path is a file,
        an @handle a person; anything else is unknown until someone says."""
        if kind is EntityKind.PATH:
            return cls.FILE
        return cls.PERSON if kind is EntityKind.HANDLE else cls.UNKNOWN


class Entity(msgspec.Struct, frozen=True):
    """A named thing memories mention: its aliases and how many visible memories name it."""

    id: str
    name: str
    kind: EntityKind
    aliases: tuple[str, ...]
    mentions: int
    created_at: datetime
    type: EntityType = EntityType.UNKNOWN


class Predicate(StrEnum):
    """The canonical relation between two entities (free wording maps onto these)."""

    USES = "uses"
    DEPENDS_ON = "depends_on"
    PART_OF = "part_of"
    OWNS = "owns"
    WORKS_ON = "works_on"
    CONTRIBUTES_TO = "contributes_to"
    MANAGES = "manages"
    REPLACES = "replaces"
    LOCATED_IN = "located_in"
    RELATED_TO = "related_to"


class Relation(msgspec.Struct, frozen=True):
    """subject -predicate-> object, as written (`label`), with why (`context`), the
    memory it came from, and when it held: from `valid_from` until `valid_to` (open
    while current). A relation is ended, never deleted."""

    id: str
    subject_id: str
    subject: str
    predicate: Predicate
    label: str
    object_id: str
    object: str
    valid_from: datetime
    context: str | None = None
    memory_id: str | None = None
    valid_to: datetime | None = None

    @property
    def current(self) -> bool:
        return self.valid_to is None


class EntityMatch(msgspec.Struct, frozen=True):
    """An entity the entity lane looked up: the memories naming it (at most a cap), and
    whether more exist than the cap (a name too common to tell memories apart)."""

    entity_id: str
    kind: EntityKind
    alias: str
    memory_ids: tuple[str, ...]
    common: bool


class Session(msgspec.Struct, frozen=True):
    """A working period that memories can belong to (their session_id)."""

    id: str
    started_at: datetime
    type: str | None = None
    project: str | None = None
    agent: str | None = None
    ended_at: datetime | None = None


class WakeRitual(msgspec.Struct, frozen=True):
    """One walk of the wake ritual: the blooms fixed at --begin, where it stands, and
    the last response (replayed to a caller whose response was lost)."""

    id: str
    agent: str
    created_at: datetime
    version: int
    sequence: tuple[tuple[str, str], ...]  # (memory id, title at begin)
    wake: int | None = None
    model: str | None = None
    entry: int = 0  # the bloom the next step shows
    chunk: int = 0  # its chunk
    step: int = 0  # steps taken (judged or not)
    last_response: str | None = None  # JSON
    completed_at: datetime | None = None


class WakeGuess(msgspec.Struct, frozen=True):
    """A judged guess of the ritual (the guess log), with its later scores."""

    session_id: str
    step: int
    agent: str
    memory_id: str
    chunk: int
    position: int  # the bloom's place in the sequence
    title: str  # as shown
    guess: str
    phrases: tuple[str, ...]
    source: str  # authored | derived | auto | unphrased
    match_kind: str  # exact | close | none
    phrase_index: int | None
    bucket: str  # unhinted | revealed
    chunk_sha256: str
    created_at: datetime
    wake: int | None = None
    model: str | None = None
    scored_at: datetime | None = None
    scores: dict[str, float | int | None] = msgspec.field(default_factory=dict)


class Vitals(msgspec.Struct, frozen=True):
    """The graph's health as one reader sees it (`health`)."""

    live: int
    embedded: int  # live memories with current vectors of the store's profile
    anchored: int  # live memories with at least one anchor
    stale_high: int  # important once (raw >= 7), faded since (decayed < 5)


class Reminder(msgspec.Struct, frozen=True):
    id: str
    text: str
    due_at: datetime  # UTC
    created_at: datetime
    agent: str | None = None
    project: str | None = None
    dismissed_at: datetime | None = None


OK, WARN, FAIL = "ok", "warn", "fail"
# Tags the capture policy puts on what it screened (write.capture), which every layer
# reads: redacted secrets, and text that reads as instructions to a model.
REDACTED_TAG = "auto-redacted"
INJECTION_TAG = "injection-risk"


def is_derivation(link: Link) -> bool:
    """Whether a link records that its source's text was made from its target's: a
    summary, an insight, a consolidation keeper or a merge (not a person's successor)."""
    if link.type is LinkType.DERIVES:
        return True
    reason = link.reason or ""
    return link.type is LinkType.SUPERSEDES and reason.startswith(("consolidated", "merge"))


def inherit_marks(derived: Record, source: Record) -> Record:
    """A derived memory as its source leaves it: flagged `injection-risk` when the source
    is, as tainted as the worse of the two and trusted as the lesser. A derivation never
    launders what its sources were."""
    tags = derived.tags
    if INJECTION_TAG in source.tags and INJECTION_TAG not in tags:
        tags = (*tags, INJECTION_TAG)
    return replace(
        derived,
        tags=tags,
        taint=worst_taint(derived.taint, source.taint),
        trust_score=min(derived.trust_score, source.trust_score),
    )


class Check(msgspec.Struct, frozen=True):
    """One `doctor` finding; when not ok, the command that fixes it."""

    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str | None = None


class JournalEntry(msgspec.Struct, frozen=True):
    seq: int
    at: datetime
    operation: str
    memory_id: str | None
    actor: str | None
    detail: str | None = None  # why (forget --reason), never content


class RegistryEntry(msgspec.Struct, frozen=True):
    """A row of one of the registries (categories, agents, projects, applicability)."""

    registry: str
    key: str
    data: dict[str, Any] = msgspec.field(default_factory=dict)
    created_at: datetime | None = None


class Filters(msgspec.Struct, frozen=True):
    """The shared filter flags of list/search, as values."""

    scopes: tuple[str, ...] | None = None  # None: every scope
    ids: tuple[str, ...] | None = None  # only these memories (candidates of a lane)
    categories: tuple[str, ...] = ()
    kinds: tuple[Kind, ...] = ()
    tags_any: tuple[str, ...] = ()
    exclude_tag_prefixes: tuple[str, ...] = ()
    min_importance: float | None = None
    max_importance: float | None = None
    raw_resonance: bool = False  # min/max compare the stored importance, not the decayed
    wake_phrase: bool | None = None
    anchors: bool | None = None
    resonance_type_set: bool | None = None
    resonance_types: tuple[ResonanceType, ...] = ()
    viewer: str | None = None
    include_private: bool = False
    mine: bool = False
    any_visibility: bool = False  # internal reads by id: visibility is checked by the caller
    since: datetime | None = None
    until: datetime | None = None
    active_since: datetime | None = None  # last activated or changed from then on
    as_of: datetime | None = None
    include_superseded: bool = False
    session_id: str | None = None
    limit: int | None = 50
    order: str = "recent"  # recent | importance | created


class Hit(msgspec.Struct, frozen=True):
    """A search result: the record and how well it matched."""

    record: Record
    score: float
    rank: int


class WriteResult(msgspec.Struct, frozen=True):
    id: str | None
    status: WriteStatus
    warnings: tuple[str, ...] = ()
    duplicate_of: str | None = None
    dedup: str | None = None  # "bypassed_no_session" when the exact gate could not apply
    title: str | None = None
    version: int | None = None
    similarity: float | None = None  # refreshed / contradiction: how alike the two are
    contradicts: str | None = None  # contradiction: the memory the new one contradicts
    # Stored, but close in meaning to these (id, cosine): possibly a changed fact.
    potential_conflicts: tuple[tuple[str, float], ...] = ()
    redactions: tuple[str, ...] = ()  # kinds of the secrets replaced on capture

    @property
    def skipped(self) -> bool:
        return self.status is WriteStatus.ALREADY_PERSISTED

    @property
    def landed(self) -> bool:
        """Whether the write added a row (a refresh or a skip did not)."""
        return self.status not in (WriteStatus.ALREADY_PERSISTED, WriteStatus.REFRESHED)


class BatchLine(msgspec.Struct, frozen=True):
    """Outcome of one line of add-batch (line numbers count from 1)."""

    line: int
    result: WriteResult | None = None
    error: str | None = None


class BatchResult(msgspec.Struct, frozen=True):
    lines: tuple[BatchLine, ...]

    @property
    def ids(self) -> list[str | None]:
        return [ln.result.id if ln.result else None for ln in self.lines]

    @property
    def added(self) -> int:
        return sum(1 for ln in self.lines if ln.result and ln.result.landed)

    @property
    def refreshed(self) -> int:
        return sum(
            1 for ln in self.lines if ln.result and ln.result.status is WriteStatus.REFRESHED
        )

    @property
    def already_saved(self) -> int:
        return sum(1 for ln in self.lines if ln.result and ln.result.skipped)

    @property
    def failed(self) -> list[BatchLine]:
        return [ln for ln in self.lines if ln.error is not None]


class Stats(msgspec.Struct, frozen=True):
    total: int
    live: int
    superseded: int
    invalidated: int
    retired: int  # ended with no successor (retire, consolidate --prune)
    versions: int
    links: int
    by_kind: dict[str, int]
    by_category: dict[str, int]
    by_scope: dict[str, int]
    by_class: dict[str, int]
    schema_version: int
    path: str


def unique(items: Iterable[str]) -> tuple[str, ...]:
    """Items in first-seen order, without repeats or blanks."""
    seen: dict[str, None] = {}
    for item in items:
        text = item.strip()
        if text:
            seen.setdefault(text, None)
    return tuple(seen)


# Weekly decay of resonance by stored level: low-resonance notes
# fade fastest; foundational and transformative memories never decay.
DECAY_EXEMPT = frozenset({ResonanceType.FOUNDATIONAL, ResonanceType.TRANSFORMATIVE})
_WEEK_SECONDS = 7 * 24 * 3600


def weekly_decay_rate(importance: int) -> float:
    if importance <= 3:
        return 0.90
    if importance <= 5:
        return 0.95
    return 0.975


V = TypeVar("V", bound=msgspec.Struct)


def replace(value: V, /, **changes: Any) -> V:
    """A changed copy of a model value (dataclasses.replace for Structs)."""
    return msgspec.structs.replace(value, **changes)


def as_dict(value: msgspec.Struct) -> dict[str, Any]:
    """A model value's fields by name, nested values converted too (dataclasses.asdict)."""
    return {name: _as_plain(getattr(value, name)) for name in value.__struct_fields__}


def _as_plain(value: Any) -> Any:
    if isinstance(value, msgspec.Struct):
        return as_dict(value)
    if isinstance(value, list | tuple):
        return type(value)(_as_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_plain(v) for k, v in value.items()}
    return value


# A write takes importance 1 to MAX_IMPORTANCE; 1-10 is the usual scale (recall scores
# 10 or more alike, and reinforcement stops at REINFORCE_CAP).
MAX_IMPORTANCE = 100
# Reinforcement never raises importance above this, the top of the usual scale.
REINFORCE_CAP = 10


def reinforced(record: Record, now: datetime, amount: int = 1, cap: int = REINFORCE_CAP) -> Record:
    """A memory still relevant: importance up by `amount` (never above `cap`, never
    lowered), its decay clock reset, the activation counted."""
    return replace(
        record,
        importance=max(record.importance, min(cap, record.importance + amount)),
        last_activated=now,
        activation_count=record.activation_count + 1,
    )


def effective_resonance(
    importance: int,
    resonance_type: ResonanceType | str | None,
    clock_start: datetime,
    now: datetime,
) -> float:
    """Importance after weekly decay since `clock_start` (last activation or creation)."""
    if resonance_type is not None and ResonanceType(resonance_type) in DECAY_EXEMPT:
        return float(importance)
    weeks = max(0, int((now - clock_start).total_seconds() // _WEEK_SECONDS))
    return importance * weekly_decay_rate(importance) ** weeks


# ---- results of feature operations (their logic lives with the feature) --------------


class _Clear:
    """Marker: remove the value (wake order `-`)."""

    def __repr__(self) -> str:
        return "CLEAR"


CLEAR: Any = _Clear()


class Patch(msgspec.Struct, frozen=True):
    """What one update changes. None means: leave as is."""

    title: str | None = None
    content: str | None = None
    append: str | None = None
    prepend: str | None = None
    find: str | None = None
    replace: str | None = None
    nth: int | None = None
    replace_all: bool = False
    tags: tuple[str, ...] | str | None = None
    add_tags: tuple[str, ...] | str | None = None
    remove_tags: tuple[str, ...] | str | None = None
    category: str | None = None
    kind: str | None = None
    importance: int | None = None
    resonance_type: str | None = None
    content_type: str | None = None
    wake_phrases: tuple[str, ...] | str | None = None
    add_wake_phrases: tuple[str, ...] | str | None = None
    remove_wake_phrases: tuple[str, ...] | str | None = None
    wake_order: Any = None  # int, CLEAR, or None
    visibility: str | None = None
    private: bool = False
    owner: str | None = None
    force: bool = False
    session_id: str | None = None
    applicability: tuple[str, ...] | str | None = None
    domain: str | None = None
    state: str | None = None
    source_ref: str | None = None
    anchors: tuple[str, ...] | str | None = None
    add_anchors: tuple[str, ...] | str | None = None
    remove_anchors: tuple[str, ...] | str | None = None
    scope: str | None = None  # move the memory to this scope (history keeps the old one)


class Cadence(msgspec.Struct, frozen=True):
    """How often maintenance runs on its own (settings): a week after the last run, or
    sooner once the store has grown by a fifth."""

    interval_days: float = 7.0
    growth: float = 0.20


class Cascade(msgspec.Struct, frozen=True):
    """The wake set in order, each bloom's layer, and per-tag counts of what the
    exclusion kept out (an upper bound: see `fill`)."""

    blooms: tuple[Record, ...]
    layers: dict[str, str]  # memory id -> core | recent | bridge | resonant
    excluded: dict[str, int] = msgspec.field(default_factory=dict)


class EmbedOutcome(msgspec.Struct, frozen=True):
    """What an embedding run did: the memories embedded, those it could not, and why."""

    embedded: tuple[str, ...]
    failed: tuple[str, ...]
    error: str | None = None
