"""Text normalization, the exact-duplicate hash and derived titles. Pure functions."""

from __future__ import annotations

import hashlib
import re
import string
import unicodedata

from memlane.errors import Invalid
from memlane.model import Record

# The hash names its algorithm: a change of normalization gets a new prefix.
DEDUP_PREFIX = "dh1:"
TITLE_CHARS = 80
_ASCII_PUNCT = frozenset(string.punctuation)
_SPACE = re.compile(r"\s+")
# A sentence ends at . ! ? followed by space and a capital, digit or quote (not "e.g. this").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[`])|\n")
_APOSTROPHES = frozenset("'\u2019\u02bc")


class _FoldTable(dict[int, str | int | None]):
    """str.translate table for `fold`, filled lazily: punctuation -> space, apostrophes
    -> nothing, everything else unchanged. Lookups after the first are C-speed."""

    def __missing__(self, code: int) -> str | int | None:
        ch = chr(code)
        if ch in _APOSTROPHES:
            value: str | int | None = None
        elif ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P"):
            value = " "
        else:
            value = code
        self[code] = value
        return value


_FOLD = _FoldTable()


def check_unicode(text: str, name: str) -> str:
    """Refuse text that cannot be stored as UTF-8 (lone surrogates from undecodable input)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Invalid(f"{name} is not valid Unicode (undecodable bytes in the input?)") from None
    return text


def clean_text(text: str, name: str = "text") -> str:
    """NFC, unix newlines, no trailing whitespace; the stored form of every text field."""
    text = check_unicode(text, name)
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    return text.strip()


def fold(text: str) -> str:
    """Lowercase, ASCII and Unicode punctuation stripped, whitespace collapsed.

    Apostrophes vanish ("don't" folds like "dont"); other punctuation separates
    words ("well-known" folds like "well known").
    """
    return _SPACE.sub(" ", text.lower().translate(_FOLD)).strip()


def dedup_hash(title: str, body: str) -> str:
    """Hash of the folded title and body as a length-prefixed pair ("a" + "bc" is not
    "ab" + "c").

    Trigger: the title is a prefix of the body (derived from it, or echoed).
    Why: such a title adds nothing, and a regenerated copy often derives a different one.
    Outcome: it is hashed as empty, so only the body decides.
    """
    t, b = fold(title), fold(body)
    if b == t or b.startswith(t + " "):
        t = ""
    payload = f"{len(t)}:{t}|{len(b)}:{b}"
    return DEDUP_PREFIX + hashlib.sha256(payload.encode("utf-8")).hexdigest()


def derive_title(body: str, limit: int = TITLE_CHARS) -> str:
    """The first sentence or line of the body, cut at a word boundary."""
    first = _SENTENCE_END.split(body.strip(), maxsplit=1)[0].strip()
    first = _SPACE.sub(" ", first).rstrip(".")
    if len(first) <= limit:
        return first or "untitled"
    cut = first[: limit - 1].rsplit(" ", 1)[0] if " " in first[: limit - 1] else first[: limit - 1]
    return cut.rstrip(" ,;:") + "…"


def read_text(title: str, body: str) -> str:
    """What a model reads back of a memory, and the injection screen judges: its title
    and its body."""
    return f"{title}\n{body}"


def stored_title(title: str | None, body: str) -> str:
    """The title a memory is stored with: the one given, cleaned, or else one derived
    from its (cleaned) body."""
    return (clean_text(title, "title") if title else "") or derive_title(body)


def document_text(record: Record) -> str:
    """What a memory says, and its vectors describe: its title (when not just its
    opening) and body."""
    if record.body.startswith(record.title.rstrip("…")):
        return record.body
    return f"{record.title}\n{record.body}"
