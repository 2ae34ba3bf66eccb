"""Session neighbours: the memories written just before and after a found one.

A memory's neighbours in its session often hold what it sets up or answers (a
question and its reply, a decision and its reason) without sharing the query's
words. The best NEIGHBOUR_SEEDS fused candidates lift their neighbours (through the
same filters, and only those that share a content word with them) to at least
NEIGHBOUR_SHARE of their own fused score.

LoCoMo dev, categories 1-4, MiniLM, one memlane session per LoCoMo session
(R@10 / MRR): off .699 / .522; share 0.5 .737 / .528 (simulated: 0.7 .731 / .526,
0.9 .725 / .514; 3 to 10 seeds alike); with the entity lane, share 0.25 .710 /
.524, 0.35 .721 / .527, 0.5 .739 / .529, and .730 / .528 once a neighbour must share
a content word with its seed (the quickstart's refund question otherwise surfaced a
tip about pip written next to a refund promise). The gain is in single-hop and
temporal questions; open-domain loses about 2 points (59 questions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memlane.graph.entities import STOPWORDS
from memlane.model import Filters, Record, replace
from memlane.retrieve.fuse import Fused
from memlane.store import Store
from memlane.words import tokens


def content_words(text: str) -> frozenset[str]:
    """A text's words, less the function words and common verbs of STOPWORDS."""
    return tokens(text) - STOPWORDS


NEIGHBOUR_SEEDS = 5
NEIGHBOUR_SHARE = 0.5
NEIGHBOUR = "session"  # its name among a result's lanes and explain parts


def with_neighbours(
    store: Store,
    filters: Filters,
    fused: Sequence[Fused],
    records: Mapping[str, Record],
    share: float = NEIGHBOUR_SHARE,
) -> tuple[list[Fused], dict[str, Record]]:
    """The fused candidates with the session neighbours of the best few lifted in.

    Trigger: one of the best NEIGHBOUR_SEEDS candidates belongs to a session. Outcome:
    each neighbour the filters admit scores at least `share` of the seed's fused
    score; the lift is its NEIGHBOUR part, ranked by the seed's rank. share 0: off.
    """
    seeds = [f for f in fused if f.id in records and records[f.id].session_id][:NEIGHBOUR_SEEDS]
    if share <= 0 or not seeds:
        return list(fused), dict(records)
    adjacent = store.adjacent([s.id for s in seeds])
    wanted = {n for ids in adjacent.values() for n in ids}
    # The lanes read their candidates through these filters already: only the others
    # are asked for.
    admitted = {n: records[n] for n in wanted if n in records}
    unread = tuple(n for n in wanted if n not in records)
    if unread:
        admitted.update((r.id, r) for r in store.query(replace(filters, ids=unread, limit=None)))
    out = {f.id: f for f in fused}
    known = {**records, **admitted}
    for rank, seed in enumerate(seeds, start=1):
        lift = share * seed.score
        words = content_words(records[seed.id].body)
        for memory_id in adjacent.get(seed.id, ()):
            current = out.get(memory_id)
            own = current.score if current is not None else 0.0
            if memory_id not in admitted or lift <= own:
                continue
            # Trigger: the neighbour shares no content word with the memory found. Why:
            # a session also holds unrelated notes side by side (a refund promise, then
            # a tip about pip), and lifting those pushes relevant memories out. Outcome:
            # not lifted. Cost on LoCoMo (R@10 / MRR): .739 / .529 -> .730 / .528.
            if not words & content_words(admitted[memory_id].body):
                continue
            ranks = dict(current.ranks) if current is not None else {}
            shares = dict(current.contributions) if current is not None else {}
            ranks[NEIGHBOUR] = min(rank, ranks.get(NEIGHBOUR, rank))
            shares[NEIGHBOUR] = lift - own + shares.get(NEIGHBOUR, 0.0)
            out[memory_id] = Fused(memory_id, lift, ranks, shares)
    ordered = sorted(out.values(), key=lambda f: (-f.score, f.best_rank, f.id))
    return ordered, known
