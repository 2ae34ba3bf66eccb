"""Consolidation plans: which live near-duplicates fold into which keeper, and the text
the keeper ends up with. Pure: the consolidation service (services.maintenance) reads
the records and vectors, this module
decides, and the same `Plan` drives a dry run and a real one, so the two agree by
construction.

- Only memories of the same reach (scope, kind, visibility, owner) can fold together:
  a private note never lands in a memory others can read.
- Similarity is the cosine of the entry vectors when both memories have one, the token
  Jaccard of their texts otherwise.
- Clusters grow around a leader: memories are taken best keeper first, and each one
  not yet placed gathers the unplaced memories at least `threshold` alike with it.
  Every absorbed memory is therefore a near-duplicate of its keeper itself, never
  only of a neighbour of a neighbour (no chaining).
- A cluster whose members disagree in negation polarity ("always X" / "never X") is
  parked: reported, never merged.
- The keeper gets the sentences of the absorbed memories it does not already say,
  appended in order; one that would push it past the size cap is not appended and is
  recorded `:truncated` (its text stays on its superseded row).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

import msgspec

from memlane.model import (
    INJECTION_TAG,
    REDACTED_TAG,
    Cadence,
    ContentType,
    Kind,
    Record,
    Taint,
    Visibility,
    replace,
    worst_taint,
)
from memlane.words import jaccard, tokens
from memlane.write.dedup import is_negative
from memlane.write.normalize import document_text

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = Mapping[str, npt.NDArray[np.float32]]

# Alike enough to be one memory said twice, loose enough to catch rewordings (the write
# path already refreshed the 0.92+ restatements it saw).
DEFAULT_THRESHOLD = 0.80
# The marker a keeper's provenance puts on an absorbed id whose text did not fit.
TRUNCATED = ":truncated"
# Memories compared in one run, the most recently updated first. Comparing is
# quadratic: 5,000 is ~12.5M pairs, about a second of matrix products on a small
# machine. Older memories were compared by earlier runs, while they were recent.
MAX_CANDIDATES = 5_000
# Blocks of rows multiplied at once: bounds the similarity matrix held in memory.
_BLOCK = 512
PARK_REASON = "mixed negation polarity"
# A sentence ends at . ! ? before a capital, digit, quote or bracket (not "e.g. this").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[`])")
_SPACE = re.compile(r"\s+")
# What a sentence may end or start with and still say the same ("Use uv." is "use uv").
_EDGE_PUNCTUATION = " .,;:!?\"'“”‘’()[]-–—*•`"
_CLAUSE_PUNCTUATION = re.compile(r"[,;:!?.…]+(?=\s|$)")
Reach = tuple[str, Kind, Visibility, str | None]


class Method(StrEnum):
    COSINE = "cosine"
    JACCARD = "jaccard"
    MIXED = "mixed"  # cosine where both memories have vectors, Jaccard elsewhere
    NONE = "none"  # nothing to compare


class Absorbed(msgspec.Struct, frozen=True):
    """A memory folded into a keeper."""

    id: str
    similarity: float
    appended: str  # what the keeper gains; "" when it already said all of it
    truncated: bool = False  # not appended: the keeper would pass the size cap

    @property
    def provenance(self) -> str:
        return self.id + TRUNCATED if self.truncated else self.id


class Merge(msgspec.Struct, frozen=True):
    """One cluster folded into its keeper: the keeper's content and metadata after it."""

    keeper: str
    absorbed: tuple[Absorbed, ...]
    body: str
    tags: tuple[str, ...]
    importance: int
    taint: Taint

    @property
    def merged_from(self) -> tuple[str, ...]:
        return tuple(a.provenance for a in self.absorbed)

    @property
    def grew(self) -> bool:
        return any(a.appended for a in self.absorbed)


class Parked(msgspec.Struct, frozen=True):
    """A cluster left alone: its members contradict each other."""

    ids: tuple[str, ...]  # the would-be keeper first
    reason: str


class Plan(msgspec.Struct, frozen=True):
    """Everything a consolidation run does, decided before anything is written."""

    threshold: float
    method: Method
    considered: int
    capped: bool  # more candidates existed than MAX_CANDIDATES
    merges: tuple[Merge, ...] = ()
    parked: tuple[Parked, ...] = ()

    @property
    def absorbed(self) -> int:
        return sum(len(m.absorbed) for m in self.merges)


class Caps(msgspec.Struct, frozen=True):
    """What a keeper may grow to: the write path's own limits."""

    body_bytes: int = 64 * 1024
    tags: int = 50


# ---- similarity ------------------------------------------------------------------


def reach(record: Record) -> Reach:
    """Who reads a memory and what it is: only memories alike in all four fold."""
    return (record.scope, record.kind, record.visibility, record.owner)


def keeper_rank(record: Record) -> tuple[float, float, datetime, str]:
    """Sort key, best keeper first: confidence × use (explicit reads plus passive
    surfacing), then confidence, then the earliest written."""
    use = record.retrieval_count + record.surfaced_count
    return (-record.confidence * use, -record.confidence, record.created_at, record.id)


def near_pairs(
    records: Sequence[Record], threshold: float, vectors: Vectors | None = None
) -> dict[tuple[int, int], float]:
    """{(i, j): similarity} for i < j of the same reach at least `threshold` alike."""
    vectors = vectors or {}
    pairs: dict[tuple[int, int], float] = {}
    for members in _by_reach(records).values():
        with_vector = [i for i in members if records[i].id in vectors]
        pairs.update(_cosine_pairs(records, with_vector, vectors, threshold))
        has = set(with_vector)
        if len(has) == len(members):
            continue
        texts = {i: tokens(document_text(records[i])) for i in members}
        for (i, j), score in _jaccard_pairs(texts, threshold).items():
            if not (i in has and j in has):
                pairs[(i, j)] = score
    return pairs


def method_of(records: Sequence[Record], vectors: Vectors | None) -> Method:
    if not records:
        return Method.NONE
    have = sum(1 for r in records if vectors and r.id in vectors)
    if have == len(records):
        return Method.COSINE
    return Method.JACCARD if have == 0 else Method.MIXED


def _by_reach(records: Sequence[Record]) -> dict[Reach, list[int]]:
    groups: dict[Reach, list[int]] = {}
    for i, record in enumerate(records):
        groups.setdefault(reach(record), []).append(i)
    return groups


def _cosine_pairs(
    records: Sequence[Record], members: list[int], vectors: Vectors, threshold: float
) -> dict[tuple[int, int], float]:
    """Cosine of unit entry vectors, a block of rows at a time."""
    if len(members) < 2:
        return {}
    import numpy as np

    matrix = np.stack([vectors[records[i].id] for i in members]).astype(np.float32)
    out: dict[tuple[int, int], float] = {}
    for start in range(0, len(members), _BLOCK):
        scores = matrix[start : start + _BLOCK] @ matrix.T
        for a, b in zip(*np.nonzero(scores >= threshold), strict=True):
            i, j = members[start + int(a)], members[int(b)]
            if i < j:
                out[(i, j)] = round(float(scores[a, b]), 4)
    return out


def _jaccard_pairs(
    texts: Mapping[int, frozenset[str]], threshold: float
) -> dict[tuple[int, int], float]:
    """Token Jaccard at least `threshold`, by prefix filtering: with tokens ordered
    rarest first, two sets that alike must share a token among the first
    len - ceil(threshold · len) + 1 of each, so only those are indexed and compared."""
    frequency: dict[str, int] = {}
    for words in texts.values():
        for word in words:
            frequency[word] = frequency.get(word, 0) + 1
    index: dict[str, list[int]] = {}
    out: dict[tuple[int, int], float] = {}
    for i, words in sorted(texts.items()):
        ordered = sorted(words, key=lambda w: (frequency[w], w))
        # less a hair: 0.8 × 5 is 4.000000000000001 in floats, and ceil must give 4
        prefix = ordered[: len(ordered) - math.ceil(threshold * len(ordered) - 1e-9) + 1]
        seen: set[int] = set()
        for word in prefix:
            for j in index.get(word, ()):
                if j not in seen:
                    seen.add(j)
                    score = jaccard(words, texts[j])
                    if score >= threshold:
                        out[(j, i)] = round(score, 4)
            index.setdefault(word, []).append(i)
    return out


# ---- clusters ---------------------------------------------------------------------


def clusters(
    records: Sequence[Record], pairs: Mapping[tuple[int, int], float]
) -> list[tuple[int, list[tuple[int, float]]]]:
    """(leader, [(member, similarity)]) around leaders taken best keeper first."""
    neighbours: dict[int, dict[int, float]] = {}
    for (i, j), score in pairs.items():
        neighbours.setdefault(i, {})[j] = score
        neighbours.setdefault(j, {})[i] = score
    order = sorted(neighbours, key=lambda i: keeper_rank(records[i]))
    placed: set[int] = set()
    out = []
    for leader in order:
        if leader in placed:
            continue
        members = [(j, s) for j, s in neighbours[leader].items() if j not in placed]
        if not members:
            continue
        members.sort(key=lambda pair: keeper_rank(records[pair[0]]))
        placed.update([leader, *(j for j, _ in members)])
        out.append((leader, members))
    return out


def mixed_polarity(texts: Iterable[str]) -> bool:
    """Whether some members are negated and others not (write.dedup's polarity)."""
    return len({is_negative(t) for t in texts}) > 1


# ---- merged text ------------------------------------------------------------------


def fold_sentence(text: str) -> str:
    """A sentence as subsumption compares it: casefolded, whitespace collapsed, clause
    punctuation (a comma or stop before a space or the end) and the quotes at its
    edges dropped ("Use uv." says what "use uv" says). Punctuation inside a token
    stays (`foo_bar` is not `foo-bar`, 3.11 is not 311): when unsure, text is kept."""
    folded = _CLAUSE_PUNCTUATION.sub("", text.casefold().replace("’", "'"))
    return _SPACE.sub(" ", folded).strip(_EDGE_PUNCTUATION)


def sentences(line: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(line.strip()) if s.strip()]


def folded_sentences(text: str) -> list[str]:
    return [fold_sentence(s) for line in text.splitlines() for s in sentences(line)]


def says(known: Sequence[str], sentence: str) -> bool:
    """Whether one of the `known` folded sentences already says `sentence`: contains
    it on word boundaries, with the same negation polarity ("use uv" is said by
    "always use uv for installs", not by "never use uv for installs")."""
    needle = fold_sentence(sentence)
    if not needle:
        return True
    pattern = re.compile(rf"(?<!\w){re.escape(needle)}(?!\w)")
    negative = is_negative(needle)
    return any(pattern.search(k) and is_negative(k) == negative for k in known)


def unsaid(text: str, known: str, content_type: ContentType = ContentType.TEXT) -> str:
    """The part of `text` that `known` does not already say, in its order: its unsaid
    sentences (each once), line by line. Code, config and data are kept whole unless
    `known` contains them whole (a line of code without its neighbours means little)."""
    if content_type is not ContentType.TEXT:
        whole = _SPACE.sub(" ", text).strip()
        return "" if whole in _SPACE.sub(" ", known) else text.strip()
    said = folded_sentences(known)
    kept_lines = []
    for line in text.splitlines():
        kept = []
        for sentence in sentences(line):
            if not says(said, sentence):
                kept.append(sentence)
                said.append(fold_sentence(sentence))  # said once is enough
        if kept:
            kept_lines.append(" ".join(kept))
    return "\n".join(kept_lines)


def merge_cluster(
    keeper: Record,
    members: Sequence[tuple[Record, float]],
    caps: Caps = Caps(),
) -> Merge:
    """The keeper after absorbing `members` in order: their unsaid text appended (a
    paragraph each), tags joined (up to the cap), the highest importance, the worst
    taint (a merge never launders where a text came from)."""
    body, absorbed = keeper.body, []
    for record, similarity in members:
        known = f"{keeper.title}\n{body}"
        extra = unsaid(document_text(record), known, record.content_type)
        grown = f"{body}\n\n{extra}" if extra else body
        if len(grown.encode("utf-8")) > caps.body_bytes:
            absorbed.append(Absorbed(record.id, similarity, "", truncated=True))
            continue
        body = grown
        absorbed.append(Absorbed(record.id, similarity, extra))
    everyone = [keeper, *(r for r, _ in members)]
    return Merge(
        keeper=keeper.id,
        absorbed=tuple(absorbed),
        body=body,
        tags=joined_tags(everyone, caps.tags),
        importance=max(r.importance for r in everyone),
        taint=worst_taint(*(r.taint for r in everyone)),
    )


def joined_tags(records: Sequence[Record], cap: int) -> tuple[str, ...]:
    """Every member's tags, first seen first, up to `cap` (never fewer than the
    keeper's own). Past the cap the capture policy's flags go first: a keeper that
    took in a flagged text must carry the flag, however many tags there are."""
    seen = dict.fromkeys(t for r in records for t in r.tags)
    if len(seen) <= cap:
        return tuple(seen)
    flags = [t for t in (INJECTION_TAG, REDACTED_TAG) if t in seen]
    rest = [t for t in seen if t not in flags]
    return tuple([*flags, *rest][: max(cap, len(records[0].tags))])


# ---- the plan ---------------------------------------------------------------------


def plan(
    records: Sequence[Record],
    threshold: float = DEFAULT_THRESHOLD,
    vectors: Vectors | None = None,
    caps: Caps = Caps(),
    capped: bool = False,
) -> Plan:
    """What consolidating these live records does: merges and parked clusters, in
    keeper order."""
    merges, parked = [], []
    for leader, members in clusters(records, near_pairs(records, threshold, vectors)):
        keeper = records[leader]
        group = [(records[j], s) for j, s in members]
        if mixed_polarity(document_text(r) for r in (keeper, *(r for r, _ in group))):
            parked.append(Parked((keeper.id, *(r.id for r, _ in group)), PARK_REASON))
        else:
            merges.append(merge_cluster(keeper, group, caps))
    return Plan(
        threshold=threshold,
        method=method_of(records, vectors),
        considered=len(records),
        capped=capped,
        merges=tuple(merges),
        parked=tuple(parked),
    )


def merged_record(keeper: Record, merge: Merge, hash_of: Callable[[str, str], str]) -> Record:
    """The keeper's next version under `merge` (`hash_of`: the dedup hash of title and
    body). Importance only ever rises, whatever happened since planning."""
    return replace(
        keeper,
        body=merge.body,
        tags=merge.tags,
        importance=max(keeper.importance, merge.importance),
        taint=worst_taint(keeper.taint, merge.taint),
        dedup_hash=hash_of(keeper.title, merge.body),
    )


def absorbed_reason(keeper: str, absorbed: Absorbed) -> str:
    """The supersede reason an absorbed memory keeps."""
    how = f"similarity {absorbed.similarity:.2f}"
    if absorbed.truncated:
        return f"consolidated into {keeper} ({how}); {TRUNCATED[1:]}: too large to append"
    return f"consolidated into {keeper} ({how})"


# ---- the cadence gate -------------------------------------------------------------


DEFAULT_CADENCE = Cadence()


class LastRun(msgspec.Struct, frozen=True):
    at: datetime
    live: int  # live memories right after it


def cadence_skip(
    last: LastRun | None, live_now: int, now: datetime, cadence: Cadence
) -> str | None:
    """Why a run would be skipped now, or None when it is due.

    Trigger: the last run was less than `interval_days` ago AND the store grew by less
    than `growth` since. Why: consolidation reads every candidate; running it on every
    session start would cost more than the few duplicates a quiet week adds. Outcome:
    skipped, with the numbers; the first run, and a run after either bound, is due.
    """
    if last is None:
        return None
    age = now - last.at
    grown = (live_now - last.live) / last.live if last.live else math.inf
    if age >= timedelta(days=cadence.interval_days) or grown >= cadence.growth:
        return None
    return (
        f"last run {age.total_seconds() / 86_400:.1f} days ago, due after "
        f"{cadence.interval_days:g}; growth {max(grown, 0.0):.0%}, due at {cadence.growth:.0%}"
    )
