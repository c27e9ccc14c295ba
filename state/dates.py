"""Dates a query names ("in June", "on 13 October, 2023", "in 2022") and which turns match them.

Pure (stdlib and numpy). Long-term recall lifts the turns said in the period a question names,
or shortly after it: people tell of an event after it happened ("last week we went camping"),
sometimes before ("we're going camping next week").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

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


def time_match(period: Period | None, times: Sequence[datetime | None]) -> np.ndarray:
    """Per turn 1.0 if said in or near the period, else 0.0 (0.0 for turns without a time)."""
    out = np.zeros(len(times), dtype=np.float32)
    if period is None:
        return out
    by_day: dict[date, bool] = {}
    for position, when in enumerate(times):
        if when is None:
            continue
        day = when.date()
        if day not in by_day:
            by_day[day] = near(period, day)
        out[position] = by_day[day]
    return out


__all__ = ["MONTHS", "Period", "near", "period_of", "time_match"]
