"""Secret detection and redaction, the first half of the capture policy. Pure functions.

Two kinds of evidence find a secret:

- its shape (write.secret_tokens): a private key block, a vendor token (AWS, GitHub,
  GitLab, Slack, Stripe, OpenAI, Anthropic, Google, Hugging Face, npm, PyPI, Discord,
  Telegram, SendGrid, Twilio, Azure, and more), a password in a URL, an auth header, a
  long random token, or base64 of a text that holds a secret;
- its label (write.secret_values): a value given right after a word or key that names
  a secret, in prose ("the staging password is X", "PIN 4417", "das Passwort ist X"),
  config (`DB_PASSWORD=X`, YAML, JSON, TOML, INI, XML), command flags (`--token X`,
  `mysql -pX`, `sshpass -p X`) or a table's password column.

Precision is worth as much as recall: a memory about passwords is not a password, and
a hash, an identifier, a placeholder or a public key is never redacted. A secret is
redacted whole: overlapping findings merge into one span, so no fragment of the value
stays behind.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import msgspec

from memlane.write.secret_needs import one_scan
from memlane.write.secret_tokens import NEEDS as TOKEN_NEEDS
from memlane.write.secret_tokens import TOKEN_KINDS, not_secret, public_spans, token_spans
from memlane.write.secret_values import KINDS as VALUE_KINDS
from memlane.write.secret_values import NEEDS as VALUE_NEEDS
from memlane.write.secret_values import value_spans

MARKER = "[REDACTED:{kind}]"
# Most specific first: on overlap the earlier kind names the merged span.
KINDS = (*TOKEN_KINDS[:-2], *VALUE_KINDS, *TOKEN_KINDS[-2:])
_RANK = {kind: rank for rank, kind in enumerate(KINDS)}
# base64 inside base64 is looked into this deep.
_DECODE_DEPTH = 2


class Redaction(msgspec.Struct, frozen=True):
    """A secret found in a text: its kind and its offsets in the ORIGINAL text."""

    kind: str
    start: int
    end: int


# Trigger: a text that meets no detector's first need (most memories). Why: none of
# them can fire on it. Outcome: it is clean after one search; no detector runs.
_ANY_NEED = one_scan((*TOKEN_NEEDS, *VALUE_NEEDS))


def _candidates(text: str, depth: int) -> Iterator[tuple[int, int, int]]:
    """(start, end, rank) of every finding; rank is its kind's specificity."""
    if _ANY_NEED.search(text) is None:
        return

    def holds_secret(decoded: str) -> bool:
        return depth < _DECODE_DEPTH and any(True for _ in _candidates(decoded, depth + 1))

    found = [*token_spans(text, holds_secret), *value_spans(text)]
    public = public_spans(text) if found else []
    for start, end, kind in found:
        if start >= end or any(s <= start and end <= e for s, e in public):
            continue
        if not not_secret(text, start, end, kind):
            yield start, end, _RANK[kind]


MIN_REPEATED = 8  # a secret this long found once is hidden wherever else it appears


def _repeated(text: str, found: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Other occurrences of a secret found once (`SMTP_USER=X` where `SMTP_PASSWORD=X`):
    anywhere in the text for a long one, as a whole word on its own line for a short one
    ("password 0000 0000" where one group was read as the value)."""
    known = {(start, end) for start, end, _ in found}
    out = []
    for start, end, rank in found:
        value = text[start:end]
        if len(value) >= MIN_REPEATED:
            lo, hi, whole = 0, len(text), False
        else:
            lo = text.rfind("\n", 0, start) + 1
            hi = len(text) if (hi := text.find("\n", end)) < 0 else hi
            whole = True
        at = text.find(value, lo, hi)
        while at >= 0:
            after = at + len(value)
            alone = not (text[at - 1 : at].isalnum() or text[after : after + 1].isalnum())
            if (at, after) not in known and (alone or not whole):
                out.append((at, after, rank))
            at = text.find(value, after, hi)
    return out


def find_secrets(text: str) -> list[Redaction]:
    """Secrets in the text, sorted and non-overlapping (see `_find_secrets`).

    Trigger: a text of at most REMEMBERED_CHARS. Why: a write's title, body and tags
    are screened by the capture policy and again at the store's door (write.screen),
    and the same entity names and tags recur across a batch. Outcome: its findings
    are remembered (the last REMEMBERED_TEXTS such texts)."""
    if len(text) <= REMEMBERED_CHARS:
        return list(_remembered(text))
    return _find_secrets(text)


# Texts this short have their findings remembered; this many of them (at most a few
# megabytes held).
REMEMBERED_CHARS = 2_048
REMEMBERED_TEXTS = 2_048


def forget_remembered() -> None:
    """Forget the remembered findings (a benchmark times the screen afresh)."""
    _remembered.cache_clear()


@functools.lru_cache(maxsize=REMEMBERED_TEXTS)
def _remembered(text: str) -> tuple[Redaction, ...]:
    return tuple(_find_secrets(text))


def _find_secrets(text: str) -> list[Redaction]:
    """Secrets in the text, sorted and non-overlapping.

    Trigger: two findings overlap (an `sk-...` key that is also the value of
    `OPENAI_API_KEY=`, a password that both a prose label and a config key name).
    Why: redacting the union leaves no fragment of either behind. Outcome: one span,
    named by the most specific kind.
    """
    found = list(_candidates(text, 0))
    found += _repeated(text, found)
    merged: list[tuple[int, int, int]] = []
    for start, end, rank in sorted(found):
        if merged and start < merged[-1][1]:
            last_start, last_end, last_rank = merged[-1]
            merged[-1] = (last_start, max(end, last_end), min(rank, last_rank))
        else:
            merged.append((start, end, rank))
    return [Redaction(KINDS[rank], start, end) for start, end, rank in merged]


def redact(text: str) -> tuple[str, list[Redaction]]:
    """The text with every secret replaced by `[REDACTED:<kind>]`, and what was replaced.

    A text without secrets comes back as the same string object.
    """
    found = find_secrets(text)
    if not found:
        return text, found
    parts: list[str] = []
    cursor = 0
    for item in found:
        parts += [text[cursor : item.start], MARKER.format(kind=item.kind)]
        cursor = item.end
    parts.append(text[cursor:])
    return "".join(parts), found
