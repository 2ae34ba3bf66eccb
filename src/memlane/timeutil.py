"""Instants: always timezone-aware UTC, stored as fixed-width ISO-8601 text."""

from __future__ import annotations

import functools
import re
from datetime import UTC, date, datetime, timedelta

from memlane.errors import Invalid

_ZERO = timedelta(0)
ONE_MICROSECOND = timedelta(microseconds=1)


_DAY_SECONDS = 86_400.0


def days_between(start: datetime, end: datetime) -> float:
    """How many days (fractional) from `start` to `end`."""
    return (end - start).total_seconds() / _DAY_SECONDS


def utcnow() -> datetime:
    return datetime.now(UTC)


@functools.lru_cache(maxsize=64)
def to_text(t: datetime) -> str:
    """Fixed-width text (YYYY-MM-DDTHH:MM:SS.ffffffZ) that sorts like the instant it names.

    Cached: a new memory stamps one instant on four fields.
    """
    if t.utcoffset() != _ZERO:
        t = t.astimezone(UTC)
    return t.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def from_text(text: str) -> datetime:
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


# A span back from now: "24h", "7d", "2w", "90 min", "3 days ago".
_SPAN = re.compile(r"(?i)(\d+)\s*(m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?|weeks?)(?:\s+ago)?")
_SPAN_UNIT = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_ISO_START = re.compile(r"\d{4}-\d")


def _relative(text: str, name: str) -> datetime:
    """A time given relative to now, in the past: a span ("24h", "2w") or words
    ("yesterday", "last friday") that dateparser reads (loaded only for words)."""
    span = _SPAN.fullmatch(text)
    if span:
        return utcnow() - timedelta(**{_SPAN_UNIT[span[2][0].lower()]: int(span[1])})
    # Only text with words goes to dateparser: a malformed ISO date (2026-13-01) is
    # refused, not read again day-first.
    words = any(c.isalpha() for c in text) and not _ISO_START.match(text)
    found = _words_to_time(text) if words else None
    if found is None:
        raise Invalid(
            f"invalid {name} {text!r}: use ISO-8601 (2026-03-01, "
            "2026-03-01T14:30:00Z), a span back from now (24h, 7d, 2w) or words "
            "such as 'yesterday'"
        )
    return found.astimezone(UTC)


def _words_to_time(text: str) -> datetime | None:
    import dateparser

    settings = {
        "PREFER_DATES_FROM": "past",
        "TIMEZONE": "UTC",
        "TO_TIMEZONE": "UTC",
        "RETURN_AS_TIMEZONE_AWARE": True,
        "RELATIVE_BASE": utcnow().replace(tzinfo=None),
    }
    found: datetime | None = dateparser.parse(text, languages=["en"], settings=settings)
    return found


def parse_instant(value: str | datetime | date, name: str = "time") -> datetime:
    """Parse user input: an ISO-8601 date or datetime (a naive value is taken as UTC),
    or a time back from now ("24h", "7d", "yesterday")."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime(value.year, value.month, value.day)
    else:
        text = value.strip()
        if text.lower() == "now":
            return utcnow()
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            return _relative(text, name)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
