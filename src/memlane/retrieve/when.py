"""Time cues in a recall query, read without a model: a window and a "when?" flag.

"yesterday", "last week", "in May 2023", "on 8 May 2023", "2023-05-08", "two weeks
ago", "the last 7 days" become a half-open window [start, end) in the time zone of the
`now` given;
"when did ...", "what date ..." mark a question about time, so the ranker can
favour memories that carry an event time (`occurred_at`).

Calendar semantics, one rule for all: "last X" is "1 X ago", and "N X ago" is the
whole calendar day / week (Monday to Monday) / month / year that holds now - N X;
"the last N X" and "the past X" are the span from the day that was N X ago through today.
The first cue in reading order wins. Only the standard library: a fixed table of
patterns answers the same on every machine, gives windows rather than instants,
and cannot mistake "may" or "second" in ordinary prose for dates.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, timedelta

import msgspec

from memlane.model import Record

Window = tuple[datetime, datetime]  # half-open: start <= t < end

# Score multipliers of `time_fit`, to be tuned with the other weights.
# A cue read from a regex can misfire ("the bug from last week is back" asks about
# now), so a memory outside the window is demoted, never dropped.
OUTSIDE_WINDOW = 0.5
# For a "when?" question a memory without an event time may still state the date
# in its text, so the demotion is mild.
UNDATED_FOR_WHEN = 0.8


class TimeCue(msgspec.Struct, frozen=True):
    window: Window | None = None
    asks_when: bool = False
    phrase: str | None = None  # the words the window was read from, for --explain


NO_CUE = TimeCue()

_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_MONTH_NAMES = {name: i + 1 for i, name in enumerate(_MONTHS)}
_MONTH_NAMES |= {name[:3]: i + 1 for i, name in enumerate(_MONTHS)} | {"sept": 9}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTH_NAMES, key=len, reverse=True)) + r")\.?"
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_WEEKDAY = r"(?P<weekday>" + "|".join(_WEEKDAYS) + ")"
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "couple of": 2,
}
_NUMBER = r"(?P<n>\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + ")"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"

_WHEN = re.compile(
    r"\bwhen\s+(?:did|was|were|is|are|do|does|will|would|has|have|had)\b"
    r"|\bwhat\s+(?:date|day|time|year|month)\b|\bwhich\s+(?:date|day|year|month)\b"
    r"|\bhow\s+long\s+ago\b",
    re.IGNORECASE,
)


# ---- calendar helpers -------------------------------------------------------------


def _midnight(now: datetime, day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=now.tzinfo)


def _day(now: datetime, day: date) -> Window:
    start = _midnight(now, day)
    return start, start + timedelta(days=1)


def _week(now: datetime, day: date) -> Window:
    start = _midnight(now, day - timedelta(days=day.weekday()))
    return start, start + timedelta(days=7)


def _month(now: datetime, year: int, month: int) -> Window:
    next_year, next_month = (year + 1, 1) if month == 12 else (year, month + 1)
    return _midnight(now, date(year, month, 1)), _midnight(now, date(next_year, next_month, 1))


def _year(now: datetime, year: int) -> Window:
    return _midnight(now, date(year, 1, 1)), _midnight(now, date(year + 1, 1, 1))


def _units_ago(now: datetime, unit: str, n: int) -> Window:
    today = now.date()
    if unit == "day":
        return _day(now, today - timedelta(days=n))
    if unit == "week":
        return _week(now, today - timedelta(weeks=n))
    if unit == "month":
        months = today.year * 12 + (today.month - 1) - n
        return _month(now, months // 12, months % 12 + 1)
    return _year(now, today.year - n)


def _trailing(now: datetime, unit: str, n: int) -> Window:
    """From the calendar day n units before today through the end of today."""
    today = now.date()
    if unit in ("day", "week"):
        first = today - timedelta(days=n * (7 if unit == "week" else 1))
    else:
        months = today.year * 12 + (today.month - 1) - n * (12 if unit == "year" else 1)
        year, month = months // 12, months % 12 + 1
        last_day = (date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)).day
        first = date(year, month, min(today.day, last_day))
    return _midnight(now, first), _midnight(now, today + timedelta(days=1))


def _latest_month(now: datetime, month: int) -> Window:
    """The most recent such month that has begun: "in May" asked in March means last May."""
    year = now.year if month <= now.month else now.year - 1
    return _month(now, year, month)


def _latest_date(now: datetime, month: int, day: int) -> date:
    """The most recent such day up to today: "on 8 May" asked in March means last year's."""
    candidate = date(now.year, month, day)
    return candidate if candidate <= now.date() else date(now.year - 1, month, day)


# ---- patterns -------------------------------------------------------------------------

_Resolver = Callable[[re.Match[str], datetime], Window]


def _number(match: re.Match[str]) -> int:
    text = " ".join(match["n"].lower().split())
    return int(text) if text.isdigit() else _NUMBER_WORDS[text]


def _month_of(match: re.Match[str]) -> int:
    return _MONTH_NAMES[match["month"].lower()]


def _dated(match: re.Match[str], now: datetime) -> Window:
    month, day = _month_of(match), int(match["day"])
    if match["year"]:
        return _day(now, date(int(match["year"]), month, day))
    return _day(now, _latest_date(now, month, day))


def _relative(match: re.Match[str], now: datetime) -> Window:
    word, unit = match["which"].lower(), match["unit"].lower()
    offset = {"last": 1, "previous": 1, "this": 0, "next": -1}[word]
    return _units_ago(now, unit, offset)


def _weekday(match: re.Match[str], now: datetime) -> Window:
    target = _WEEKDAYS.index(match["weekday"].lower())
    back = (now.weekday() - target) % 7
    # "last Friday" said on a Friday means a week ago; "on Friday" means today.
    if back == 0 and match["which"].lower() == "last":
        back = 7
    return _day(now, now.date() - timedelta(days=back))


_PATTERNS: tuple[tuple[re.Pattern[str], _Resolver], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), resolve)
    for pattern, resolve in (
        (
            r"\b(?P<year>\d{4})-(?P<m>\d{2})-(?P<day>\d{2})\b",
            lambda m, now: _day(now, date(int(m["year"]), int(m["m"]), int(m["day"]))),
        ),
        (
            r"\b(?P<year>\d{4})-(?P<m>\d{2})\b(?!-\d)",
            lambda m, now: _month(now, int(m["year"]), int(m["m"])),
        ),
        (rf"\b{_DAY}(?:\s+of)?\s+{_MONTH},?(?:\s+{_YEAR})?\b", _dated),
        (rf"\b{_MONTH}\s+{_DAY}(?!\d)(?:,?\s+{_YEAR})?\b", _dated),
        (
            rf"\b(?:(?:in|during)\s+)?{_MONTH},?\s+{_YEAR}\b",
            lambda m, now: _month(now, int(m["year"]), _month_of(m)),
        ),
        (rf"\b(?:in|during)\s+{_MONTH}\b", lambda m, now: _latest_month(now, _month_of(m))),
        (rf"\b(?:in|during)\s+{_YEAR}\b", lambda m, now: _year(now, int(m["year"]))),
        (r"\bthe\s+day\s+before\s+yesterday\b", lambda m, now: _units_ago(now, "day", 2)),
        (r"\byesterday\b", lambda m, now: _units_ago(now, "day", 1)),
        (r"\b(?:today|tonight)\b", lambda m, now: _units_ago(now, "day", 0)),
        (r"\btomorrow\b", lambda m, now: _units_ago(now, "day", -1)),
        (
            rf"\b{_NUMBER}\s+{_UNIT}\s+ago\b",
            lambda m, now: _units_ago(now, m["unit"].lower(), _number(m)),
        ),
        (
            rf"\b(?:the\s+)?(?:last|past|previous)\s+{_NUMBER}\s+{_UNIT}\b",
            lambda m, now: _trailing(now, m["unit"].lower(), _number(m)),
        ),
        (
            r"\b(?:the\s+)?past\s+(?P<unit>day|week|month|year)\b",
            lambda m, now: _trailing(now, m["unit"].lower(), 1),
        ),
        (r"\b(?P<which>last|previous|this|next)\s+(?P<unit>day|week|month|year)\b", _relative),
        (rf"\b(?P<which>last|on)\s+{_WEEKDAY}\b", _weekday),
    )
)


def time_cue(query: str, now: datetime) -> TimeCue:
    """The time window named in `query` (the first in reading order) and the "when?" flag."""
    asks_when = bool(_WHEN.search(query))
    found = _first_window(query, now)
    if found is None:
        return TimeCue(asks_when=asks_when)
    window, phrase = found
    return TimeCue(window, asks_when, phrase)


def _first_window(query: str, now: datetime) -> tuple[Window, str] | None:
    hits: list[tuple[int, int, Window, str]] = []  # (start, end, window, phrase)
    for pattern, resolve in _PATTERNS:
        for match in pattern.finditer(query):
            # Trigger: an impossible date ("2023-02-30", "31 June"). Why: it is a
            # typo or not a date at all. Outcome: this match names no window.
            try:
                window = resolve(match, now)
            except ValueError:
                continue
            hits.append((match.start(), match.end(), window, match.group()))
    if not hits:
        return None
    first = min(hits, key=lambda hit: (hit[0], hit[0] - hit[1]))
    # Trigger: cues overlap ("in May" and "May 2023" in "in May 2023"). Why: the
    # longer reading is the more precise one. Outcome: the longest overlapping cue.
    overlapping = [hit for hit in hits if hit[0] < first[1]]
    _, _, window, phrase = min(overlapping, key=lambda hit: (hit[0] - hit[1], hit[0]))
    return window, phrase


def event_time(record: Record) -> datetime:
    """When a memory happened: its event time when known, else when it was written."""
    return record.occurred_at if record.occurred_at is not None else record.created_at


def in_window(t: datetime, window: Window) -> bool:
    return window[0] <= t < window[1]


def time_fit(record: Record, cue: TimeCue) -> float:
    """A score multiplier in (0, 1]: 1.0 unless the query's time cue speaks against it."""
    fit = 1.0
    if cue.window is not None and not in_window(event_time(record), cue.window):
        fit *= OUTSIDE_WINDOW
    if cue.asks_when and record.occurred_at is None:
        fit *= UNDATED_FOR_WHEN
    return fit
