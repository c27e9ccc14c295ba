"""Dates a query names and which turns match them.

Pure (stdlib and numpy). Long-term recall lifts the turns said in the period a question names:

- a date (``"in June"``, ``"on 13 October, 2023"``, ``"in 2022"``): the turns said in it or
  shortly after (people tell of an event after it happened, "last week we went camping",
  sometimes before, "we're going camping next week");
- a time relative to when the question is asked (``"yesterday"``, ``"last week"``, ``"3 days
  ago"``, ``"in the past two weeks"``, ``"on Monday"``, ``"this month"``, ``"the 24th of last
  month"``): the turns said in that run of days, on the asker's calendar (the clock's time
  zone), offline and without a model;
- a part of a month (``"the week of May 11"``, ``"early June"``, ``"the end of last month"``);
- the first, nth or last session (``"in our very first session"``, ``"the second session"``):
  the turns said on the first, nth or last day anything was;
- the days around something else it names (``"right before the Bloomfield demo"``,
  :class:`Anchored`), in a session with an agent only.

In a session with an agent a turn is dated when it happened, so the turns said in the period
itself are lifted (:func:`match_days` with ``agent``); between people, what was said in it or
shortly after.
"""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

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
# in a session with an agent, a period's turns are those said in it, or this many days after
AGENT_DAYS_AFTER = 1


def _month(name: str = "month") -> str:
    return f"(?P<{name}>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"


def _day(name: str = "day") -> str:
    return rf"(?P<{name}>\d{{1,2}})(?:st|nd|rd|th)?"


_MONTH = _month()
_DAY = _day()
_YEAR = r"(?P<year>(?:19|20)\d\d)"
# a day of a month without a year: May 11, the 11th of May (a second name for each part, since
# a pattern names a group once)
_THE_DAY = rf"(?:{_MONTH}\s+{_DAY}|(?:the\s+)?{_day('day2')}\s+(?:of\s+)?{_month('month2')})"
# a part of a month: its first day and how many days it runs ("early June": the 1st to the 10th)
PARTS = {"early": (1, 10), "mid": (11, 10), "late": (21, 11)}
_PART = (
    r"(?:(?P<early>early|(?:the\s+)?(?:beginning|start)\s+of)"
    r"|(?P<mid>mid|(?:the\s+)?middle\s+of)|(?P<late>late|(?:the\s+)?end\s+of))[\s-]+"
)
WEEK_DAYS = 7
ORDINALS = {
    "first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3,
    "fifth": 4, "5th": 4,
}  # fmt: skip
_ORDINAL = "(?P<nth>" + "|".join(ORDINALS) + ")"
DATE_PATTERNS = (
    re.compile(rf"\b{_ORDINAL}\s+week\s+of\s+{_MONTH}(?:,?\s+{_YEAR})?\b", re.I),  # 2nd week of May
    re.compile(rf"\bweek\s+of\s+{_THE_DAY}(?:,?\s+{_YEAR})?\b", re.I),  # the week of May 11
    re.compile(rf"\b{_DAY}\s+{_MONTH},?\s+{_YEAR}\b", re.I),  # 13 October, 2023
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I),  # October 13, 2023
    re.compile(rf"\b{_PART}{_MONTH}(?:,?\s+{_YEAR})?\b", re.I),  # early June, mid-June 2023
    re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.I),  # October 2023
    re.compile(rf"\b{_THE_DAY}\b", re.I),  # May 11, the 11th of May
    re.compile(rf"\b(?:in|during|of|since|by)\s+{_MONTH}\b", re.I),  # in October
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
        ("day_of_month", rf"\bthe\s+{_DAY}\s+of\s+(?P<which>last|this)\s+month\b"),
        ("part_of_month", rf"\b{_PART}(?P<which>last|this)\s+month\b"),
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
        if name in ("day_of_month", "part_of_month"):
            return part_of_month(found, today)
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
        on_calendar = name == "past_one" and found["which"].lower() == "last"
        if on_calendar and unit == "week":  # "last week": Monday to Sunday of the one before
            monday = today - timedelta(days=today.weekday())
            return Span(monday - timedelta(days=7), monday - timedelta(days=1))
        if on_calendar and unit == "month":  # "last month": the calendar month before
            return month_of(today, back=1)
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


def part_of_month(found: dict[str, str | None], today: date) -> Span | None:
    """Days of last month or this one: the 24th of last month, early this month."""
    month = month_of(today, back=1 if found["which"] == "last" else 0)
    part = next((name for name in PARTS if found.get(name)), None)
    start, days = PARTS[part] if part else (int(found["day"] or 0), 1)
    if not 1 <= start <= month.last.day:
        return None
    begins = month.first.replace(day=start)
    return Span(begins, min(begins + timedelta(days=days - 1), month.last))


def month_of(today: date, back: int) -> Span:
    """Every day of this month (``back`` 0) or of the month before (1)."""
    first = today.replace(day=1)
    if back:
        first = (first - timedelta(days=1)).replace(day=1)
    return Span(first, first.replace(day=calendar.monthrange(first.year, first.month)[1]))


def count_of(text: str) -> int:
    """``"3"``, ``"three"``, ``"a"`` as a number."""
    return int(text) if text.isdigit() else NUMBERS[" ".join(text.lower().split())]


@dataclass(frozen=True, slots=True)
class Period:
    """What a query's date names: a year, a month (of a year or of any year), or a day.

    ``days``: how many days from ``day`` it runs ("the week of May 11": 7 from the 11th).
    """

    year: int | None = None
    month: int | None = None
    day: int | None = None
    days: int = 1

    def contains(self, when: date) -> bool:
        """Whether a day lies in the period."""
        if self.day is None or self.month is None:
            return (self.year is None or when.year == self.year) and (
                self.month is None or when.month == self.month
            )
        # its run in the day's year or the year before (a week of 28 December)
        day = when.toordinal()
        return any(low <= day <= high for low, high in self.runs((when.year, when.year - 1)))

    def runs(self, years: Iterable[int]) -> list[tuple[int, int]]:
        """A period with a day: its first and last day (ordinals) in each of these years.

        Only its own year when it names one; none in a year whose month lacks its day.
        """
        found = []
        for year in (self.year,) if self.year else years:
            start = first_day(year, self.month or 1, self.day or 1)
            if start is not None:
                found.append((start.toordinal(), start.toordinal() + self.days - 1))
        return found


def first_day(year: int, month: int, day: int) -> date | None:
    """A day of a month, or None when the month has no such day (the 30th of February)."""
    try:
        return date(year, month, day)
    except ValueError:
        return None


def period_of(query: str) -> Period | None:
    """The first date the query names, or None."""
    for pattern in DATE_PATTERNS:
        match = pattern.search(query)
        if match is None:
            continue
        found = {name.rstrip("2"): value for name, value in match.groupdict().items() if value}
        month = MONTHS[found["month"].lower().rstrip(".")] if "month" in found else None
        day, days = (int(found["day"]), 1) if "day" in found else (None, 1)
        part = next((name for name in PARTS if name in found), None)
        if part is not None:
            day, days = PARTS[part]
        elif "nth" in found:
            day, days = 1 + WEEK_DAYS * ORDINALS[found["nth"].lower()], WEEK_DAYS
        elif day is not None and match.group(0).lower().startswith("week"):
            days = WEEK_DAYS
        return Period(
            year=int(found["year"]) if "year" in found else None,
            month=month,
            day=day,
            days=days,
        )
    return None


@dataclass(frozen=True, slots=True)
class Edge:
    """The first (or last) days anything was said: ``"in our very first session"``.

    ``nth``: which of them, from 0 (``"the second session"``: the second day anything was
    said); ``days``: a day, or a week from the first day (``"the first week"``).
    """

    last: bool = False
    nth: int = 0
    days: int = 1


EDGE_UNIT_DAYS = {"session": 1, "day": 1, "conversation": 1, "chat": 1, "week": WEEK_DAYS}
# a day or week alone: "the first day at my new job", "the second week of the trip", "the first
# day or two after the launch" are not the conversation's
_EDGE_UNIT = (
    r"(?:(?P<unit>session|conversation|chat)|(?P<span>day|week)"
    r"(?!\s+(?:of|at|in|on|or|until|after|before|back|with|to|and|from)\b))"
)
EDGE_PATTERNS = (
    (
        False,
        re.compile(
            rf"\b(?:the|our|my|that)\s+(?:very\s+)?{_ORDINAL}\s+{_EDGE_UNIT}\b"
            # not "at the beginning of each year", nor "when I started making them"
            r"|\b(?:at|in)\s+the\s+(?:very\s+)?(?:start|beginning)\b(?!\s+of\b)"
            r"|\b(?:at|in)\s+the\s+(?:very\s+)?(?:start|beginning)\s+of\s+(?:the|this|our)\s+"
            r"project\b|\bon\s+day\s+one\b",
            re.I,
        ),
    ),
    (
        True,
        # not "the last session before my holiday": that is anchored on something else
        re.compile(
            r"\b(?:the|our|my|that)\s+(?:very\s+)?(?:last|latest|most\s+recent|previous)\s+"
            r"(?P<unit>session|conversation|chat)\b(?!\s+(?:before|after|prior))",
            re.I,
        ),
    ),
)


def edge_of(query: str) -> Edge | None:
    """The first, nth or last session (or week) the query names, or None."""
    for last, pattern in EDGE_PATTERNS:
        match = pattern.search(query)
        if match is not None:
            found = match.groupdict()
            unit = (found.get("unit") or found.get("span") or "session").lower()
            nth = ORDINALS[found["nth"].lower()] if found.get("nth") else 0
            return Edge(last=last, nth=nth, days=EDGE_UNIT_DAYS[unit])
    return None


@dataclass(frozen=True, slots=True)
class Anchored:
    """Days around something else the query names (``"right before the Bloomfield demo"``).

    ``what``: the words that name it (its day is the day whose turns speak of them most:
    :func:`plait.state.ranking.time_match`); the days from ``first`` to ``last`` after it
    (negative: before) are meant.
    """

    what: str
    first: int
    last: int


_LEAD = (
    r"(?:(?P<close>right|just|shortly|immediately)|the\s+(?P<part>day|evening|night|morning"
    r"|afternoon)|the\s+(?P<week>week)|(?P<count>\d|two|three|four|a\s+few|a\s+couple\s+of)\s+"
    rf"(?:days|evenings|nights)|(?:the\s+)?(?P<weekday>{'|'.join(WEEKDAYS)}))"
)
_WHAT = r"(?P<what>[^?.,;!]+)"
ANCHORED_PATTERNS = (
    re.compile(rf"\b{_LEAD}\s+(?P<rel>before|after|prior\s+to)\s+{_WHAT}", re.I),
    re.compile(
        rf"\b(?:on\s+)?the\s+(?P<of>morning|evening|night|afternoon|day)\s+of\s+{_WHAT}", re.I
    ),
)
# a question about how far apart two things were needs both, not the days around one
SPAN_QUESTION = re.compile(
    r"\bbefore\s+or\s+after\b|^\W*(?:how\s+(?:many|long|much|far|soon)|(?:roughly|about)\s+how)\b",
    re.I,
)


def anchored_of(query: str) -> Anchored | None:
    """The days around something the query names, or None (see :class:`Anchored`)."""
    if SPAN_QUESTION.search(query):
        return None
    for pattern in ANCHORED_PATTERNS:
        match = pattern.search(query)
        if match is None:
            continue
        found = match.groupdict()
        if found.get("of"):
            return Anchored(found["what"], 0, 0)
        if found.get("week") or found.get("weekday"):
            reach = WEEK_DAYS
        elif found.get("count"):
            reach = count_of(found["count"]) + 1
        else:
            reach = 2
        if found["rel"].lower() == "after":
            return Anchored(found["what"], 1 if found.get("weekday") else 0, reach)
        return Anchored(found["what"], -reach, -1 if found.get("weekday") else 0)
    return None


def near(period: Period, day: date, before: int = DAYS_BEFORE, after: int = DAYS_AFTER) -> bool:
    """Whether ``day`` is in the period, up to ``after`` days past it or ``before`` days ahead."""
    return any(period.contains(day - timedelta(days=d)) for d in range(-before, after + 1))


When = Period | Span | Edge | Anchored


def when_of(query: str, now: datetime) -> When | None:
    """The time a query names: a date, a relative time, a session, days around an event."""
    return (
        period_of(query) or relative_span(query, now.date()) or edge_of(query) or anchored_of(query)
    )


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


def match_days(
    when: Period | Span | Edge | None, days: np.ndarray, agent: np.ndarray | None = None
) -> np.ndarray:
    """Per turn 1.0 if its day is in the span, or in or near the period, else 0.0.

    ``agent``: per turn, whether it is of a session with an agent, dated when it happened: in
    the period itself, up to :data:`AGENT_DAYS_AFTER` days after (not told of long after, as
    between people). An :class:`Edge` is the first (last) days of any turn's. Each distinct day
    is tested once (a project's turns fall on a few hundred days).
    """
    out = np.zeros(days.shape, dtype=np.float32)
    if when is None:
        return out
    known = np.unique(days[days >= 0])
    if not len(known):
        return out
    if isinstance(when, Edge):
        if when.days > 1:  # the nth week, counted from the first (back from the last) day
            offset, first, final = when.days * when.nth, int(known[0]), int(known[-1])
            low = final - offset - when.days + 1 if when.last else first + offset
            high = low + when.days - 1
        elif when.nth < len(known):  # the nth day anything was said
            low = high = int(known[-1 - when.nth] if when.last else known[when.nth])
        else:
            return out
        out[(days >= low) & (days <= high)] = 1.0
        return out
    if isinstance(when, Span):
        hits = known[(known >= when.first.toordinal()) & (known <= when.last.toordinal())]
        out[np.isin(days, hits)] = 1.0
        return out
    out[np.isin(days, known[near_days(when, known)])] = 1.0
    if agent is not None and agent.any():
        dated = known[near_days(when, known, before=0, after=AGENT_DAYS_AFTER)]
        out[agent] = np.isin(days[agent], dated)
    return out


def near_days(
    period: Period, known: np.ndarray, before: int = DAYS_BEFORE, after: int = DAYS_AFTER
) -> np.ndarray:
    """Per day (sorted proleptic ordinals), whether it is :func:`near` the period.

    A day of a month (a week, a part of it) is a run of ordinals in each year the days span,
    tested at once; a month or a year day by day (a project's turns fall on a few hundred days).
    """
    if period.day is None or period.month is None:
        return np.array([near(period, date.fromordinal(n), before, after) for n in known.tolist()])
    first, last = date.fromordinal(int(known[0])).year, date.fromordinal(int(known[-1])).year
    mask = np.zeros(known.shape, dtype=bool)
    for low, high in period.runs(range(first - 1, last + 2)):
        mask |= (known >= low - before) & (known <= high + after)
    return mask


__all__ = [
    "MONTHS",
    "Anchored",
    "Edge",
    "Period",
    "Span",
    "anchored_of",
    "day_numbers",
    "edge_of",
    "match_days",
    "near",
    "near_days",
    "period_of",
    "relative_span",
    "stamp_of",
    "when_of",
]
