"""Background work of a plait process: drain, embedding and cache refreshes, off the hot path.

The process holding :class:`plait.Memory` (the demo, ``plait serve``) runs these itself;
``plait worker`` runs the same loops as a separate process. Several workers share the queue
through the Redis Streams consumer group, each under its own consumer name.

In a process that also serves hooks, the loops share its event loop, so they yield to the hot
path: each drain batch and each refresh starts only after a pause of ``quiet_seconds`` with no
hook in flight (:meth:`Background.hot_path` marks one), or once it has waited
``max_defer_seconds``, so a busy session cannot starve them.

The embedding pass gives the recall index's turns their vectors in batches after each drain
(:meth:`Background.embed_pending`); it never holds the queue back, and a turn not embedded yet
ranks by its words.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import socket
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from plait.adapters.backends.checkpoint import plait_serializer
from plait.graphs.cache_refresh import RefreshGraph, build_cache_refresh_graph
from plait.graphs.drain import DrainGraph, build_drain_graph
from plait.nodes.memory_search import recall_groups, search_memory
from plait.state.background import DrainState
from plait.state.base.boundary import attempt, describe, fail_open, translate
from plait.state.base.errors import PlaitError
from plait.state.base.redact import redacted_logger
from plait.state.base.settings import Settings
from plait.state.context import PlaitContext, QueueMark
from plait.state.events import SessionEvent
from plait.state.groups import acting_as, acting_member
from plait.state.hooks import CachedRecall
from plait.state.observations import ObservationRecall
from plait.state.ports import GraphPicture, HotStore, KnowledgeGraph, MemoryHit, event_uuid
from plait.state.recall import RecallIndex, TextEmbedder

logger = redacted_logger("plait")

KnowledgeFactory = Callable[[], Awaitable[KnowledgeGraph]]
Summarizer = Callable[[str], Awaitable[object]]
DRAIN_INTERVAL_SECONDS = 30.0
MAX_BATCHES_PER_RUN = 10_000
QUIET_SECONDS = 0.05
MAX_DEFER_SECONDS = 2.0


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
    drained: int = 0  # events taken off the queue (written, left out as chatter, or dead)


class WatchedKnowledge:
    """A knowledge graph whose failures the background remembers for ``degraded``.

    Each call that fails sets :attr:`Background.knowledge_failure`; each that answers clears it.
    """

    def __init__(self, inner: KnowledgeGraph, background: Background) -> None:
        """Watch ``inner`` for ``background``."""
        self.inner = inner
        self.background = background

    async def _watched[T](self, work: Awaitable[T]) -> T:
        try:
            result = await work
        except Exception as error:
            self.background.knowledge_failure = describe(translate(error))
            raise
        self.background.knowledge_failure = None
        return result

    async def write_episodes(self, group_id: str, events: Sequence[SessionEvent]) -> int:
        """Write events as episodes."""
        return await self._watched(self.inner.write_episodes(group_id, events))

    async def search(self, query: str, group_ids: Sequence[str], limit: int) -> list[MemoryHit]:
        """Search the groups."""
        return await self._watched(self.inner.search(query, group_ids, limit))

    async def forget_episodes(self, group_id: str, episode_uuids: Sequence[str]) -> int:
        """Remove episodes."""
        return await self._watched(self.inner.forget_episodes(group_id, episode_uuids))

    async def picture(self, group_id: str, limit: int) -> GraphPicture:
        """A bounded picture of the group's graph."""
        return await self._watched(self.inner.picture(group_id, limit))

    async def aclose(self) -> None:
        """Close the graph."""
        await self.inner.aclose()


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
        quiet_seconds: float = QUIET_SECONDS,
        max_defer_seconds: float = MAX_DEFER_SECONDS,
        recall: RecallIndex | None = None,
        embedder: TextEmbedder | None = None,
    ) -> None:
        """Nothing starts until :meth:`start`; the knowledge graph is opened lazily.

        ``sleep`` is the retry backoff's; ``quiet_seconds`` and ``max_defer_seconds`` say how
        the loops yield to hooks (see the module). ``recall`` is the recall index the drain
        fills and searches read, ``embedder`` what gives its turns vectors (None: words only).
        """
        self.store = store
        self.settings = settings
        self.group_id = group_id
        self.consumer = consumer or default_consumer_name()
        self.interval_seconds = interval_seconds
        self.quiet_seconds = quiet_seconds
        self.max_defer_seconds = max_defer_seconds
        self.written_total = 0  # events this process has written to the knowledge graph
        self._hooks_in_flight = 0
        self._last_hook_ended = -math.inf
        self._sleep = sleep
        self._knowledge_factory = knowledge_factory
        self._knowledge: KnowledgeGraph | None = None
        self.knowledge_failure: str | None = None  # why the knowledge graph did not open
        self.recall = recall
        self.queue_mark = QueueMark()  # what this process's searches indexed of the queue
        self.graph_strikes: Counter[str] = Counter()  # graph writes that took the server down
        self.embedder = embedder if recall is not None else None
        self.embedded_total = 0  # vectors this process has computed and kept
        self._knowledge_lock = asyncio.Lock()
        self.drain_graph: DrainGraph = build_drain_graph().compile(
            checkpointer=checkpointer or InMemorySaver(serde=plait_serializer())
        )
        self.refresh_graph: RefreshGraph = build_cache_refresh_graph().compile()
        self._drain_wanted = asyncio.Event()
        self._refresh_wanted = asyncio.Event()
        self._refreshes: dict[tuple[str, str], tuple[str, str | None]] = {}  # (query, member)
        self._summaries: dict[str, None] = {}
        self._summary_wanted = asyncio.Event()
        # Set by the process's Memory: session summaries and observations in recall.
        self.summarizer: Summarizer | None = None
        self.observations: ObservationRecall | None = None
        self._refreshing = 0
        self._embed_wanted = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._drain_lock = asyncio.Lock()
        self._embed_lock = asyncio.Lock()

    # -- Scheduler ------------------------------------------------------------------------------
    def schedule_drain(self, group_id: str) -> None:
        """Wake the drain loop."""
        self._drain_wanted.set()

    def schedule_refresh(self, group_id: str, root_session_id: str, query: str) -> None:
        """Queue a refresh; a newer query for the same session replaces an older one.

        It runs later, for the team member the request acts for (their personal group).
        """
        self._refreshes[(group_id, root_session_id)] = (query, acting_member())
        self._refresh_wanted.set()

    def schedule_summary(self, group_id: str, root_session_id: str) -> None:
        """Queue writing the session's summary (on idle and around compaction)."""
        if self.summarizer is not None:
            self._summaries[root_session_id] = None
            self._summary_wanted.set()

    # -- yielding to the hot path ---------------------------------------------------------------
    @contextlib.contextmanager
    def hot_path(self) -> Iterator[None]:
        """Mark a hook in flight: the loops start no new work until a pause after it."""
        self._hooks_in_flight += 1
        try:
            yield
        finally:
            self._hooks_in_flight -= 1
            self._last_hook_ended = time.monotonic()

    async def pause_for_hooks(self) -> None:
        """Wait for ``quiet_seconds`` without hooks, or ``max_defer_seconds`` at the most."""
        deadline = time.monotonic() + self.max_defer_seconds
        while True:
            now = time.monotonic()
            quiet_for = now - self._last_hook_ended
            if now >= deadline or (not self._hooks_in_flight and quiet_for >= self.quiet_seconds):
                return
            wait = self.quiet_seconds - quiet_for if not self._hooks_in_flight else 0.0
            await asyncio.sleep(min(max(wait, self.quiet_seconds / 5), deadline - now))

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the drain and refresh loops as tasks of the running event loop."""
        if not self._tasks:
            self._tasks = [
                asyncio.create_task(self._drain_loop(), name="plait-drain"),
                asyncio.create_task(self._refresh_loop(), name="plait-refresh"),
                asyncio.create_task(self._summary_loop(), name="plait-summaries"),
            ]
            if self.embedder is not None:
                self._tasks.append(asyncio.create_task(self._embed_loop(), name="plait-embed"))

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
        if self.recall is not None:
            await self.recall.aclose()

    async def forget_knowledge(self) -> None:
        """Close the knowledge graph; the next use opens it again (its server moved)."""
        async with self._knowledge_lock:
            if self._knowledge is not None:
                await attempt(self._knowledge.aclose())
                self._knowledge = None

    async def knowledge(self) -> KnowledgeGraph:
        """The knowledge graph, opened on first use.

        Why it could not be opened is kept in :attr:`knowledge_failure` (``plait.Memory``'s
        ``degraded`` says it) until it opens.
        """
        async with self._knowledge_lock:
            if self._knowledge is None:
                try:
                    opened = await self._knowledge_factory()
                except Exception as error:
                    self.knowledge_failure = describe(translate(error))
                    raise
                self._knowledge = opened
            return self._knowledge

    def _context(self, knowledge: KnowledgeGraph | None, group_id: str) -> PlaitContext:
        return PlaitContext.over(
            self.store,
            settings=self.settings,
            group_id=group_id,
            knowledge=WatchedKnowledge(knowledge, self) if knowledge is not None else None,
            recall=self.recall,
            embedder=self.embedder,
            sleep=self._sleep,
            observations=self.observations,
            queue_mark=self.queue_mark,
            graph_strikes=self.graph_strikes,
        )

    # -- drain ----------------------------------------------------------------------------------
    async def drain(
        self,
        *,
        max_batches: int = MAX_BATCHES_PER_RUN,
        before_batch: Callable[[], Awaitable[None]] | None = None,
    ) -> DrainReport:
        """Run the drain graph batch after batch until the queue is empty or it stops moving.

        ``before_batch`` is awaited before each batch (the loop passes :meth:`pause_for_hooks`).
        """
        async with self._drain_lock:
            knowledge = await self.knowledge()
            context = self._context(knowledge, self.group_id)
            config = RunnableConfig(configurable={"thread_id": f"drain:{self.consumer}"})
            batches = written = dead = drained = 0
            left_queued = False
            for _ in range(max_batches):
                if before_batch is not None:
                    await before_batch()
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
                drained += claimed
            self.written_total += written
            if batches:
                self._embed_wanted.set()
            return DrainReport(
                batches=batches,
                written=written,
                dead_lettered=dead,
                left_queued=left_queued,
                drained=drained,
            )

    async def drain_until_empty(
        self,
        *,
        max_batches: int = MAX_BATCHES_PER_RUN,
        before_batch: Callable[[], Awaitable[None]] | None = None,
    ) -> DrainReport:
        """:meth:`drain` run after run until the queue is empty (one run stops at ``max_batches``).

        Stops early when the graph server is unreachable (the rest stays queued).
        """
        total = DrainReport(batches=0, written=0, dead_lettered=0, left_queued=False)
        while True:
            report = await self.drain(max_batches=max_batches, before_batch=before_batch)
            total = DrainReport(
                batches=total.batches + report.batches,
                written=total.written + report.written,
                dead_lettered=total.dead_lettered + report.dead_lettered,
                left_queued=report.left_queued,
                drained=total.drained + report.drained,
            )
            if not report.batches or report.left_queued:
                return total

    async def _drain_once(self, context: PlaitContext, config: RunnableConfig) -> dict[str, Any]:
        previous = await self.drain_graph.aget_state(config)
        graph_input: DrainState | None = {
            "consumer": self.consumer,
            "written": 0,
            "dead_lettered": 0,
            "claimed": 0,
        }
        if previous.next:
            graph_input = None  # a run cut off mid-batch: resume it where it stopped
        result = await self.drain_graph.ainvoke(graph_input, config=config, context=context)
        return dict(result)

    async def quiet_queue(self) -> None:
        """Wait until the queue stops growing for ``redis.drain_quiet_seconds``.

        Or until it holds a full batch, or ``redis.drain_max_wait_seconds`` passed: an idle
        period's events then drain as one episode (an LLM extractor is paid per episode).
        Nothing waits on it for recall: searches read what is still queued.
        """
        settings = self.settings.redis
        started = time.monotonic()
        depth, since = await self.store.queue_depth(), started
        step = max(0.01, min(1.0, settings.drain_quiet_seconds / 4))
        while depth and depth < settings.batch_size:
            now = time.monotonic()
            if now - since >= settings.drain_quiet_seconds:
                return
            if now - started >= settings.drain_max_wait_seconds:
                return
            await asyncio.sleep(step)
            latest = await self.store.queue_depth()
            if latest != depth:
                depth, since = latest, time.monotonic()

    async def _drain_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._drain_wanted.wait(), self.interval_seconds)
            self._drain_wanted.clear()
            await attempt(self.quiet_queue())  # a hot tier down here: the drain fails open
            work = self.drain(before_batch=self.pause_for_hooks)
            report = await fail_open("drain", work, None)
            if report is None or report.left_queued:
                await asyncio.sleep(min(self.interval_seconds, 5.0))

    # -- embedding ------------------------------------------------------------------------------
    async def embed_pending(
        self,
        *,
        max_batches: int | None = None,
        before_batch: Callable[[], Awaitable[None]] | None = None,
    ) -> int:
        """Give the recall index's new turns their vectors, a batch at a time; how many.

        ``before_batch`` is awaited before each batch (the loop passes :meth:`pause_for_hooks`).
        """
        if self.recall is None or self.embedder is None:
            return 0
        batch = self.settings.recall.embed_batch
        stored = done = 0
        async with self._embed_lock:
            while max_batches is None or done < max_batches:
                if before_batch is not None:
                    await before_batch()
                jobs = await self.recall.pending_embeddings(batch)
                if not jobs:
                    break
                vectors = await self.embedder.embed_passages([job.text for job in jobs])
                stored += await self.recall.store_vectors(jobs, vectors)
                done += 1
        self.embedded_total += stored
        return stored

    async def _embed_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._embed_wanted.wait(), self.interval_seconds)
            self._embed_wanted.clear()
            await fail_open("embedding", self.embed_pending(before_batch=self.pause_for_hooks), 0)

    # -- forgetting ------------------------------------------------------------------------------
    async def forget_events(
        self, root_session_id: str, event_ids: Sequence[int], groups: Sequence[str]
    ) -> int:
        """Remove what the drain made of a root's events in the groups; how many went.

        Their turns in the recall index and their episodes in the knowledge graph. Raises
        :class:`~plait.BackendUnavailable` when the knowledge graph does not answer (the caller
        says so: what was forgotten elsewhere stays forgotten).
        """
        ids = {
            group: [event_uuid(group, root_session_id, n) for n in event_ids] for group in groups
        }
        removed = 0
        if self.recall is not None:
            removed += await self.recall.forget_turns([u for batch in ids.values() for u in batch])
        knowledge = await self.knowledge()
        for group, uuids in ids.items():
            removed += await knowledge.forget_episodes(group, uuids)
        return removed

    # -- search and cache refresh ---------------------------------------------------------------
    async def _knowledge_or_none(self) -> KnowledgeGraph | None:
        """The knowledge graph, or None when it cannot be opened (turns are still searched)."""
        opened = await attempt(self.knowledge())
        if isinstance(opened, PlaitError):
            logger.warning("plait: knowledge graph unavailable: %s", opened)
            return None
        return opened

    async def search(
        self, group_id: str, query: str, limit: int, *, now: datetime | None = None
    ) -> list[MemoryHit]:
        """What plait serves for ``query`` (:func:`plait.nodes.memory_search.search_memory`).

        ``now``: when the query is asked (default the clock).
        """
        context = self._context(await self._knowledge_or_none(), group_id)
        groups = recall_groups(group_id, self.settings)
        return await search_memory(context, query, groups, limit, now=now)

    async def refresh(self, group_id: str, root_session_id: str, query: str) -> CachedRecall | None:
        """Search long-term memory for ``query`` (prefetch when "") and cache the result now."""
        knowledge = await self._knowledge_or_none()
        result = await self.refresh_graph.ainvoke(
            {"group_id": group_id, "root_session_id": root_session_id, "query": query},
            context=self._context(knowledge, group_id),
        )
        return result.get("recall")

    async def refreshed(self) -> None:
        """Wait until no refresh is queued or running (tests and the demo)."""
        while self._refreshes or self._refreshing:
            await asyncio.sleep(0.01)

    async def _refresh_loop(self) -> None:
        while True:
            await self._refresh_wanted.wait()
            self._refresh_wanted.clear()
            while self._refreshes:
                await self.pause_for_hooks()  # a query that comes meanwhile replaces this one
                key = next(iter(self._refreshes))
                query, member = self._refreshes.pop(key)
                group_id, root = key
                self._refreshing += 1
                try:
                    with acting_as(member):
                        refreshed = self.refresh(group_id, root, query)
                        await fail_open("cache refresh", refreshed, None)
                finally:
                    self._refreshing -= 1

    # -- session summaries ----------------------------------------------------------------------
    async def summarize_pending(self) -> int:
        """Write the summaries asked for so far; how many sessions were summarized."""
        done = 0
        while self._summaries and self.summarizer is not None:
            root = next(iter(self._summaries))
            del self._summaries[root]
            await fail_open(f"summarizing session {root!r}", self.summarizer(root), None)
            done += 1
        return done

    async def _summary_loop(self) -> None:
        while True:
            await self._summary_wanted.wait()
            self._summary_wanted.clear()
            await self.pause_for_hooks()
            await self.summarize_pending()


__all__ = ["Background", "DrainReport", "default_consumer_name"]
