"""When a reminder is due, from what a person types ("in 2 hours", "friday 5pm",
"2026-12-24 18:00"). dateparser reads the phrase (imported here only: it is slow to
load); times are stored in UTC."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo

from memlane.errors import Invalid


def parse_due(phrase: str, now: datetime, timezone: str | None = None) -> datetime:
    """The UTC instant `phrase` names, read relative to `now` (future preferred) in
    `timezone` (an IANA name; UTC when None)."""
    import dateparser

    text = phrase.strip()
    if not text:
        raise Invalid("say when: a time such as 'in 2 hours' or 'friday 5pm'")
    zone = timezone or "UTC"
    base = now.astimezone(UTC).replace(tzinfo=None)
    settings = {
        "RELATIVE_BASE": base,
        "PREFER_DATES_FROM": "future",
        "TIMEZONE": "UTC",
        "TO_TIMEZONE": "UTC",
        "RETURN_AS_TIMEZONE_AWARE": True,
    }
    if zone != "UTC":
        settings["TIMEZONE"] = zone
        settings["RELATIVE_BASE"] = now.astimezone(_zone(zone)).replace(tzinfo=None)
    found: datetime | None = dateparser.parse(text, languages=["en"], settings=settings)
    if found is None:
        raise Invalid(f"cannot read {phrase!r} as a time; try 'in 2 hours', 'tomorrow 9am'")
    return found.astimezone(UTC)


def _zone(name: str) -> tzinfo:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise Invalid(f"unknown time zone {name!r}") from None
