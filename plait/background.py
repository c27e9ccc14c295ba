"""Background work of a plait process: the drain loop and cache refreshes, off the hot path.

The process holding :class:`plait.Memory` (the demo, ``plait serve``) runs these itself;
``plait worker`` runs the same loops as a separate process. Several workers share the queue
through the Redis Streams consumer group, each under its own consumer name.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph

from plait.adapters.checkpoint import plait_serializer
from plait.graphs.cache_refresh import build_cache_refresh_graph
from plait.graphs.drain import build_drain_graph
from plait.nodes.ports import HotStore, KnowledgeGraph
from plait.settings import Settings
from plait.state.context import PlaitContext
from plait.state.hooks import CachedRecall

logger = logging.getLogger("plait")

KnowledgeFactory = Callable[[], Awaitable[KnowledgeGraph]]
DRAIN_INTERVAL_SECONDS = 30.0
MAX_BATCHES_PER_RUN = 10_000


def default_consumer_name() -> str:
    """A consumer name unique to this host and process."""
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass(frozen=True, kw_only=True, slots=True)
class DrainReport:
    """What one drain run did."""

    batches: int
    written: int
    dead_lettered: int
    left_queued: bool


class Background:
    """The drain loop and cache refreshes of one process (it also is the hooks' Scheduler)."""

    def __init__(
        self,
        *,
        store: HotStore,
        settings: Settings,
        group_id: str,
        knowledge_factory: KnowledgeFactory,
        checkpointer: BaseCheckpointSaver | None = None,
        consumer: str | None = None,
        interval_seconds: float = DRAIN_INTERVAL_SECONDS,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """Nothing starts until :meth:`start`; the knowledge graph is opened lazily."""
        self.store = store
        self.settings = settings
        self.group_id = group_id
        self.consumer = consumer or default_consumer_name()
        self.interval_seconds = interval_seconds
        self._sleep = sleep
        self._knowledge_factory = knowledge_factory
        self._knowledge: KnowledgeGraph | None = None
        self._knowledge_lock = asyncio.Lock()
        self.drain_graph: CompiledStateGraph = build_drain_graph().compile(
            checkpointer=checkpointer or InMemorySaver(serde=plait_serializer())
        )
        self.refresh_graph: CompiledStateGraph = build_cache_refresh_graph().compile()
        self._drain_wanted = asyncio.Event()
        self._refresh_wanted = asyncio.Event()
        self._refreshes: dict[tuple[str, str], str] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._drain_lock = asyncio.Lock()

    # -- Scheduler ------------------------------------------------------------------------------
    def schedule_drain(self, group_id: str) -> None:
        """Wake the drain loop."""
        self._drain_wanted.set()

    def schedule_refresh(self, group_id: str, root_session_id: str, query: str) -> None:
        """Queue a refresh; a newer query for the same session replaces an older one."""
        self._refreshes[(group_id, root_session_id)] = query
        self._refresh_wanted.set()

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the drain and refresh loops as tasks of the running event loop."""
        if not self._tasks:
            self._tasks = [
                asyncio.create_task(self._drain_loop(), name="plait-drain"),
                asyncio.create_task(self._refresh_loop(), name="plait-refresh"),
            ]

    async def aclose(self) -> None:
        """Stop the loops and close the knowledge graph."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        if self._knowledge is not None:
            await self._knowledge.aclose()
            self._knowledge = None

    async def knowledge(self) -> KnowledgeGraph:
        """The knowledge graph, opened on first use."""
        async with self._knowledge_lock:
            if self._knowledge is None:
                self._knowledge = await self._knowledge_factory()
            return self._knowledge

    def _context(self, knowledge: KnowledgeGraph, group_id: str) -> PlaitContext:
        return PlaitContext(
            store=self.store,
            settings=self.settings,
            group_id=group_id,
            knowledge=knowledge,
            sleep=self._sleep,
        )

    # -- drain ----------------------------------------------------------------------------------
    async def drain(self, *, max_batches: int = MAX_BATCHES_PER_RUN) -> DrainReport:
        """Run the drain graph batch after batch until the queue is empty or it stops moving."""
        async with self._drain_lock:
            knowledge = await self.knowledge()
            context = self._context(knowledge, self.group_id)
            config = {"configurable": {"thread_id": f"drain:{self.consumer}"}}
            batches = written = dead = 0
            left_queued = False
            for _ in range(max_batches):
                result = await self._drain_once(context, config)
                claimed = result.get("claimed", 0)
                written += result.get("written", 0)
                dead += result.get("dead_lettered", 0)
                if result.get("unreachable"):
                    left_queued = True
                    break
                if not claimed:
                    break
                batches += 1
            return DrainReport(
                batches=batches, written=written, dead_lettered=dead, left_queued=left_queued
            )

    async def _drain_once(self, context: PlaitContext, config: dict[str, Any]) -> dict[str, Any]:
        previous = await self.drain_graph.aget_state(config)
        graph_input: dict[str, Any] | None = {
            "consumer": self.consumer,
            "written": 0,
            "dead_lettered": 0,
            "claimed": 0,
        }
        if previous.next:
            graph_input = None  # a run cut off mid-batch: resume it where it stopped
        result = await self.drain_graph.ainvoke(graph_input, config=config, context=context)
        return dict(result)

    async def _drain_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._drain_wanted.wait(), self.interval_seconds)
            self._drain_wanted.clear()
            try:
                report = await self.drain()
            except Exception as error:
                logger.warning("plait: drain failed: %s", error)
                continue
            if report.left_queued:
                await asyncio.sleep(min(self.interval_seconds, 5.0))

    # -- cache refresh --------------------------------------------------------------------------
    async def refresh(self, group_id: str, root_session_id: str, query: str) -> CachedRecall | None:
        """Search long-term memory for ``query`` and cache the result now."""
        knowledge = await self.knowledge()
        result = await self.refresh_graph.ainvoke(
            {"group_id": group_id, "root_session_id": root_session_id, "query": query},
            context=self._context(knowledge, group_id),
        )
        return result.get("recall")

    async def _refresh_loop(self) -> None:
        while True:
            await self._refresh_wanted.wait()
            self._refresh_wanted.clear()
            pending, self._refreshes = self._refreshes, {}
            for (group_id, root), query in pending.items():
                try:
                    await self.refresh(group_id, root, query)
                except Exception as error:
                    logger.warning("plait: cache refresh failed: %s", error)


__all__ = ["Background", "DrainReport", "default_consumer_name"]
