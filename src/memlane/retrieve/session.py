"""Session neighbours: the memories written just before and after a found one.

A memory's neighbours in its session often hold what it sets up or answers (a
question and its reply, a decision and its reason) without sharing the query's
words. The best NEIGHBOUR_SEEDS fused candidates lift their neighbours (through the
same filters, and only those that share a content word with them) to at least
NEIGHBOUR_SHARE of their own fused score.

NEIGHBOUR_SHARE is tuned on the LoCoMo dev split (`memlane eval locomo`, one memlane
session per LoCoMo session): 0.5 lifts R@10 by several points over no lift, more than
lower or higher shares do; 3 to 10 seeds score alike. The gain is in single-hop and
temporal questions; open-domain loses a little.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import islice

from memlane.graph.entities import STOPWORDS
from memlane.model import Filters, Record, replace
from memlane.retrieve.dialogue import asks
from memlane.retrieve.fuse import Fused, ordered
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
    replies: bool = True,
) -> tuple[list[Fused], dict[str, Record]]:
    """The fused candidates with the session neighbours of the best few lifted in.

    Trigger: one of the best NEIGHBOUR_SEEDS candidates belongs to a session. Outcome:
    each neighbour the filters admit scores at least `share` of the seed's fused
    score; the lift is its NEIGHBOUR part, ranked by the seed's rank. share 0: off.
    `replies`: a seed that ends with a question lifts its neighbours whether or not
    they share a word with it.
    """
    in_session = (f for f in fused if f.id in records and records[f.id].session_id)
    seeds = list(islice(in_session, NEIGHBOUR_SEEDS))  # the best few: the rest is not read
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
            # not lifted, at the cost of a point of R@10 on LoCoMo.
            # Unless the seed asks: a reply need not repeat the question's words ("What
            # are your dogs called?" - "Max and Daisy."), and the question falls behind
            # it (dialogue.weigh_lines). Cross-validated on the LoCoMo dev
            # conversations (`memlane eval locomo --grid session_replies=0,1`): every
            # held-out fold chose it.
            asking = replies and asks(records[seed.id].body)
            if not asking and not words & content_words(admitted[memory_id].body):
                continue
            ranks = dict(current.ranks) if current is not None else {}
            shares = dict(current.contributions) if current is not None else {}
            ranks[NEIGHBOUR] = min(rank, ranks.get(NEIGHBOUR, rank))
            shares[NEIGHBOUR] = lift - own + shares.get(NEIGHBOUR, 0.0)
            out[memory_id] = Fused(memory_id, lift, ranks, shares)
    return ordered(out.values(), {i: r.dedup_hash for i, r in known.items()}), known
