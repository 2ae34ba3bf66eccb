"""The recall feature: embedding and the vector lane, search, recall and why a memory
surfaced, and the counts a read shows beside its answer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from memlane.embed.base import Embedder
from memlane.errors import Conflict, Invalid, NotFound, Unavailable
from memlane.lazy import lazy_module
from memlane.model import EmbedOutcome, Filters, Hit, Record, replace
from memlane.retrieve.explain import Explanation
from memlane.retrieve.filters import query_text, whole
from memlane.retrieve.result import RecallResult, Searched
from memlane.runtime import Runtime, passive_ok
from memlane.store import EMBED_PROFILE_META
from memlane.timeutil import utcnow

if TYPE_CHECKING:  # numpy and the models load only when vectors are used
    from memlane.embed import Embedded
    from memlane.retrieve.cards import EntityCard
    from memlane.retrieve.recall import RecallOptions
    from memlane.retrieve.served import Index
    from memlane.write import normalize
else:  # the document text of a memory, needed once vectors are made or compared
    normalize = lazy_module("memlane.write.normalize")


# Told (done, total) as a long embedding job goes.
Progress = Callable[[int, int], None]
# Results of a recall unless the caller asks for more: the few that matter.
RECALL_LIMIT = 10
# Keyword matches of a text target read to find the memories containing it.
EXPLAIN_SEARCH = 500


class Recall:
    """Embedding, the vector lane, search and recall, and the counts a read shows
    beside its answer (the flat read methods of `Memory`)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def embed(
        self,
        memory_id: str | None = None,
        *,
        pending: bool = False,
        all: bool = False,
        long_only: int | None = None,
        progress: Progress | None = None,
    ) -> EmbedOutcome:
        """Embed one memory, the pending ones (missing or stale vectors), or all live ones.
        `progress(done, total)` is told after each batch.

        `long_only` N keeps those whose embedded text is longer than N of the profile's
        tokens (entries an embedding window shorter than their text truncated, to be
        chunked); without an id or `pending` it looks at all live memories.
        """
        if long_only is not None:
            if long_only < 1:
                raise Invalid(f"--long-only must be at least 1 token, got {long_only}")
            all = all or (memory_id is None and not pending)
        if sum((memory_id is not None, pending, all)) != 1:
            raise Invalid("embed takes exactly one of: an id, --pending, --all")
        embedder = self._need_embedder()
        if memory_id is not None:
            records = [self.rt.read(self.rt.store, memory_id)]
        elif pending:  # its report names them: only those this agent may see
            records = self.rt.unembedded(embedder.profile.signature)
        else:
            records = self.rt.list(scope="all", limit=0, include_private=self.rt.agent is not None)
        if long_only is not None:
            records = [r for r in records if _tokens(embedder, r) > long_only]
        return self._embed_all(embedder, records, progress)

    def _embed_all(
        self, embedder: Embedder, records: Sequence[Record], progress: Progress | None = None
    ) -> EmbedOutcome:
        from memlane.write import embedding

        def told(done: int) -> None:
            if progress is not None:
                progress(done, len(records))

        return embedding.embed_parts(self.rt.store, embedder, records, embedding.EMBED_CHUNK, told)

    def _need_embedder(self) -> Embedder:
        if self.rt.embedder is None:
            raise Unavailable(f"cannot embed: {self.rt.embed_problem or 'no embedding profile'}")
        return self.rt.embedder

    def reembed(
        self, embedder: Embedder, dry_run: bool = False, progress: Progress | None = None
    ) -> int:
        """Re-embed every live memory with another profile and make it the store's profile.

        The old vectors are replaced in one transaction per batch of memories, and the
        store's profile moves only when all of them succeeded; running it again is safe.
        """
        from memlane.write import embedding

        records = self.rt.store.query(Filters(any_visibility=True, limit=None))
        if dry_run:
            return len(records)
        documents: list[Embedded] = []
        for start in range(0, len(records), embedding.EMBED_CHUNK):
            part = records[start : start + embedding.EMBED_CHUNK]
            documents += embedding.embed_documents(
                embedder, [normalize.document_text(r) for r in part]
            )
            if progress is not None:
                progress(start + len(part), len(records))
        with self.rt.store.write() as w:
            w.drop_vectors()
            w.set_meta(embedding.PROFILE_KEY, embedder.profile.signature)
            embedding.put_documents(w, embedder, records, documents)
            self.rt.journal(w, "reembed", None)
        self.rt.use_embedder(embedder)
        return len(records)

    def searched(
        self,
        query: str,
        filters: Filters | None = None,
        mode: str = "keyword",
        *,
        activate: bool = False,
        min_score: float | None = None,
        **options: Any,
    ) -> Searched:
        """Search: `keyword` (BM25: all words, else all but one, else any word), `vector`
        (nearest by meaning) or `hybrid` (both, fused by their normalised scores).
        `activate`: the results were consumed on purpose, so their decay clocks reset.
        A search by meaning finds nothing when the nearest memory is below the relevance
        floor (`min_score`, as in `recall`), and says how near it came (`evidence`); a
        keyword search matches words, so none applies."""
        from memlane.retrieve import lanes
        from memlane.retrieve.recall import answering, judged
        from memlane.retrieve.when import time_cue

        query = query_text(query)
        chosen = filters or self.rt.filters(**options)
        if mode not in lanes.MODES:
            raise Invalid(f"invalid search mode {mode!r}; choose from: {', '.join(lanes.MODES)}")
        evidence = None
        if mode == "keyword":
            hits = lanes.keyword(self.rt.store, query, chosen)
        else:
            index, embedder = self.rt.vector_lane()
            floor = self.min_score(min_score)
            if mode == "vector":
                hits = lanes.vector(self.rt.store, index, embedder, query, chosen)
                nearest = hits[0].score if hits else None
                window = None
            else:
                self.rt.entities_current()
                window = time_cue(query, utcnow()).window
                hits, nearest = lanes.hybrid(self.rt.store, index, embedder, query, chosen, window)
            margin = self.rt.recall_settings.unknown_name_margin
            evidence = judged(self.rt.store, query, chosen, nearest, floor, margin, window)
            hits = answering(hits, evidence, window)
        if activate:
            self.rt.count([h.record.id for h in hits], "activation")
        return Searched(list(self._reread(hits)), evidence)

    def recall(
        self,
        query: str,
        filters: Filters | None = None,
        *,
        limit: int = RECALL_LIMIT,
        max_tokens: int | None = None,
        passive: bool = False,
        activate: bool = False,
        count: bool = True,
        min_score: float | None = None,
        **options: Any,
    ) -> RecallResult:
        """The few memories that matter for `query`, ranked and explained.

        Explicit reads count in retrieval_count; `passive` reads (hooks) count in
        surfaced_count only, and never surface injection-risk, untrusted-web or
        low-confidence memories. `activate` also resets their decay clocks. `count`
        False writes nothing (evaluations: popularity must not feed back into them).
        `min_score`: the relevance floor (see Recall.min_score); when the nearest memory is
        below it, the result has no hits and `abstained` is true.

        Per-call controls among `options` (retrieve.recall.CONTROLS) override the recall
        settings: `include_global` (False: no global memories; True: global besides the
        scopes named), `global_limit`, `link_budget`, `link_hops` (0-2), `mmr` (False:
        score order) and `unfold` (False: no prior states on a question about a change).
        """
        from memlane.retrieve.recall import recall

        query, limit = query_text(query), whole(limit, "--limit", 1)
        settings, options = self._controlled(options)
        chosen = filters or self.rt.filters(**options)
        self.rt.entities_current()
        vector_lane, skipped = self._recall_vector_lane()
        settings = replace(
            settings, limit=limit, max_tokens=max_tokens, min_score=self.min_score(min_score)
        )
        if passive:
            # A hook's gate weighs how much of the prompt a memory covers
            # (hooks.gate), names included; raising the floor for a name too would
            # silence prompts that name a tool or a label their memory does not.
            settings = replace(settings, unknown_name_margin=0.0)
        result = recall(
            self.rt.store,
            query,
            chosen,
            now=utcnow(),
            context=self.rt.context,
            options=settings,
            vector_lane=vector_lane,
            admit=partial(passive_ok, floor=settings.passive_floor) if passive else None,
            skipped=skipped,
        )
        ids = [h.record.id for h in result.hits]
        if count:
            counters = [
                "surfaced" if passive else "retrieval",
                *(["activation"] if activate else []),
            ]
            self.rt.count(ids, *counters)
        # A passive read that says nothing says nothing at all, cards included.
        quiet = passive and result.abstained
        found = () if quiet else self._cards(query, max_tokens, result.tokens_used)
        return replace(
            result,
            hits=self._reread(result.hits),
            extras=self._reread(result.extras),
            previously=self._reread(result.previously),
            # what explain reads: anchors filtered, no file checked (none is shown)
            candidates=self._reread(result.candidates, sources=False),
            entities=found,
            tokens_used=result.tokens_used + sum(c.tokens for c in found),
        )

    def _controlled(self, options: dict[str, Any]) -> tuple[RecallOptions, dict[str, Any]]:
        """The recall settings with the per-call controls among `options` applied, and
        the options left (the filters)."""
        from memlane.retrieve.recall import CONTROLS, controlled

        asked = {k: options[k] for k in CONTROLS if k in options}
        rest = {k: v for k, v in options.items() if k not in CONTROLS}
        return controlled(self.rt.recall_settings, **asked), rest

    def _cards(self, query: str, max_tokens: int | None, used: int) -> tuple[EntityCard, ...]:
        """Cards for the entities `query` names that have current relations this agent
        may see, in the order the query names them, within what is left of the budget."""
        from memlane.graph.entities import query_aliases
        from memlane.retrieve.cards import cards

        entities = self.rt.store.entities
        aliases = query_aliases(query).all
        owners = entities.owners(aliases) if aliases else {}
        if not owners:
            return ()
        relations = entities.relations(list(dict.fromkeys(owners.values())), self.rt.agent)
        related = {r.subject_id for r in relations} | {r.object_id for r in relations}
        named = [
            e
            for alias in aliases
            if owners.get(alias) in related and (e := entities.known(alias, self.rt.agent))
        ]
        unique = list({e.id: e for e in named}.values())
        return cards(unique, relations, None if max_tokens is None else max_tokens - used)

    def min_score(self, asked: float | None = None) -> float | None:
        """The relevance floor a read uses: the one asked, else the recall_min_score
        setting, else the embedding profile's calibrated floor (0: none)."""
        if asked is not None:
            if not 0.0 <= asked <= 1.0:
                raise Invalid(f"--min-score must be between 0 and 1, not {asked}")
            return asked
        if self.rt.recall_settings.min_score is not None:
            return self.rt.recall_settings.min_score
        embedder = self.rt.embedder
        return embedder.profile.relevance_floor if embedder is not None else None

    def _recall_vector_lane(self) -> tuple[tuple[Index, Embedder] | None, dict[str, str]]:
        """The vector lane recall may use, or why it may not: an embedder configured but
        unusable (a model that cannot load, a profile other than the store's vectors).
        Recall then answers from its other lanes and says so; with no embedder
        configured there is nothing to say."""
        from memlane.retrieve.fuse import VECTOR

        if self.rt.embedder is None:
            return None, {VECTOR: self.rt.embed_problem} if self.rt.embed_problem else {}
        try:
            return self.rt.vector_lane(), {}
        except (Conflict, Unavailable) as exc:
            return None, {VECTOR: str(exc)}

    def surfaced(self, memory_ids: Sequence[str]) -> None:
        """Count a passive showing of these memories (surfaced_count, last_surfaced).

        For a caller that filters a `recall(passive=True, count=False)` further (a hook's
        injection gate): only what it finally shows was surfaced.
        """
        self.rt.count(list(dict.fromkeys(memory_ids)), "surfaced")

    def explain(
        self,
        query: str,
        target: str | None = None,
        filters: Filters | None = None,
        *,
        limit: int = RECALL_LIMIT,
        max_tokens: int | None = None,
        passive: bool = False,
        min_score: float | None = None,
        **options: Any,
    ) -> Explanation:
        """Re-run recall exactly (writing nothing) and say why each target surfaced or
        not: the presented results without a target; else the memory with that id,
        or those whose title or body contains the text (at most EXPLAIN_TARGETS)."""
        from memlane.retrieve.explain import Explanation, judge
        from memlane.retrieve.recall import with_global

        settings, rest = self._controlled(options)
        chosen = with_global(filters or self.rt.filters(**rest), settings.include_global)
        controls = {k: v for k, v in options.items() if k not in rest}
        result = self.recall(
            query,
            chosen,
            limit=limit,
            max_tokens=max_tokens,
            passive=passive,
            count=False,
            min_score=min_score,
            **controls,
        )
        absent = None
        if result.skipped:
            absent = "; ".join(
                f"{lane} lane skipped: {why}" for lane, why in result.skipped.items()
            )
        elif self.rt.embedder is None:
            absent = "vector lane absent: no embedding profile"
        records: list[Record | None] = []
        if target is None:
            records += [h.record for h in result.hits] + [e.record for e in result.extras]
            told = {r.id for r in records if r is not None}
            priors = {p.record.id: p.record for p in result.previously if p.record.id not in told}
            records += priors.values()
        else:
            records += self._targets(target) or [None]
        verdicts = []
        for record in records:
            passes = valid = False
            if record is not None:
                alone = replace(chosen, ids=(record.id,), limit=None)
                passes = bool(self.rt.store.query(alone))
                valid = (
                    chosen.as_of is None or self.rt.store.get(record.id, chosen.as_of) is not None
                )
            verdicts.append(
                judge(
                    record,
                    result,
                    chosen,
                    passes_filters=passes,
                    valid_at_as_of=valid,
                    absent_lanes=absent,
                )
            )
        return Explanation(query, target, result, tuple(verdicts), absent)

    def _targets(self, target: str) -> list[Record]:
        """The memory with this id (or unambiguous prefix), else those whose title or
        body contains the text (case-insensitive); none when neither."""
        from memlane.retrieve import lanes
        from memlane.retrieve.explain import EXPLAIN_TARGETS

        try:
            return [self.rt.read(self.rt.store, target)]
        except (NotFound, Invalid):
            pass
        wanted = target.casefold().strip()
        if not wanted:
            return []
        everywhere = replace(
            self.rt.filters(scope="all", include_private=self.rt.agent is not None),
            include_superseded=True,
            limit=EXPLAIN_SEARCH,
        )
        seen: dict[str, Record] = {}
        for record in (h.record for h in lanes.keyword(self.rt.store, target, everywhere)):
            if wanted in f"{record.title}\n{record.body}".casefold():
                seen.setdefault(record.id, record)
        return list(seen.values())[:EXPLAIN_TARGETS]

    def hidden_private_count(self, filters: Filters, query: str | None = None) -> int:
        """How many of the viewer's own private memories a public-only read hid."""
        if self.rt.agent is None or filters.include_private or filters.mine:
            return 0
        mine = replace(filters, mine=True, limit=None)
        found = self.rt.store.search(query, mine) if query else self.rt.store.query(mine)
        return len(found)

    def chunk_count(self, memory_id: str) -> int:
        """How many chunk vectors a memory has under the store's embedding profile (0:
        none, or a body short enough for its entry vector alone)."""
        record = self.rt.read(self.rt.store, memory_id)
        profile = self.rt.store.meta(EMBED_PROFILE_META)
        if not profile:
            return 0
        return sum(1 for _, chunk, _ in self.rt.store.vectors(profile, [record.id]) if chunk >= 0)

    def elsewhere_count(self, filters: Filters, query: str | None = None) -> int:
        """How many memories the same read finds in the scopes it did not read (0 when
        it read every scope): what an empty answer from the wrong folder hides."""
        if filters.scopes is None:
            return 0
        inside = set(filters.scopes)
        everywhere = replace(filters, scopes=None, limit=None)
        store = self.rt.store
        found = store.search(query, everywhere) if query else store.query(everywhere)
        return sum(1 for item in found if _scope_of(item) not in inside)

    def _reread(self, items: Sequence[Any], sources: bool = True) -> tuple[Any, ...]:
        """Hits (or anything with a `record`) with their records as this agent reads
        them (see Runtime.as_read)."""
        read = self.rt.as_read([item.record for item in items], sources)
        return tuple(
            item if r is item.record else replace(item, record=r)
            for item, r in zip(items, read, strict=True)
        )


def _tokens(embedder: Embedder, record: Record) -> int:
    """How many of the profile's tokens the text embedded for `record` holds."""
    return len(embedder.token_spans(normalize.document_text(record)))


def _scope_of(item: Record | Hit) -> str:
    return item.record.scope if isinstance(item, Hit) else item.scope
