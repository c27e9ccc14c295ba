"""The run-scoped context every plait graph gets through ``Runtime[PlaitContext]``."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, Self

from plait.state.base.settings import Settings
from plait.state.observations import ObservationRecall
from plait.state.ports import (
    Cache,
    DeadLetters,
    DrainQueue,
    EnvelopeStage,
    EventLog,
    HotStore,
    KnowledgeGraph,
    SessionLinks,
)
from plait.state.recall import TextEmbedder, TurnSearch


class Scheduler(Protocol):
    """Background work a hook may ask for; it never waits for it."""

    def schedule_drain(self, group_id: str) -> None:
        """Drain the queue soon."""
        ...

    def schedule_refresh(self, group_id: str, root_session_id: str, query: str) -> None:
        """Search long-term memory for ``query`` soon and cache the result."""
        ...

    def schedule_summary(self, group_id: str, root_session_id: str) -> None:
        """Write the session's summary observation soon (from its event log)."""
        ...


class NoScheduler:
    """A scheduler that does nothing (a worker process drains instead)."""

    def schedule_drain(self, group_id: str) -> None:
        """Do nothing."""

    def schedule_refresh(self, group_id: str, root_session_id: str, query: str) -> None:
        """Do nothing."""

    def schedule_summary(self, group_id: str, root_session_id: str) -> None:
        """Do nothing."""


def utc_now() -> datetime:
    """The current time, timezone-aware."""
    return datetime.now(UTC)


class QueueMark:
    """The newest drain-queue entry each group's searches indexed already, in this process.

    A search indexes what is still queued so it can be found at once; with the mark it reads
    only what was queued since, not the same entries again at every search.
    """

    def __init__(self) -> None:
        self.newest: dict[str, str] = {}


@dataclass(frozen=True, kw_only=True)
class PlaitContext:
    """The ports, settings, scheduler and clock of one graph run.

    Each port is its own field, so a node names the one concern it touches; one hot store
    usually serves them all (:meth:`over`). ``knowledge``, ``recall`` (the recall index) and
    ``embedder`` are only set for the background graphs (drain, cache refresh): hook-time graphs
    never get a way to reach Graphiti, the index or a model. ``observations`` is what the cache
    refresh adds to its recall (the project's saved observations). ``project_dir`` is the
    project's root directory: captured paths under it are kept relative to it (None: paths are
    kept as the host sent them).
    """

    events: EventLog
    stage: EnvelopeStage
    cache: Cache
    sessions: SessionLinks
    queue: DrainQueue
    dead_letters: DeadLetters
    settings: Settings
    group_id: str
    scheduler: Scheduler = field(default_factory=NoScheduler)
    knowledge: KnowledgeGraph | None = None
    project_dir: Path | None = None
    observations: ObservationRecall | None = None
    recall: TurnSearch | None = None
    embedder: TextEmbedder | None = None
    clock: Callable[[], datetime] = utc_now
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    queue_mark: QueueMark = field(default_factory=QueueMark)
    # entry id -> how often the graph's server, the hot tier's, went down while a write holding
    # the entry was under way (:func:`plait.nodes.drain.strike_if_the_server_died`); kept in the
    # process's memory, which outlives the server
    graph_strikes: Counter[str] = field(default_factory=Counter)

    @classmethod
    def over(cls, store: HotStore, *, settings: Settings, group_id: str, **rest: Any) -> Self:
        """A context whose hot-tier ports are all served by ``store``."""
        return cls(
            events=store,
            stage=store,
            cache=store,
            sessions=store,
            queue=store,
            dead_letters=store,
            settings=settings,
            group_id=group_id,
            **rest,
        )


__all__ = ["NoScheduler", "PlaitContext", "QueueMark", "Scheduler", "utc_now"]
