"""The small protocols through which nodes reach the outside world.

Adapters implement them: ``plait.adapters.backends.redis_store.RedisHotStore`` on any Redis 7+ (the
embedded FalkorDB server included) and
``plait.adapters.backends.memory_store.InMemoryHotStore``, which is
both the degraded-mode fallback and the reference implementation the contract tests run against.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from plait.state.events import SessionEvent


@dataclass(frozen=True, kw_only=True, slots=True)
class QueueEntry:
    """One event claimed from the durable drain queue."""

    entry_id: str
    group_id: str
    event: SessionEvent
    deliveries: int


@dataclass(frozen=True, kw_only=True, slots=True)
class DeadLetter:
    """An event that failed to drain ``drain_retry_max`` times, kept for a person to inspect."""

    dead_id: str
    group_id: str
    event: SessionEvent
    reason: str
    attempts: int


@runtime_checkable
class HotStore(Protocol):
    """The hot tier: everything hook-time work reads and writes."""

    # -- event log of a root session ------------------------------------------------------------
    async def append_events(
        self,
        root_session_id: str,
        events: Sequence[SessionEvent],
        *,
        enqueue_group: str | None = None,
    ) -> list[SessionEvent]:
        """Append events, assigning monotonic ids; return them as stored. O(1) per event.

        With ``enqueue_group`` the stored events also go onto the drain queue, atomically.
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

    # -- snapshot and staged envelope -----------------------------------------------------------
    async def put_snapshot(self, root_session_id: str, snapshot_json: str) -> None:
        """Store the serialized snapshot of a root session."""
        ...

    async def get_snapshot(self, root_session_id: str) -> str | None:
        """The serialized snapshot, or None."""
        ...

    async def stage_envelope(self, root_session_id: str, envelope: str) -> None:
        """Stage a freshly composed envelope; it also becomes the session's current one."""
        ...

    async def take_envelope(self, root_session_id: str) -> tuple[str | None, bool]:
        """The envelope for a model call and whether it was fresh.

        A staged envelope is returned and un-staged atomically (fresh); with none staged, the
        current one is returned again (a later model call of the same turn), or None.
        """
        ...

    # -- cache ----------------------------------------------------------------------------------
    async def put_cache(self, key: str, value: str, ttl_seconds: int) -> None:
        """Store a cache entry that expires after ``ttl_seconds``."""
        ...

    async def get_cache(self, key: str) -> str | None:
        """A live cache entry, or None."""
        ...

    # -- session-parent registry ----------------------------------------------------------------
    async def set_parent(self, session_id: str, parent_id: str) -> None:
        """Record that ``session_id`` is a child of ``parent_id``."""
        ...

    async def get_parent(self, session_id: str) -> str | None:
        """The recorded parent of a session, or None."""
        ...

    async def forget_session(self, session_id: str) -> None:
        """Drop a session's parent link (a deleted child). The root's state is untouched."""
        ...

    # -- durable drain queue --------------------------------------------------------------------
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

    async def queue_depth(self) -> int:
        """Entries not yet acknowledged (pending or never delivered)."""
        ...

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

    async def ping(self) -> None:
        """Raise if the store cannot be reached."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryHit:
    """One long-term memory search result: a fact (edge), an entity (node) or an episode."""

    uuid: str
    kind: str
    text: str
    score: float


@runtime_checkable
class KnowledgeGraph(Protocol):
    """Long-term memory: Graphiti on FalkorDB, or the in-memory reference."""

    async def write_episodes(self, group_id: str, events: Sequence[SessionEvent]) -> int:
        """Write events as episodes (idempotent by event id); return how many were new."""
        ...

    async def search(self, query: str, group_ids: Sequence[str], limit: int) -> list[MemoryHit]:
        """Hybrid search over facts, entities and episodes of the groups."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


__all__ = ["DeadLetter", "HotStore", "KnowledgeGraph", "MemoryHit", "QueueEntry"]
