"""A question about a change, and the prior states recall shows under its answer. Pure.

"Why did we switch from MySQL", "what did we use before Postgres", "when did we change
the deploy target": the answer is the current memory, and the question is about what
it replaced. Recall then unfolds its top results: under each, the content versions it
replaced (an update keeps them) and the memories it superseded (linked `supersedes`,
their own versions and predecessors in turn), newest first, each marked [PREVIOUSLY]
with the reason recorded when it ended.

Detection is a handful of English patterns over the query, no model. What triggers:
switch/move/migrate from (or away, off, back to), switched/changed/moved, changed to,
replaced/replacing/replacement, used to, previously, formerly, instead of, "what
changed", "did we change/switch/drop/...", "why did we ...", "what/which ... did/was
... before", "before the switch/move/...". What does not: a change verb as a how-to or
an instruction ("how do I change the port", "replace the tabs with spaces", "switch
statement in Go", "move the file to src/"), and "before" as an order of steps ("run
the tests before you deploy"). A false alarm costs little: only results that have
prior states show any (a statement such as "I changed the config" triggers, and shows
the config memory's earlier versions, if it has some).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from memlane.model import ACCESS_FIELDS, Record, Version, replace

# The top results a change question unfolds, how far back along `supersedes` links
# each goes, and how many prior states one recall shows in all: the last change or
# two is the answer; a long history is `memlane history`'s.
UNFOLD_TOP = 3
UNFOLD_HOPS = 3
UNFOLD_BUDGET = 4

_WE = r"(?:we|you|they|i|he|she|it|the\s+team)"
_VERB = r"(?:switch|chang|mov|migrat|replac|swap|drop|stop|abandon|ditch)"
_CHANGE = [
    # switched from / moving away from / migrated off / changed to
    r"\b(?:switch(?:ed|es|ing)?|mov(?:e|ed|es|ing)|migrat(?:e|ed|es|ing)|swapp?(?:ed|ing)?"
    r"|chang(?:e|ed|es|ing)|transition(?:ed|ing)?|port(?:ed|ing))\s+"
    r"(?:(?:away\s+|back\s+|over\s+)?from|off(?:\s+of)?|away|over\s+to|back\s+to)\b",
    r"\b(?:switch(?:ed)?|chang(?:e|ed))\s+to\b",
    r"\b(?:switched|changed|migrated|moved)\b(?!\s+(?:the|a|an)\s+\w+\s+to\b)",
    r"\breplac(?:ed|ing|ement)\b",
    r"\bused\s+to\b",
    r"\b(?:previously|formerly|originally|no\s+longer)\b",
    r"\binstead\s+of\b",
    r"\bwhat\s+(?:has\s+|have\s+)?changed\b",
    rf"\b(?:did|have|has)\s+{_WE}\s+(?:ever\s+)?{_VERB}\w*",
    rf"\bwhy\s+did\s+{_WE}\b",
    r"\b(?:what|which)\b[^.?!]*\b(?:did|was|were|had)\b[^.?!]*\bbefore\b",
    r"\bbefore\s+(?:the\s+|our\s+|we\s+)?(?:switch|change|move|migration|migrated|moved|switched)",
]
_ASKS = re.compile("|".join(f"(?:{p})" for p in _CHANGE), re.IGNORECASE)
# How-to phrasings of a change verb: asking how to make a change, not about one made.
_HOW_TO = re.compile(
    r"^\s*(?:how\s+(?:do|can|should|would)\s+(?:i|we|you)|how\s+to|can\s+(?:i|we|you))\b",
    re.IGNORECASE,
)
# Words that place a how-to question in the past all the same.
_PAST = re.compile(r"\b(?:used\s+to|before|previously|formerly|instead\s+of)\b", re.IGNORECASE)


def asks_about_change(query: str) -> bool:
    """Whether `query` asks about a change: what was used before, why it was switched,
    when it changed (see the module docstring for the phrasings)."""
    found = _ASKS.search(query)
    if found is None:
        return False
    # Trigger: "how do I change X to Y" is an instruction wanted, not history.
    # Why: it names a change verb and "to". Outcome: only a marker of the past
    # ("used to", "before", "previously", "instead of") still counts.
    if _HOW_TO.search(query):
        return _PAST.search(query) is not None
    return True


def as_version(current: Record, version: Version) -> Record:
    """A memory as it read in an earlier content version, valid until that version
    ended (so it reads as no longer live)."""
    fields = {k: v for k, v in version.fields.items() if k not in ACCESS_FIELDS}
    return replace(
        current,
        **fields,
        version=version.number,
        valid_from=version.valid_from,
        valid_until=version.valid_until or current.updated_at,
        superseded_by=None,
        superseded_at=None,
        supersede_reason=version.reason,
    )


def ended_at(record: Record) -> datetime | None:
    """When a prior state stopped being current."""
    return record.superseded_at or record.valid_until


def newest_first(records: Sequence[Record]) -> list[Record]:
    return sorted(records, key=lambda r: ended_at(r) or r.updated_at, reverse=True)
