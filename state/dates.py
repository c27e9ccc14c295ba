"""Dates a query names and which turns match them.

Pure (stdlib and numpy). Long-term recall lifts the turns said in the period a question names:

- a date (``"in June"``, ``"on 13 October, 2023"``, ``"in 2022"``): the turns said in it or
  shortly after (people tell of an event after it happened, "last week we went camping",
  sometimes before, "we're going camping next week");
- a time relative to when the question is asked (``"yesterday"``, ``"last week"``, ``"3 days
  ago"``, ``"in the past two weeks"``, ``"on Monday"``, ``"this month"``): the turns said in
  that run of days, on the asker's calendar (the clock's time zone), offline and without a model.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import partial

import numpy as np

MONTH_NAMES: tuple[tuple[str, ...], ...] = (
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may",),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sep", "sept"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
)
MONTHS = {name: number for number, names in enumerate(MONTH_NAMES, start=1) for name in names}
DAY_SECONDS = 86_400
EPOCH_DAY = date(1970, 1, 1).toordinal()
DAYS_BEFORE = 7
DAYS_AFTER = 35

_MONTH = "(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
DATE_PATTERNS = (
    re.compile(rf"\b{_DAY}\s+{_MONTH},?\s+{_YEAR}\b", re.I),  # 13 October, 2023
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I),  # October 13, 2023
    re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.I),  # October 2023
    re.compile(rf"\b(?:in|during|of|since|by|early|late|mid)\s+{_MONTH}\b", re.I),  # in October
    re.compile(rf"\b(?:in|during|of|since|by)\s+{_YEAR}\b", re.I),  # in 2023
)


@dataclass(frozen=True, slots=True)
class Span:
    """A run of days, first to last, that a query names relative to when it is asked."""

    first: date
    last: date

    def contains(self, when: date) -> bool:
        """Whether a day lies in the span."""
        return self.first <= when <= self.last


NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3,
}  # fmt: skip
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_COUNT = "(?P<count>" + "|".join([r"\d{1,3}", *sorted(NUMBERS, key=len, reverse=True)]) + ")"
_UNIT = r"(?P<unit>day|week|month)s?"
UNIT_DAYS = {"day": 1, "week": 7, "month": 30}
AGO_SLACK_DAYS = {"day": 1, "week": 3, "month": 10}  # "two weeks ago" is about, not exactly
RELATIVE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.I))
    for name, pattern in (
        ("day_before_yesterday", r"\b(?:the )?day before yesterday\b"),
        ("yesterday", r"\b(?:yesterday|last night)\b"),
        # not a bare "today": "today let's fix the export" asks for no day's turns
        ("today", r"\b(?:earlier today|this morning|this afternoon)\b"),
        ("ago", rf"\b{_COUNT}\s+{_UNIT}\s+ago\b"),
        ("past", rf"\b(?:the\s+)?(?:last|past)\s+{_COUNT}\s+{_UNIT}\b"),
        ("past_one", r"\b(?:the\s+)?(?P<which>last|past)\s+(?P<unit>day|week|month)\b"),
        ("this_week", r"\bthis\s+week\b"),
        ("this_month", r"\bthis\s+month\b"),
        ("weekday", rf"\b(?:on|last|this past)\s+(?P<weekday>{'|'.join(WEEKDAYS)})\b"),
    )
)


def relative_span(query: str, today: date) -> Span | None:
    """The days a query names relative to ``today`` ("last week": Monday to Sunday before)."""
    for name, pattern in RELATIVE_PATTERNS:
        match = pattern.search(query)
        if match is None:
            continue
        found = match.groupdict()
        if name in ("day_before_yesterday", "yesterday", "today"):
            back = {"day_before_yesterday": 2, "yesterday": 1, "today": 0}[name]
            day = today - timedelta(days=back)
            return Span(day, day)
        if name == "ago":
            days = count_of(found["count"]) * UNIT_DAYS[found["unit"].lower()]
            slack = AGO_SLACK_DAYS[found["unit"].lower()]
            middle = today - timedelta(days=days)
            return Span(middle - timedelta(days=slack), middle + timedelta(days=slack))
        unit = (found.get("unit") or "").lower()
        calendar = name == "past_one" and found["which"].lower() == "last"
        if calendar and unit == "week":  # "last week": Monday to Sunday of the one before
            monday = today - timedelta(days=today.weekday())
            return Span(monday - timedelta(days=7), monday - timedelta(days=1))
        if calendar and unit == "month":  # "last month": the calendar month before
            first = today.replace(day=1)
            return Span((first - timedelta(days=1)).replace(day=1), first - timedelta(days=1))
        if name in ("past", "past_one"):  # "the past two weeks", "the past month": up to today
            count = count_of(found["count"]) if name == "past" else 1
            return Span(today - timedelta(days=count * UNIT_DAYS[unit]), today)
        if name == "this_week":
            return Span(today - timedelta(days=today.weekday()), today)
        if name == "this_month":
            return Span(today.replace(day=1), today)
        back = (today.weekday() - WEEKDAYS.index(found["weekday"].lower())) % 7 or 7
        day = today - timedelta(days=back)
        return Span(day, day)
    return None


def count_of(text: str) -> int:
    """``"3"``, ``"three"``, ``"a"`` as a number."""
    return int(text) if text.isdigit() else NUMBERS[" ".join(text.lower().split())]


@dataclass(frozen=True, slots=True)
class Period:
    """What a query's date names: a year, a month (of a year or of any year), or a day."""

    year: int | None = None
    month: int | None = None
    day: int | None = None

    def contains(self, when: date) -> bool:
        """Whether a day lies in the period."""
        return (
            (self.year is None or when.year == self.year)
            and (self.month is None or when.month == self.month)
            and (self.day is None or when.day == self.day)
        )


def period_of(query: str) -> Period | None:
    """The first date the query names, or None."""
    for pattern in DATE_PATTERNS:
        match = pattern.search(query)
        if match is None:
            continue
        found = match.groupdict()
        month = found.get("month")
        return Period(
            year=int(found["year"]) if found.get("year") else None,
            month=MONTHS[month.lower().rstrip(".")] if month else None,
            day=int(found["day"]) if found.get("day") else None,
        )
    return None


def near(period: Period, day: date, before: int = DAYS_BEFORE, after: int = DAYS_AFTER) -> bool:
    """Whether ``day`` is in the period, up to ``after`` days past it or ``before`` days ahead."""
    return any(period.contains(day - timedelta(days=d)) for d in range(-before, after + 1))


def when_of(query: str, now: datetime) -> Period | Span | None:
    """The time a query names: a date it names, else a time relative to ``now``, else None."""
    return period_of(query) or relative_span(query, now.date())


def stamp_of(when: datetime | None) -> float:
    """A time as POSIX seconds (a time without a zone taken as UTC); NaN for none."""
    if when is None:
        return math.nan
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def day_numbers(stamps: np.ndarray, now: datetime | None = None) -> np.ndarray:
    """Each POSIX time's day (a proleptic ordinal) on ``now``'s calendar; -1 for NaN."""
    offset = now.utcoffset() if now is not None else None
    shift = offset.total_seconds() if offset else 0.0
    days = np.full(stamps.shape, -1, dtype=np.int64)
    known = ~np.isnan(stamps)
    days[known] = np.floor((stamps[known] + shift) / DAY_SECONDS).astype(np.int64) + EPOCH_DAY
    return days


def match_days(period: Period | Span | None, days: np.ndarray) -> np.ndarray:
    """Per turn 1.0 if its day is in the span, or in or near the period, else 0.0.

    Each distinct day is tested once (a project's turns fall on a few hundred days).
    """
    out = np.zeros(days.shape, dtype=np.float32)
    if period is None:
        return out
    hits = [
        number
        for number in np.unique(days[days >= 0]).tolist()
        if (period.contains if isinstance(period, Span) else partial(near, period))(
            date.fromordinal(number)
        )
    ]
    if hits:
        out[np.isin(days, hits)] = 1.0
    return out


__all__ = [
    "MONTHS",
    "Period",
    "Span",
    "day_numbers",
    "match_days",
    "near",
    "period_of",
    "relative_span",
    "stamp_of",
    "when_of",
]
