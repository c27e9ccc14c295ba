"""Faults under the drain with Graphiti on a real FalkorDB: a broken LLM, a server that is down."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from graphiti_core.llm_client.client import LLMClient
from pydantic import BaseModel
from support.local_web import free_port
from tenacity import wait_none

from plait.adapters.backends.graphiti import OfflineLLMClient, make_graphiti, open_knowledge_graph
from plait.adapters.backends.graphiti.knowledge import GraphitiKnowledgeGraph
from plait.adapters.backends.redis_store import RedisHotStore
from plait.background import Background
from plait.state.base.errors import BackendUnavailable
from plait.state.base.settings import Settings
from plait.state.events import EventKind, SessionEvent
from plait.state.ports import HotStore, KnowledgeGraph


class BrokenLLMClient(OfflineLLMClient):
    """The offline client, except while ``fault`` is set: then every request fails with it."""

    def __init__(self, fault: str | None) -> None:
        super().__init__()
        self.fault = fault
        self.failed_calls = 0

    async def _generate_response(
        self, messages: Any, response_model: type[BaseModel] | None = None, *args: Any, **kw: Any
    ) -> dict[str, Any]:
        if self.fault == "invalid json":
            self.failed_calls += 1
            return json.loads('{"extracted_entities": [{"name": "Postg')
        if self.fault == "timeout":
            self.failed_calls += 1
            raise TimeoutError("LLM request timed out after 60 s")
        return await super()._generate_response(messages, response_model, *args, **kw)


@pytest.fixture(autouse=True)
def no_llm_retry_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """graphiti-core retries invalid JSON itself, 5 to 120 s apart: no waiting in tests."""
    monkeypatch.setattr(LLMClient._generate_response_with_retry.retry, "wait", wait_none())


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[HotStore]:
    hot = RedisHotStore.from_url(redis_url, prefix=f"test:{uuid.uuid4().hex[:12]}:")
    yield hot
    await hot.aclose()


def decisions(count: int) -> list[SessionEvent]:
    return [
        SessionEvent(
            root_session_id="ses_f",
            session_id="ses_f",
            kind=EventKind.DECISION,
            summary=f"Use Redis Streams for queue number {i}",
            key=f"queue-{i}",
        )
        for i in range(count)
    ]


def worker(
    store: HotStore, group_id: str, graph: KnowledgeGraph, sleeps: list[float]
) -> Background:
    async def record_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    async def factory() -> KnowledgeGraph:
        return graph

    return Background(
        store=store,
        settings=Settings(redis={"batch_size": 10, "drain_retry_max": 2}),
        group_id=group_id,
        knowledge_factory=factory,
        sleep=record_sleep,
    )


async def episode_count(graph: GraphitiKnowledgeGraph, group_id: str) -> int:
    return await graph.episode_count(group_id)


@pytest.mark.parametrize(
    ("fault", "reason", "calls_per_try"),
    [("invalid json", "JSONDecodeError", 4), ("timeout", "TimeoutError: LLM request timed out", 1)],
)
async def test_a_failing_llm_is_retried_then_dead_lettered_and_replays_cleanly(
    redis_url: str, store: HotStore, fault: str, reason: str, calls_per_try: int
) -> None:
    group_id = f"plait-faults-{uuid.uuid4().hex[:8]}"
    llm = BrokenLLMClient(fault)
    graph = GraphitiKnowledgeGraph(
        graphiti=await make_graphiti(falkordb_url=redis_url, llm_client=llm, build=False)
    )
    events = await store.append_events("ses_f", decisions(2))
    await store.enqueue(group_id, events)
    sleeps: list[float] = []
    try:
        report = await worker(store, group_id, graph, sleeps).drain()
        assert report.dead_lettered == 2 and report.written == 0
        # graphiti's own retries, plait's two tries of the batch, then each event alone
        assert llm.failed_calls == (2 + 2) * calls_per_try
        assert len(sleeps) == 1
        assert await store.queue_depth() == 0
        dead = await store.list_dead()
        assert len(dead) == 2 and all(reason in d.reason for d in dead)

        llm.fault = None
        assert await store.replay_dead() == 2
        assert (await worker(store, group_id, graph, []).drain()).written == 2
        # one episode holds both events; the half-written try's left no twin
        assert await episode_count(graph, group_id) == 1
    finally:
        await graph.aclose()


async def test_events_stay_queued_while_the_graph_server_is_unreachable(
    redis_url: str, store: HotStore, tmp_path: Any
) -> None:
    group_id = f"plait-faults-{uuid.uuid4().hex[:8]}"
    settings = Settings.load(tmp_path)
    down = await open_knowledge_graph(settings, f"redis://:pw@127.0.0.1:{free_port()}")
    with pytest.raises(BackendUnavailable, match="unreachable") as raised:
        await down.write_episodes(group_id, decisions(1))
    assert "pw@" not in str(raised.value)
    await store.enqueue(group_id, await store.append_events("ses_f", decisions(3)))
    for _ in range(2):
        report = await worker(store, group_id, down, []).drain()
        assert report.left_queued and report.written == 0 and report.dead_lettered == 0
    assert await store.queue_depth() == 3 and await store.list_dead() == []
    await down.aclose()

    up = await open_knowledge_graph(settings, redis_url)
    try:
        assert (await worker(store, group_id, up, []).drain()).written == 3
        assert await store.queue_depth() == 0
    finally:
        await up.aclose()


async def test_text_that_breaks_full_text_syntax_is_written_like_any_other(
    redis_url: str, store: HotStore
) -> None:
    group_id = f"plait-faults-{uuid.uuid4().hex[:8]}"
    graph = GraphitiKnowledgeGraph(
        graphiti=await make_graphiti(falkordb_url=redis_url, build=False)
    )
    texts = ["Use _ as the name", "Use (_) and @x:{y}", "Use -a|b ~c* %d%", "Use Redis Streams"]
    events = [
        SessionEvent(
            root_session_id="ses_p", session_id="ses_p", kind=EventKind.DECISION, summary=text
        )
        for text in texts
    ]
    await store.enqueue(group_id, await store.append_events("ses_p", events))
    try:
        report = await worker(store, group_id, graph, []).drain()
        assert report.written == len(texts) and report.dead_lettered == 0
        driver = graph.graphiti.driver.clone(database=group_id)
        records, _, _ = await driver.execute_query("MATCH (e:Episodic) RETURN e.content AS c")
        assert len(records) == 1  # one batch of one session: one episode
        # '|' separates an episode line's fields, so a summary's own is written '/'
        assert all(text.replace("|", "/") in records[0]["c"] for text in texts)
    finally:
        await graph.aclose()


def test_searchable_words_drop_what_redisearch_cannot_parse() -> None:
    from plait.adapters.backends.graphiti.factory import searchable_words

    assert searchable_words("Use _ now (_) a\x01b __init__ x-y") == "Use now ab __init__ x y"
