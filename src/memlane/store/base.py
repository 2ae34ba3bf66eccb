"""The Store contract: the handful of operations the core needs from a backend.

Records cross it as frozen Structs (memlane.model); nothing backend-specific leaks through.
Reads are methods of `Store`; every write happens inside `Store.write()`, one
transaction that either lands whole or not at all.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import msgspec

from memlane.errors import Invalid, SchemaOutdated
from memlane.model import (
    Entity,
    EntityType,
    Filters,
    Hit,
    JournalEntry,
    Link,
    LinkType,
    Mention,
    Record,
    RegistryEntry,
    Relation,
    Reminder,
    Session,
    Stats,
    Version,
    Vitals,
    WakeGuess,
    WakeRitual,
)

if TYPE_CHECKING:  # numpy loads only when vectors are used
    import numpy as np
    import numpy.typing as npt

    from memlane.store.parts import (
        EntityReads,
        RegistryReads,
        ReminderReads,
        SessionReads,
        WakeReads,
    )

    # A query vector for `Store.nearest`: floats, or a float32 (or float64) array.
    QueryVector: TypeAlias = Sequence[float] | npt.NDArray[np.floating[Any]]


class Counts(msgspec.Struct, frozen=True):
    """How many memories a store (or a snapshot of it) holds: all, and live."""

    total: int
    live: int


class SchemaStatus(msgspec.Struct, frozen=True):
    """Where a store's schema stands: its version, this memlane's latest, and the
    migrations (number, name) that would bring it there, in order."""

    location: str
    version: int
    latest: int
    pending: tuple[tuple[int, str], ...]


def pending_migrations(
    version: int, migrations: Sequence[tuple[int, str, Any]]
) -> tuple[tuple[int, str], ...]:
    """The migrations a store at `version` has not applied yet."""
    return tuple((number, name) for number, name, _ in migrations if number > version)


def outdated(location: str, version: int, latest: int) -> SchemaOutdated:
    """The error of opening a store that needs migrating while auto_migrate is off."""
    return SchemaOutdated(
        f"{location} has schema version {version}, older than this memlane's ({latest}), "
        "and auto_migrate is off: run `memlane migrate`"
    )


class ChangeMark(msgspec.Struct, frozen=True):
    """Where a store's logs of changed memories stood: its journal and its vector
    changes, each by the number of its last line."""

    journal: int
    vectors: int


class Selection(msgspec.Struct, frozen=True):
    """Which memories an export carries (all the other kinds follow them)."""

    scope: str | None = None  # a scope, with its branches
    include_superseded: bool = False
    include_private: bool = False  # the viewer's own private memories (and reminders)
    viewer: str | None = None


# The store_meta key under which a store records its vectors' embedding profile.
EMBED_PROFILE_META = "embed_profile"
# The keyword ladder's steps, strictest first: `match` of Store.search.
SEARCH_STEPS = ("all", "most", "any")
# "Most words" is tried between "all" and "any" for queries of this many words: with
# fewer, it equals "any"; with more, the combinations grow too many to be cheap.
MOST_WORDS = (3, 6)


def has_step(match: str, words: int) -> bool:
    """Whether a ladder step has a query for this many words, on every backend: "most"
    for MOST_WORDS, "any" from 2 (it would only repeat "all" otherwise)."""
    if match == "most":
        return MOST_WORDS[0] <= words <= MOST_WORDS[1]
    return words > 1 if match == "any" else words > 0


def asks(text: str, match: str) -> bool:
    """Whether a search of `text` has a query for the step `match`, on every backend
    (each counts a text's words as SQLite's keyword queries do)."""
    from memlane.store.sqlite.sql import fts_terms

    return has_step(match, len(fts_terms(text)))


# Matches a search ranks before it widens to every match, on every backend: the newest
# RANK_CAP (see SQLiteStore._rank_floor), for "any" ANY_RANK_CAP shared among the
# words (see SQLiteStore._windows). A cap this large still costs an "any" step tens of
# milliseconds at 10^5 memories, and the memories sharing every word or all but one
# come before it anyway.
RANK_CAP = 5000
ANY_RANK_CAP = 1000


class Writer(Protocol):
    """Operations available inside one write transaction."""

    def get(self, memory_id: str) -> Record | None: ...

    def find_duplicate(
        self, dedup_hash: str, session_id: str, owner: str | None, author: str | None, category: str
    ) -> str | None:
        """A live memory with this hash, session, owner, author and category, if any."""

    def put_reminder(self, reminder: Reminder) -> None: ...

    def put_ritual(self, ritual: WakeRitual) -> None:
        """Write a wake ritual's state (insert or replace)."""

    def put_guess(self, guess: WakeGuess) -> None:
        """Log one judged guess; a second row for the same session and step fails."""

    def score_guess(
        self, guess: WakeGuess, scores: dict[str, float | int | None], vector: bytes
    ) -> None:
        """Store a guess row's scores and guess vector, and mark it scored."""

    def load(self, kind: str, row: Mapping[str, Any], allow_tombstones: bool) -> str:
        """Put one checked record in: added | unchanged | tombstoned | conflict."""

    def load_many(
        self, kind: str, rows: Sequence[Mapping[str, Any]], allow_tombstones: bool
    ) -> list[str | Invalid]:
        """`load` each checked record of one kind, in order: its outcome, or Invalid
        for one the store refuses (the others still land)."""

    def put_phrase_vector(self, key: str, vector: bytes) -> None:
        """Cache an authored phrase's vector under a key that holds no phrase text."""

    def put_session(self, session: Session) -> None: ...

    def rename_project(self, old: str, new: str) -> None:
        """Give the sessions and reminders of project `old` the project name `new`."""

    def close_session(self, session_id: str, at: datetime) -> bool:
        """End an open session; False when there is no open session of that id."""

    def dismiss_reminder(self, reminder_id: str, agent: str | None, at: datetime) -> bool:
        """Dismiss one of `agent`'s pending reminders; False when there is none."""

    def delete_link(self, link_id: str) -> Link | None:
        """Delete one stored link by its id; the link deleted, or None if there is none."""

    def remove_link(self, source: str, target: str, type: LinkType) -> bool: ...

    def insert(self, records: Sequence[Record]) -> list[str]:
        """Insert new memories; returns the ids already taken (those rows are not written)."""

    def replace(self, record: Record, prior: Version | None) -> None:
        """Overwrite the current row; archive `prior` (the content it replaces) if given."""

    def delete(self, memory_id: str) -> None:
        """Remove a memory from every table and index (the journal keeps its line)."""

    def rewrite_version(self, version: Version) -> None:
        """Replace the fields of one archived version (same memory, same number): what
        forgetting does to a copy of forgotten text; nothing else rewrites history."""

    def add_link(self, link: Link) -> None: ...

    def set_mentions(self, mentions: Mapping[str, Sequence[Mention]]) -> None:
        """Make each memory's entity mentions exactly these, creating unknown entities
        (an alias names one entity)."""

    def merge_entities(self, source: str, target: str) -> None:
        """Move every alias, mention and relation of entity `source` to `target`; drop
        `source` (a relation the move would repeat, or turn on itself, is ended)."""

    def put_entity(self, entity: Entity, alias: str) -> str:
        """Make an entity no memory names, keyed by `alias`: the id of the entity that
        owns the alias after (an existing one wins; `entity` is then not written)."""

    def set_entity_type(self, entity_id: str, type: EntityType) -> None: ...

    def add_relation(self, relation: Relation) -> None: ...

    def end_relation(self, relation_id: str, at: datetime) -> bool:
        """End a current relation at `at`; False when no current one has that id."""

    def put_registry(self, entry: RegistryEntry) -> None: ...

    def remove_registry(self, registry: str, key: str) -> bool: ...

    def ensure_session(
        self, session_id: str, at: datetime, agent: str | None, project: str | None = None
    ) -> None: ...

    def sighted(
        self,
        memory_id: str,
        session_id: str,
        at: datetime,
        source_ref: str | None,
        agent: str | None,
    ) -> None:
        """Record that a session restated a memory (its first sighting there is kept)."""

    def put_vectors(
        self,
        memory_id: str,
        profile: str,
        vectors: Sequence[tuple[int, bytes]],
        dim: int,
        content_hash: str,
    ) -> None:
        """Replace a memory's vectors for one profile: (chunk, float32 bytes); chunk -1
        is the entry vector."""

    def drop_vectors(self) -> None:
        """Remove every vector of every profile (re-embedding replaces them all)."""

    def set_meta(self, key: str, value: str) -> None: ...

    def swap_meta(self, key: str, expected: str | None, value: str) -> bool:
        """Set a store-wide setting only if it still holds `expected` (None: unset);
        False, changing nothing, when another transaction changed it first."""

    def touch(self, memory_ids: Sequence[str], counter: str, at: datetime) -> None:
        """Count a read: counter "retrieval" (explicit), "surfaced" (passive) or
        "activation" (also resets the decay clock)."""

    def journal(
        self,
        operation: str,
        memory_ids: Sequence[str | None],
        actor: str | None,
        detail: str | None = None,
    ) -> None:
        """Append one journal line per id (None: an operation on no memory); `detail`
        says why, never what the memory said."""


class Store(Protocol):
    """A memlane backend. Chosen by URL; see `memlane.store.open_store`."""

    location: str
    # The feature parts, shared by both backends (memlane.store.parts).
    wake: WakeReads
    entities: EntityReads
    reminders: ReminderReads
    registries: RegistryReads
    sessions: SessionReads
    # Opened for reading only (a file this process may not write): reads work, a write
    # fails with one Unavailable, and reads skip what they would count.
    read_only: bool

    def close(self) -> None: ...

    def integrity(self) -> list[str]:
        """What is damaged in the stored data (empty: nothing found); `doctor` runs it."""

    def optimize(self, written: int = 0, *, statistics: bool = True) -> None:
        """After large changes: refresh the query planner's statistics (unless not
        `statistics`), and compact the keyword index in proportion to the `written`
        rows (cheap otherwise)."""

    def write(self) -> AbstractContextManager[Writer]: ...

    def bulk_writes(self) -> AbstractContextManager[None]:
        """Around a batch's many write transactions: upkeep that only searches use
        (SQLite: merging the keyword postings) is done after a commit only when a
        search came since the last, and once after the batch. A batch that searches
        nothing (lines that skip the write policy) pays for it once."""

    def bulk_vectors(self, dim: int, adding: int) -> AbstractContextManager[None]:
        """Around a job that writes about `adding` vectors of `dim` dimensions over many
        write transactions: a store whose server indexes vectors may set that index
        aside for the job and build it once after (PostgreSQL); others do nothing."""

    def side_reader(self) -> AbstractContextManager[Store | None]:
        """This store's reads over a connection of their own, for one other thread while
        this one goes on reading (recall runs its vector lane so); None when there is
        none to lend: an in-memory database, this thread's open write transaction (the
        other thread would not see it), or the side connection lent already."""

    def serialize_policy(self) -> None:
        """Inside this thread's open `write()`: wait until no other transaction is
        between the write policy's reading of neighbours and its commit, and hold the
        others off until this one ends, so the neighbours read next include every
        memory any other writer added or refreshed before."""

    def change_mark(self) -> ChangeMark | None:
        """Where the store's logs of changed memories stand now, for `changed_since`;
        None when they cannot say what changed since (numbers not taken in commit
        order): the write policy then reads its neighbours after `serialize_policy`."""

    def changed_since(self, mark: ChangeMark, limit: int) -> list[str] | None:
        """The memories written, changed, removed or (re-)embedded since `mark`, each
        once; None when there are more than `limit` changes."""

    def get(self, memory_id: str, as_of: datetime | None = None) -> Record | None: ...

    def resolve(
        self,
        prefix: str,
        viewer: str | None,
        limit: int = 10,
        scopes: Sequence[str] | None = None,
    ) -> list[str]:
        """Ids starting with `prefix` that `viewer` may see (at most `limit`), only in
        `scopes` when given."""

    def query(self, filters: Filters) -> list[Record]: ...

    def admitted(self, filters: Filters) -> list[str]:
        """The ids of the memories `query` would return, in no order, without reading
        them (filters.limit is ignored)."""

    def search_scores(
        self, text: str, filters: Filters, match: str = "all"
    ) -> list[tuple[str, float]]:
        """`search` without reading the memories: (id, score) pairs, best first."""

    def search(self, text: str, filters: Filters, match: str = "all") -> list[Hit]:
        """Keyword search, best first; `text` of any shape is never a syntax error.

        `match`: "all" words, "most" (all but one) or "any" word. A mode that would
        only repeat a narrower one returns nothing.
        """

    def iter_all(self) -> Iterator[Record]: ...

    def versions(self, memory_id: str) -> list[Version]: ...

    def links(self, memory_id: str) -> list[Link]: ...

    def links_touching(self, memory_ids: Sequence[str]) -> list[Link]:
        """Every link with one of these memories at either end, in one read, in the
        order `links` gives them."""

    def dump(self, selection: Selection) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every record of a selection as (kind, columns), in a fixed order, read at
        one instant (see memlane.store.sqlite.dump)."""

    def check_record(self, kind: str, row: Mapping[str, Any]) -> dict[str, Any]:
        """A record fit to load (Invalid saying what is wrong otherwise)."""

    def scopes(self) -> list[str]:
        """Every scope some memory (in any state) is in, sorted."""

    def snapshot(self, dest: Path) -> Counts:
        """Copy the whole store into the new file `dest` at one instant (other writers
        carry on), and say how many memories it held then."""

    def link_ends(self, number: int) -> tuple[str, str] | None:
        """(source, target) of the link numbered `number` ("l-<number>"), if stored."""

    def journal_entries(
        self, memory_id: str | None = None, limit: int = 100, viewer: str | None = None
    ) -> list[JournalEntry]:
        """Journal lines, newest first, about memories `viewer` may see (or, for a deleted
        memory, lines `viewer` wrote)."""

    def stats(self, viewer: str | None, *, everyone: bool = False) -> Stats:
        """Counts over the memories `viewer` may see; `everyone`: over every memory, for
        the store's own upkeep (see memlane.store.dialect.counts)."""

    def vitals(self, viewer: str | None, profile: str | None, now: datetime) -> Vitals:
        """Counts over the live memories `viewer` may see (see Vitals)."""

    def created_since(self, viewer: str | None, since: datetime) -> list[datetime]:
        """When each memory `viewer` may see was created, from `since` on."""

    def meta(self, key: str) -> str | None:
        """A store-wide setting, such as the embedding profile it was built with."""

    def vectors(
        self, profile: str, ids: Sequence[str] | None = None
    ) -> Iterator[tuple[str, int, bytes]]:
        """(memory id, chunk, float32 bytes) of every live memory's current vectors for a
        profile (only these memories' when `ids` is given)."""

    def scopes_and_kinds(self, ids: Sequence[str] | None = None) -> Iterator[tuple[str, str, str]]:
        """(memory id, scope, kind) of every live memory (of these memories, when
        `ids` is given): what a derived vector index keeps beside the vectors."""

    def nearest(self, profile: str, vector: QueryVector, k: int) -> list[tuple[str, float]] | None:
        """The k memories nearest to `vector` by the store's own vector index, best
        first, as (memory id, cosine similarity): a memory's score is that of its best
        current vector of `profile`, entry or chunk, among exactly the rows `vectors`
        reads (live memories, vectors of their current content); fewer than k when
        fewer memories have one. An approximate index may miss a few of the true k.

        None: the store has no server-side vector index (SQLite: its derived index
        lives in the client, built from `vectors`). k < 1 searches nothing, so it asks
        only that: [] or None. Safe from any thread; on the thread holding a write
        transaction it reads that transaction's rows.
        """

    def vector_changes(self, after: int, limit: int) -> tuple[int, list[str]] | None:
        """The memories whose vectors changed (written, removed, made stale or ended, or
        the memory moved to another scope or kind)
        after change number `after`, and the last change number; None when there are
        more than `limit` changes (reading everything again is cheaper)."""

    def last_vector_change(self) -> int:
        """The number of the latest vector change (0: none yet)."""

    def adjacent(self, memory_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """For each memory in a session, the ids written just before and after it in
        that session (any liveness or visibility: the caller filters)."""

    def vector_epoch(self) -> int:
        """A number that changes whenever any vector is written or removed."""

    def unembedded(self, profile: str, limit: int | None = None) -> list[Record]:
        """Live memories without current vectors for a profile (missing or stale)."""
