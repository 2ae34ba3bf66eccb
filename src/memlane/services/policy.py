"""The write policy against the store: a new memory's neighbours,
and what a refresh or a contradiction writes. The decisions are pure (write.dedup)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from memlane.graph.entities import STOPWORDS
from memlane.lazy import lazy_module
from memlane.model import (
    Filters,
    Link,
    LinkType,
    Record,
    WriteResult,
    WriteStatus,
    replace,
    worst_taint,
)
from memlane.runtime import Runtime
from memlane.scope import scope_project
from memlane.store.base import asks
from memlane.timeutil import utcnow
from memlane.write.settings import Thresholds

if TYPE_CHECKING:
    from memlane.embed import Embedded
    from memlane.retrieve.served import Searches, Snapshot
    from memlane.retrieve.vectors import VectorHit
    from memlane.store import ChangeMark, Writer
    from memlane.write import dedup, normalize
    from memlane.write.dedup import Decision, Neighbour
else:  # the decisions load with the first write: a read never runs them
    dedup = lazy_module("memlane.write.dedup")
    normalize = lazy_module("memlane.write.normalize")

# Neighbours read per lane for one new memory: near-duplicates and conflicts are few.
NEIGHBOURS = 10
# The words a keyword neighbour must share: the new memory's KEY_WORDS longest distinct
# content words (long words are the rare ones, roughly), all of them or all but one.
# A restatement keeps its words; asking for any word would rank half the store.
KEY_WORDS = 6
# Staged lines of a batch compared in full with a new line: those this alike already
# (rapidfuzz ratio, 0-100). "always X" / "never X" score 0.84, so 70 keeps them.
STAGED_CUTOFF = 70
# Memories written since the index was read that a new one is compared with one by
# one; more, and the index catches up first.
CHANGED_SINCE = 1_000
_WORD = re.compile(r"[^\W_]{3,}")


def content_words(text: str) -> list[str]:
    """The distinct content words of `text` (lowercased, no stopwords), in text order."""
    return list(dict.fromkeys(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS))


def key_words(text: str) -> str:
    """The KEY_WORDS longest distinct content words of `text`, in text order."""
    seen = content_words(text)
    longest = sorted(seen, key=len, reverse=True)[:KEY_WORDS]
    return " ".join(w for w in seen if w in longest)


def _same_reach(a: Record, b: Record) -> bool:
    """Only memories in the same scope, of the same kind, seen by the same readers
    can restate each other (a private note never refreshes a public one)."""
    return (a.scope, a.kind, a.visibility, a.owner) == (b.scope, b.kind, b.visibility, b.owner)


class Looked(msgspec.Struct, frozen=True):
    """What the policy read before a write's transaction: each new memory's stored
    neighbours (by the new memory's id), and where the store's change logs stood before
    they were read."""

    mark: ChangeMark
    neighbours: dict[str, tuple[str, ...]]


class Batch(msgspec.Struct):
    """One write transaction as the policy sees it: the neighbours looked up before it
    and the memories changed since (or, without those, the vector index as of its
    start), and the records written so far with their vectors (compared with later
    lines)."""

    rows: Snapshot | None = None
    looked: dict[str, tuple[str, ...]] = msgspec.field(default_factory=dict)
    changed: tuple[str, ...] | None = None  # None: no look-ahead, neighbours read here
    staged: list[Record] = msgspec.field(default_factory=list)
    texts: list[str] = msgspec.field(default_factory=list)
    folded: list[str] = msgspec.field(default_factory=list)  # the texts as compared (lowercased...)
    vectors: list[Any] = msgspec.field(default_factory=list)  # entry vectors; None where none
    # content word -> the staged records holding it ("": those without content words)
    holding: dict[str, list[int]] = msgspec.field(default_factory=dict)
    _matrix: Any = None  # the vectors stacked (zeros where none), grown by doubling

    def add(self, record: Record, doc: Embedded | None) -> None:
        self.staged.append(record)
        self.texts.append(normalize.document_text(record))
        self.folded.append(_fold(self.texts[-1]))
        for word in content_words(self.texts[-1]) or [""]:
            self.holding.setdefault(word, []).append(len(self.staged) - 1)
        self.vectors.append(None if doc is None else doc.entry)
        if doc is not None:
            import numpy as np

            n = len(self.staged)
            if self._matrix is None or len(self._matrix) < n:
                grown = np.zeros((max(64, 2 * n), len(doc.entry)), dtype=np.float32)
                if self._matrix is not None:
                    grown[: len(self._matrix)] = self._matrix
                self._matrix = grown
            self._matrix[n - 1] = doc.entry

    def nearest(self, doc: Embedded | None, floor: float, k: int) -> dict[int, float]:
        """{position: cosine} of the k staged records closest to `doc`, at least `floor`
        (records without vectors score 0 and never reach a positive floor)."""
        if doc is None or self._matrix is None:
            return {}
        import numpy as np

        from memlane.retrieve.vectors import dot

        scores = dot(self._matrix[: len(self.staged)], doc.entry)
        top = np.flatnonzero(scores >= floor)
        if len(top) > k:
            top = top[np.argsort(-scores[top], kind="stable")[:k]]
        return {int(i): float(scores[i]) for i in top}

    def sharing(self, text: str) -> dict[int, str]:
        """{position: folded text} of the staged records that hold one of the key
        words of `text` (all of them when `text` has none), those a restatement of it
        can be among.

        Trigger: a batch of thousands of lines. Why: comparing each line's text with
        every line before it costs the square of the batch; a restatement keeps its
        rare words. Outcome: each line is compared with the lines that share one of
        its KEY_WORDS longest words, and with those that have no content word.
        """
        words = key_words(text).split()
        if not words:
            return dict(enumerate(self.folded))
        found = set().union(*(self.holding.get(word, ()) for word in ("", *words)))
        return {i: self.folded[i] for i in sorted(found)}

    def cosine(self, i: int, doc: Embedded | None) -> float | None:
        vector = self.vectors[i]
        return None if doc is None or vector is None else float(vector @ doc.entry)


class WritePolicy:
    """Near-duplicates, contradictions and conflicts on write: what the decisions
    (write.dedup) are made from, and what a refresh or a contradiction writes."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def embed_drafts(self, records: Sequence[Record | None]) -> list[Embedded | None]:
        """Vectors for records about to be written, in one bulk call (None: not
        embedded now; the write lands anyway and embedding is retried after it)."""
        wanted = [i for i, r in enumerate(records) if r is not None]
        out: list[Embedded | None] = [None] * len(records)
        if not wanted or not self.rt.embed_on_write or self.rt.embedder is None:
            return out
        from memlane.write.embedding import embed_documents

        texts = [normalize.document_text(r) for r in records if r is not None]
        try:
            documents = embed_documents(self.rt.embedder, texts)
        except Exception:  # a failing model never fails a write: it is retried after
            return out
        for i, doc in zip(wanted, documents, strict=True):
            out[i] = doc
        return out

    def look(self, drafts: Sequence[tuple[Record, Embedded | None]]) -> Looked | None:
        """The stored neighbours of memories about to be written, read before their
        transaction (None: the store cannot say what changes meanwhile).

        Trigger: add and add-batch, before they take the store's write lock. Why: the
        neighbour reads (two keyword searches, the vector index) were most of the time
        a write held the lock while every other writer waited. Outcome: they run
        here, unlocked; the transaction reads again only these neighbours and the
        memories changed since the mark (see start), which it must, since a writer
        that committed meanwhile may have added the very fact being written.
        """
        mark = self.rt.store.change_mark()
        if mark is None:
            return None
        rows = self._snapshot() if any(doc is not None for _, doc in drafts) else None
        vectors = [(r.id, doc.entry, self._near(r)) for r, doc in drafts if doc is not None]
        floor = self.rt.write_policy.conflict  # below the conflict band a cosine decides nothing
        near = self.nearest_each(vectors, rows, floor=floor) if rows is not None else {}
        found = {
            record.id: tuple(
                n.id for n in self._stored_neighbours(record, doc, rows, near.get(record.id))
            )
            for record, doc in drafts
        }
        return Looked(mark, found)

    def _snapshot(self) -> Snapshot | None:
        """The vector index as of now (None without an embedder)."""
        if self.rt.embedder is None:
            return None
        index, _ = self.rt.vector_lane()
        return index.snapshot()

    def start(self, vectors: bool, looked: Looked | None = None) -> Batch:
        """The policy's view at a transaction's start (the index read at most once).

        Trigger: every add and add-batch transaction, before its first read. Why: a
        near-duplicate or contradiction decision is read-then-write; two writers
        reading at once would both find no neighbour and both insert. Outcome: the
        store serializes the decide-then-write step (SQLite: its write lock, already
        held; PostgreSQL: an advisory lock to commit), and every neighbour read of this
        transaction comes after it: the memories changed since `looked` was read
        (a few, each read by id), or, without it or after many changes, the
        neighbours read afresh.
        """
        self.rt.store.serialize_policy()
        if looked is not None:
            changed = self.rt.store.changed_since(looked.mark, CHANGED_SINCE)
            if changed is not None:
                return Batch(looked=looked.neighbours, changed=tuple(changed))
        return Batch(rows=self._snapshot() if vectors else None)

    def judge(self, record: Record, doc: Embedded | None, batch: Batch) -> Decision:
        looked = batch.looked.get(record.id)
        if looked is None or batch.changed is None:
            neighbours = self._stored_neighbours(record, doc, batch.rows)
        else:
            neighbours = self._neighbours_now(record, doc, (*looked, *batch.changed))
        neighbours += _staged_neighbours(record, doc, batch, self.rt.write_policy)
        return dedup.decide(normalize.document_text(record), neighbours, self.rt.write_policy)

    def _neighbours_now(
        self, record: Record, doc: Embedded | None, ids: Sequence[str]
    ) -> list[Neighbour]:
        """These memories as they are now, those that may restate `record` (live, of
        its scope and kind, seen by its readers), with their cosines to it."""
        if not ids:
            return []
        near = Filters(
            ids=tuple(dict.fromkeys(ids)),
            scopes=(record.scope,),
            kinds=(record.kind,),
            viewer=self.rt.agent,
            include_private=True,
            limit=None,
        )
        found = [r for r in self.rt.store.query(near) if _same_reach(r, record)]
        cosines = self.cosines(doc.entry, [r.id for r in found]) if doc is not None else {}
        return [dedup.Neighbour(r.id, normalize.document_text(r), cosines.get(r.id)) for r in found]

    def _stored_neighbours(
        self,
        record: Record,
        doc: Embedded | None,
        rows: Snapshot | None,
        nearest: dict[str, float] | None = None,
    ) -> list[Neighbour]:
        """The stored memories that may restate `record`: its keyword matches and its
        nearest vectors (`nearest`, when the batch's search found them already)."""
        near = self._near(record)
        key = key_words(normalize.document_text(record))
        most = asks(key, "most")
        found = (
            {h.record.id: h.record for h in self.rt.store.search(key, near, "most")} if most else {}
        )
        # Trigger: fewer most-words matches than a page. Why: a memory with every key
        # word has all but one too, so each is among them already. Outcome: the
        # all-words search runs only when the page was full or there is no most-words
        # query (too few words).
        if not most or len(found) >= NEIGHBOURS:
            for hit in self.rt.store.search(key, near, "all"):
                found.setdefault(hit.record.id, hit.record)
        cosines: dict[str, float] = {}
        if doc is not None and rows is not None:
            cosines = (
                dict(nearest)
                if nearest is not None
                else self.nearest(doc.entry, rows, near, floor=self.rt.write_policy.conflict)
            )
            ids = tuple(i for i in cosines if i not in found)
            if ids:
                found.update((r.id, r) for r in self.rt.store.query(replace(near, ids=ids)))
            missing = [i for i in found if i not in cosines]
            cosines.update(self.cosines(doc.entry, missing))
        return [
            dedup.Neighbour(r.id, normalize.document_text(r), cosines.get(r.id))
            for r in found.values()
            if _same_reach(r, record)
        ]

    def _near(self, record: Record) -> Filters:
        """The stored memories that may restate `record`: live, of its scope and kind,
        seen by this agent (a page of NEIGHBOURS)."""
        return Filters(
            scopes=(record.scope,),
            kinds=(record.kind,),
            viewer=self.rt.agent,
            include_private=True,
            limit=NEIGHBOURS,
        )

    def nearest(
        self,
        vector: Any,
        rows: Snapshot,
        within: Filters,
        k: int = NEIGHBOURS,
        floor: float | None = None,
    ) -> dict[str, float]:
        """{id: cosine} of the nearest memories that `within` admits (see nearest_each)."""
        return self.nearest_each([("", vector, within)], rows, k, floor)[""]

    def nearest_each(
        self,
        vectors: Sequence[tuple[str, Any, Filters]],
        rows: Snapshot,
        k: int = NEIGHBOURS,
        floor: float | None = None,
    ) -> dict[str, dict[str, float]]:
        """{id: cosine} of the k nearest memories of each vector (keyed by its new
        memory's id) that its filters admit, those at least `floor` when given: one
        search of the index as of the transaction's start for each distinct filter,
        and the memories whose vectors changed since, read once and compared with each
        (the caller reads them through the filters)."""
        if not vectors:
            return {}
        import numpy as np

        matrix = np.stack([vector for _, vector, _ in vectors])
        changed = self.rt.store.vector_changes(rows.change, CHANGED_SINCE)
        searched: Searches = rows
        now: list[dict[str, float]] = [{} for _ in vectors]
        if changed is None:  # many writes since: the index catches up once
            index, _ = self.rt.vector_lane()
            searched = index.current()
        else:
            now = self._cosines_many(matrix, changed[1])
        found = self._search(matrix, [within for _, _, within in vectors], searched, k)
        least = -1.0 if floor is None else floor
        return {
            memory_id: {
                i: score
                for i, score in {**{h.memory_id: h.score for h in hits}, **fresh}.items()
                if score >= least
            }
            for (memory_id, _, _), hits, fresh in zip(vectors, found, now, strict=True)
        }

    def _search(
        self, queries: Any, within: Sequence[Filters], rows: Searches, k: int
    ) -> list[list[VectorHit]]:
        """The k nearest memories of each query among those of its filters' scopes and
        kinds: one search for each scope and kind asked (see Rows.search_within). The
        caller reads what is found through the whole filters."""
        import numpy as np

        matrix = np.asarray(queries, dtype=np.float32)
        found: list[list[VectorHit]] = [[] for _ in within]
        groups: dict[tuple[tuple[str, ...] | None, tuple[str, ...]], list[int]] = {}
        for i, near in enumerate(within):
            groups.setdefault((near.scopes, tuple(kind.value for kind in near.kinds)), []).append(i)
        for (scopes, kinds), members in groups.items():
            hits = rows.search_within(matrix[members], k, scopes, kinds)
            for i, each in zip(members, hits, strict=True):
                found[i] = each
        return found

    def _cosines_many(self, matrix: Any, ids: Sequence[str]) -> list[dict[str, float]]:
        """`cosines` for each row of `matrix`, the memories' vectors read once."""
        if not ids or self.rt.embedder is None:
            return [{} for _ in matrix]
        from memlane.embed.blob import from_blobs

        signature, dim = self.rt.embedder.profile.signature, self.rt.embedder.dimension
        stored = [(i, blob) for i, _, blob in self.rt.store.vectors(signature, ids)]
        if not stored:
            return [{} for _ in matrix]
        scores = matrix @ from_blobs([blob for _, blob in stored], dim).T
        out = []
        for row in scores.tolist():
            best: dict[str, float] = {}
            for (memory_id, _), score in zip(stored, row, strict=True):
                best[memory_id] = max(score, best.get(memory_id, -1.0))
            out.append(best)
        return out

    def cosines(self, vector: Any, ids: Sequence[str]) -> dict[str, float]:
        """{id: cosine} of these memories' current vectors (best chunk) with `vector`."""
        if not ids or self.rt.embedder is None:
            return {}
        import numpy as np

        from memlane.embed.blob import from_blobs

        out: dict[str, float] = {}
        signature, dim = self.rt.embedder.profile.signature, self.rt.embedder.dimension
        for memory_id, _, blob in self.rt.store.vectors(signature, ids):
            score = float(np.dot(from_blobs([blob], dim)[0], vector))
            out[memory_id] = max(score, out.get(memory_id, -1.0))
        return out

    def refresh(self, w: Writer, record: Record, decision: Decision) -> WriteResult:
        """The same fact restated: the existing memory is refreshed instead (newer,
        the higher importance, a little more trusted); no row is added. Restated in
        another session, the memory is sighted there: that session's view holds it."""
        old = self.rt.live(w, decision.target or "")
        now = max(utcnow(), old.updated_at)
        if record.session_id is not None and record.session_id != old.session_id:
            project, _ = scope_project(record.scope)
            w.ensure_session(record.session_id, now, record.source_agent, project)
            w.sighted(old.id, record.session_id, now, record.source_ref, record.source_agent)
        new = replace(
            old,
            updated_at=now,
            importance=max(old.importance, record.importance),
            trust_score=dedup.clamp(old.trust_score + dedup.TRUST_CORROBORATED),
            taint=worst_taint(old.taint, record.taint),  # a fold never launders its origin
        )
        w.replace(new, None)
        w.journal("refresh", [old.id], self.rt.agent)
        return WriteResult(
            id=old.id,
            status=WriteStatus.REFRESHED,
            title=old.title,
            similarity=decision.similarity,
        )

    def contradict(self, w: Writer, new: Record, decision: Decision) -> None:
        """A statement and its negation both stay: linked `contradicts` both ways, the
        older one a little less trusted (the new one landed with its trust lowered)."""
        old = self.rt.live(w, decision.target or "")
        w.replace(
            replace(old, trust_score=dedup.clamp(old.trust_score + dedup.TRUST_CONTRADICTED)), None
        )
        reason = "negation polarity disagrees with a near-duplicate"
        for source, target in ((new.id, old.id), (old.id, new.id)):
            w.add_link(
                Link(
                    source,
                    target,
                    LinkType.CONTRADICTS,
                    decision.similarity,
                    reason,
                    new.created_at,
                )
            )


def contradicting(record: Record) -> Record:
    return replace(record, trust_score=dedup.clamp(record.trust_score + dedup.TRUST_CONTRADICTED))


def with_decision(result: WriteResult, decision: Decision) -> WriteResult:
    """The result of a landed write, told what the policy found."""
    if decision.verdict is dedup.Verdict.CONTRADICTION:
        return replace(
            result,
            status=WriteStatus.CONTRADICTION,
            contradicts=decision.target,
            similarity=decision.similarity,
        )
    if decision.conflicts:
        ids = ", ".join(i for i, _ in decision.conflicts)
        warning = f"close in meaning to {ids}: this may contradict what they say"
        return replace(
            result,
            potential_conflicts=decision.conflicts,
            warnings=(*result.warnings, warning),
        )
    return result


def _staged_neighbours(
    record: Record, doc: Embedded | None, batch: Batch, thresholds: Thresholds
) -> list[Neighbour]:
    """The records written earlier in this transaction that may restate `record`:
    alike enough in text to compare in full, or close in meaning."""
    if not batch.staged:
        return []
    from rapidfuzz import fuzz, process

    text = normalize.document_text(record)
    alike = {
        i
        for _, _, i in process.extract(
            _fold(text),
            batch.sharing(text),
            scorer=fuzz.ratio,
            score_cutoff=STAGED_CUTOFF,
            limit=NEIGHBOURS,
        )
    }
    close = batch.nearest(doc, thresholds.conflict, NEIGHBOURS)
    return [
        dedup.Neighbour(batch.staged[i].id, batch.texts[i], close.get(i, batch.cosine(i, doc)))
        for i in sorted(alike.union(close))
        if _same_reach(batch.staged[i], record)
    ]


def _fold(text: str) -> str:
    """A text as the string comparison sees it; folded once per staged record, not once
    per later line (rapidfuzz would otherwise fold every staged text for every line)."""
    from rapidfuzz.utils import default_process

    return str(default_process(text))
