"""Extractive summaries: the most central sentences of a set of texts, kept whole, in
their original order, under a length cap. Pure and deterministic; no model.

Centrality, precisely. Each sentence is the set of its words, each word weighted by
its inverse sentence frequency idf(w) = ln(N / df(w)) over the N candidate sentences,
so a word every sentence shares says nothing and a rarer shared word says much. A
sentence's centrality is the sum of its idf-weighted cosine similarity to every other
sentence (LexRank's degree, without a threshold): the sentence that says most of
what the others say. Ties go to the earlier sentence, so a single sentence, or
sentences sharing nothing, summarise as the first one.

Selection walks the sentences most central first and keeps one when it fits whole in
what the cap leaves and does not repeat a sentence already kept; the kept sentences
are joined in the order they were written.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence

import msgspec

from memlane.words import jaccard, tokens

# An episode summary is read in a recall result or a pack bullet next to the memories
# it summarises: five sentences (about a paragraph) say what a session did without
# restating it.
SUMMARY_MAX_SENTENCES = 5
SUMMARY_MAX_CHARS = 800
# Sentences sharing this share of their words say the same thing; the second adds nothing.
REDUNDANT_OVERLAP = 0.7
# Shorter fragments ("Done.", "See above.") carry no content of their own; they are
# used only when a text has nothing longer.
MIN_WORDS = 3
# The sentence boundary derive_title uses: . ! ? then space and a capital, digit or
# quote (not "e.g. this"), or a line break; list markers open no sentence of their own.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[`])|\n+")
_LIST_MARK = re.compile(r"^(?:[-*•+]|\d+[.)])\s+")
_CLOSERS = (".", "!", "?", "…")
_ELLIPSIS = "…"


class Sentence(msgspec.Struct, frozen=True):
    source: str  # the id of the text (memory) it was taken from
    position: int  # its place among all the input's sentences
    text: str


class Summary(msgspec.Struct, frozen=True):
    text: str
    sentences: tuple[Sentence, ...]  # what `text` is made of, in order

    @property
    def sources(self) -> tuple[str, ...]:
        """The texts the summary quotes, in order, each once."""
        return tuple(dict.fromkeys(s.source for s in self.sentences))


def split_sentences(text: str) -> list[str]:
    """The sentences of a text, stripped, without list markers or blanks."""
    parts = (_LIST_MARK.sub("", p.strip()) for p in _SENTENCE_END.split(text))
    return [" ".join(p.split()) for p in parts if p.strip()]


def candidates(passages: Sequence[tuple[str, str]]) -> list[Sentence]:
    """Every sentence of the (source id, text) passages, in order, each distinct
    sentence once; fragments only when there is nothing longer."""
    seen: set[frozenset[str]] = set()
    out: list[Sentence] = []
    for source, text in passages:
        for part in split_sentences(text):
            words = tokens(part)
            if words and words not in seen:
                seen.add(words)
                out.append(Sentence(source, len(out), part))
    full = [s for s in out if len(tokens(s.text)) >= MIN_WORDS]
    return full or out


def centrality(sentences: Sequence[str]) -> list[float]:
    """Each sentence's summed idf-weighted cosine to all the others (module docstring).

    Computed per word rather than per pair: sentence i gains idf(w)² / (|i|·|j|) from
    every other sentence j that shares w, so one pass over the words suffices.
    """
    sets = [tokens(s) for s in sentences]
    df = Counter(w for words in sets for w in words)
    idf = {w: math.log(len(sets) / n) for w, n in df.items()}
    norms = [math.sqrt(sum(idf[w] ** 2 for w in words)) for words in sets]
    reach: defaultdict[str, float] = defaultdict(float)  # sum of 1/|j| over j holding w
    for words, norm in zip(sets, norms, strict=True):
        for w in words:
            reach[w] += 1 / norm if norm else 0.0
    return [
        sum(idf[w] ** 2 * (reach[w] - 1 / norm) for w in words) / norm if norm else 0.0
        for words, norm in zip(sets, norms, strict=True)
    ]


def summarize(
    passages: Sequence[tuple[str, str]],
    max_chars: int = SUMMARY_MAX_CHARS,
    max_sentences: int = SUMMARY_MAX_SENTENCES,
) -> Summary:
    """The extractive summary of (source id, text) passages; empty when they say nothing.

    When not even the most central sentence fits `max_chars`, it is cut at a word
    boundary with an ellipsis: a summary is never empty for a non-empty input.
    """
    pool = candidates(passages)
    if not pool:
        return Summary("", ())
    scores = centrality([s.text for s in pool])
    best_first = [pool[i] for i in sorted(range(len(pool)), key=lambda i: (-scores[i], i))]
    chosen = _select(best_first, max_chars, max_sentences)
    if not chosen:
        top = best_first[0]
        chosen = [Sentence(top.source, top.position, _cut(top.text, max_chars))]
    chosen.sort(key=lambda s: s.position)
    return Summary(" ".join(_closed(s.text) for s in chosen), tuple(chosen))


def _select(best_first: Sequence[Sentence], max_chars: int, most: int) -> list[Sentence]:
    """Whole sentences, most central first, that fit the cap and repeat nothing kept."""
    chosen: list[Sentence] = []
    used = -1  # the joining spaces: n sentences need n - 1
    for sentence in best_first:
        size = len(_closed(sentence.text)) + 1
        if len(chosen) == most:
            break
        if used + size > max_chars or _repeats(sentence, chosen):
            continue
        chosen.append(sentence)
        used += size
    return chosen


def _repeats(sentence: Sentence, chosen: Sequence[Sentence]) -> bool:
    words = tokens(sentence.text)
    return any(jaccard(words, tokens(c.text)) >= REDUNDANT_OVERLAP for c in chosen)


def _closed(text: str) -> str:
    """A sentence ending as one (a list item or a line gets its full stop)."""
    return text if text.endswith(_CLOSERS) else f"{text}."


def _cut(text: str, max_chars: int) -> str:
    """The longest word-boundary prefix that fits `max_chars` with an ellipsis."""
    room = max(max_chars - len(_ELLIPSIS), 0)
    head = text[:room]
    if " " in head and len(text) > room and text[room] != " ":
        head = head.rsplit(" ", 1)[0]
    return head.rstrip(" ,;:.") + _ELLIPSIS
