"""The deterministic extractor: decisions, preferences, conventions, constraints,
procedures and corrections found in a conversation by cue phrases, with no model.
Pure: turns in, candidates out.

What a person types is read sentence by sentence, and each sentence is a cue, noise or
support (hooks.cues tells which). A memory is a cue kept with the support around it in
the same message: the sentences after it up to the first noise ("No, don't use X here.
We use Y, the compose file is stale."), and the one sentence before it that introduces
it ("Payloads contain addresses. We never log them."). A list item or a paragraph is a
message of its own. The assistant's text counts only where it labels a line itself
("Decision: ..."). Code, quotes and questions are never kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

import msgspec

from memlane.hooks.cues import (
    CORRECTION,
    KINDS,
    MAX_WORDS,
    REMEMBER,
    cues_in,
    family_of,
    noise,
)
from memlane.hooks.transcript import ASSISTANT, USER, Turn

# A statement shorter than this says too little to stand alone later ("no, use X"
# still passes: 3 words).
MIN_WORDS = 3
# A memory (a cue with its support) stops growing past this many words: a rule, its
# instruction and its reason fit (a release procedure with its why is about 70).
MAX_MEMORY_WORDS = 110
# A memory this short that ends pointing elsewhere ("I'd rather not see that again")
# means nothing without the message it answered.
DEICTIC_WORDS = 6
_DEICTIC = re.compile(r"\b(?:that|this|it|those|them|these)(?:\s+\w+)?\W*$", re.IGNORECASE)
# Candidates from one capture, at most: MAX_CANDIDATES, or one every TURNS_PER_CANDIDATE
# turns in a longer one. A stretch that trips the cues more often than that is not
# stating rules (a pasted document, a list read aloud). A flat cap of MAX_CANDIDATES
# would cut a long coding session's capture short (tests/transcripts has one with a
# memory worth keeping every 3.5 turns).
MAX_CANDIDATES = 20
TURNS_PER_CANDIDATE = 3

_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
# A sentence ends at ".", "!" or "?" and a space, unless the word before is an
# abbreviation ("e.g. the", "vs. npm").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'`(\[\w])")
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|resp)\.$", re.IGNORECASE)
_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
# Markdown emphasis by asterisks, unwrapped ("**Lesson:**"); a lone "*" stays ("Vary: *"),
# and so do underscores (snake_case, __init__, tokens).
_EMPHASIS = re.compile(r"(\*{1,3})(?=\S)(.+?)(?<=\S)\1")
# Lines that are not prose: quotes, tables, headings, shell prompts.
_NOT_PROSE = (">", "|", "#", "$")


class Candidate(msgspec.Struct, frozen=True):
    """A memory the extractor proposes; the write policy decides whether it lands."""

    kind: str
    content: str
    family: str
    role: str


class Said(msgspec.Struct, frozen=True):
    """A memory as a person said it: its text and every cue its sentences match."""

    family: str
    text: str
    cues: tuple[tuple[str, str], ...]  # (family, name)


# ---- a message as sentences ---------------------------------------------------------


def blocks(text: str) -> list[list[str]]:
    """A message's statements as blocks of sentences, a paragraph or a list item each;
    code fences and lines that are not prose dropped, list markers and emphasis removed."""
    out: list[list[str]] = [[]]
    for line in _FENCE.sub("\n\n", text).splitlines():
        line = line.strip()
        if not line or line.startswith(_NOT_PROSE) or _ITEM.match(line):
            out.append([])
        if line and not line.startswith(_NOT_PROSE):
            out[-1] += split(_EMPHASIS.sub(r"\2", _ITEM.sub("", line)))
    return [b for b in out if b]


def split(line: str) -> list[str]:
    """A line's sentences."""
    out: list[str] = []
    for piece in (p.strip() for p in _SENTENCE_END.split(line)):
        if out and _ABBREVIATION.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        elif piece:
            out.append(piece)
    return out


def sentences(text: str) -> list[str]:
    """Statements of a message, in order (see blocks)."""
    return [s for block in blocks(text) for s in block]


def joined(said: Sequence[str]) -> str:
    """Sentences as one text: a sentence that ended its line without a full stop
    ("ok here goes:") keeps its line break, so it does not run into the next."""
    out = ""
    for sentence in said:
        out += ("" if not out else " " if out[-1] in ".!?" else "\n") + sentence
    return out


def standalone(sentence: str) -> bool:
    """Whether a sentence can be a memory: a statement of a sensible length."""
    words = len(sentence.split())
    return MIN_WORDS <= words <= MAX_WORDS and not sentence.rstrip().endswith("?")


# ---- memories: a cue and the sentences that support it -------------------------------


def memories(block: Sequence[str]) -> Iterator[Said]:
    """The memories a block of a person's sentences holds: each run of sentences
    without noise that holds a cue, from the sentence before its first cue to the
    run's end (or MAX_MEMORY_WORDS)."""
    run: list[tuple[str, str | None]] = []
    for sentence in [*block, "?"]:  # a question ends the last run
        family = family_of(sentence, USER) if standalone(sentence) else None
        if family is None and noise(sentence):
            if (said := _kept(run)) is not None:
                yield said
            run = []
        else:
            run.append((sentence, family))


def _kept(run: Sequence[tuple[str, str | None]]) -> Said | None:
    """A run's memory, if it has a cue and says enough to stand alone.

    Trigger: a run of sentences, between two pieces of noise, with at least one cue.
    Why: a correction's or a decision's substance is in the sentences around its cue
    ("No, don't use X here." says nothing of what to use and why; the next sentences
    do), and a rule is often introduced by the fact that motivates it ("Payloads hold
    addresses. We never log them."). Outcome: the memory runs from the sentence before
    the first cue to the run's end, as one text.
    """
    cued = [i for i, (_, family) in enumerate(run) if family is not None]
    if not cued:
        return None
    start = max(0, cued[0] - 1)
    kept: list[str] = []
    for sentence, _ in run[start:]:
        if kept and len(" ".join([*kept, sentence]).split()) > MAX_MEMORY_WORDS:
            break
        kept.append(sentence)
    text = joined(kept)
    words = len(text.split())
    if words < MIN_WORDS or (words <= DEICTIC_WORDS and _DEICTIC.search(text)):
        return None
    cues = tuple(cue for sentence in kept for cue in cues_in(sentence))
    return Said(str(run[cued[0]][1]), text, cues)


def said_in(turn: Turn) -> Iterator[Said]:
    """The memories one turn holds, in the order said: a person's cues with their
    support, the assistant's labelled lines."""
    if turn.role == USER:
        for block in blocks(turn.text):
            yield from memories(block)
    elif turn.role == ASSISTANT:
        for sentence in sentences(turn.text):
            family = family_of(sentence, ASSISTANT) if standalone(sentence) else None
            if family is not None:
                yield Said(family, sentence, ())


def same_words(sentence: str) -> str:
    """What makes two statements one: their words, case aside."""
    return " ".join(re.findall(r"\w+", sentence.casefold()))


def extract(turns: Sequence[Turn]) -> list[Candidate]:
    """Candidate memories in the order said, each distinct statement once."""
    cap = max(MAX_CANDIDATES, len(turns) // TURNS_PER_CANDIDATE)
    found: dict[str, Candidate] = {}
    for turn in turns:
        for said in said_in(turn):
            candidate = Candidate(KINDS[said.family], said.text, said.family, turn.role)
            found.setdefault(same_words(said.text), candidate)
            if len(found) >= cap:
                return list(found.values())
    return list(found.values())


# ---- corrections: what a person corrected or asked to be remembered -----------------

# Families `corrections` mines, and how sure a match of each makes it: a correction
# says the agent was wrong ("no, use X"); "remember that ..." asks to keep a fact.
MINED = {CORRECTION: 0.7, REMEMBER: 0.6}
# Each further cue the same memory matches adds this, up to the cap.
CONFIRMING = 0.1
MAX_CONFIDENCE = 0.9


class Correction(msgspec.Struct, frozen=True):
    """A person's correction (or note to remember) found in a transcript, for review."""

    message: str
    type: str  # correction or remember
    patterns: tuple[str, ...]  # the cues it matched
    confidence: float
    turn: int  # its turn's index among the transcript's turns


def corrections(turns: Iterable[Turn]) -> list[Correction]:
    """What people said to correct the agent or to be remembered, with the sentences
    that give its instruction and reason, in the order said, each distinct memory once
    (questions, code and quotes never)."""
    found: dict[str, Correction] = {}
    for index, turn in enumerate(turns):
        for said in said_in(turn) if turn.role == USER else ():
            family = next((f for f, _ in said.cues if f in MINED), None)
            if family is None:
                continue
            sure = MINED[family] + CONFIRMING * (len(said.cues) - 1)
            names = tuple(dict.fromkeys(name for _, name in said.cues))
            confidence = round(min(MAX_CONFIDENCE, sure), 2)
            correction = Correction(said.text, family, names, confidence, index)
            found.setdefault(same_words(said.text), correction)
    return list(found.values())
