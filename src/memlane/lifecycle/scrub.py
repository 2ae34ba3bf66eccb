"""Forgetting reaches copies: a forgotten memory's sentences taken out of the texts
memlane derived from it (consolidation keepers, topic and session summaries, merges,
insights). Pure: texts in, text out.

A sentence of the derived text goes when the forgotten text says it (whole, or inside
a longer sentence of its own) and none of the derived memory's other sources does: a keeper keeps what its own text or another
absorbed memory said, a summary keeps the sentences its other members wrote. A line
left with nothing but its list marker goes too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memlane.lifecycle.consolidate import folded_sentences, says, sentences

_MARKER = re.compile(r"^(\s*(?:[-*•]|\d+[.)])\s+)")
_BLANKS = re.compile(r"\n{3,}")


def scrub(text: str, forgotten: str, kept: Sequence[str] = ()) -> str:
    """`text` without the sentences `forgotten` says (whole, or as part of a longer
    sentence) and no `kept` text says."""
    gone = folded_sentences(forgotten)
    said = [s for k in kept for s in folded_sentences(k)]
    lines = []
    for line in text.splitlines():
        marker = _MARKER.match(line)
        prefix = marker[1] if marker else ""
        whole = sentences(line[len(prefix) :])
        left = [s for s in whole if not says(gone, s) or says(said, s)]
        if left == whole:
            lines.append(line)
        elif left:
            lines.append(prefix + " ".join(left))
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip()
