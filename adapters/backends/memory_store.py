"""The hot tier in process memory: the degraded-mode fallback and the reference implementation.

It keeps the same semantics as
:class:`~plait.adapters.backends.redis_store.RedisHotStore` (ids by position, TTLs,
GETDEL-style take, consumer-group claims with redelivery of stale entries, dead letters), so one
contract suite runs over both.
"""

from __future__ import annotations

import itertools
import time
from collections import OrderedDict, defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from plait.state.events import SessionEvent, forgotten
from plait.state.ports import (
    ENVELOPES_KEPT,
    MEMBERS_MAX,
    DeadLetter,
    QueueEntry,
    ReceivedEnvelope,
    SessionSeen,
)


def _entry_number(entry_id: str) -> int:
    """The twin's entry ids count up (``"7-0"``): their order."""
    return int(entry_id.split("-", 1)[0])


@dataclass
class _Pending:
    consumer: str
    claimed_at: float
    deliveries: int


@dataclass
class _Expiring:
    value: str
    expires_at: float


@dataclass
class InMemoryHotStore:
    """:class:`~plait.state.ports.HotStore` in a dict; nothing survives the process."""

    session_ttl_seconds: int = 86_400
    clock: Callable[[], float] = time.monotonic
    _events: dict[str, list[SessionEvent]] = field(default_factory=lambda: defaultdict(list))
    _values: dict[str, _Expiring] = field(default_factory=dict)
    _queue: OrderedDict[str, tuple[str, SessionEvent]] = field(default_factory=OrderedDict)
    _pending: dict[str, _Pending] = field(default_factory=dict)
    _dead: OrderedDict[str, DeadLetter] = field(default_factory=OrderedDict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _sessions: dict[str, dict[str, tuple[float, datetime]]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    _members: dict[str, dict[str, datetime]] = field(default_factory=lambda: defaultdict(dict))
    _received: dict[str, deque[ReceivedEnvelope]] = field(
        default_factory=lambda: defaultdict(lambda: deque(maxlen=ENVELOPES_KEPT))
    )

    def _set(self, key: str, value: str, ttl_seconds: int) -> None:
        self._values[key] = _Expiring(value, self.clock() + ttl_seconds)

    def _get(self, key: str) -> str | None:
        item = self._values.get(key)
        if item is None:
            return None
        if item.expires_at <= self.clock():
            del self._values[key]
            return None
        return item.value

    # -- event log ------------------------------------------------------------------------------
    async def append_events(
        self,
        root_session_id: str,
        events: Sequence[SessionEvent],
        *,
        enqueue_group: str | None = None,
        call_id: str | None = None,
    ) -> list[SessionEvent]:
        """Append; an event's id is its 1-based position. Optionally enqueue them too.

        A call id already seen for the session appends nothing.
        """
        if not events:
            return []
        if call_id:
            key = f"call:{root_session_id}:{call_id}"
            if self._get(key) is not None:
                return []
            self._set(key, "1", self.session_ttl_seconds)
        log = self._events[root_session_id]
        stored = [
            event.model_copy(update={"id": len(log) + i + 1, "root_session_id": root_session_id})
            for i, event in enumerate(events)
        ]
        log.extend(stored)
        now = datetime.now(UTC)
        members = self._members[root_session_id]
        for event in events:
            members.pop(event.session_id or root_session_id, None)
            members[event.session_id or root_session_id] = now
        if enqueue_group is not None:
            self._sessions[enqueue_group].pop(root_session_id, None)
            self._sessions[enqueue_group][root_session_id] = (self.clock(), now)
            await self.enqueue(enqueue_group, stored)
        return stored

    async def read_events(
        self, root_session_id: str, *, after_id: int = 0, limit: int | None = None
    ) -> list[SessionEvent]:
        """Slice the log."""
        log = self._events.get(root_session_id, [])
        stop = None if limit is None else after_id + limit
        return log[after_id:stop]

    async def event_count(self, root_session_id: str) -> int:
        """Length of the log."""
        return len(self._events.get(root_session_id, []))

    async def forget_events(self, root_session_id: str, event_ids: Sequence[int]) -> int:
        """Blank each event in its place."""
        log = self._events.get(root_session_id, [])
        found = 0
        for event_id in set(event_ids):
            if 0 < event_id <= len(log):
                log[event_id - 1] = forgotten(log[event_id - 1])
                found += 1
        return found

    async def list_sessions(
        self, group_id: str, *, offset: int = 0, limit: int = 50
    ) -> list[SessionSeen]:
        """The group's roots by last write, dropping those past the TTL first."""
        sessions = self._sessions[group_id]
        oldest = self.clock() - self.session_ttl_seconds
        for root in [root for root, (at, _) in sessions.items() if at <= oldest]:
            del sessions[root]
        newest = list(reversed(sessions.items()))[offset : offset + limit]
        return [SessionSeen(session_id=root, last_seen=wall) for root, (_, wall) in newest]

    async def count_sessions(self, group_id: str) -> int:
        """How many roots the group holds."""
        return len(self._sessions.get(group_id, {}))

    async def session_members(self, root_session_id: str) -> list[SessionSeen]:
        """The root's member sessions by last write."""
        members = reversed(self._members.get(root_session_id, {}).items())
        found = [SessionSeen(session_id=s, last_seen=wall) for s, wall in members]
        return found[:MEMBERS_MAX]

    # -- staged envelope -----------------------------------------------------------
    async def stage_envelope(self, root_session_id: str, envelope: str) -> None:
        """Current envelope and staged flag, with the session TTL."""
        self._set(f"envelope:{root_session_id}", envelope, self.session_ttl_seconds)
        self._set(f"staged:{root_session_id}", "1", self.session_ttl_seconds)

    async def take_envelope(
        self, root_session_id: str, *, receiver: str = ""
    ) -> tuple[str | None, bool]:
        """The current envelope, fresh if it was staged (the flag is cleared), logged."""
        fresh = self._get(f"staged:{root_session_id}") is not None
        self._values.pop(f"staged:{root_session_id}", None)
        current = self._get(f"envelope:{root_session_id}")
        if current is not None and receiver:
            await self.log_envelope(root_session_id, current, receiver)
        return current, fresh

    async def log_envelope(self, root_session_id: str, envelope: str, receiver: str) -> None:
        """Keep the record; the oldest beyond the newest ones goes."""
        record = ReceivedEnvelope(at=datetime.now(UTC), receiver=receiver, envelope=envelope)
        self._received[root_session_id].appendleft(record)

    async def received_envelopes(self, root_session_id: str) -> list[ReceivedEnvelope]:
        """The records, newest first."""
        return list(self._received.get(root_session_id, ()))

    async def forget_received(self, root_session_id: str) -> None:
        """Drop the records."""
        self._received.pop(root_session_id, None)

    # -- cache ----------------------------------------------------------------------------------
    async def put_cache(self, key: str, value: str, ttl_seconds: int) -> None:
        """Store until the TTL passes."""
        self._set(f"cache:{key}", value, max(1, ttl_seconds))

    async def get_cache(self, key: str) -> str | None:
        """The live entry."""
        return self._get(f"cache:{key}")

    async def drop_cache(self, keys: Sequence[str]) -> None:
        """Forget the entries."""
        for key in keys:
            self._values.pop(f"cache:{key}", None)

    # -- parents --------------------------------------------------------------------------------
    async def set_parent(self, session_id: str, parent_id: str) -> None:
        """Record the link."""
        self._set(f"parent:{session_id}", parent_id, self.session_ttl_seconds)

    async def get_parent(self, session_id: str) -> str | None:
        """The live link."""
        return self._get(f"parent:{session_id}")

    async def claim_session(self, root_session_id: str, owner: str) -> str:
        """Bind unless bound; the live binding's owner."""
        key = f"owner:{root_session_id}"
        found = self._get(key)
        owner = owner if found is None else found
        self._set(key, owner, self.session_ttl_seconds)
        return owner

    async def forget_session(self, session_id: str) -> None:
        """Drop the link only."""
        self._values.pop(f"parent:{session_id}", None)

    # -- drain queue ----------------------------------------------------------------------------
    async def enqueue(self, group_id: str, events: Sequence[SessionEvent]) -> None:
        """Append to the queue."""
        for event in events:
            self._queue[f"{next(self._ids)}-0"] = (group_id, event)

    async def claim(
        self, consumer: str, *, count: int, min_idle_ms: int = 60_000
    ) -> list[QueueEntry]:
        """This consumer's unacked entries, then stale ones of others, then never-delivered."""
        now = self.clock()
        own = [e for e, p in self._pending.items() if p.consumer == consumer]
        stale = [
            entry_id
            for entry_id, pending in self._pending.items()
            if pending.consumer != consumer and (now - pending.claimed_at) * 1000 >= min_idle_ms
        ]
        fresh = [entry_id for entry_id in self._queue if entry_id not in self._pending]
        chosen = (own + stale + fresh)[:count]
        claimed = []
        for entry_id in chosen:
            previous = self._pending.get(entry_id)
            deliveries = (previous.deliveries if previous else 0) + 1
            self._pending[entry_id] = _Pending(consumer, now, deliveries)
            group_id, event = self._queue[entry_id]
            claimed.append(
                QueueEntry(entry_id=entry_id, group_id=group_id, event=event, deliveries=deliveries)
            )
        return claimed

    async def ack(self, entries: Sequence[QueueEntry]) -> None:
        """Forget the entries."""
        for entry in entries:
            self._queue.pop(entry.entry_id, None)
            self._pending.pop(entry.entry_id, None)

    async def peek(
        self, group_ids: Sequence[str], limit: int, after: str | None = None
    ) -> list[QueueEntry]:
        """The newest ``limit`` entries not yet drained (newer than ``after``), oldest first."""
        wanted = set(group_ids)
        since = _entry_number(after) if after else 0
        later = [item for item in self._queue.items() if _entry_number(item[0]) > since]
        newest = later[-limit:] if limit > 0 else []
        return [
            QueueEntry(entry_id=entry_id, group_id=group_id, event=event, deliveries=0)
            for entry_id, (group_id, event) in newest
            if group_id in wanted
        ]

    async def withdraw(self, root_session_id: str, event_ids: Sequence[int] | None = None) -> int:
        """Drop the root's entries (of ``event_ids``), claimed or not."""
        queued = self._queue.items()
        gone = [
            e
            for e, (_, event) in queued
            if event.root_session_id == root_session_id
            and (event_ids is None or event.id in event_ids)
        ]
        for entry_id in gone:
            self._queue.pop(entry_id, None)
            self._pending.pop(entry_id, None)
        return len(gone)

    async def queue_depth(self) -> int:
        """Entries not yet acknowledged."""
        return len(self._queue)

    async def oldest_queued(self) -> datetime | None:
        """The time of the oldest queued event."""
        return min((event.time for _, event in self._queue.values()), default=None)

    async def dead_letter(self, entry: QueueEntry, reason: str) -> None:
        """Move to the dead letters."""
        dead_id = f"{next(self._ids)}-0"
        self._dead[dead_id] = DeadLetter(
            dead_id=dead_id,
            group_id=entry.group_id,
            event=entry.event,
            reason=reason[:2000],
            attempts=entry.deliveries,
        )
        await self.ack([entry])

    async def list_dead(self, limit: int = 100) -> list[DeadLetter]:
        """Oldest first."""
        return list(self._dead.values())[:limit]

    async def replay_dead(self, dead_ids: Sequence[str] | None = None) -> int:
        """Back onto the queue."""
        chosen = self._chosen_dead(dead_ids)
        for dead_id in chosen:
            letter = self._dead.pop(dead_id)
            await self.enqueue(letter.group_id, [letter.event])
        return len(chosen)

    async def drop_dead(self, dead_ids: Sequence[str] | None = None) -> int:
        """Delete."""
        chosen = self._chosen_dead(dead_ids)
        for dead_id in chosen:
            del self._dead[dead_id]
        return len(chosen)

    def _chosen_dead(self, dead_ids: Sequence[str] | None) -> list[str]:
        if dead_ids is None:
            return list(self._dead)
        return [dead_id for dead_id in dead_ids if dead_id in self._dead]

    async def ping(self) -> None:
        """Always reachable."""

    async def aclose(self) -> None:
        """Nothing to release."""


__all__ = ["InMemoryHotStore"]
