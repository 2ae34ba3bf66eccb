"""Memories written as the lines of a dialogue: the preference a query naming a
speaker gives that speaker's lines, and the place of lines that end by asking. Pure.

A question about a person ("What types of yoga has Maria practiced?") is answered by
what that person said ("Maria: I just started aerial yoga"): in a conversation the
other side asks, congratulates and repeats the topic's words back ("What kind of yoga
is it?"), so their lines match the query as well as the answers do, and crowd them
out. When the query names a speaker of the candidates, a memory said by someone else
keeps a share of its fused score; memories said by a named speaker, and those that are
not dialogue lines at all, keep theirs.

A memory that ends with a question asks for something, as the query does, with the
query's words and without the answer; the answer comes after it (its session
neighbour, lifted by it already). Such a memory keeps a share of its score too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memlane.model import Record
from memlane.retrieve.fuse import Fused, ordered

# What a line said by a speaker the query does not name keeps of its fused score,
# cross-validated on the LoCoMo dev conversations (`memlane eval locomo --grid
# speaker_share=0.1,0.2,0.3,0.5,0.7,1`): every held-out fold chose 0.3, and anything
# from 0.1 to 0.7 raises R@10 and MRR over 1 (off). The price is LoCoMo's adversarial
# questions, which credit a line to the wrong speaker: the lower the share, the
# further the line they ask about falls.
OTHER_SPEAKER_SHARE = 0.3
# What a memory that ends with a question keeps of its fused score, cross-validated on
# the LoCoMo dev conversations (`memlane eval locomo --grid question_share=0.4,0.6,0.8,1
# --grid speaker_share=0.3,0.5`): every held-out fold chose 0.6 (with the speaker
# share 0.3), above 1 (off) in R@10 and MRR.
QUESTION_SHARE = 0.6

# A dialogue line opens with its speaker: one to three capitalised words and a colon
# ("Maria:", "Dr. Chen:", "Jean-Luc Picard:"), then the words said.
_SPEAKER = re.compile(r"^([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}):\s")
# What may follow a question's mark at the end of a text: closing quotes, brackets.
_CLOSING = " \t\r\n\"')]»”’"


def speaker(text: str) -> str | None:
    """Who says `text`, when it is written as a dialogue line; else None."""
    found = _SPEAKER.match(text)
    return found.group(1) if found else None


def named(query: str, speakers: frozenset[str]) -> frozenset[str]:
    """The speakers the query names, each as whole words written as the speaker is.

    Case counts: a person's name is capitalised in a question, while a note headed
    "Decision:" or "Note:" would otherwise be read as said by someone a query about
    "the decision" names.
    """
    return frozenset(s for s in speakers if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", query))


def asks(text: str) -> bool:
    """Whether `text` ends with a question (closing quotes and brackets aside)."""
    return text.rstrip(_CLOSING).endswith("?")


def weigh_lines(
    fused: Sequence[Fused],
    records: Mapping[str, Record],
    query: str,
    speaker_share: float,
    question_share: float,
) -> list[Fused]:
    """The candidates with their scores (and each lane's part of them) scaled, best
    first again (fuse.ordered): to `speaker_share` for a line said by a speaker the
    query does not name, when it names one of the candidates' speakers, and to
    `question_share` for a memory that ends with a question; both when both hold.
    A share of 1 is off; a candidate without a record keeps its score.
    """
    said = {f.id: speaker(records[f.id].body) for f in fused if f.id in records}
    asked = named(query, frozenset(s for s in said.values() if s is not None))
    factor: dict[str, float] = {}
    for memory_id, by in said.items():
        share = 1.0
        if speaker_share < 1.0 and asked and by is not None and by not in asked:
            share *= speaker_share
        if question_share < 1.0 and asks(records[memory_id].body):
            share *= question_share
        if share < 1.0:
            factor[memory_id] = share
    if not factor:
        return list(fused)
    out = [
        Fused(f.id, f.score * k, f.ranks, {lane: v * k for lane, v in f.contributions.items()})
        if (k := factor.get(f.id, 1.0)) < 1.0
        else f
        for f in fused
    ]
    return ordered(out, {i: r.dedup_hash for i, r in records.items()})
