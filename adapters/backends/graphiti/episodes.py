"""Episode bodies: session events in a structured, line-per-event form anyone can parse back.

An episode body looks like::

    plait episode v1
    project: shop
    - decision @2026-05-01T10:00:00+00:00 | Use FalkorDB for the graph | refs: db.py | key: storage

One ``- `` line per event: kind and time, the one-line summary, then ``name: value`` fields
(``refs``, ``keywords``, ``key``, ``detail``). The offline extractor reads these lines back; a
real LLM reads them as plain text. Values never contain the field separator or a newline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from plait.state.events import SessionEvent

HEADER = "plait episode v1"
SEPARATOR = " | "
DETAIL_MAX_CHARS = 300
LINE = re.compile(r"^- (?P<kind>[a-z_]+) @(?P<time>\S+) \| (?P<rest>.*)$", re.MULTILINE)
PROJECT = re.compile(r"^project: (?P<name>.+)$", re.MULTILINE)
LIST_FIELDS = ("refs", "keywords")
FIELDS = ("refs", "keywords", "key", "detail")


@dataclass(frozen=True, kw_only=True, slots=True)
class EpisodeLine:
    """One event as read back from an episode body."""

    kind: str
    time: str
    summary: str
    refs: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    key: str = ""
    detail: str = ""


def flat(text: str) -> str:
    """One line, without the field separator."""
    return " ".join(text.split()).replace("|", "/")


def list_value(items: Sequence[str]) -> str:
    """A comma-separated list whose items contain no comma."""
    return ", ".join(flat(item).replace(",", ";") for item in items if item.strip())


def event_line(event: SessionEvent) -> str:
    """The ``- kind @time | summary | field: value ...`` line of one event."""
    parts = [f"- {event.kind.value} @{event.time.isoformat()}", flat(event.summary) or "-"]
    if event.refs:
        parts.append(f"refs: {list_value(event.refs)}")
    if event.keywords:
        parts.append(f"keywords: {list_value(event.keywords)}")
    if event.key:
        parts.append(f"key: {flat(event.key)}")
    detail = flat(event.body)[:DETAIL_MAX_CHARS]
    if detail:
        parts.append(f"detail: {detail}")
    return SEPARATOR.join(parts)


def episode_body_for(events: Sequence[SessionEvent], project: str = "") -> str:
    """The structured text of an episode made of ``events`` (in order)."""
    head = [HEADER]
    if project:
        head.append(f"project: {flat(project)}")
    return "\n".join([*head, *(event_line(event) for event in events)])


def parse_fields(rest: str) -> tuple[str, dict[str, str]]:
    """Split ``summary | name: value | ...`` into the summary and the known fields."""
    pieces = rest.split(SEPARATOR)
    fields: dict[str, str] = {}
    summary_parts: list[str] = []
    for piece in pieces:
        name, colon, value = piece.partition(": ")
        if colon and name in FIELDS and name not in fields:
            fields[name] = value.strip()
        elif not fields:
            summary_parts.append(piece)
    return SEPARATOR.join(summary_parts).strip(), fields


def split_list(value: str) -> tuple[str, ...]:
    """Items of a comma-separated field."""
    return tuple(item.strip() for item in value.split(",") if item.strip())


def parse_episode_body(text: str) -> tuple[str, list[EpisodeLine]]:
    """The project name and the event lines found in ``text`` (empty when it has none)."""
    project_match = PROJECT.search(text)
    lines = []
    for match in LINE.finditer(text):
        summary, fields = parse_fields(match["rest"])
        lines.append(
            EpisodeLine(
                kind=match["kind"],
                time=match["time"],
                summary="" if summary == "-" else summary,
                refs=split_list(fields.get("refs", "")),
                keywords=split_list(fields.get("keywords", "")),
                key=fields.get("key", ""),
                detail=fields.get("detail", ""),
            )
        )
    return (project_match["name"].strip() if project_match else ""), lines


def parse_time(text: str) -> datetime | None:
    """An ISO time, or None when it is not one."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


__all__ = [
    "HEADER",
    "EpisodeLine",
    "episode_body_for",
    "event_line",
    "parse_episode_body",
    "parse_time",
]
