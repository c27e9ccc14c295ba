"""The drain graph over the real hot stores: batches, chatter, retries, dead letters, outages."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from functools import partial

import pytest
import redis.asyncio
import redis.exceptions

from plait.adapters.backends.embedded import EmbeddedFalkorDB
from plait.adapters.backends.memory_graph import InMemoryKnowledgeGraph
from plait.adapters.backends.memory_store import InMemoryHotStore
from plait.adapters.backends.redis_store import RedisHotStore
from plait.background import Background
from plait.nodes.drain import backoff_seconds, chunk_episodes
from plait.state.base.boundary import attempt
from plait.state.base.errors import BackendUnavailable
from plait.state.base.settings import Settings
from plait.state.events import EventKind, SessionEvent
from plait.state.ports import GraphPicture, HotStore, KnowledgeGraph, MemoryHit, QueueEntry


def event(summary: str, kind: EventKind = EventKind.DECISION, root: str = "s1") -> SessionEvent:
    return SessionEvent(root_session_id=root, session_id=root, kind=kind, summary=summary)


class FlakyGraph:
    """Fails the first ``failures`` writes with ``error``, then stores like the reference."""

    def __init__(self, failures: int, error: Exception) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0
        self.inner = InMemoryKnowledgeGraph()

    async def write_episodes(self, group_id: str, events: Sequence[SessionEvent]) -> int:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return await self.inner.write_episodes(group_id, events)

    async def search(self, query: str, group_ids: Sequence[str], limit: int) -> list[MemoryHit]:
        return await self.inner.search(query, group_ids, limit)

    async def forget_episodes(self, group_id: str, episode_uuids: Sequence[str]) -> int:
        return await self.inner.forget_episodes(group_id, episode_uuids)

    async def picture(self, group_id: str, limit: int) -> GraphPicture:
        return await self.inner.picture(group_id, limit)

    async def aclose(self) -> None:
        pass


@pytest.fixture(params=["redis", "memory"])
async def store(request: pytest.FixtureRequest, key_prefix: str) -> AsyncIterator[HotStore]:
    if request.param == "redis":
        hot: HotStore = RedisHotStore.from_url(
            request.getfixturevalue("redis_url"), prefix=key_prefix
        )
    else:
        hot = InMemoryHotStore()
    yield hot
    await hot.aclose()


def background(
    store: HotStore, graph: KnowledgeGraph, sleeps: list[float], **redis: int
) -> Background:
    async def record_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    async def factory() -> KnowledgeGraph:
        return graph

    settings = Settings(redis={"batch_size": 4, **redis})
    return Background(
        store=store, settings=settings, group_id="g1", knowledge_factory=factory, sleep=record_sleep
    )


async def stored_events(store: HotStore, count: int) -> list[SessionEvent]:
    return await store.append_events("s1", [event(f"decision {i}") for i in range(count)])


async def test_drain_moves_every_event_once_and_skips_chatter(store: HotStore) -> None:
    events = await stored_events(store, 9)
    chatter = await store.append_events("s1", [event("sure, on it", EventKind.MESSAGE)])
    await store.enqueue("g1", events + chatter)
    graph = InMemoryKnowledgeGraph()
    report = await background(store, graph, []).drain()
    assert report.written == 9 and report.batches == 3
    assert await store.queue_depth() == 0
    assert sorted(e.summary for e in graph.episodes["g1"].values()) == sorted(
        e.summary for e in events
    )


async def test_drain_replay_of_the_same_events_writes_nothing_new(store: HotStore) -> None:
    events = await stored_events(store, 3)
    graph = InMemoryKnowledgeGraph()
    await store.enqueue("g1", events)
    worker = background(store, graph, [])
    await worker.drain()
    await store.enqueue("g1", events)
    report = await worker.drain()
    assert report.written == 0 and len(graph.episodes["g1"]) == 3
    assert worker.written_total == 3  # the running total counts each event once


async def test_drain_retries_with_backoff_then_dead_letters_with_the_reason(
    store: HotStore,
) -> None:
    await store.enqueue("g1", await stored_events(store, 2))
    graph = FlakyGraph(failures=100, error=ValueError("LLM returned invalid JSON"))
    sleeps: list[float] = []
    report = await background(store, graph, sleeps, drain_retry_max=3).drain()
    assert graph.calls == 3 + 2 and len(sleeps) == 2  # the batch 3 times, then each event alone
    assert report.dead_lettered == 2 and await store.queue_depth() == 0
    dead = await store.list_dead()
    assert {d.reason for d in dead} == {"ValueError: LLM returned invalid JSON"}
    assert await store.replay_dead() == 2
    graph.failures = 0
    assert (await background(store, graph, []).drain()).written == 2


class PoisonGraph(FlakyGraph):
    """Fails every write that holds an event with ``POISON`` in it, as a query syntax error."""

    def __init__(self) -> None:
        super().__init__(failures=0, error=ValueError())

    async def write_episodes(self, group_id: str, events: Sequence[SessionEvent]) -> int:
        self.calls += 1
        if any("POISON" in event.summary for event in events):
            raise ValueError("RediSearch: Syntax error at offset 20 near POISON")
        return await self.inner.write_episodes(group_id, events)


async def test_drain_one_poison_event_never_dead_letters_the_events_around_it(
    store: HotStore,
) -> None:
    summaries = ["use uv", "use ruff", "POISON _", "use mypy", "sure", "use pytest"]
    kinds = [EventKind.DECISION] * 4 + [EventKind.MESSAGE, EventKind.DECISION]
    pairs = zip(summaries, kinds, strict=True)
    stored = await store.append_events("s1", [event(s, k) for s, k in pairs])
    await store.enqueue("g1", stored)
    graph = PoisonGraph()
    report = await background(store, graph, [], batch_size=6, drain_retry_max=2).drain()
    assert report.dead_lettered == 1 and report.written == 4
    assert await store.queue_depth() == 0
    written = sorted(e.summary for e in graph.inner.episodes["g1"].values())
    assert written == ["use mypy", "use pytest", "use ruff", "use uv"]
    (dead,) = await store.list_dead()
    assert dead.event.summary == "POISON _" and "Syntax error" in dead.reason
    assert await store.replay_dead() == 1
    again = await background(store, graph, [], drain_retry_max=2).drain()
    assert again.dead_lettered == 1 and again.written == 0
    assert len(graph.inner.episodes["g1"]) == 4


async def test_drain_recovers_after_a_transient_failure(store: HotStore) -> None:
    await store.enqueue("g1", await stored_events(store, 2))
    graph = FlakyGraph(failures=1, error=TimeoutError("LLM timed out"))
    report = await background(store, graph, []).drain()
    assert report.written == 2 and report.dead_lettered == 0


async def test_drain_leaves_events_queued_while_the_graph_server_is_down(store: HotStore) -> None:
    await store.enqueue("g1", await stored_events(store, 3))
    graph = FlakyGraph(failures=5, error=ConnectionError("Connection refused"))
    worker = background(store, graph, [])
    for _ in range(5):
        report = await worker.drain()
        assert report.left_queued and report.dead_lettered == 0
    assert await store.queue_depth() == 3 and await store.list_dead() == []
    assert (await worker.drain()).written == 3
    assert await store.queue_depth() == 0


async def test_drain_until_empty_goes_past_one_runs_batch_limit(store: HotStore) -> None:
    """A run stops at its batch limit; draining until empty takes run after run."""
    await store.enqueue("g1", await stored_events(store, 5))
    graph = InMemoryKnowledgeGraph()
    worker = background(store, graph, [], batch_size=1)
    first = await worker.drain(max_batches=2)
    assert first.written == 2 and await store.queue_depth() == 3
    rest = await worker.drain_until_empty(max_batches=2)
    assert (rest.written, rest.batches, rest.left_queued) == (3, 3, False)
    assert await store.queue_depth() == 0 and len(graph.episodes["g1"]) == 5


def test_chunk_episodes_keeps_order_and_limits() -> None:
    batch = [
        QueueEntry(entry_id=str(i), group_id="g", event=event("x" * 300, root=root), deliveries=1)
        for i, root in enumerate(["a", "a", "a", "b", "a"])
    ]
    chunks = chunk_episodes(batch, max_events=2, max_bytes=100_000)
    assert [[c.entry_id for c in chunk] for chunk in chunks] == [["0", "1"], ["2"], ["3"], ["4"]]
    small = chunk_episodes(batch[:3], max_events=10, max_bytes=700)
    assert [len(chunk) for chunk in small] == [1, 1, 1]


def test_backoff_grows_exponentially_within_the_cap() -> None:
    assert [backoff_seconds(n, jitter=1.0) for n in range(1, 4)] == [1.0, 2.0, 4.0]
    assert backoff_seconds(20, jitter=1.0) == 30.0
    assert backoff_seconds(3, jitter=0.0) == 0.0


class CrashingGraph(FlakyGraph):
    """Takes its server down (SHUTDOWN, data saved) on every write that holds a ``CRASH`` event.

    The server is the hot tier's too, as with the embedded default: what a FalkorDB crash on a
    query does to a user's service.
    """

    def __init__(self, server: EmbeddedFalkorDB) -> None:
        super().__init__(failures=0, error=ValueError())
        self.server = server
        self.crashes = 0

    async def write_episodes(self, group_id: str, events: Sequence[SessionEvent]) -> int:
        if any("CRASH" in event.summary for event in events):
            self.crashes += 1
            client = redis.asyncio.Redis.from_url(self.server.url)
            with contextlib.suppress(redis.exceptions.ConnectionError):
                await client.shutdown()
            await client.aclose()
            # what GraphitiKnowledgeGraph raises when the server drops the connection
            raise BackendUnavailable("FalkorDB unreachable: Connection closed by server.")
        return await self.inner.write_episodes(group_id, events)


@pytest.mark.parametrize("graph_server", ["the hot tier's", "its own"])
async def test_an_event_that_crashes_the_shared_server_is_set_aside_not_retried_for_ever(
    tmp_path, graph_server: str
) -> None:
    with EmbeddedFalkorDB(tmp_path) as server:
        store = RedisHotStore.from_url(server.url)
        summaries = ["use uv", "CRASH the server", "use ruff", "use mypy"]
        await store.enqueue("g1", await store.append_events("s1", [event(s) for s in summaries]))
        graph = CrashingGraph(server)
        own = {"url": "redis://127.0.0.1:1"} if graph_server == "its own" else {}
        worker = Background(
            store=store,
            settings=Settings(redis={"batch_size": 4}, falkordb=own),
            group_id="g1",
            knowledge_factory=partial(asyncio.sleep, 0, graph),
        )
        for _ in range(8):  # a drain run as the loop runs it, then the supervisor's revival
            await attempt(worker.drain())
            if not server.running():
                await asyncio.to_thread(server.restart)
        if graph_server == "its own":  # an outage of its own server: kept queued, never judged
            assert graph.crashes >= 4 and await store.list_dead() == []
            assert await store.queue_depth() == 4
        else:  # its batch, then twice alone: set aside, and the rest written
            assert graph.crashes == 3
            (dead,) = await store.list_dead()
            assert dead.event.summary == "CRASH the server"
            assert "went down 3 times" in dead.reason and "plait dlq replay" in dead.reason
            written = sorted(e.summary for e in graph.inner.episodes["g1"].values())
            assert written == ["use mypy", "use ruff", "use uv"]
            assert await store.queue_depth() == 0
        await store.aclose()
