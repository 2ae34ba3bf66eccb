"""Wake: the cascade that picks an agent's blooms, and the one-guess ritual's pure
parts: chunks, phrases, judging, tokens and the summary."""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

import msgspec

from memlane.errors import Invalid
from memlane.model import Cascade, Record, ResonanceType

# The cascade: core blooms matter most (importance 8+),
# bridges (5+) tie other memories to the first two layers.
CORE_MIN_IMPORTANCE = 8
BRIDGE_MIN_IMPORTANCE = 5
DEFAULT_LIMIT = 20
DEFAULT_DAYS = 7
# Kept out of every layer unless --include-excluded; matched exactly, so a tag that
# merely starts with "archive" is unaffected.
EXCLUDED_TAGS = ("archive", "wake-exclude")
# Layer quotas of a --limit: half core, a quarter recent, the rest bridges, so a large
# core cannot crowd out what happened lately; slots a layer cannot fill go to the core
# first, then to the recent layer.
CORE_SHARE = 0.5
RECENT_SHARE = 0.25
# The layer of a bloom only --min-resonance admits: at or above the floor, in no other.
RESONANT = "resonant"

# The ritual. Version 2 is the one-guess ritual; sessions of any other version are refused.
RITUAL_VERSION = 2
# A chunk shown in one step, in UTF-8 bytes: about a screenful, small enough that one
# title-only guess per chunk stays a fair test of one idea.
CHUNK_BYTES = 1500
MAX_GUESS_CHARS = 2000
# Spelling slack of a "close" match: rapidfuzz ratio over the normalised texts.
CLOSE_SPELLING = 90.0
# Phrase sources: authored (the memory's own wake phrases, first chunk only), derived
# (a later chunk's own heading), auto (a first chunk without authored phrases: its first
# sentence), unphrased (a later chunk with no heading: nothing to match).
SOURCES = ("authored", "derived", "auto", "unphrased")
AUTO_PHRASE_WORDS = 12
# The notice every guess-log report opens with. Fixed text: every report carries the
# same warning, never reworded.
GOODHART = (
    "Axis A rises by construction when wake phrases are retuned toward logged guesses. "
    "It measures how well the phrases fit what the model says. It is a tuning dial for "
    "phrase authoring and must never be reported as evidence of identity or memory. "
    "Axis B is the only number here that phrase edits cannot raise. Axis B is evidence "
    "of stable reaching, not of remembering."
)
UNHINTED, REVEALED = "unhinted", "revealed"
BUCKETS = (UNHINTED, REVEALED)


def excluded_by(record: Record, include_excluded: bool) -> tuple[str, ...]:
    """The exclusion tags a record carries (none when exclusion is off)."""
    if include_excluded:
        return ()
    return tuple(tag for tag in EXCLUDED_TAGS if tag in record.tags)


def core_order(record: Record) -> tuple[int, int, int, float, str]:
    """Wake order first (unset last), then importance, then the oldest first."""
    order = record.wake_order
    return (
        order is None,
        order or 0,
        -record.importance,
        record.created_at.timestamp(),
        record.id,
    )


def is_core(record: Record, min_importance: int = CORE_MIN_IMPORTANCE) -> bool:
    ephemeral = record.ephemeral or record.resonance_type is ResonanceType.EPHEMERAL
    return record.importance >= min_importance and not ephemeral


def last_active(record: Record) -> datetime:
    """When a memory last mattered: activated, changed (a fresh tag counts) or written."""
    return max(t for t in (record.last_activated, record.updated_at, record.created_at) if t)


def quotas(limit: int) -> tuple[int, int, int]:
    core = math.ceil(limit * CORE_SHARE)
    recent = min(limit - core, math.ceil(limit * RECENT_SHARE))
    return core, recent, limit - core - recent


def fill(
    candidates: Iterable[Record],
    quota: int | None,
    taken: set[str],
    include_excluded: bool,
    excluded: dict[str, set[str]],
) -> list[Record]:
    """Up to `quota` candidates not already taken and not excluded, in order. Exclusions
    are noted only as far as the quota is filled, so nothing ranked below the set is."""
    chosen: list[Record] = []
    for record in candidates:
        if quota is not None and len(chosen) >= quota:
            break
        if record.id in taken:
            continue
        tags = excluded_by(record, include_excluded)
        for tag in tags:
            excluded.setdefault(tag, set()).add(record.id)
        if not tags:
            chosen.append(record)
            taken.add(record.id)
    return chosen


def cascade(
    records: Sequence[Record],
    now: datetime,
    *,
    limit: int = DEFAULT_LIMIT,
    days: int = DEFAULT_DAYS,
    min_importance: int | None = None,
    include_excluded: bool = False,
) -> Cascade:
    """Core (importance 8+, not ephemeral, by wake order) -> recent (active in `days`)
    -> bridge (importance 5+, anchored to the first two layers). `min_importance` takes
    every bloom at or above that raw importance instead of `limit`: those no layer holds
    follow as the resonant layer. `records` are the candidates: every memory of
    importance 5+ (or `min_importance`+) and every one active in `days`."""
    if limit < 1 or days < 0:
        raise Invalid("--limit must be at least 1 and --days at least 0")
    floor = min_importance
    pool = [r for r in records if floor is None or r.importance >= floor]
    core_q, recent_q, bridge_q = (None, None, None) if floor is not None else quotas(limit)
    taken: set[str] = set()
    excluded: dict[str, set[str]] = {}
    ranked_core = sorted((r for r in pool if is_core(r)), key=core_order)
    core = fill(ranked_core, core_q, taken, include_excluded, excluded)
    since = now - timedelta(days=days)
    active = sorted(
        (r for r in pool if last_active(r) >= since),
        key=lambda r: (-last_active(r).timestamp(), r.id),
    )
    recent_room = None if recent_q is None else recent_q + (core_q or 0) - len(core)
    recent = fill(active, recent_room, taken, include_excluded, excluded)
    bridge_room = None if bridge_q is None else limit - len(core) - len(recent)
    linked = anchored(core + recent, pool)
    bridges = sorted(
        (r for r in pool if r.id in linked and r.importance >= BRIDGE_MIN_IMPORTANCE),
        key=lambda r: (-r.importance, r.id),
    )
    bridge = fill(bridges, bridge_room, taken, include_excluded, excluded)
    leftover = limit - len(core) - len(recent) - len(bridge)
    resonant: list[Record] = []
    if floor is not None:
        # Trigger: a floor is given. Why: it asks for every bloom at or above it, and a
        # memory below the core's importance that is neither recent nor anchored (or an
        # ephemeral one) fits no layer. Outcome: the rest of the pool follows, most
        # important first.
        rest = sorted(pool, key=lambda r: (-r.importance, core_order(r)))
        resonant = fill(rest, None, taken, include_excluded, excluded)
    elif leftover > 0:  # slots a layer could not fill: core, then recent
        core += fill(ranked_core, leftover, taken, include_excluded, excluded)
        recent += fill(
            active, limit - len(core) - len(recent) - len(bridge), taken, include_excluded, excluded
        )
    layers = {r.id: "core" for r in core} | {r.id: "recent" for r in recent}
    layers |= {r.id: "bridge" for r in bridge} | {r.id: RESONANT for r in resonant}
    counts = {tag: len(ids) for tag, ids in sorted(excluded.items())}
    return Cascade(tuple(core + recent + bridge + resonant), layers, counts)


def anchored(layers: Sequence[Record], pool: Iterable[Record]) -> set[str]:
    """Memories joined by an anchor to any of `layers`, in either direction."""
    ids = {r.id for r in layers}
    outgoing = {target for r in layers for target in r.anchors}
    return outgoing | {r.id for r in pool if ids.intersection(r.anchors)}


# ---- the ritual's pure parts -------------------------------------------------------

_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+(.+?)\s*#*\s*$|\*\*(.+?)\*\*)", re.MULTILINE)


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def _pieces(text: str, limit: int) -> list[str]:
    """Split text into pieces of at most `limit` bytes: paragraphs, then sentences,
    then words, then (for a single huge word) characters."""
    if _bytes(text) <= limit:
        return [text]
    for splitter in (_PARAGRAPH, _SENTENCE, re.compile(r"\s+")):
        parts = [p for p in splitter.split(text) if p.strip()]
        if len(parts) > 1:
            return [piece for part in parts for piece in _pieces(part, limit)]
    cut = limit
    while _bytes(text[:cut]) > limit:
        cut -= 1
    return [text[:cut], *_pieces(text[cut:], limit)]


def chunks(body: str, limit: int = CHUNK_BYTES) -> list[str]:
    """The ritual's chunks of a memory's text: whole paragraphs (or sentences) packed
    up to `limit` UTF-8 bytes each. An empty text is one empty chunk."""
    packed: list[str] = []
    for piece in _pieces(body.strip(), limit):
        piece = piece.strip()
        joined = f"{packed[-1]}\n\n{piece}" if packed else piece
        if packed and _bytes(joined) <= limit:
            packed[-1] = joined
        else:
            packed.append(piece)
    return packed or [""]


def shown_title(title: str, index: int, count: int) -> str:
    """The title a guess is made from; a multi-chunk memory names the part."""
    return f"{title} (Part {index + 1}/{count})" if count > 1 else title


def phrases_for(record_phrases: Sequence[str], chunk: str, index: int) -> tuple[str, list[str]]:
    """(source, phrases) a chunk's guess is matched against. Authored phrases belong to
    the first chunk only: shown on a later part they would leak what it says."""
    if index == 0:
        authored = [p for p in record_phrases if p.strip()]
        if authored:
            return "authored", authored
        first = _SENTENCE.split(chunk.strip(), maxsplit=1)[0]
        words = first.split()[:AUTO_PHRASE_WORDS]
        return ("auto", [" ".join(words)]) if words else ("unphrased", [])
    heading = _HEADING.search(chunk)
    if heading:
        return "derived", [(heading.group(1) or heading.group(2)).strip()]
    return "unphrased", []


def normalised(text: str) -> str:
    """Case, punctuation and spacing folded away: what a "close" match ignores."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join("".join(c if c.isalnum() else " " for c in folded).split())


class Match(msgspec.Struct, frozen=True):
    kind: str  # exact | close | none
    phrase_index: int | None = None

    @property
    def bucket(self) -> str:
        """unhinted: the guess matched a phrase and the tool gave no hint; else revealed."""
        return UNHINTED if self.kind != "none" else REVEALED


def judge(guess: str, phrases: Sequence[str]) -> Match:
    """Exact (identical after trimming), else close (identical after normalising case
    and punctuation, or within a spelling slip), else none."""
    from rapidfuzz import fuzz  # only the ritual's respond needs it

    trimmed = guess.strip()
    for i, phrase in enumerate(phrases):
        if phrase.strip() == trimmed:
            return Match("exact", i)
    target = normalised(guess)
    for i, phrase in enumerate(phrases):
        other = normalised(phrase)
        if other and (other == target or fuzz.ratio(other, target) >= CLOSE_SPELLING):
            return Match("close", i)
    return Match("none")


def check_guess(guess: str) -> None:
    """A guess is refused, not judged, when too long or without any letter or digit."""
    if len(guess) > MAX_GUESS_CHARS:
        raise Invalid(f"a guess is at most {MAX_GUESS_CHARS} characters (got {len(guess)})")
    if not any(c.isalnum() for c in guess):
        raise Invalid("a guess needs some alphanumeric content")


def chunk_digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---- tokens ---------------------------------------------------------------------------

TOKEN_PREFIX = "wk1"
_SIGNATURE_HEX = 32


def sign(secret: bytes, session_id: str, step: int) -> str:
    """The session token for one step: HMAC-signed, so it cannot be forged or moved."""
    message = f"{session_id}.{step}".encode()
    mac = hmac.new(secret, message, hashlib.sha256).hexdigest()[:_SIGNATURE_HEX]
    return f"{TOKEN_PREFIX}.{session_id}.{step}.{mac}"


def verify(secret: bytes, token: str) -> tuple[str, int]:
    """(session id, step) of a genuine token; Invalid for anything else."""
    parts = token.strip().split(".")
    if len(parts) != 4 or parts[0] != TOKEN_PREFIX or not parts[2].isdigit():
        raise Invalid("not a wake session token (expected wk1.<session>.<step>.<signature>)")
    session_id, step = parts[1], int(parts[2])
    if not hmac.compare_digest(sign(secret, session_id, step), token.strip()):
        raise Invalid("the wake session token's signature does not verify")
    return session_id, step


# ---- the final summary ------------------------------------------------------------------


def summary(judged: Iterable[tuple[str, str]], unjudged: int) -> dict[str, object]:
    """Bucket counts split by phrase source, chunks walked and unjudged steps, from the
    (source, bucket) of each judged step: chunks == bucket totals + unjudged."""
    counts = {source: dict.fromkeys(BUCKETS, 0) for source in SOURCES}
    total = 0
    for source, bucket in judged:
        counts[source][bucket] += 1
        total += 1
    buckets = {b: sum(c[b] for c in counts.values()) for b in BUCKETS}
    return {
        "buckets": buckets,
        "by_source": counts,
        "chunks": total + unjudged,
        "unjudged": unjudged,
    }
