"""Background work yields to the hot path: drains and refreshes start in the pauses between hooks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence

import pytest

from plait.adapters.backends.memory_graph import InMemoryKnowledgeGraph
from plait.adapters.backends.memory_store import InMemoryHotStore
from plait.background import Background
from plait.state.base.errors import BackendUnavailable
from plait.state.base.settings import Settings
from plait.state.events import EventKind, SessionEvent
from plait.state.ports import KnowledgeGraph, MemoryHit

HOOK_SECONDS = 0.3  # how long the tests hold a hook in flight


class RecordingGraph(InMemoryKnowledgeGraph):
    """The reference graph, remembering the queries it was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []

    async def search(self, query: str, group_ids: Sequence[str], limit: int) -> list[MemoryHit]:
        self.queries.append(query)
        return await super().search(query, group_ids, limit)


async def eventually(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll until ``condition`` holds; fail after ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


@pytest.fixture
def graph() -> RecordingGraph:
    return RecordingGraph()


@pytest.fixture
async def store() -> AsyncIterator[InMemoryHotStore]:
    hot = InMemoryHotStore()
    yield hot
    await hot.aclose()


def started(store: InMemoryHotStore, graph: KnowledgeGraph, max_defer: float) -> Background:
    async def factory() -> KnowledgeGraph:
        return graph

    background = Background(
        store=store,
        settings=Settings(redis={"drain_quiet_seconds": 0}),
        group_id="g1",
        knowledge_factory=factory,
        quiet_seconds=0.01,
        max_defer_seconds=max_defer,
    )
    background.start()
    return background


async def test_a_refresh_waits_for_the_hook_then_runs_the_newest_query(
    store: InMemoryHotStore, graph: RecordingGraph
) -> None:
    background = started(store, graph, max_defer=60)
    with background.hot_path():
        background.schedule_refresh("g1", "s1", "older question")
        background.schedule_refresh("g1", "s1", "newer question")
        await asyncio.sleep(HOOK_SECONDS)
        assert graph.queries == []
    await eventually(lambda: bool(graph.queries))
    assert graph.queries == ["newer question"]
    await background.aclose()


async def test_a_drain_waits_for_the_hook(store: InMemoryHotStore, graph: RecordingGraph) -> None:
    events = [
        SessionEvent(root_session_id="s1", session_id="s1", kind=EventKind.DECISION, summary=text)
        for text in ("use Redis Streams", "keep the envelope small")
    ]
    stored = await store.append_events("s1", events, enqueue_group="g1")
    background = started(store, graph, max_defer=60)
    with background.hot_path():
        background.schedule_drain("g1")
        await asyncio.sleep(HOOK_SECONDS)
        assert await store.queue_depth() == len(stored) and not graph.episodes["g1"]
    await eventually(lambda: len(graph.episodes["g1"]) == len(stored))
    await background.aclose()


async def test_hooks_that_never_pause_delay_a_refresh_only_so_long(
    store: InMemoryHotStore, graph: RecordingGraph
) -> None:
    background = started(store, graph, max_defer=0.05)
    with background.hot_path():
        background.schedule_refresh("g1", "s1", "busy session")
        await eventually(lambda: graph.queries == ["busy session"])
    await background.aclose()


class FlakyDepthStore(InMemoryHotStore):
    """A hot store whose first queue-depth read fails, as a hot tier that blips does."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 1

    async def queue_depth(self) -> int:
        if self.failures:
            self.failures -= 1
            raise BackendUnavailable("the hot tier blipped")
        return await super().queue_depth()


async def test_a_failure_while_the_queue_settles_does_not_end_the_drain_loop(
    graph: RecordingGraph,
) -> None:
    store = FlakyDepthStore()
    event = SessionEvent(
        root_session_id="s1", session_id="s1", kind=EventKind.DECISION, summary="x"
    )
    await store.append_events("s1", [event], enqueue_group="g1")
    background = started(store, graph, max_defer=60)
    background.schedule_drain("g1")
    await eventually(lambda: not store.failures)
    background.schedule_drain("g1")
    await eventually(lambda: len(graph.episodes["g1"]) == 1)
    await background.aclose()
    await store.aclose()
