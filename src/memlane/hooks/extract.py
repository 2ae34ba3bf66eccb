"""The deterministic extractor: decisions, preferences, conventions and corrections
found in a conversation by cue phrases, with no model. Pure: turns in, candidates out.

Precision first. What a person types is read sentence by sentence; the assistant's
text only where it labels a line itself ("Decision: ..."). A sentence is kept whole,
as said, when a cue opens it or frames it; questions, code, quotes and sentences too
short or too long to stand alone are never kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

import msgspec

from memlane.hooks.transcript import ASSISTANT, USER, Turn

# Families of cues and the kind of memory each makes.
CORRECTION, PREFERENCE, DECISION, CONVENTION, REMEMBER = (
    "correction",
    "preference",
    "decision",
    "convention",
    "remember",
)
KINDS = {
    CORRECTION: "lesson",
    PREFERENCE: "preference",
    DECISION: "decision",
    CONVENTION: "convention",
    REMEMBER: "fact",
}
# A statement shorter than this says too little to stand alone later ("no, use X"
# still passes: 3 words); a longer one is a paragraph, not a rule.
MIN_WORDS = 3
MAX_WORDS = 60
# Candidates from one capture, at most: MAX_CANDIDATES, or one every TURNS_PER_CANDIDATE
# turns in a longer one. A stretch that trips the cues more often than that is not
# stating rules (a pasted document, a list read aloud). A flat cap of MAX_CANDIDATES
# would cut a long coding session's capture short (tests/transcripts has one with more
# right candidates than that).
MAX_CANDIDATES = 20
TURNS_PER_CANDIDATE = 4

# The word after "No," / "Actually," that makes the sentence a correction, not a
# reply ("No problem", "No, thanks").
_CORRECTION_NEXT = (
    r"(?:use|it'?s|it|that'?s|we|the|you|do|don'?t|never|always|instead|put|call|keep|"
    r"run|make|should|this|they|there'?s|please|in|on|not)\b"
)
_LEAD = r"^(?:(?:ok(?:ay)?|also|and|btw|oh|hmm|so)[,.!]?\s+)?"
# Verbs of a working rule ("we don't merge on red"), not of a state ("we don't know").
_ACTS = r"(?:use|allow|commit|merge|push|deploy|write|add|put|run|ship|store|log|call)\b"
# (family, name, pattern): the name says which cue matched (`corrections` reports it).
CUES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (family, name, re.compile(pattern, re.IGNORECASE))
    for family, name, pattern in (
        (CORRECTION, "no-then-instruction",
         _LEAD + r"(?:no|nope|wrong|not quite|actually)[,.!:;]\s*" + _CORRECTION_NEXT),
        (CORRECTION, "thats-wrong", r"^that'?s (?:wrong|not right|incorrect|not how)\b"),
        (CORRECTION, "dont-x-use-y",
         r"\bdon'?t (?:use|call|add|put|write|run)\b.*[,;]\s*(?:use|call|run)\b"),
        (CORRECTION, "use-instead",
         r"\buse \S.{0,60}? instead\b|\binstead of \S.{0,60}?,\s*use\b"),
        (CORRECTION, "stop-doing",
         _LEAD + r"(?:please\s+)?stop (?:using|doing|adding|calling|writing)\b"),
        (PREFERENCE, "rather-prefer",
         r"\bI(?:'d| would) rather\b|\bI (?:really |much |strongly )?prefer\b"),
        (PREFERENCE, "dislike", r"\bI (?:don'?t|do not) (?:like|want)\b|\bI (?:hate|dislike)\b"),
        (PREFERENCE, "always-never", _LEAD + r"(?:please\s+)?(?:always|never)\s+\w+"),
        (PREFERENCE, "from-now-on",
         r"(?:^|,\s*)(?:from now on|going forward|in (?:the )?future|next time)\b"),
        (DECISION, "decided", r"\b(?:we|I)(?:'ve| have)? (?:decided|agreed|chose|settled on)\b"),
        (DECISION, "going-with", r"\b(?:we(?:'re| are)|I'?m) going (?:with|to go with)\b"),
        (DECISION, "go-with", r"\b(?:we|I)(?:'ll| will) go with\b|^let'?s (?:go|stick) with\b"),
        (DECISION, "decision-label", r"^(?:the )?decision(?: is)?\s*:|\bthe decision is\b"),
        (CONVENTION, "rule-label", r"^(?:convention|rule|policy|standard)\s*:"),
        (CONVENTION, "our-rule",
         r"\b(?:our|the) (?:convention|rule|policy) is\b|\bby convention\b"),
        (CONVENTION, "in-this-repo", r"\bin this (?:repo|repository|project|codebase|team),? we\b"),
        (CONVENTION, "we-always",
         r"\bwe (?:always|never|usually) \w+|\bwe (?:don'?t|do not) " + _ACTS),
        (REMEMBER, "remember-label",
         _LEAD + r"(?:remember|note|keep in mind|fyi|for the record)\s*(?:that\b|:)"),
        (REMEMBER, "remember-that", r"\bremember that\b|\bfor future reference\b"),
    )
)  # fmt: skip
# The assistant's own labelled lines: "Decision: ...", "**Convention:** ...".
_LABEL = re.compile(
    r"^\W*(decision|convention|lesson(?: learned)?|root cause|note for future sessions)\W*:\s*",
    re.IGNORECASE,
)
_LABEL_FAMILY = {
    "decision": DECISION,
    "convention": CONVENTION,
    "lesson": CORRECTION,
    "lesson learned": CORRECTION,
    "root cause": CORRECTION,
    "note for future sessions": REMEMBER,
}
_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'`(\[A-Z0-9])")
# Markdown emphasis by asterisks; underscores stay (snake_case, __init__, tokens).
_EMPHASIS = re.compile(r"\*{1,3}")


class Candidate(msgspec.Struct, frozen=True):
    """A memory the extractor proposes; the write policy decides whether it lands."""

    kind: str
    content: str
    family: str
    role: str


def sentences(text: str) -> list[str]:
    """Statements of a message: code fences and quoted lines dropped, each line split
    at sentence ends, list markers and emphasis removed."""
    out: list[str] = []
    for line in _FENCE.sub("\n", text).splitlines():
        line = line.strip()
        if not line or line.startswith((">", "|", "#", "$")):
            continue
        line = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", line)
        out += [s.strip() for s in _SENTENCE_END.split(_EMPHASIS.sub("", line)) if s.strip()]
    return out


def standalone(sentence: str) -> bool:
    """Whether a sentence can be a memory: a statement of a sensible length."""
    words = len(sentence.split())
    return MIN_WORDS <= words <= MAX_WORDS and not sentence.rstrip().endswith("?")


def family_of(sentence: str, role: str) -> str | None:
    """The cue family a sentence belongs to, for what `role` says; None when none."""
    if role == ASSISTANT:
        label = _LABEL.match(sentence)
        return _LABEL_FAMILY[" ".join(label.group(1).lower().split())] if label else None
    for family, _, pattern in CUES:
        if pattern.search(sentence):
            return family
    return None


def cues_in(sentence: str) -> list[tuple[str, str]]:
    """Every cue a person's sentence matches: (family, name), in CUES order."""
    return [(family, name) for family, name, pattern in CUES if pattern.search(sentence)]


def statements(turns: Iterable[Turn], roles: Iterable[str]) -> Iterator[tuple[int, Turn, str]]:
    """Each sentence of these roles' turns that can stand alone, in the order said:
    (turn index, turn, sentence)."""
    wanted = set(roles)
    for index, turn in enumerate(turns):
        if turn.role in wanted:
            for sentence in sentences(turn.text):
                if standalone(sentence):
                    yield index, turn, sentence


def same_words(sentence: str) -> str:
    """What makes two statements one: their words, case aside."""
    return " ".join(re.findall(r"\w+", sentence.casefold()))


def extract(turns: Sequence[Turn]) -> list[Candidate]:
    """Candidate memories in the order said, each distinct statement once."""
    cap = max(MAX_CANDIDATES, len(turns) // TURNS_PER_CANDIDATE)
    found: dict[str, Candidate] = {}
    for _, turn, sentence in statements(turns, (USER, ASSISTANT)):
        family = family_of(sentence, turn.role)
        if family is not None:
            found.setdefault(
                same_words(sentence), Candidate(KINDS[family], sentence, family, turn.role)
            )
            if len(found) >= cap:
                break
    return list(found.values())


# ---- corrections: what a person corrected or asked to be remembered -----------------

# Families `corrections` mines, and how sure a match of each makes it: a correction
# says the agent was wrong ("no, use X"); "remember that ..." asks to keep a fact.
MINED = {CORRECTION: 0.7, REMEMBER: 0.6}
# Each further cue the same sentence matches adds this, up to the cap.
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
    """What people said to correct the agent or to be remembered, in the order said,
    each distinct sentence once (questions, code and quotes never)."""
    found: dict[str, Correction] = {}
    for index, _, sentence in statements(turns, (USER,)):
        cues = cues_in(sentence)
        family = next((f for f, _ in cues if f in MINED), None)
        if family is None:
            continue
        sure = MINED[family] + CONFIRMING * (len(cues) - 1)
        found.setdefault(
            same_words(sentence),
            Correction(
                sentence,
                family,
                tuple(name for _, name in cues),
                round(min(MAX_CONFIDENCE, sure), 2),
                index,
            ),
        )
    return list(found.values())
