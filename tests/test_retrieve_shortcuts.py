"""The shortcuts recall takes per query (parts worked out once per profile, MMR over
word sets read once) give the very floats and orders of the definitions they stand
for. Pure: no store."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

from memlane import Context
from memlane.model import Kind, Record, ResonanceType, replace
from memlane.retrieve.fuse import BM25, ENTITY, VECTOR, convex
from memlane.retrieve.mmr import diversify, mmr
from memlane.retrieve.score import (
    DEFAULT_SHAPE,
    DEFAULT_WEIGHTS,
    Scored,
    combined,
    importance,
    popularity,
    recency,
    scope_boost,
    score_candidates,
    trust,
)
from memlane.retrieve.when import TimeCue, time_fit
from memlane.words import jaccard, tokens

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
CTX = Context("proj", "main")
SCOPES = ("project:proj@main", "project:proj", "global", "project:other", "project:proj@dev")
RESONANCE = (None, *ResonanceType)
WORDS = "deploy friday tests cache queue replica alarm handler bug date sent".split()


def varied(rng: random.Random, n: int) -> dict[str, Record]:
    """Records whose shared fields repeat (few kinds, scopes, counts) and whose clocks
    do not: what a per-profile shortcut could wrongly share."""
    out = {}
    for i in range(n):
        created = NOW - timedelta(days=rng.choice((0, 3, 40, 400)), seconds=rng.randrange(9999))
        record = Record(
            id=f"m{i}",
            scope=rng.choice(SCOPES),
            title=" ".join(rng.sample(WORDS, 2)),
            body=" ".join(rng.choices(WORDS, k=rng.randrange(1, 8))),
            kind=rng.choice((Kind.FACT, Kind.DECISION, Kind.EVENT, Kind.PROCEDURE)),
            category="general",
            created_at=created,
            updated_at=created,
            valid_from=created,
            version_from=created,
            dedup_hash=f"dh1:{i}",
        )
        out[record.id] = replace(
            record,
            importance=rng.choice((1, 3, 5, 8, 10)),
            resonance_type=rng.choice(RESONANCE),
            confidence=rng.choice((0.25, 0.6, 1.0)),
            trust_score=rng.choice((0.5, 1.0)),
            retrieval_count=rng.choice((0, 0, 3, 250)),
            surfaced_count=rng.choice((0, 1)),
            occurred_at=rng.choice((None, created - timedelta(days=rng.randrange(30)))),
            last_activated=rng.choice((None, created + timedelta(days=rng.randrange(20)))),
        )
    return out


def test_every_part_and_score_is_the_float_its_definition_gives():
    rng = random.Random(7)
    records = varied(rng, 300)
    ids = list(records)
    fused = convex(
        {
            BM25: [(i, rng.random()) for i in rng.sample(ids, 120)],
            VECTOR: [(i, rng.random()) for i in rng.sample(ids, 120)],
            ENTITY: [(i, rng.random()) for i in rng.sample(ids, 30)],
        }
    )
    window = (NOW - timedelta(days=10), NOW)
    for cue in (TimeCue(), TimeCue(window=window, asks_when=True)):
        scored = score_candidates(fused, records, now=NOW, context=CTX, cue=cue)
        assert len(scored) == len(fused)
        for s in scored:
            r, parts = s.record, s.parts
            assert parts["recency"] == recency(r, NOW, DEFAULT_SHAPE.half_lives)
            assert parts["importance"] == importance(r, NOW)
            assert parts["trust"] == trust(r)
            assert parts["popularity"] == popularity(r)
            assert parts["scope"] == scope_boost(r.scope, CTX, DEFAULT_SHAPE.boosts)
            assert parts["time"] == time_fit(r, cue)
            assert s.score == combined(s.relevance, parts, DEFAULT_WEIGHTS)


def eager_mmr(items, score, similarity, lambda_, limit):
    """MMR as defined: every candidate left compared with each new pick."""
    wanted = len(items) if limit is None else min(limit, len(items))
    left, nearest, picked = list(range(len(items))), [0.0] * len(items), []
    while len(picked) < wanted:
        value = [lambda_ * score(items[i]) - (1.0 - lambda_) * nearest[i] for i in left]
        best = left.pop(value.index(max(value)))
        picked.append(items[best])
        for i in left:
            nearest[i] = max(nearest[i], similarity(items[i], items[best]))
    return picked


def test_mmr_and_diversify_pick_as_the_full_comparison_does():
    rng = random.Random(11)
    for _ in range(40):
        records = list(varied(rng, 30).values())
        # Few distinct scores and words: ties in values, which go to the first given.
        ranked = sorted(
            (Scored(r, rng.choice((0.9, 0.8, 0.8, 0.5)), 1.0, {}, {}) for r in records),
            key=lambda s: -s.score,
        )

        def words(s: Scored) -> frozenset[str]:
            return tokens(f"{s.record.title}\n{s.record.body}")

        def similar(a: Scored, b: Scored) -> float:
            return jaccard(words(a), words(b))

        def score(s: Scored) -> float:
            return s.score

        for lambda_, limit in ((0.9, 10), (0.7, None), (0.5, 12), (0.0, 3), (1.0, 5)):
            expected = eager_mmr(ranked, score, similar, lambda_, limit)
            assert diversify(ranked, lambda_=lambda_, limit=limit) == expected
            assert mmr(ranked, score, similar, lambda_, limit) == expected


def test_list_columns_read_back_as_json_wrote_them():
    from memlane.store.sqlite.rows import _tuple

    values = [
        [],
        ["oncall"],
        ["a", "b", "a"],
        ["naïve", "日本語", "emoji 🚀", 'quote " and \\ backslash', "", " spaced "],
        ["line\nbreak", "tab\t", "\u2028", "ctrl \x01"],
    ]
    for value in values:
        text = json.dumps(value, ensure_ascii=False)
        assert _tuple(text) == tuple(json.loads(text))
    assert _tuple(None) == _tuple("") == _tuple("[]") == ()
