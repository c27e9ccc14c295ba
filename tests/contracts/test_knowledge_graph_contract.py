"""One contract suite, run over every KnowledgeGraph: Graphiti on FalkorDB (offline) and in-memory."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import pytest
from support.events import timed_event

from plait.adapters.backends.graphiti import open_knowledge_graph
from plait.adapters.backends.memory_graph import InMemoryKnowledgeGraph
from plait.state.base.settings import Settings
from plait.state.events import EventKind
from plait.state.groups import group_id_for, user_group_id
from plait.state.ports import KnowledgeGraph, episode_uuid

event = partial(timed_event, start=datetime(2026, 6, 1, 9, 0, tzinfo=UTC))
DECISION = event(1, EventKind.DECISION, "Use PostgreSQL as the primary datastore for orders")
RULE = event(2, EventKind.RULE, "Never call the payment API from unit tests")
FIX = event(3, EventKind.ERROR_RESOLVED, "pin psycopg to 3.1 to fix the pool crash")
PREFERENCE = event(4, EventKind.PREFERENCE, "Prefer small pull requests")
KINDS = {"fact", "entity", "episode", "preference"}


@pytest.fixture
def prefix() -> str:
    return f"kc{uuid.uuid4().hex[:8]}"


@pytest.fixture(params=["graphiti", "memory"])
async def graph(
    request: pytest.FixtureRequest, tmp_path: Path, prefix: str
) -> AsyncIterator[KnowledgeGraph]:
    if request.param == "graphiti":
        settings = Settings.load(tmp_path, graphiti={"group_id_prefix": prefix, "user_id": "ada"})
        knowledge: KnowledgeGraph = await open_knowledge_graph(
            settings, request.getfixturevalue("redis_url")
        )
    else:
        knowledge = InMemoryKnowledgeGraph(prefix=prefix, user="ada")
    yield knowledge
    await knowledge.aclose()


def group(tmp_path: Path, prefix: str, name: str = "shop") -> str:
    return group_id_for(prefix, tmp_path / name)


async def test_knowledge_graph_satisfies_the_protocol(graph: KnowledgeGraph) -> None:
    assert isinstance(graph, KnowledgeGraph)


async def test_knowledge_graph_writes_each_event_once(
    graph: KnowledgeGraph, tmp_path: Path, prefix: str
) -> None:
    shop = group(tmp_path, prefix)
    assert await graph.write_episodes(shop, [DECISION, RULE]) == 2
    assert await graph.write_episodes(shop, [DECISION, RULE]) == 0
    assert await graph.write_episodes(shop, [RULE, FIX, DECISION]) == 1


async def test_knowledge_graph_finds_events_by_their_words_best_first(
    graph: KnowledgeGraph, tmp_path: Path, prefix: str
) -> None:
    shop = group(tmp_path, prefix)
    await graph.write_episodes(shop, [DECISION, RULE, FIX])
    hits = await graph.search("PostgreSQL datastore for orders", [shop], 10)
    assert hits and "PostgreSQL" in hits[0].text
    assert {hit.kind for hit in hits} <= KINDS
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert any("pin psycopg" in hit.text for hit in await graph.search("psycopg pool", [shop], 10))


async def test_knowledge_graph_forgets_episodes_and_what_only_they_said(
    graph: KnowledgeGraph, tmp_path: Path, prefix: str
) -> None:
    shop = group(tmp_path, prefix)
    await graph.write_episodes(shop, [DECISION])
    await graph.write_episodes(shop, [FIX])
    assert any(
        "PostgreSQL" in hit.text for hit in await graph.search("PostgreSQL orders", [shop], 10)
    )
    assert await graph.forget_episodes(shop, [episode_uuid(shop, DECISION), str(uuid.uuid4())]) == 1
    assert not any(
        "PostgreSQL" in h.text for h in await graph.search("PostgreSQL orders", [shop], 10)
    )
    assert any("psycopg" in hit.text for hit in await graph.search("psycopg pool", [shop], 10))
    assert await graph.write_episodes(shop, [DECISION]) == 1  # gone: it can be written again


async def test_knowledge_graph_keeps_groups_apart(
    graph: KnowledgeGraph, tmp_path: Path, prefix: str
) -> None:
    shop, blog = group(tmp_path, prefix), group(tmp_path, prefix, "blog")
    sqlite = event(5, EventKind.DECISION, "Use SQLite as the datastore of the blog")
    await graph.write_episodes(shop, [DECISION])
    await graph.write_episodes(blog, [sqlite])
    blog_hits = await graph.search("PostgreSQL SQLite datastore", [blog], 10)
    assert any("SQLite" in hit.text for hit in blog_hits)
    assert not any("PostgreSQL" in hit.text for hit in blog_hits)
    assert await graph.search("PostgreSQL datastore", [group(tmp_path, prefix, "none")], 10) == []


async def test_knowledge_graph_keeps_preferences_in_the_users_group(
    graph: KnowledgeGraph, tmp_path: Path, prefix: str
) -> None:
    shop = group(tmp_path, prefix)
    await graph.write_episodes(shop, [DECISION, PREFERENCE])
    users = user_group_id(prefix, "ada")
    found = await graph.search("small pull requests", [shop, users], 10)
    assert any(hit.kind == "preference" and "small pull requests" in hit.text for hit in found)
    someone_else = user_group_id(prefix, "bob")  # preferences belong to a user, not the install
    assert await graph.search("small pull requests", [someone_else], 10) == []
    assert not any("pull requests" in hit.text for hit in await graph.search("pull", [shop], 10))


async def test_knowledge_graph_keeps_a_team_members_preferences_in_their_group(
    graph: KnowledgeGraph, tmp_path: Path, prefix: str
) -> None:
    """On a service a team shares, a preference recorded for a member goes to their group."""
    shop = group(tmp_path, prefix)
    theirs = event(6, EventKind.PREFERENCE, "Prefer tabs over spaces").model_copy(
        update={"member": "alice"}
    )
    await graph.write_episodes(shop, [theirs])
    alice, owner = user_group_id(prefix, "alice"), user_group_id(prefix, "ada")
    assert any("tabs" in hit.text for hit in await graph.search("tabs spaces", [alice], 10))
    assert await graph.search("tabs spaces", [owner], 10) == []


async def test_knowledge_graph_search_respects_the_limit(
    graph: KnowledgeGraph, tmp_path: Path, prefix: str
) -> None:
    shop = group(tmp_path, prefix)
    many = [event(10 + i, EventKind.DECISION, f"Use worker pool {i} for exports") for i in range(8)]
    await graph.write_episodes(shop, many)
    assert 0 < len(await graph.search("worker pool exports", [shop], 3)) <= 3


async def test_knowledge_graph_pictures_a_bounded_part_of_a_group(
    graph: KnowledgeGraph, tmp_path: Path, prefix: str
) -> None:
    shop = group(tmp_path, prefix)
    assert (await graph.picture(shop, 10)).episodes == 0
    await graph.write_episodes(shop, [DECISION, RULE, FIX])
    picture = await graph.picture(shop, 2)
    assert picture.episodes >= 1  # Graphiti writes a batch as one episode
    assert len(picture.facts) <= 2 and picture.total_facts >= len(picture.facts)
    ends = {fact.source for fact in picture.facts} | {fact.target for fact in picture.facts}
    assert ends <= {entity.uuid for entity in picture.entities}
    assert picture.total_entities >= len(picture.entities)
    if isinstance(graph, InMemoryKnowledgeGraph):  # the twin keeps episodes only
        assert not picture.facts and not picture.entities
    else:  # the offline extractor's facts: the decision names PostgreSQL
        assert picture.facts and picture.total_facts > 2
        everything = await graph.picture(shop, 100)
        assert any("PostgreSQL" in fact.fact for fact in everything.facts)
        assert len(everything.facts) == everything.total_facts
