"""The ports: small protocols, one per concern, through which nodes reach the outside world.

Backends implement them (:mod:`plait.adapters.backends`): the Redis hot store implements every
hot-tier port at once, so does its in-memory twin, and one contract suite runs over both
(``tests/contracts/test_hot_store_contract.py``); the knowledge graph and the corpus have theirs. A
node
asks the run context for the one port it needs (``runtime.context.events``, ``.queue`` …), so it
can do nothing else.

The values that cross the ports live here too: :class:`QueueEntry`, :class:`DeadLetter` and
:class:`MemoryHit`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from plait.state.events import SessionEvent


class QueueEntry(BaseModel):
    """One event claimed from the durable drain queue (also the drain graph's checkpointed form)."""

    model_config = ConfigDict(frozen=True)

    entry_id: str
    group_id: str
    event: SessionEvent
    deliveries: int


class DeadLetter(BaseModel):
    """An event that failed to drain ``drain_retry_max`` times, kept for a person to inspect."""

    model_config = ConfigDict(frozen=True)

    dead_id: str
    group_id: str
    event: SessionEvent
    reason: str
    attempts: int


class SessionSeen(BaseModel):
    """A session the event log holds: its id and when it last recorded an event."""

    session_id: str
    last_seen: datetime


class ReceivedEnvelope(BaseModel):
    """An envelope a model call (or a compaction's summarizer) received, and when."""

    at: datetime
    receiver: str = Field(description="``model call`` or ``compaction``.")
    envelope: str


def still_true(invalid_at: datetime | None) -> bool:
    """Whether something that stops being true at ``invalid_at`` (None: never) still is."""
    return invalid_at is None or invalid_at > datetime.now(UTC)


class MemoryHit(BaseModel):
    """One long-term memory search result: a fact (edge), an entity (node) or an episode.

    ``valid_at``/``invalid_at`` are a fact's validity window (an invalidated fact, or an episode
    all of whose facts ended, is no longer current); ``episodes`` are the episodes it came from.
    """

    model_config = ConfigDict(frozen=True)

    uuid: str
    kind: str
    text: str
    score: float
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    group_id: str = ""
    episodes: tuple[str, ...] = ()
    # what a recall-index turn's score is made of (words, vectors, time, neighbours)
    parts: dict[str, float] = Field(default_factory=dict)

    @property
    def is_current(self) -> bool:
        """Not invalidated (an ``invalid_at`` in the future still counts as current)."""
        return still_true(self.invalid_at)

    @property
    def tie_rank(self) -> int:
        """Order among equal scores: facts first, then entities, then episodes."""
        return HIT_KIND_ORDER.get(self.kind, len(HIT_KIND_ORDER))


HIT_KIND_ORDER = {"fact": 0, "preference": 0, "entity": 1, "episode": 2}


MEMBERS_MAX = 500
ENVELOPES_KEPT = 20
EPISODE_NAMESPACE = uuid.UUID("5b0c1d3e-7a4f-4c1e-9a57-3f1f6d2c8e10")


def episode_uuid(group_id: str, event: SessionEvent) -> str:
    """The episode of one event: the same event always maps to the same uuid (no duplicates)."""
    return event_uuid(group_id, event.root_session_id, event.id)


def event_uuid(group_id: str, root_session_id: str, event_id: int | None) -> str:
    """:func:`episode_uuid` from the event's parts (what forgetting an event needs)."""
    return str(uuid.uuid5(EPISODE_NAMESPACE, f"{group_id}/{root_session_id}/{event_id}"))


# -- the hot tier, by concern -------------------------------------------------------------------
class EventLog(Protocol):
    """A root session's append-only event log."""

    async def append_events(
        self,
        root_session_id: str,
        events: Sequence[SessionEvent],
        *,
        enqueue_group: str | None = None,
        call_id: str | None = None,
    ) -> list[SessionEvent]:
        """Append events, assigning monotonic ids; return them as stored. O(1) per event.

        With ``enqueue_group`` the stored events also go onto the drain queue, atomically.
        With ``call_id`` (the host's id of the call that made them) the append happens once
        per root session and call: a replay of the call appends nothing and returns ``[]``
        (the call is remembered for the session's TTL).
        """
        ...

    async def read_events(
        self, root_session_id: str, *, after_id: int = 0, limit: int | None = None
    ) -> list[SessionEvent]:
        """Events with ``id > after_id``, oldest first, at most ``limit``."""
        ...

    async def event_count(self, root_session_id: str) -> int:
        """How many events the session's log holds."""
        ...

    async def forget_events(self, root_session_id: str, event_ids: Sequence[int]) -> int:
        """Blank these events in the log (a person forgot them); how many there were.

        Each keeps its place and id (readers that remember an id stay right); its text goes
        (:func:`plait.state.events.forgotten`).
        """
        ...

    async def list_sessions(
        self, group_id: str, *, offset: int = 0, limit: int = 50
    ) -> list[SessionSeen]:
        """Root sessions that recorded events for ``group_id``, newest first.

        A session is listed once it recorded with ``enqueue_group``; past the session TTL it
        drops out.
        """
        ...

    async def count_sessions(self, group_id: str) -> int:
        """How many root sessions :meth:`list_sessions` holds for ``group_id``."""
        ...

    async def session_members(self, root_session_id: str) -> list[SessionSeen]:
        """The sessions that recorded into a root's log (the root, its subagents), newest first.

        At most :data:`MEMBERS_MAX` of them.
        """
        ...


class EnvelopeStage(Protocol):
    """The envelope composed for a session's next model call."""

    async def stage_envelope(self, root_session_id: str, envelope: str) -> None:
        """Stage a freshly composed envelope; it also becomes the session's current one."""
        ...

    async def take_envelope(
        self, root_session_id: str, *, receiver: str = ""
    ) -> tuple[str | None, bool]:
        """The envelope for a model call and whether it was fresh.

        A staged envelope is returned and un-staged atomically (fresh); with none staged, the
        current one is returned again (a later model call of the same turn), or None. With
        ``receiver`` the envelope returned is also logged as received by it
        (:meth:`log_envelope`), in the same round trip.
        """
        ...

    async def log_envelope(self, root_session_id: str, envelope: str, receiver: str) -> None:
        """Keep an envelope a model call received: the newest :data:`ENVELOPES_KEPT` stay."""
        ...

    async def received_envelopes(self, root_session_id: str) -> list[ReceivedEnvelope]:
        """The envelopes the session's model calls received, newest first."""
        ...

    async def forget_received(self, root_session_id: str) -> None:
        """Drop the record of what the session's model calls received (it held forgotten text)."""
        ...


class Cache(Protocol):
    """Expiring entries: cached recall, which messages a host already recorded."""

    async def put_cache(self, key: str, value: str, ttl_seconds: int) -> None:
        """Store a cache entry that expires after ``ttl_seconds``."""
        ...

    async def drop_cache(self, keys: Sequence[str]) -> None:
        """Delete the values under ``keys`` (forgotten memory must not be served from a cache)."""
        ...

    async def get_cache(self, key: str) -> str | None:
        """A live cache entry, or None."""
        ...


class SessionLinks(Protocol):
    """Which session is a child of which (subagents write into their root)."""

    async def set_parent(self, session_id: str, parent_id: str) -> None:
        """Record that ``session_id`` is a child of ``parent_id``."""
        ...

    async def get_parent(self, session_id: str) -> str | None:
        """The recorded parent of a session, or None."""
        ...

    async def forget_session(self, session_id: str) -> None:
        """Drop a session's parent link (a deleted child). The root's state is untouched."""
        ...

    async def claim_session(self, root_session_id: str, owner: str) -> str:
        """Bind a root session to ``owner`` unless it is bound already; whom it is bound to.

        The binding lives as long as the session's other keys (its TTL starts again here).
        """
        ...


class DrainQueue(Protocol):
    """The durable queue of events waiting to drain into the knowledge graph."""

    async def enqueue(self, group_id: str, events: Sequence[SessionEvent]) -> None:
        """Add recorded events to the drain queue."""
        ...

    async def claim(
        self, consumer: str, *, count: int, min_idle_ms: int = 60_000
    ) -> list[QueueEntry]:
        """Claim up to ``count`` entries.

        This consumer's unacked ones first (a restart resumes them),
        then stale ones of dead consumers (idle ``min_idle_ms``), then new ones.
        """
        ...

    async def ack(self, entries: Sequence[QueueEntry]) -> None:
        """Mark entries as drained."""
        ...

    async def peek(
        self, group_ids: Sequence[str], limit: int, after: str | None = None
    ) -> list[QueueEntry]:
        """Entries not yet drained, of the groups, among the newest ``limit``; oldest first.

        With ``after`` (an entry id), only entries newer than it. Nothing is claimed: a search
        reads what is still queued (``deliveries`` is 0).
        """
        ...

    async def withdraw(self, root_session_id: str, event_ids: Sequence[int] | None = None) -> int:
        """Take one root's events out of the queue, claimed or not; how many there were.

        With ``event_ids`` only those events go.
        """
        ...

    async def queue_depth(self) -> int:
        """Entries not yet acknowledged (pending or never delivered)."""
        ...

    async def oldest_queued(self) -> datetime | None:
        """When the oldest event still in the queue happened (None when the queue is empty)."""
        ...


class DeadLetters(Protocol):
    """Events that failed to drain, where a person can list, replay or drop them."""

    async def dead_letter(self, entry: QueueEntry, reason: str) -> None:
        """Move an entry to the dead-letter list with the reason (and ack it in the queue)."""
        ...

    async def list_dead(self, limit: int = 100) -> list[DeadLetter]:
        """Dead letters, oldest first."""
        ...

    async def replay_dead(self, dead_ids: Sequence[str] | None = None) -> int:
        """Put dead letters back on the queue (all when ``dead_ids`` is None); return how many."""
        ...

    async def drop_dead(self, dead_ids: Sequence[str] | None = None) -> int:
        """Delete dead letters (all when ``dead_ids`` is None); return how many."""
        ...


@runtime_checkable
class HotStore(EventLog, EnvelopeStage, Cache, SessionLinks, DrainQueue, DeadLetters, Protocol):
    """The whole hot tier, as one backend implements it (Redis, or its in-memory twin)."""

    async def ping(self) -> None:
        """Raise :class:`~plait.BackendUnavailable` if the store cannot be reached."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


# -- the spool: host calls kept on local disk while the hot tier cannot take them ---------------
CallBody = dict[str, Any]  # a host call's JSON form (HostCall.replay), as the spool keeps it


class SpooledCall(BaseModel):
    """A host call plait accepted and keeps until it has run (its events are in the hot tier).

    ``seq`` orders the calls of one spool; ``lane`` is the session the call is about (calls of
    one lane run in order); ``call`` is the call's JSON form (:attr:`HostCall.replay`), which
    the ``host``'s adapter builds the call from again; ``member`` the team member it is for
    (:attr:`HostCall.member`).
    """

    model_config = ConfigDict(frozen=True)

    seq: int
    call_id: str
    lane: str
    host: str
    call: CallBody
    accepted_at: datetime
    member: str | None = None


DEAD_REASON_MAX = 2000


# How long a dead call is kept for a person to list, replay or drop (then it expires: the payload
# it holds does not stay on disk for ever).
DEAD_CALL_DAYS = 14


class DeadCall(BaseModel):
    """A host call plait cannot run (bad payload, or failing again and again), kept with why."""

    model_config = ConfigDict(frozen=True)

    dead_id: str
    call_id: str
    host: str
    call: dict[str, Any]
    reason: str
    dead_at: datetime
    member: str | None = None  # the team member whose call it was (a replay runs as them)

    @classmethod
    def now(
        cls,
        *,
        dead_id: str,
        call_id: str,
        host: str,
        call: dict[str, Any],
        reason: str,
        member: str | None = None,
    ) -> DeadCall:
        """A call dead-lettered now, its reason cut to :data:`DEAD_REASON_MAX` characters."""
        return cls(
            dead_id=dead_id,
            call_id=call_id,
            host=host,
            call=call,
            reason=reason[:DEAD_REASON_MAX],
            dead_at=datetime.now(UTC),
            member=member,
        )


class SpoolStats(BaseModel):
    """How much the spool holds: calls waiting, since when, bytes on disk."""

    model_config = ConfigDict(frozen=True)

    pending: int = 0
    oldest: datetime | None = None
    bytes: int = 0


@runtime_checkable
class CallSpool(Protocol):
    """Host calls on local disk, in order, until they have run. Synchronous: appends are small.

    Each process has a spool of its own; one left by a process that ended (or written by
    ``plait dlq replay``) is adopted by the next that looks.
    """

    def append(
        self, *, call_id: str, lane: str, host: str, call: CallBody, member: str | None = None
    ) -> SpooledCall:
        """Keep one call; it is durable when this returns (it survives the process)."""
        ...

    def done(self, seq: int) -> None:
        """The call ran: forget it."""
        ...

    def pending(self) -> list[SpooledCall]:
        """The calls not done yet, oldest first."""
        ...

    def adopt(self, settled_s: float = 0.0) -> list[SpooledCall]:
        """Take over the calls of spools no process holds; they are this spool's now.

        With ``settled_s``, only a spool last written more than that long ago (a replica that
        stopped may be back within it and take its own, in order); a replayed file at once.
        """
        ...

    def stats(self) -> SpoolStats:
        """How much is waiting."""
        ...

    def sync(self) -> None:
        """Flush what was appended to the disk itself (a power cut then loses nothing)."""
        ...

    def close(self) -> None:
        """Release the spool (what is pending stays on disk for the next process)."""
        ...


@runtime_checkable
class DeadCalls(Protocol):
    """Host calls that cannot run, where a person can list, replay or drop them."""

    def dead_letter_call(
        self, *, call_id: str, host: str, call: CallBody, reason: str, member: str | None = None
    ) -> DeadCall:
        """Keep a call that cannot run, with the reason (and whose it was: a replay is theirs)."""
        ...

    def list_dead_calls(self, limit: int = 100) -> list[DeadCall]:
        """Dead calls, oldest first."""
        ...

    def replay_dead_calls(self, dead_ids: Sequence[str] | None = None) -> int:
        """Put dead calls back into the spool (all when None); how many."""
        ...

    def drop_dead_calls(self, dead_ids: Sequence[str] | None = None) -> int:
        """Delete dead calls (all when None); how many."""
        ...

    def expire_dead_calls(self) -> int:
        """Delete the dead calls kept past their time (``DEAD_CALL_DAYS``); how many."""
        ...


# -- long-term memory ---------------------------------------------------------------------------
class GraphEntity(BaseModel):
    """An entity of the knowledge graph (a project, file, library, person, topic …)."""

    model_config = ConfigDict(frozen=True)

    uuid: str
    name: str
    summary: str = ""


class GraphFact(BaseModel):
    """A fact between two entities, with when it held (``invalid_at``: no longer true)."""

    model_config = ConfigDict(frozen=True)

    uuid: str
    name: str
    fact: str
    source: str
    target: str
    valid_at: datetime | None = None
    invalid_at: datetime | None = None

    @property
    def is_current(self) -> bool:
        """Not invalidated (an ``invalid_at`` in the future still counts as current)."""
        return still_true(self.invalid_at)


class GraphPicture(BaseModel):
    """A bounded part of a group's knowledge graph to draw: its newest facts, their entities.

    ``entities`` holds every end of a listed fact (and entities with no fact, while the bound
    allows); the totals say how much of the graph the picture leaves out.
    """

    model_config = ConfigDict(frozen=True)

    entities: tuple[GraphEntity, ...] = ()
    facts: tuple[GraphFact, ...] = ()
    total_entities: int = 0
    total_facts: int = 0
    episodes: int = 0


@runtime_checkable
class KnowledgeGraph(Protocol):
    """Long-term memory: Graphiti on FalkorDB, or its in-memory twin."""

    async def write_episodes(self, group_id: str, events: Sequence[SessionEvent]) -> int:
        """Write events as episodes (idempotent by event id); return how many were new."""
        ...

    async def search(self, query: str, group_ids: Sequence[str], limit: int) -> list[MemoryHit]:
        """Search facts, entities and episodes of the groups, best first, at most ``limit``."""
        ...

    async def forget_episodes(self, group_id: str, episode_uuids: Sequence[str]) -> int:
        """Remove these episodes and the facts and entities only they support; how many went.

        An uuid the group does not hold is passed over.
        """
        ...

    async def picture(self, group_id: str, limit: int) -> GraphPicture:
        """The group's newest ``limit`` facts and their entities, and how big the graph is."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


__all__ = [
    "DEAD_CALL_DAYS",
    "GraphEntity",
    "GraphFact",
    "GraphPicture",
    "Cache",
    "CallSpool",
    "DeadCall",
    "DeadCalls",
    "DeadLetter",
    "DeadLetters",
    "DrainQueue",
    "ENVELOPES_KEPT",
    "EnvelopeStage",
    "EventLog",
    "HotStore",
    "KnowledgeGraph",
    "MEMBERS_MAX",
    "MemoryHit",
    "QueueEntry",
    "ReceivedEnvelope",
    "SessionLinks",
    "SessionSeen",
    "SpoolStats",
    "SpooledCall",
    "episode_uuid",
    "event_uuid",
]
