"""Search lanes over a store: keyword (BM25), vector, entity, and their fusion.

Every lane over-fetches and then passes its candidates through the store's filters,
which alone decide what may be returned (live or as-of, scope, visibility, kind...).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING

import msgspec

from memlane.errors import EmbeddingFailed, MemlaneError
from memlane.graph.entities import extract, query_aliases
from memlane.model import EntityKind, Filters, Hit, Record, replace
from memlane.retrieve.fuse import BM25, ENTITY, LANE_WEIGHTS, VECTOR, Fused, convex
from memlane.store import SEARCH_STEPS, Store
from memlane.store.workers import workers

if TYPE_CHECKING:  # keyword search must not pay for numpy
    from concurrent.futures import Future

    from memlane.embed import Embedder
    from memlane.embed.chunk import Vector
    from memlane.retrieve.served import Index
    from memlane.retrieve.vectors import Matrix, VectorHit
    from memlane.retrieve.when import Window

    # A nearest-memories search a worker thread may run: rows caught up beforehand, or
    # the store's own index (it takes a connection of its own).
    Search = Callable[[Matrix, int], list[VectorHit]]

# Keyword search relaxes step by step (SEARCH_STEPS): a strict match is precise and
# cheap; "any word" ranks every memory that shares a word, so it comes last. A fusion
# pool takes every step in turn until it is full (see `keyword`).
# Candidates a lane fetches per result wanted, so filters and fusion have room.
OVERFETCH = 4
MIN_POOL = 50
# The vector lane reads the nearest `wanted` x the first factor and lets the filters
# choose; when they leave too few, it looks four times further, up to the second.
VECTOR_OVERFETCH = (2, 32)
MODES = ("keyword", "vector", "hybrid")


def pool_size(limit: int | None) -> int:
    return max(MIN_POOL, (limit or MIN_POOL) * OVERFETCH)


def keyword(store: Store, query: str, filters: Filters, fill: bool = False) -> list[Hit]:
    """BM25 over title, body and tags: all words, else all but one, else any word.

    With `fill`, every step adds to the steps before it until `filters.limit` memories
    are found: those with all the words first, then those with all but one, then those
    with any word, each step in BM25 order.

    Trigger: a fusion pool (recall, hybrid search). Why: stopping at the first step
    that finds anything leaves a two-word match alone in the lane, and the memory that
    phrases the answer with one word of the question never reaches fusion (filling
    lifts the keyword lane's R@10 on LoCoMo, `memlane eval locomo`, by several points).
    A plain keyword search keeps the strict reading a person expects of a search box.
    """
    if not fill:
        for match in SEARCH_STEPS:
            hits = store.search(query, filters, match)
            if hits:
                return hits
        return []
    scores: dict[str, float] = {}
    for step, match in enumerate(SEARCH_STEPS):
        if step and filters.limit is not None and len(scores) >= filters.limit:
            break
        # Each step finds the memories of the steps before it again (all words match
        # "all but one" too), so it is asked for the whole pool, not what is missing.
        # Steps rank ids only: sorting whole rows to keep a page of them costs more
        # than ranking at 10^5 memories, so the kept memories are read once, at the end.
        for memory_id, score in store.search_scores(query, filters, match):
            scores.setdefault(memory_id, score)
    ids = list(scores)[: filters.limit] if filters.limit else list(scores)
    if not ids:
        return []
    records = {r.id: r for r in store.query(replace(filters, ids=tuple(ids), limit=None))}
    kept = [i for i in ids if i in records]  # a memory changed in between is left out
    return [Hit(records[i], scores[i], rank + 1) for rank, i in enumerate(kept)]


class Lookahead:
    """The vector lane run on a worker thread while the caller's thread runs the keyword
    and entity lanes: the query embedded and the index searched, and, given a side
    reader of the store (`finish`), the filters and the reading of the kept memories.

    Trigger: recall and hybrid search with a vector lane. Why: the index scan (numpy)
    and the model (onnxruntime) release the GIL, and so does SQLite while it ranks, so
    on two cores the lanes can overlap instead of adding up. The store's own connection
    stays on the caller's thread: without a side reader the lane ends there.
    Outcome: hybrid recall is faster than with the lanes in line (`memlane bench`), and
    with MiniLM the query's embedding is hidden too; faster still with the whole lane on
    the worker, reading through the store's side reader.
    """

    def __init__(
        self,
        search: Search,
        embedder: Embedder,
        query: str,
        k: int,
        finish: tuple[Store, Filters] | None = None,
    ) -> None:
        self.k = k
        self.filters = finish[1] if finish else None
        self._found: tuple[Vector, list[VectorHit]] | None = None
        self.hits: list[Hit] | None = None
        self.failed: str | None = None  # why the query could not be embedded
        self._error: BaseException | None = None
        self._done: Future[None] = workers().submit(self._run, search, embedder, query, finish)

    def _run(
        self, search: Search, embedder: Embedder, query: str, finish: tuple[Store, Filters] | None
    ) -> None:
        try:
            embedded = embed_query(embedder, query)
            self._found = (embedded, search(embedded, self.k))
            if finish is not None:
                reader, filters = finish
                self.hits = _admitted_nearest(reader, search, *self._found, self.k, filters)
        except EmbeddingFailed as exc:
            self.failed = str(exc)
        except BaseException as exc:  # raised again on the caller's thread
            self._error = exc

    def wait(self) -> None:
        """Until the worker is done (it may be reading through a lent connection)."""
        self._done.result()

    def result(self) -> tuple[Vector, list[VectorHit]]:
        """The query's vector and its `k` nearest memories (waits for the worker)."""
        self._done.result()
        if self.failed is not None:
            raise EmbeddingFailed(self.failed)
        if self._error is not None:
            raise self._error
        assert self._found is not None  # set whenever _run ended without an error
        return self._found


def embed_query(embedder: Embedder, query: str) -> Vector:
    """The query's vector; EmbeddingFailed whatever the embedder's failure, so that a
    caller can go on without the lane."""
    try:
        return embedder.embed(query)
    except Exception as exc:
        reason = str(exc) if isinstance(exc, MemlaneError) else f"{type(exc).__name__}: {exc}"
        raise EmbeddingFailed(reason) from exc


def vector_k(wanted: int) -> int:
    """How many nearest memories the vector lane looks at first, for `wanted` results."""
    return wanted * VECTOR_OVERFETCH[0]


def vector(
    store: Store,
    index: Index,
    embedder: Embedder,
    query: str,
    filters: Filters,
    ahead: Lookahead | None = None,
) -> list[Hit]:
    """Nearest memories by cosine (best of entry vector and chunks), then the filters.
    `ahead`: its first search, started already (see Lookahead)."""
    if not query.strip():
        return []
    k = vector_k(filters.limit or pool_size(None))
    if ahead is not None and ahead.k == k:
        embedded, near = ahead.result()
        if ahead.hits is not None and ahead.filters == filters:
            return ahead.hits
    else:
        embedded, near = embed_query(embedder, query), None
    return _admitted_nearest(store, index.search, embedded, near, k, filters)


def _admitted_nearest(
    store: Store,
    search: Search,
    embedded: Vector,
    near: list[VectorHit] | None,
    k: int,
    filters: Filters,
) -> list[Hit]:
    """The nearest `k` (`near`, when searched already) through the filters, looking
    further while they leave too few; the kept read, nearest first."""
    wanted = filters.limit or pool_size(None)
    while True:
        if near is None:
            near = search(embedded, k)
        if not near:
            return []
        scores = {h.memory_id: h.score for h in near}
        # The filters choose among the nearest ids first; only the kept are read.
        admitted = store.admitted(replace(filters, ids=tuple(scores), limit=None))
        if len(admitted) >= wanted or len(near) < k or k >= wanted * VECTOR_OVERFETCH[1]:
            break
        k, near = k * 4, None  # the filters left too few: look further out
    kept = sorted(admitted, key=lambda i: -scores[i])[:wanted]
    found = store.query(replace(filters, ids=tuple(kept), limit=None))
    found.sort(key=lambda r: -scores[r.id])
    return [Hit(r, scores[r.id], i + 1) for i, r in enumerate(found)]


def entity(store: Store, query: str, filters: Filters) -> list[Hit]:
    """Memories naming the entities the query names, rarest names weighing most.

    A memory scores the sum over the query's entities it mentions of
    1 / log2(1 + memories naming that entity); ties go to the most recent, then by
    content (fuse.ordered says why).

    An entity named by more memories than the lane returns tells none of them apart
    (on LoCoMo a cap of 1000 instead of the lane's 50 costs many points of MRR); the
    keyword lane ranks its name already, so this lane leaves it out, and reads at most
    that many mention rows per name whatever the store's size.
    """
    asked = query_aliases(query)
    names = set(asked.names)
    cap = filters.limit or MIN_POOL
    weight: dict[str, float] = defaultdict(float)
    for match in store.entities.mentioned(asked.all, cap):
        if match.common or not match.memory_ids:
            continue
        if match.alias not in names and match.kind is EntityKind.PERSON_OR_NAME:
            continue
        share = 1.0 / math.log2(1 + len(match.memory_ids))
        for memory_id in match.memory_ids:
            weight[memory_id] += share
    if not weight:
        return []
    # The filters' room: `filters.limit` is already the fusion pool (see gather).
    best = sorted(weight, key=lambda i: -weight[i])[: cap * OVERFETCH]
    found = store.query(replace(filters, ids=tuple(best), limit=None))
    found.sort(
        key=lambda r: (-weight[r.id], -(r.occurred_at or r.created_at).timestamp(), r.dedup_hash)
    )
    chosen = found[: filters.limit] if filters.limit else found
    return [Hit(r, weight[r.id], i + 1) for i, r in enumerate(chosen)]


def unknown_names(store: Store, query: str, filters: Filters) -> tuple[str, ...]:
    """The names the query gives (people, projects, files, handles: see
    graph.entities.extract) that no memory the filters let through holds: neither as
    words (an all-words keyword search reading at most one match) nor as an entity
    alias ("memory_store" names `MemoryStore`).

    An acronym ("RDS", "AWS") is left out: it names a technology, which a memory of the
    same topic may well not spell out ("resize the RDS instance" and a rule to change
    infrastructure only through Terraform), not a person or a project of another store.
    """
    one = replace(filters, limit=1)
    found = [m for m in extract(query) if m.kind is not EntityKind.TAG and not _acronym(m.name)]
    unknown = {m.alias: m.name for m in found if not store.search_scores(m.name, one, "all")}
    if unknown:
        for match in store.entities.mentioned(list(unknown), MIN_POOL):
            seen = replace(filters, ids=match.memory_ids, limit=1)
            if match.alias in unknown and (match.common or store.admitted(seen)):
                del unknown[match.alias]
    return tuple(dict.fromkeys(unknown.values()))


def _acronym(name: str) -> bool:
    """A name written in capitals and digits only (at least two letters)."""
    letters = [c for c in name if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters) and " " not in name


class Gathered(msgspec.Struct, frozen=True):
    """What the lanes found for one query, and their fusion."""

    found: dict[str, list[Hit]]  # lane -> its candidates, best first
    records: dict[str, Record]
    fused: list[Fused]
    failed: dict[str, str] = {}  # lane -> why it could not run this time

    @property
    def similarity(self) -> float | None:
        """The cosine of the nearest memory the vector lane let through (None: the lane
        did not run or found nothing)."""
        nearest = self.found.get(VECTOR)
        return nearest[0].score if nearest else None


def in_window(
    store: Store, query: str, filters: Filters, window: Window, found: list[Hit]
) -> list[Hit]:
    """The keyword lane's `found` with the matches among the memories of the query's
    time window (their event time, else when they were written) added, by BM25.

    Trigger: a query that names a time ("in May 2023", "last week"). Why: a memory of
    that time that shares one word with the query can rank below the lane's pool among
    all the store's matches, and a query about a time alone ("what happened last
    week?") shares no word with the memories it asks for. Outcome: the window's
    matches join the lane (at their own BM25); when no word matches there, the window's
    newest memories join it at the lane's lowest score, and the ranker's time fit
    (score.time_fit) favours what lies inside the window.
    """
    since, until = window
    inside = replace(filters, since=since, until=until)
    extra = keyword(store, query, inside, fill=True)
    if not extra:
        low = min((h.score for h in found), default=0.0)
        extra = [Hit(r, low, 0) for r in store.query(replace(inside, order="recent"))]
    return merged(found, extra)


# How many `superseded_by` steps `successors` follows from a replaced memory to the
# live one: a fact rarely changes more often than this, and each step is one read.
SUCCESSOR_STEPS = 3


def successors(store: Store, query: str, filters: Filters, found: list[Hit]) -> list[Hit]:
    """The keyword lane's `found` with the live memories that replaced its matches
    among superseded memories added, each at its predecessor's BM25.

    Trigger: a question about a change ("why did we switch from MySQL"). Why: it names
    what was replaced, which only the superseded memory holds; the memory that replaced
    it may share no word with the question. Outcome: that memory joins the lane, and
    the unfold (retrieve.unfold) shows the superseded one under it.
    """
    if filters.as_of is not None:  # a read of the past: what replaced it came later
        return found
    past = keyword(store, query, replace(filters, include_superseded=True), fill=True)
    # The memory to read next -> the BM25 of the replaced match that leads to it.
    wanted: dict[str, float] = {}
    for hit in past:
        if hit.record.superseded_by and not hit.record.live:
            wanted.setdefault(hit.record.superseded_by, hit.score)
    wide = replace(filters, include_superseded=True, limit=None)
    heads: list[Hit] = []
    for _ in range(SUCCESSOR_STEPS):
        if not wanted:
            break
        later: dict[str, float] = {}
        for r in store.query(replace(wide, ids=tuple(wanted))):
            if r.live:
                heads.append(Hit(r, wanted[r.id], 0))
            elif r.superseded_by:
                later.setdefault(r.superseded_by, wanted[r.id])
        wanted = later
    return merged(found, heads)


def merged(found: list[Hit], extra: list[Hit]) -> list[Hit]:
    """Two lists of hits as one, each memory at its better score, re-ranked."""
    best = {h.record.id: h for h in found}
    for hit in extra:
        if hit.record.id not in best or hit.score > best[hit.record.id].score:
            best[hit.record.id] = hit
    ranked = sorted(best.values(), key=lambda h: -h.score)
    return [Hit(h.record, h.score, i + 1) for i, h in enumerate(ranked)]


def gather(
    store: Store,
    query: str,
    filters: Filters,
    limit: int | None,
    vector_lane: tuple[Index, Embedder] | None,
    weights: Mapping[str, float] = LANE_WEIGHTS,
    window: Window | None = None,
    past: bool = False,
) -> Gathered:
    """Run the keyword and entity lanes (and the vector lane when given) over-fetching
    for `limit`, and fuse their scores (fuse.convex with these lane weights). A lane
    weighted 0 does not run; a vector lane whose query cannot be embedded is left out
    and named in `failed`, and the other lanes still answer. `window`: the query's time
    cue, whose memories the keyword lane also searches (see `in_window`). `past`: a
    question about a change, whose keyword matches among superseded memories bring the
    memories that replaced them (see `successors`)."""
    pool = replace(filters, limit=pool_size(limit))
    found: dict[str, list[Hit]] = {}
    failed: dict[str, str] = {}
    vectors = vector_lane if weights.get(VECTOR, 0.0) > 0 else None
    early = vectors if query.strip() else None  # the lane starts on a worker
    ahead = None
    with store.side_reader() if early else nullcontext() as side:
        if early is not None:
            index, embedder = early
            k = vector_k(pool.limit or pool_size(None))
            finish = None if side is None else (side, pool)
            ahead = Lookahead(index.current().search, embedder, query, k, finish)
        try:
            if weights.get(BM25, 0.0) > 0:
                found[BM25] = keyword(store, query, pool, fill=True)
                if window is not None:
                    found[BM25] = in_window(store, query, pool, window, found[BM25])
                if past:
                    found[BM25] = successors(store, query, pool, found[BM25])
            if weights.get(ENTITY, 0.0) > 0:
                found[ENTITY] = entity(store, query, pool)
        finally:
            if ahead is not None:
                ahead.wait()  # the side reader goes back only once the worker is done
        if vectors is not None:
            index, embedder = vectors
            try:
                found[VECTOR] = vector(store, index, embedder, query, pool, ahead)
            except EmbeddingFailed as exc:
                failed[VECTOR] = str(exc)
    records = {h.record.id: h.record for hits in found.values() for h in hits}
    fused = convex(
        {lane: [(h.record.id, h.score) for h in hits] for lane, hits in found.items()},
        weights,
        {i: r.dedup_hash for i, r in records.items()},
    )
    return Gathered(found, records, fused, failed)


def hybrid(
    store: Store,
    index: Index,
    embedder: Embedder,
    query: str,
    filters: Filters,
    window: Window | None = None,
) -> tuple[list[Hit], float | None]:
    """Keyword and vector lanes fused by their normalised scores (a search asked for
    meaning fails when the query cannot be embedded; recall goes on without it), and
    the nearest memory's cosine (Gathered.similarity). `window`: the query's time cue,
    as in recall (see `in_window`)."""
    lanes = gather(store, query, filters, filters.limit, (index, embedder), window=window)
    if VECTOR in lanes.failed:
        raise EmbeddingFailed(lanes.failed[VECTOR])
    chosen = lanes.fused[: filters.limit] if filters.limit else lanes.fused
    hits = [Hit(lanes.records[f.id], f.score, i + 1) for i, f in enumerate(chosen)]
    return hits, lanes.similarity
