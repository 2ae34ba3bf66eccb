"""Instants: always timezone-aware UTC, stored as fixed-width ISO-8601 text."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from memlane.errors import Invalid

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
ONE_MICROSECOND = timedelta(microseconds=1)


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_text(t: datetime) -> str:
    """Fixed-width text that sorts like the instant it names."""
    return t.astimezone(UTC).strftime(_FORMAT)


def from_text(text: str) -> datetime:
    return datetime.strptime(text, _FORMAT).replace(tzinfo=UTC)


def parse_instant(value: str | datetime | date, name: str = "time") -> datetime:
    """Parse user input: ISO-8601 date or datetime; a naive value is taken as UTC."""
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
            raise Invalid(
                f"invalid {name} {value!r}: use ISO-8601, e.g. 2026-03-01 or 2026-03-01T14:30:00Z"
            ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
