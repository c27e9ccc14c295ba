"""The hot tier on Redis 7+ (the embedded FalkorDB server included), with redis-py asyncio.

Keys, all under ``prefix`` (``plait:`` by default; plait gives each project its own,
``plait:{project key}:``, so two projects on one server never share a session):

========================  =====================================================================
``s:{root}:events``       list of event JSON; an event's id is its 1-based position, so append is
                          one RPUSH and ``read_events(after_id)`` one LRANGE
``s:{root}:envelope``     the newest composed envelope
``s:{root}:staged``       set while that envelope is fresh (not yet taken), taken with GETDEL
``s:{root}:call:{id}``    set when a host call's events were appended (replays append nothing)
``parent:{session}``      a child session's parent
``cache:{key}``           cache entries (SET EX)
``drain``                 the durable queue: a stream read through the ``drain`` consumer group
``drain:tries``           hash of entry id to delivery count
``dlq``                   dead letters: a stream, so they keep their order and can be replayed
========================  =====================================================================
Per-session keys expire ``session_ttl_seconds`` after the last write.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from plait.adapters.backends.redis_client import async_client, is_cluster_client, slot_prefix
from plait.adapters.backends.redis_errors import redis_errors, translated
from plait.state.base.errors import BackendUnavailable
from plait.state.events import SessionEvent, forgotten
from plait.state.ports import (
    ENVELOPES_KEPT,
    MEMBERS_MAX,
    DeadLetter,
    QueueEntry,
    ReceivedEnvelope,
    SessionSeen,
)

WITHDRAW_PAGE = 500
CONSUMER_GROUP = "drain"
# KEYS: the session's event list, the drain stream, the call's key, the group's sessions, the
# root's member sessions. ARGV: ttl, group ("" = do not enqueue), "1" when the call's key guards
# the append ("" = no call id), the root's id, how many member sessions follow, the member
# sessions, then the events. Returns the list length, from which the events' ids follow, or -1
# for a call already appended (whose key it touches: a write, so a WAIT after it also covers
# the first append).
APPEND_AND_ENQUEUE = """
if ARGV[3] ~= '' and not redis.call('SET', KEYS[3], '1', 'NX', 'EX', ARGV[1]) then
  redis.call('EXPIRE', KEYS[3], ARGV[1])
  return -1
end
local first_event = 6 + tonumber(ARGV[5])
local length = redis.call('RPUSH', KEYS[1], unpack(ARGV, first_event))
redis.call('EXPIRE', KEYS[1], ARGV[1])
local now = tonumber(redis.call('TIME')[1])
for i = 6, first_event - 1 do
  redis.call('ZADD', KEYS[5], now, ARGV[i])
end
redis.call('EXPIRE', KEYS[5], ARGV[1])
if ARGV[2] ~= '' then
  redis.call('ZADD', KEYS[4], now, ARGV[4])
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - tonumber(ARGV[1]))
  redis.call('EXPIRE', KEYS[4], ARGV[1])
  local first = length - #ARGV
  for i = first_event, #ARGV do
    redis.call('XADD', KEYS[2], '*', 'group', ARGV[2], 'event', ARGV[i], 'id', first + i)
  end
end
return length
"""


# KEYS: the session's staged flag, its current envelope, its received records. ARGV: the
# receiver ("" = keep no record), the record's time (ISO 8601), the records kept, the ttl.
# Returns {staged flag, current envelope}; the record is the envelope the call gets.
TAKE_ENVELOPE = """
local staged = redis.call('GETDEL', KEYS[1])
local current = redis.call('GET', KEYS[2])
if current and ARGV[1] ~= '' then
  redis.call('LPUSH', KEYS[3], cjson.encode({at = ARGV[2], receiver = ARGV[1], envelope = current}))
  redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[3]) - 1)
  redis.call('EXPIRE', KEYS[3], ARGV[4])
end
return {staged, current}
"""


def _decode(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def seen(member: Any, score: float) -> SessionSeen:
    """A sorted set's member and score (unix seconds) as a :class:`SessionSeen`."""
    return SessionSeen(session_id=_decode(member), last_seen=datetime.fromtimestamp(score, UTC))


def dump_event(event: SessionEvent) -> str:
    """Serialize an event for storage."""
    return event.model_dump_json()


def load_event(raw: Any, *, event_id: int | None = None) -> SessionEvent:
    """Parse a stored event, optionally giving it the id its position implies."""
    event = SessionEvent.model_validate_json(raw)
    return event if event_id is None else event.model_copy(update={"id": event_id})


class RedisHotStore:
    """:class:`~plait.state.ports.HotStore` on Redis."""

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        prefix: str = "plait:",
        session_ttl_seconds: int = 86_400,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 100,
    ) -> None:
        """Wrap an asyncio Redis client (``decode_responses`` may be either).

        On a cluster client every key goes under one hash tag (:func:`slot_prefix`). With
        ``wait_replicas`` an append returns only once that many replicas have it (``WAIT``, on
        the connection that wrote, within ``wait_timeout_ms``) and raises
        :class:`BackendUnavailable` otherwise: the write may then be on the primary alone, and a
        retry with the same call id appends nothing and waits again.
        """
        self.client = client
        self.prefix = slot_prefix(prefix, client)
        self.session_ttl_seconds = session_ttl_seconds
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = wait_timeout_ms
        self._group_ready = False

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> RedisHotStore:
        """Connect to ``url`` (``redis+cluster://`` for a cluster; connections are lazy)."""
        return cls(async_client(url), **kwargs)

    def _key(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    # -- event log ------------------------------------------------------------------------------
    @translated
    async def append_events(
        self,
        root_session_id: str,
        events: Sequence[SessionEvent],
        *,
        enqueue_group: str | None = None,
        call_id: str | None = None,
    ) -> list[SessionEvent]:
        """RPUSH the events (ids follow from the list length) and XADD them, in one script.

        With ``call_id`` the script first sets the call's key (NX): a call seen before appends
        nothing.
        """
        if not events:
            return []
        if enqueue_group is not None:
            await self._ensure_group()
        payloads = [
            dump_event(e.model_copy(update={"id": 0, "root_session_id": root_session_id}))
            for e in events
        ]
        members = list(dict.fromkeys(e.session_id or root_session_id for e in events))
        log = self._key("s", root_session_id, "events")
        length = await self._replicated(
            log,
            APPEND_AND_ENQUEUE,
            5,
            log,
            self._key("drain"),
            self._key("s", root_session_id, "call", call_id or ""),
            self._key("g", enqueue_group or "", "sessions"),
            self._key("s", root_session_id, "members"),
            self.session_ttl_seconds,
            enqueue_group or "",
            "1" if call_id else "",
            root_session_id,
            len(members),
            *members,
            *payloads,
        )
        if int(length) < 0:
            return []
        first = int(length) - len(events) + 1
        return [
            event.model_copy(update={"id": first + offset, "root_session_id": root_session_id})
            for offset, event in enumerate(events)
        ]

    async def _replicated(self, key: str, *script: Any) -> Any:
        """EVAL ``script`` (its keys in ``key``'s slot), then WAIT with ``wait_replicas``.

        The WAIT goes on the connection that wrote (a pipeline; on a cluster, to ``key``'s
        primary): WAIT counts what that connection wrote.
        """
        if not self.wait_replicas:
            return await self.client.eval(*script)
        client: Any = self.client
        target = {}
        if is_cluster_client(client):
            await client.initialize()  # the slots are known (once; lazy until the first command)
            target = {"target_nodes": client.get_node_from_key(key)}
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.eval(*script)
            pipe.execute_command("WAIT", self.wait_replicas, self.wait_timeout_ms, **target)
            result, confirmed = await pipe.execute()
        if int(confirmed) < self.wait_replicas:
            raise BackendUnavailable(
                f"{confirmed} of {self.wait_replicas} Redis replica(s) confirmed the write within "
                f"{self.wait_timeout_ms} ms (redis.wait_replicas); kept to be tried again"
            )
        return result

    @translated
    async def read_events(
        self, root_session_id: str, *, after_id: int = 0, limit: int | None = None
    ) -> list[SessionEvent]:
        """LRANGE from position ``after_id``."""
        stop = -1 if limit is None else after_id + limit - 1
        raw = await self.client.lrange(self._key("s", root_session_id, "events"), after_id, stop)
        return [load_event(item, event_id=after_id + i + 1) for i, item in enumerate(raw)]

    @translated
    async def event_count(self, root_session_id: str) -> int:
        """LLEN of the session's log."""
        return int(await self.client.llen(self._key("s", root_session_id, "events")))

    @translated
    async def forget_events(self, root_session_id: str, event_ids: Sequence[int]) -> int:
        """LSET each event's place to its blanked form (positions are ids: they stay)."""
        key = self._key("s", root_session_id, "events")
        found = 0
        for event_id in sorted(set(event_ids)):
            raw = await self.client.lindex(key, event_id - 1) if event_id > 0 else None
            if raw is None:
                continue
            await self.client.lset(key, event_id - 1, dump_event(forgotten(load_event(raw))))
            found += 1
        return found

    @translated
    async def list_sessions(
        self, group_id: str, *, offset: int = 0, limit: int = 50
    ) -> list[SessionSeen]:
        """ZREVRANGE of the group's sessions, dropping those past the TTL first."""
        key = self._key("g", group_id, "sessions")
        oldest = time.time() - self.session_ttl_seconds
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.zremrangebyscore(key, "-inf", oldest)
            pipe.zrevrange(key, offset, offset + limit - 1, withscores=True)
            _, found = await pipe.execute()
        return [seen(member, score) for member, score in found]

    @translated
    async def count_sessions(self, group_id: str) -> int:
        """ZCARD of the group's sessions."""
        return int(await self.client.zcard(self._key("g", group_id, "sessions")))

    @translated
    async def session_members(self, root_session_id: str) -> list[SessionSeen]:
        """ZREVRANGE of the root's member sessions."""
        key = self._key("s", root_session_id, "members")
        found: Any = await self.client.zrevrange(key, 0, MEMBERS_MAX - 1, withscores=True)
        return [seen(member, score) for member, score in found]

    # -- staged envelope -----------------------------------------------------------
    @translated
    async def stage_envelope(self, root_session_id: str, envelope: str) -> None:
        """SET the envelope as current and the staged flag."""
        ttl = self.session_ttl_seconds
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.set(self._key("s", root_session_id, "envelope"), envelope, ex=ttl)
            pipe.set(self._key("s", root_session_id, "staged"), 1, ex=ttl)
            await pipe.execute()

    @translated
    async def take_envelope(
        self, root_session_id: str, *, receiver: str = ""
    ) -> tuple[str | None, bool]:
        """GETDEL the staged flag, GET the current envelope and log it, in one script."""
        staged, current = await self.client.eval(
            TAKE_ENVELOPE,
            3,
            self._key("s", root_session_id, "staged"),
            self._key("s", root_session_id, "envelope"),
            self._key("s", root_session_id, "received"),
            receiver,
            datetime.now(UTC).isoformat(),
            ENVELOPES_KEPT,
            self.session_ttl_seconds,
        )
        if current is None:
            return None, False
        return _decode(current), staged is not None

    @translated
    async def log_envelope(self, root_session_id: str, envelope: str, receiver: str) -> None:
        """LPUSH the record, LTRIM to the newest ones, with the session TTL."""
        record = ReceivedEnvelope(at=datetime.now(UTC), receiver=receiver, envelope=envelope)
        key = self._key("s", root_session_id, "received")
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.lpush(key, record.model_dump_json())
            pipe.ltrim(key, 0, ENVELOPES_KEPT - 1)
            pipe.expire(key, self.session_ttl_seconds)
            await pipe.execute()

    @translated
    async def received_envelopes(self, root_session_id: str) -> list[ReceivedEnvelope]:
        """LRANGE of the records."""
        raw = await self.client.lrange(self._key("s", root_session_id, "received"), 0, -1)
        return [ReceivedEnvelope.model_validate_json(item) for item in raw]

    @translated
    async def forget_received(self, root_session_id: str) -> None:
        """DEL the records."""
        await self.client.delete(self._key("s", root_session_id, "received"))

    # -- cache ----------------------------------------------------------------------------------
    @translated
    async def put_cache(self, key: str, value: str, ttl_seconds: int) -> None:
        """SET EX."""
        await self.client.set(self._key("cache", key), value, ex=max(1, ttl_seconds))

    @translated
    async def drop_cache(self, keys: Sequence[str]) -> None:
        """DEL."""
        if keys:
            await self.client.delete(*(self._key("cache", key) for key in keys))

    @translated
    async def get_cache(self, key: str) -> str | None:
        """GET."""
        value = await self.client.get(self._key("cache", key))
        return None if value is None else _decode(value)

    # -- parents --------------------------------------------------------------------------------
    @translated
    async def set_parent(self, session_id: str, parent_id: str) -> None:
        """SET the parent link with the session TTL."""
        key = self._key("parent", session_id)
        await self.client.set(key, parent_id, ex=self.session_ttl_seconds)

    @translated
    async def get_parent(self, session_id: str) -> str | None:
        """GET the parent link."""
        value = await self.client.get(self._key("parent", session_id))
        return None if value is None else _decode(value)

    @translated
    async def claim_session(self, root_session_id: str, owner: str) -> str:
        """SET NX the owner, EXPIRE and GET it, in one transaction."""
        key, ttl = self._key("s", root_session_id, "owner"), self.session_ttl_seconds
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.set(key, owner, nx=True, ex=ttl)
            pipe.expire(key, ttl)
            pipe.get(key)
            *_, found = await pipe.execute()
        return _decode(found) if found is not None else owner

    @translated
    async def forget_session(self, session_id: str) -> None:
        """DEL the parent link only."""
        await self.client.delete(self._key("parent", session_id))

    # -- drain queue ----------------------------------------------------------------------------
    @translated
    async def adopt_queue(self, legacy_prefix: str) -> int:
        """Move what an older plait queued under ``legacy_prefix`` into this store's queue.

        Each entry keeps its group; returns how many moved. Nothing queued is lost on an upgrade.
        """
        old = legacy_prefix + "drain"
        if old == self._key("drain") or not await self.client.exists(old):
            return 0
        await self._ensure_group()
        moved = 0
        # redis-py types each reply as the union of every RESP shape: read it as Any.
        items: Any
        while items := await self.client.xrange(old, count=500):
            ids: list[Any] = [entry_id for entry_id, _ in items]
            entries: list[Any] = [fields for _, fields in items]
            async with self.client.pipeline(transaction=True) as pipe:
                for fields in entries:
                    pipe.xadd(self._key("drain"), fields)
                pipe.xdel(old, *ids)
                await pipe.execute()
            moved += len(items)
        return moved

    async def _ensure_group(self) -> None:
        if self._group_ready:
            return
        try:
            await self.client.xgroup_create(
                self._key("drain"), CONSUMER_GROUP, id="0", mkstream=True
            )
        except ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise
        self._group_ready = True

    @translated
    async def enqueue(self, group_id: str, events: Sequence[SessionEvent]) -> None:
        """XADD each event with its group."""
        if not events:
            return
        await self._ensure_group()
        async with self.client.pipeline(transaction=False) as pipe:
            for event in events:
                pipe.xadd(self._key("drain"), {"group": group_id, "event": dump_event(event)})
            await pipe.execute()

    @translated
    async def claim(
        self, consumer: str, *, count: int, min_idle_ms: int = 60_000
    ) -> list[QueueEntry]:
        """This consumer's unacked entries, then stale ones of others (XAUTOCLAIM), then new."""
        await self._ensure_group()
        stream = self._key("drain")
        messages: list[Any] = []
        # redis-py types each reply as the union of every RESP shape: read them as Any.
        own: Any = await self.client.xreadgroup(
            CONSUMER_GROUP, consumer, {stream: "0"}, count=count
        )
        for _, items in own or []:
            messages.extend(m for m in items if m and m[1])
        if len(messages) < count:
            claimed: Any = await self.client.xautoclaim(
                stream,
                CONSUMER_GROUP,
                consumer,
                min_idle_time=min_idle_ms,
                count=count - len(messages),
            )
            messages.extend(m for m in claimed[1] if m and m[1])
        if len(messages) < count:
            fresh: Any = await self.client.xreadgroup(
                CONSUMER_GROUP, consumer, {stream: ">"}, count=count - len(messages)
            )
            for _, items in fresh or []:
                messages.extend(items)
        return await self._count_deliveries(messages)

    async def _count_deliveries(self, messages: list[Any]) -> list[QueueEntry]:
        if not messages:
            return []
        tries = self._key("drain", "tries")
        async with self.client.pipeline(transaction=False) as pipe:
            for entry_id, _ in messages:
                pipe.hincrby(tries, entry_id, 1)
            counts = await pipe.execute()
        entries = []
        for (entry_id, fields), count in zip(messages, counts, strict=True):
            values = _fields(fields)
            event_id = int(_decode(values["id"])) if "id" in values else None
            entries.append(
                QueueEntry(
                    entry_id=_decode(entry_id),
                    group_id=_decode(values["group"]),
                    event=load_event(values["event"], event_id=event_id),
                    deliveries=int(count),
                )
            )
        return entries

    @translated
    async def ack(self, entries: Sequence[QueueEntry]) -> None:
        """XACK, XDEL and forget the delivery counts."""
        if not entries:
            return
        ids = [entry.entry_id for entry in entries]
        stream = self._key("drain")
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.xack(stream, CONSUMER_GROUP, *ids)
            pipe.xdel(stream, *ids)
            pipe.hdel(self._key("drain", "tries"), *ids)
            await pipe.execute()

    @translated
    async def withdraw(self, root_session_id: str, event_ids: Sequence[int] | None = None) -> int:
        """XRANGE the stream for the root's entries (of ``event_ids``), then XACK and XDEL them.

        A forget is rare, and the stream holds only what is not drained yet.
        """
        stream = self._key("drain")
        gone: list[str] = []
        start = "-"
        while True:
            page: Any = await self.client.xrange(stream, min=start, count=WITHDRAW_PAGE)
            for entry_id, fields in page or []:
                values = _fields(fields)
                if "event" in values:
                    event = load_event(values["event"])
                    number = int(values["id"]) if values.get("id") else event.id
                    wanted = event_ids is None or number in event_ids
                    if event.root_session_id == root_session_id and wanted:
                        gone.append(_decode(entry_id))
            if not page or len(page) < WITHDRAW_PAGE:
                break
            start = "(" + _decode(page[-1][0])
        if gone:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.xack(stream, CONSUMER_GROUP, *gone)
                pipe.xdel(stream, *gone)
                pipe.hdel(self._key("drain", "tries"), *gone)
                await pipe.execute()
        return len(gone)

    @translated
    async def peek(
        self, group_ids: Sequence[str], limit: int, after: str | None = None
    ) -> list[QueueEntry]:
        """XREVRANGE: the newest ``limit`` entries not yet drained (newer than ``after``)."""
        oldest = f"({after}" if after else "-"
        raw: Any = await self.client.xrevrange(self._key("drain"), min=oldest, count=limit)
        wanted = set(group_ids)
        entries = []
        for entry_id, fields in reversed(raw or []):
            values = _fields(fields)
            group_id = _decode(values.get("group", b""))
            if group_id in wanted and "event" in values:
                event_id = int(_decode(values["id"])) if "id" in values else None
                event = load_event(values["event"], event_id=event_id)
                entries.append(
                    QueueEntry(
                        entry_id=_decode(entry_id), group_id=group_id, event=event, deliveries=0
                    )
                )
        return entries

    @translated
    async def queue_depth(self) -> int:
        """XLEN: acked entries are deleted, so what remains is pending or new."""
        return int(await self.client.xlen(self._key("drain")))

    @translated
    async def oldest_queued(self) -> datetime | None:
        """The time of the first event in the stream (acked entries are deleted)."""
        first = await self.client.xrange(self._key("drain"), count=1)
        if not first:
            return None
        _, fields = first[0]
        return load_event((fields or {}).get(b"event")).time

    @translated
    async def dead_letter(self, entry: QueueEntry, reason: str) -> None:
        """XADD to the dead-letter stream and ack the entry, atomically."""
        record: dict[Any, Any] = {
            "group": entry.group_id,
            "event": dump_event(entry.event),
            "reason": reason[:2000],
            "attempts": str(entry.deliveries),
        }
        stream = self._key("drain")
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.xadd(self._key("dlq"), record)
            pipe.xack(stream, CONSUMER_GROUP, entry.entry_id)
            pipe.xdel(stream, entry.entry_id)
            pipe.hdel(self._key("drain", "tries"), entry.entry_id)
            await pipe.execute()

    @translated
    async def list_dead(self, limit: int = 100) -> list[DeadLetter]:
        """XRANGE of the dead-letter stream."""
        raw: Any = await self.client.xrange(self._key("dlq"), count=limit)
        return [_dead_letter(entry_id, fields) for entry_id, fields in raw]

    @translated
    async def replay_dead(self, dead_ids: Sequence[str] | None = None) -> int:
        """Put dead letters back on the queue with a fresh delivery count."""
        letters = await self._select_dead(dead_ids)
        await self._ensure_group()
        for letter in letters:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.xadd(
                    self._key("drain"),
                    {"group": letter.group_id, "event": dump_event(letter.event)},
                )
                pipe.xdel(self._key("dlq"), letter.dead_id)
                await pipe.execute()
        return len(letters)

    @translated
    async def drop_dead(self, dead_ids: Sequence[str] | None = None) -> int:
        """XDEL dead letters."""
        letters = await self._select_dead(dead_ids)
        if letters:
            await self.client.xdel(self._key("dlq"), *[letter.dead_id for letter in letters])
        return len(letters)

    async def _select_dead(self, dead_ids: Sequence[str] | None) -> list[DeadLetter]:
        letters = await self.list_dead(limit=1_000_000)
        if dead_ids is None:
            return letters
        wanted = set(dead_ids)
        return [letter for letter in letters if letter.dead_id in wanted]

    async def ping(self) -> None:
        """PING, translating failures into :class:`BackendUnavailable`."""
        with redis_errors("ping"):
            await self.client.ping()

    async def aclose(self) -> None:
        """Close the client's connections."""
        await self.client.aclose()


def _fields(fields: dict[Any, Any]) -> dict[str, Any]:
    return {_decode(key): value for key, value in fields.items()}


def _dead_letter(entry_id: Any, fields: dict[Any, Any]) -> DeadLetter:
    values = _fields(fields)
    return DeadLetter(
        dead_id=_decode(entry_id),
        group_id=_decode(values["group"]),
        event=load_event(values["event"]),
        reason=_decode(values["reason"]),
        attempts=int(_decode(values["attempts"])),
    )


__all__ = ["RedisHotStore", "dump_event", "load_event"]
