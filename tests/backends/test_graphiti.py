"""The knowledge-graph port on Graphiti and a real FalkorDB, offline: episodes, recall, groups."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import pytest
from support.events import timed_event

from plait.adapters.backends.graphiti import (
    GraphitiKnowledgeGraph,
    OfflineEmbedder,
    group_id_for,
    open_knowledge_graph,
    parse_episode_body,
    user_group_id,
)
from plait.adapters.backends.graphiti.factory import TELEMETRY_ENV, address_of
from plait.adapters.backends.graphiti.knowledge import redacted_url
from plait.adapters.backends.graphiti.offline_embedder import cosine
from plait.memory import Memory
from plait.state.base.settings import Settings
from plait.state.events import EventKind
from plait.state.ports import KnowledgeGraph, episode_uuid

START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


event = partial(timed_event, start=START)


DECISION = event(
    1,
    EventKind.DECISION,
    "Use PostgreSQL as the primary datastore for orders",
    refs=("shop/orders/models.py",),
    key="orders-storage",
)
FIX = event(
    2,
    EventKind.ERROR_RESOLVED,
    "pin psycopg to 3.1 to fix the connection pool crash",
    key="pytest:PoolTimeout",
)
RULE = event(3, EventKind.RULE, "Never call the payment API from unit tests", key="tests")
PREFERENCE = event(4, EventKind.PREFERENCE, "Prefer small pull requests", key="review-size")
EVENTS = [DECISION, FIX, RULE, PREFERENCE]
DECISION_TEXT = "Decided: use PostgreSQL as the primary datastore for orders"


def project_group(tmp_path: Path, group_prefix: str) -> str:
    return group_id_for(group_prefix, tmp_path / "shop")


@pytest.fixture
async def knowledge(
    redis_url: str, tmp_path: Path, group_prefix: str
) -> AsyncIterator[GraphitiKnowledgeGraph]:
    settings = Settings.load(tmp_path, graphiti={"group_id_prefix": group_prefix})
    graph = await open_knowledge_graph(settings, redis_url)
    yield graph
    await graph.aclose()


async def episodes_of(graph: GraphitiKnowledgeGraph, group_id: str) -> list[dict]:
    driver = graph.graphiti.driver.clone(database=group_id)
    records, _, _ = await driver.execute_query(
        "MATCH (e:Episodic) RETURN e.uuid AS uuid, e.content AS content, e.valid_at AS valid_at"
    )
    return records


async def test_a_write_is_one_episode_and_a_paraphrase_recalls_the_decision(
    knowledge: GraphitiKnowledgeGraph, tmp_path: Path, group_prefix: str
) -> None:
    group_id = project_group(tmp_path, group_prefix)
    assert isinstance(knowledge, KnowledgeGraph)
    assert await knowledge.write_episodes(group_id, EVENTS) == 4
    episodes = {e["uuid"]: e for e in await episodes_of(knowledge, group_id)}
    assert set(episodes) == {episode_uuid(group_id, DECISION)}  # one episode, its first event's
    episode = episodes[episode_uuid(group_id, DECISION)]
    project, lines = parse_episode_body(episode["content"])
    assert project == "shop" and [line.kind for line in lines] == [
        "decision",
        "error_resolved",
        "rule",
    ]
    assert lines[0].refs == ("shop/orders/models.py",) and lines[0].key == "orders-storage"
    assert datetime.fromisoformat(episode["valid_at"]) == RULE.time  # the newest event's
    assert knowledge.graphiti.llm_client.unknown_requests.get("ExtractedEdges", 0) == 0

    hits = await knowledge.search("which database did we pick for storing orders?", [group_id], 5)
    assert hits[0].kind == "fact" and "PostgreSQL" in hits[0].text
    assert {h.kind for h in hits} <= {"fact", "entity", "episode", "preference"}
    fixes = await knowledge.search("how was the pool crash solved", [group_id], 10)
    assert any("pin psycopg" in h.text for h in fixes)


async def test_replay_writes_nothing_new(
    knowledge: GraphitiKnowledgeGraph, tmp_path: Path, group_prefix: str
) -> None:
    group_id = project_group(tmp_path, group_prefix)
    assert await knowledge.write_episodes(group_id, [DECISION, FIX]) == 2
    assert await knowledge.write_episodes(group_id, [DECISION, FIX]) == 0
    assert await knowledge.write_episodes(group_id, [FIX, RULE, DECISION]) == 1
    assert len(await episodes_of(knowledge, group_id)) == 2  # the rule alone in a new one


async def test_groups_are_isolated_and_preferences_are_the_users(
    knowledge: GraphitiKnowledgeGraph, tmp_path: Path, group_prefix: str
) -> None:
    shop = project_group(tmp_path, group_prefix)
    blog = group_id_for(group_prefix, tmp_path / "blog")
    other = event(1, EventKind.DECISION, "Use SQLite as the datastore of the blog", key="storage")
    await knowledge.write_episodes(shop, EVENTS)
    await knowledge.write_episodes(blog, [other])
    blog_hits = await knowledge.search("PostgreSQL SQLite datastore", [blog], 10)
    assert blog_hits and all("PostgreSQL" not in h.text for h in blog_hits)
    assert any("SQLite" in h.text for h in blog_hits)
    shop_hits = await knowledge.search("PostgreSQL SQLite datastore", [shop], 10)
    assert any("PostgreSQL" in h.text for h in shop_hits)
    assert all("SQLite" not in h.text for h in shop_hits)
    users = user_group_id(group_prefix, knowledge.user)
    preferred = await knowledge.search("what size of pull requests", [shop, users], 10)
    assert any(h.kind == "preference" and "small pull requests" in h.text for h in preferred)
    assert not any(
        "small pull requests" in h.text
        for h in await knowledge.search("size of pull requests", [shop], 10)
    )


async def test_offline_embedder_has_the_configured_size_and_ranks_paraphrases_first() -> None:
    settings = Settings(embedder={"dimensions": 128})
    embedder = OfflineEmbedder(settings.embedder.dimensions)
    fact, paraphrase, unrelated = await embedder.create_batch(
        [
            DECISION_TEXT,
            "which database stores the orders?",
            "the logo is blue on the landing page",
        ]
    )
    assert len(fact) == 128 and abs(sum(x * x for x in fact) - 1) < 1e-9
    assert cosine(fact, paraphrase) > cosine(fact, unrelated) + 0.15
    assert fact == (await embedder.create_batch([DECISION_TEXT]))[0]


async def test_telemetry_follows_the_setting(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TELEMETRY_ENV, "true")
    graph = await open_knowledge_graph(Settings.load(tmp_path), redis_url)
    await graph.aclose()
    assert os.environ[TELEMETRY_ENV] == "false"
    opted_in = Settings.load(tmp_path, graphiti={"telemetry": True})
    graph = await open_knowledge_graph(opted_in, redis_url)
    await graph.aclose()
    assert os.environ[TELEMETRY_ENV] == "true"


def test_server_addresses_are_read_from_urls() -> None:
    assert address_of("redis://:pw@10.0.0.5:7000/0", "h", 1) == ("10.0.0.5", 7000)
    assert address_of("falkor://db", "h", 1) == ("db", 6379)
    assert address_of(None, "h", 1) == ("h", 1)
    assert address_of("unix:///tmp/falkor.sock", "h", 1) is None


def test_server_urls_in_messages_hide_the_password() -> None:
    assert redacted_url("redis://:s3cret@127.0.0.1:7000/0") == "redis://127.0.0.1:7000/0"
    assert redacted_url("redis://me:s3cret@db:7000") == "redis://me@db:7000"
    assert redacted_url("redis://db:7000") == "redis://db:7000"


async def test_memory_drains_to_graphiti_and_refresh_recalls_the_decision(
    redis_url: str, tmp_path: Path, group_prefix: str
) -> None:
    settings = Settings.load(
        tmp_path, redis={"url": redis_url}, graphiti={"group_id_prefix": group_prefix}
    )
    async with Memory.open(tmp_path, settings=settings, start_background=False) as memory:
        assert memory.background is not None
        await memory.background.drain()  # what other tests left on the shared server's queue
        recorded = await memory.dispatch.record("ses_e2e", [DECISION, RULE])
        assert [e.root_session_id for e in recorded] == ["ses_e2e", "ses_e2e"]
        report = await memory.background.drain()
        assert report.written == 2 and report.dead_lettered == 0
        assert await memory.backends.store.queue_depth() == 0
        knowledge = await memory.background.knowledge()
        assert isinstance(knowledge, GraphitiKnowledgeGraph)
        recall = await memory.background.refresh(
            memory.group_id, "ses_e2e", "what datastore do orders live in?"
        )
        assert recall is not None
        assert "PostgreSQL" in recall.text
        decided = next(line for line in recall.text.splitlines() if "PostgreSQL" in line)
        assert decided.endswith(f"(since {DECISION.time:%Y-%m-%d})")
        assert recall.node_refs
        assert (await memory.background.drain()).written == 0
