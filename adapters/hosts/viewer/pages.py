"""What each viewer page shows, read through the facade (:class:`plait.Memory`): pure data.

Every function takes the open memory and what the request asked for, and returns a dict the
page's template renders. Nothing here knows HTTP; the routes in :mod:`.app` do.
"""

from __future__ import annotations

import asyncio
import difflib
import html
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from plait.state.base.errors import BackendUnavailable
from plait.state.base.settings import known_keys, origin_of, shown_value
from plait.state.events import EventKind, SessionEvent
from plait.state.observations import OBSERVATION_TYPES, SCOPES, Observation
from plait.state.ports import GraphEntity, GraphPicture, ReceivedEnvelope
from plait.state.snapshot import Snapshot

if TYPE_CHECKING:
    from plait.memory import Memory

PAGE_SIZE = 50
EVENTS_PAGE_SIZE = 100
SEARCH_MAX_CHARS = 500
SEARCH_LIMIT_MAX = 200
RECALL_LIMIT = 20
RECALL_TIMEOUT_S = 10.0
GRAPH_LIMIT = 60  # facts drawn by default; ?limit= up to GRAPH_MAX
GRAPH_MAX = 300
GRAPH_CENTRE = 320.0
GRAPH_RADIUS = 250.0
DEAD_LETTERS_MAX = 1000
DEAD_CALLS_MAX = 100_000
DEAD_CALLS_SHOWN = 100  # the oldest; `plait dlq calls list` has them all
SNAPSHOT_SECTIONS = (
    "rules",
    "decisions",
    "tasks",
    "errors",
    "files",
    "edits",
    "subagents_open",
    "subagents_done",
    "discoveries",
    "git",
    "environment",
)
COMPACTION_KINDS = frozenset({EventKind.COMPACTION_SUMMARY})


@dataclass(frozen=True, kw_only=True, slots=True)
class Pager:
    """One page of a list: which page, of how many, and the slice it covers."""

    number: int
    size: int
    total: int

    @property
    def pages(self) -> int:
        """How many pages the list has (at least one)."""
        return max(1, -(-self.total // self.size))

    @property
    def offset(self) -> int:
        """Where the page starts."""
        return (self.number - 1) * self.size

    @property
    def previous(self) -> int | None:
        """The page before, if any."""
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        """The page after, if any."""
        return self.number + 1 if self.number < self.pages else None


def pager(number: int | None, size: int, total: int) -> Pager:
    """A page of ``total`` items; no number (or one past the end) means the last page."""
    last = max(1, -(-total // size))
    wanted = last if number is None else min(max(1, number), last)
    return Pager(number=wanted, size=size, total=total)


def age(moment: datetime, now: datetime | None = None) -> str:
    """How long ago, in the largest whole unit: ``42 s``, ``5 min``, ``3 h``, ``2 d``."""
    seconds = max(0, int(((now or datetime.now(UTC)) - moment).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


# -- sessions -----------------------------------------------------------------------------------
async def sessions_page(memory: Memory, number: int | None) -> dict[str, Any]:
    """The project's root sessions, newest first, each with its subagents and event count."""
    store = memory.backends.store
    total = await store.count_sessions(memory.group_id)
    page = pager(number or 1, PAGE_SIZE, total)
    roots = await store.list_sessions(memory.group_id, offset=page.offset, limit=page.size)
    rows = []
    for root in roots:
        members = await store.session_members(root.session_id)
        rows.append(
            {
                "id": root.session_id,
                "last_seen": root.last_seen,
                "age": age(root.last_seen),
                "events": await store.event_count(root.session_id),
                "subagents": [m.session_id for m in members if m.session_id != root.session_id],
            }
        )
    return {"sessions": rows, "page": page}


def compaction(event: SessionEvent) -> bool:
    """Whether an event marks a compaction."""
    return event.kind in COMPACTION_KINDS or "compact" in event.source_hook


def snapshot_lines(snapshot: Snapshot, count: int) -> list[dict[str, Any]]:
    """Each line the snapshot keeps: its tier (section), text, who said it, source and age."""
    lines = []
    for section in SNAPSHOT_SECTIONS:
        for item in getattr(snapshot, section):
            lines.append(
                {
                    "tier": section,
                    "text": item.text,
                    "speaker": item.speaker or "",
                    "event_id": item.event_id,
                    "age": count - item.event_id if item.event_id else None,
                }
            )
    return lines


SECTION_LINE = re.compile(r"^\s*<(\w+)[^>]*>(.*)</\1>\s*$")
ITEM = re.compile(r"<(\w+)[^>]*>(.*?)</\1>")
BLOCK_OPEN = re.compile(r"^\s*<(\w+)[^>/]*>\s*$")
BLOCK_CLOSE = re.compile(r"^\s*</(\w+)>\s*$")


def envelope_lines(envelope: str, sources: dict[str, int]) -> list[dict[str, Any]]:
    """Each line of an envelope with its tier (section) and the event it comes from.

    The event is known while the session's snapshot still holds the line.
    """
    lines: list[dict[str, Any]] = []
    block = ""  # a section written over several lines (the snapshot, persistent memory)
    for raw in envelope.splitlines()[1:-1]:
        opening, closing = BLOCK_OPEN.match(raw), BLOCK_CLOSE.match(raw)
        if opening or closing:
            block = opening.group(1) if opening else ""
            continue
        section = SECTION_LINE.match(raw)
        if section is None:
            plain = html.unescape(raw.strip())
            lines.append({"tier": block, "text": plain, "event_id": sources.get(plain)})
            continue
        tier, inner = section.groups()
        for _, text in ITEM.findall(inner) or [(tier, inner)]:
            plain = html.unescape(text)
            lines.append({"tier": tier, "text": plain, "event_id": sources.get(plain)})
    return lines


def received(
    records: list[ReceivedEnvelope], snapshot: Snapshot, count: int
) -> list[dict[str, Any]]:
    """The envelopes the session's model calls received, with their lines and bytes.

    A line's age is in events: how many of the session's ``count`` came after its source.
    """
    sources = {
        item.text: item.event_id
        for section in SNAPSHOT_SECTIONS
        for item in getattr(snapshot, section)
    }
    return [
        {
            "at": record.at,
            "age": age(record.at),
            "receiver": record.receiver,
            "bytes": len(record.envelope.encode()),
            "lines": [
                {**line, "age": count - line["event_id"] if line["event_id"] else None}
                for line in envelope_lines(record.envelope, sources)
            ],
            "text": record.envelope,
        }
        for record in records
    ]


async def session_page(memory: Memory, root: str, number: int | None) -> dict[str, Any] | None:
    """A root session's timeline (one page of events) and what its next model call gets.

    None when the hot tier holds nothing of the session.
    """
    store = memory.backends.store
    count = await store.event_count(root)
    members = await store.session_members(root)
    if not count and not members:
        return None
    page = pager(number, EVENTS_PAGE_SIZE, count)
    events = await store.read_events(root, after_id=page.offset, limit=page.size)
    snapshot = await memory.snapshot(root)
    envelope = await memory.envelope(root)
    settings = memory.settings
    records = await store.received_envelopes(root)
    return {
        "received": received(records, snapshot, count),
        "root": root,
        "members": members,
        "events": [{"event": e, "compaction": compaction(e)} for e in events],
        "page": page,
        "envelope": envelope,
        "envelope_bytes": len(envelope.encode()),
        "budget_bytes": settings.envelope.budget_bytes,
        "snapshot_budget_bytes": settings.snapshot.budget_bytes,
        "lines": snapshot_lines(snapshot, count),
        "events_folded": snapshot.events_folded,
        "last_request": snapshot.last_request,
        "compaction_summary": snapshot.compaction_summary,
    }


# -- memory -------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryFilter:
    """What the memory page was asked for (each checked by the route)."""

    query: str = ""
    type: str = ""
    scope: str = ""
    topic: str = ""
    file: str = ""
    superseded: bool = False

    def keeps(self, observation: Observation) -> bool:
        """Whether an observation passes the type, topic and file filters."""
        if self.type and observation.type != self.type:
            return False
        if self.topic and self.topic.lower() not in observation.topic_key.lower():
            return False
        return not self.file or any(self.file.lower() in f.lower() for f in observation.files)


async def memory_page(memory: Memory, wanted: MemoryFilter, number: int) -> dict[str, Any]:
    """Observations (searched, or newest first) through the filters, one page."""
    observations = memory.observations
    scope = wanted.scope or None
    scores: dict[str, float] = {}
    if wanted.query:
        found = await observations.search(
            wanted.query,
            limit=SEARCH_LIMIT_MAX,
            scope=scope,  # type: ignore[arg-type]
            include_superseded=wanted.superseded,
        )
        scores = {o.id: score for o, score in found}
        listed = [o for o, _ in found]
    else:
        listed = await observations.listed(scope, current=not wanted.superseded)  # type: ignore[arg-type]
        listed.sort(key=lambda o: o.updated_at, reverse=True)
    kept = [o for o in listed if wanted.keeps(o)]
    page = pager(number, PAGE_SIZE, len(kept))
    shown = kept[page.offset : page.offset + page.size]
    return {
        "observations": [{"o": o, "score": scores.get(o.id)} for o in shown],
        "page": page,
        "filter": wanted,
        "types": OBSERVATION_TYPES,
        "scopes": SCOPES,
        "search_max": SEARCH_MAX_CHARS,
    }


def revision_diffs(observation: Observation) -> list[dict[str, Any]]:
    """Each revision, newest first, with the line diff that led from it to the next version."""
    versions: list[tuple[int, str, str, datetime]] = [
        (r.revision, r.title, r.content, r.updated_at) for r in observation.revisions
    ]
    versions.append(
        (observation.revision, observation.title, observation.content, observation.updated_at)
    )
    diffs = []
    for older, newer in zip(versions, versions[1:], strict=False):
        lines = difflib.unified_diff(
            f"{older[1]}\n{older[2]}".splitlines(),
            f"{newer[1]}\n{newer[2]}".splitlines(),
            f"revision {older[0]}",
            f"revision {newer[0]}",
            lineterm="",
        )
        diffs.append({"from": older[0], "to": newer[0], "when": newer[3], "lines": list(lines)})
    return list(reversed(diffs))


async def supersession_chain(memory: Memory, observation: Observation) -> list[Observation]:
    """The observations this one replaced and those that replaced it, oldest first."""
    everything = {o.id: o for o in await memory.observations.listed()}
    replaced_by = {o.superseded_by: o for o in everything.values() if o.superseded_by}
    chain = [observation]
    while chain[0].id in replaced_by and len(chain) < len(everything):
        chain.insert(0, replaced_by[chain[0].id])
    while chain[-1].superseded_by in everything and len(chain) <= len(everything):
        chain.append(everything[chain[-1].superseded_by])
    return chain if len(chain) > 1 else []


async def observation_page(memory: Memory, observation_id: str) -> dict[str, Any]:
    """One observation in full: revisions with their diffs and its supersession chain.

    Raises :class:`~plait.state.observations.UnknownObservation` for an unknown id.
    """
    observation = await memory.observations.get(observation_id)
    return {
        "o": observation,
        "diffs": revision_diffs(observation),
        "chain": await supersession_chain(memory, observation),
        "types": OBSERVATION_TYPES,
    }


# -- recall -------------------------------------------------------------------------------------
async def recall_page(memory: Memory, query: str) -> dict[str, Any]:
    """What long-term recall finds for a query, best first, and the observations it would add.

    Raises :class:`~plait.BackendUnavailable` when long-term memory does not answer in
    :data:`RECALL_TIMEOUT_S` seconds.
    """
    if not query:
        return {"query": "", "hits": [], "observations": [], "search_max": SEARCH_MAX_CHARS}
    try:
        hits = await asyncio.wait_for(memory.search(query, RECALL_LIMIT), RECALL_TIMEOUT_S)
    except TimeoutError:
        raise BackendUnavailable(
            f"long-term memory did not answer within {RECALL_TIMEOUT_S:.0f} s"
        ) from None
    observed = await memory.observations.search(query, limit=RECALL_LIMIT)
    return {
        "query": query,
        "hits": [{"hit": hit, "current": hit.is_current} for hit in hits],
        "observations": [{"o": o, "score": score} for o, score in observed],
        "search_max": SEARCH_MAX_CHARS,
    }


# -- the knowledge graph ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Placed:
    """An entity where the picture draws it, and how many of the listed facts touch it."""

    entity: GraphEntity
    x: float
    y: float
    degree: int


def placed_entities(picture: GraphPicture) -> list[Placed]:
    """The picture's entities on a circle, the most connected first (from the top, clockwise)."""
    degree: dict[str, int] = dict.fromkeys((e.uuid for e in picture.entities), 0)
    for fact in picture.facts:
        for end in (fact.source, fact.target):
            degree[end] = degree.get(end, 0) + 1
    ordered = sorted(picture.entities, key=lambda e: (-degree[e.uuid], e.name.lower()))
    count = max(len(ordered), 1)
    return [
        Placed(
            entity=entity,
            x=round(GRAPH_CENTRE + GRAPH_RADIUS * math.sin(2 * math.pi * n / count), 1),
            y=round(GRAPH_CENTRE - GRAPH_RADIUS * math.cos(2 * math.pi * n / count), 1),
            degree=degree[entity.uuid],
        )
        for n, entity in enumerate(ordered)
    ]


async def graph_page(memory: Memory, limit: int, entity: str) -> dict[str, Any]:
    """The project's knowledge graph, bounded: its newest facts drawn between their entities.

    ``entity``: show only the facts of this entity (its uuid). Raises
    :class:`~plait.BackendUnavailable` when long-term memory is not there or does not answer in
    :data:`RECALL_TIMEOUT_S` seconds.
    """
    if memory.background is None:
        raise BackendUnavailable("long-term memory is not available in this process")
    try:
        knowledge = await asyncio.wait_for(memory.background.knowledge(), RECALL_TIMEOUT_S)
        picture = await asyncio.wait_for(
            knowledge.picture(memory.group_id, limit), RECALL_TIMEOUT_S
        )
    except TimeoutError:
        raise BackendUnavailable(
            f"long-term memory did not answer within {RECALL_TIMEOUT_S:.0f} s"
        ) from None
    placed = placed_entities(picture)
    where = {p.entity.uuid: p for p in placed}
    facts = [
        {"fact": fact, "source": where[fact.source], "target": where[fact.target]}
        for fact in picture.facts
        if fact.source in where
        and fact.target in where
        and (not entity or entity in (fact.source, fact.target))
    ]
    return {
        "picture": picture,
        "placed": placed,
        "facts": facts,
        "entity": where.get(entity),
        "limit": limit,
        "size": 2 * GRAPH_CENTRE,
    }


# -- health -------------------------------------------------------------------------------------
def effective_settings(memory: Memory) -> list[dict[str, str]]:
    """Every setting's value (secrets redacted) and where it came from."""
    settings = memory.settings
    rows = []
    for key in known_keys():
        section, _, name = key.partition(".")
        value = getattr(getattr(settings, section), name) if name else getattr(settings, section)
        if isinstance(value, BaseModel):
            continue
        origin = origin_of(key, memory.project_dir, {})
        rows.append({"key": key, "value": shown_value(key, value), "origin": origin})
    return rows


async def health_page(memory: Memory, number: int) -> dict[str, Any]:
    """Hot tier, spool, queue, dead letters (one page), spend and the effective settings."""
    from plait.doctor import check_spend

    tier = memory.dispatch.supervisor.health()
    intake = memory.dispatch.intake
    letters = await memory.backends.store.list_dead(limit=DEAD_LETTERS_MAX)
    calls = intake.dead.list_dead_calls(limit=DEAD_CALLS_MAX) if intake is not None else []
    page = pager(number, PAGE_SIZE, len(letters))
    return {
        "tier": tier,
        "degraded": memory.degraded,
        "spool": intake.stats() if intake is not None else None,
        "dead_calls": calls[:DEAD_CALLS_SHOWN],
        "dead_calls_total": len(calls) if intake is not None else None,
        "queue_depth": await memory.backends.store.queue_depth(),
        "letters": letters[page.offset : page.offset + page.size],
        "letters_total": len(letters),
        "page": page,
        "spend": await check_spend(memory.backends),
        "settings": effective_settings(memory),
        "group_id": memory.group_id,
        "project_dir": memory.project_dir,
    }


__all__ = [
    "EVENTS_PAGE_SIZE",
    "GRAPH_LIMIT",
    "GRAPH_MAX",
    "PAGE_SIZE",
    "SEARCH_MAX_CHARS",
    "MemoryFilter",
    "Pager",
    "graph_page",
    "health_page",
    "memory_page",
    "observation_page",
    "recall_page",
    "session_page",
    "sessions_page",
]
