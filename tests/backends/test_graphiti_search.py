"""plait's FalkorDB search fixes against graphiti-core's own queries, on a real server."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from graphiti_core.search.search_filters import SearchFilters
from graphiti_core.search.search_utils import (
    edge_fulltext_search,
    edge_similarity_search,
    node_similarity_search,
)

from plait.adapters.backends.graphiti import make_graphiti
from plait.adapters.backends.graphiti.factory import build_indices
from plait.adapters.backends.graphiti.offline_embedder import OfflineReranker
from plait.adapters.backends.graphiti.search import (
    RECENCY_FLOOR,
    RECENCY_HALF_LIFE_DAYS,
    recency,
    reranked,
)
from plait.devtools.search_bench import QUERIES, bench_search, seed_graph
from plait.nodes.recall import render_recall
from plait.state.ports import MemoryHit

EDGES = 400


@pytest.fixture(scope="module")
def group_id() -> str:
    return f"plait-search-{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def graphs(redis_url: str, group_id: str) -> AsyncIterator[tuple[object, object]]:
    fast = await make_graphiti(falkordb_url=redis_url)
    stock = await make_graphiti(falkordb_url=redis_url, fast_search=False)
    records, _, _ = await fast.driver.clone(group_id).execute_query(
        "MATCH ()-[e:RELATES_TO]->() RETURN count(e) AS c"
    )
    if records[0]["c"] != EDGES:
        await seed_graph(fast, group_id, EDGES, seed=7)
    await build_indices(fast, [group_id])
    assert fast.driver.vector_dimensions == 256  # the vector index path is taken
    yield fast, stock
    await stock.close()
    await fast.close()


async def test_fast_edge_searches_return_what_graphiti_returns(graphs, group_id: str) -> None:
    fast, stock = graphs
    ours, theirs = fast.driver.clone(group_id), stock.driver.clone(group_id).plain()
    filters = SearchFilters()
    compared = 0
    for query in QUERIES[:4]:
        vector = await fast.embedder.create(query)
        mine = await edge_similarity_search(ours, vector, None, None, filters, [group_id], 15)
        stock_hits = await edge_similarity_search(
            theirs, vector, None, None, filters, [group_id], 15
        )
        assert [e.uuid for e in mine] == [e.uuid for e in stock_hits]
        assert [e.model_dump() for e in mine] == [e.model_dump() for e in stock_hits]
        assert all(e.source_node_uuid and e.target_node_uuid for e in mine)
        compared += len(mine)
        text = await edge_fulltext_search(ours, query, filters, [group_id], 15)
        assert text and all(e.group_id == group_id for e in text)
    assert compared > 0


async def test_lean_searches_keep_attributes_and_drop_embeddings(graphs, group_id: str) -> None:
    fast, stock = graphs
    ours, theirs = fast.driver.clone(group_id), stock.driver.clone(group_id).plain()
    for pattern in ("(x:Entity)", "()-[x:RELATES_TO]->()"):
        await ours.execute_query(f"MATCH {pattern} SET x.plait_tag = 'kept', x.plait_ids = [1, 2]")
    nodes = edges = 0
    for query in [*QUERIES[:4], "redis", "pytest"]:
        vector = await fast.embedder.create(query)
        args = (vector, SearchFilters(), [group_id], 10, 0.3)
        mine = await node_similarity_search(ours, *args)
        assert [n.model_dump() for n in mine] == [
            n.model_dump() for n in await node_similarity_search(theirs, *args)
        ]
        assert all(n.attributes == {"plait_tag": "kept", "plait_ids": [1, 2]} for n in mine)
        facts = await edge_fulltext_search(ours, query, SearchFilters(), [group_id], 10)
        assert [e.model_dump() for e in facts] == [
            e.model_dump()
            for e in await edge_fulltext_search(theirs, query, SearchFilters(), [group_id], 10)
        ]
        assert all(e.attributes["plait_tag"] == "kept" and not e.fact_embedding for e in facts)
        nodes, edges = nodes + len(mine), edges + len(facts)
    assert nodes > 0 and edges > 0


async def test_fulltext_works_with_hyphenated_group_ids(graphs, group_id: str) -> None:
    fast, _ = graphs
    assert "-" in group_id
    hits = await edge_fulltext_search(
        fast.driver.clone(group_id), "redis session cache", SearchFilters(), [group_id], 5
    )
    assert hits
    assert all(
        {"redis", "session", "cache"} & set(e.fact.lower().replace("(", " ").split()) for e in hits
    )


async def test_bench_search_reports_percentiles(redis_url: str) -> None:
    prefix = f"plait-bench-test-{uuid.uuid4().hex[:6]}"
    report = await bench_search(redis_url, sizes=(60,), rounds=4, prefix=prefix)
    timings = report["sizes"][60]
    assert {"search_memory", "edge_fulltext", "edge_similarity"} <= set(timings)
    assert all(0 <= t["p50"] <= t["p95"] <= t["max"] for t in timings.values())
    assert report["rounds"] == 4


def test_render_recall_of_search_hits_stays_within_budget() -> None:
    now = datetime.now(UTC)
    hits = [
        MemoryHit(uuid="a", kind="fact", text="Decided: use FalkorDB", score=2.0, valid_at=now),
        MemoryHit(
            uuid="b",
            kind="fact",
            text="Decided: use Neo4j",
            score=1.5,
            invalid_at=now - timedelta(days=1),
        ),
        MemoryHit(uuid="c", kind="entity", text="x" * 500, score=1.0),
        MemoryHit(uuid="d", kind="episode", text="rule: run the tests", score=0.5),
        MemoryHit(uuid="a", kind="fact", text="Decided: use FalkorDB", score=0.1),
    ]
    text, refs = render_recall(hits, 120)
    assert len(text.encode()) <= 120
    assert refs == ["a", "d"]  # the long entity is skipped, the shorter episode after it fits
    assert text.splitlines()[0] == f"- [fact] Decided: use FalkorDB (since {now:%Y-%m-%d})"
    assert "Neo4j" not in text
    assert render_recall([], 100) == ("", [])


def test_render_recall_of_cached_hits_clips_long_lines() -> None:
    hits = [MemoryHit(uuid="e", kind="entity", text="ü " * 400, score=1.0)]
    text, refs = render_recall(hits, 1000)
    assert refs == ["e"]
    assert text.startswith("- [entity] ü ü")
    assert len(text.encode()) <= len("- [entity] ") + 400


async def test_candidates_of_every_kind_are_reranked_on_one_scale() -> None:
    graphiti = SimpleNamespace(cross_encoder=OfflineReranker())
    decision = "Decided: use FalkorDB as the graph database"
    candidates = [  # graphiti-core's per-kind RRF scores: the entity list's best looks best
        MemoryHit(uuid="n1", kind="entity", text="release-notes.md: changelog file", score=2.0),
        MemoryHit(uuid="e1", kind="episode", text=decision, score=0.5),
        MemoryHit(uuid="f1", kind="fact", text=decision, score=0.4),
        MemoryHit(uuid="e2", kind="episode", text="bumped the CI cache key", score=1.0),
    ]
    ranked = await reranked(graphiti, "which graph database did we decide on?", candidates)
    assert [hit.uuid for hit in ranked][:2] == ["f1", "e1"]  # as relevant: the fact first
    assert ranked[0].score > ranked[1].score > ranked[-1].score
    assert {hit.uuid for hit in ranked} == {"n1", "e1", "f1", "e2"}


async def test_as_relevant_newer_knowledge_ranks_first_and_age_is_bounded() -> None:
    graphiti = SimpleNamespace(cross_encoder=OfflineReranker())
    now = datetime.now(UTC)
    query = "which http client do we use?"
    old = MemoryHit(  # a little more relevant, but a year old
        uuid="old",
        kind="fact",
        text="we use the httpx http client",
        score=0,
        valid_at=now - timedelta(days=365),
    )
    new = MemoryHit(
        uuid="new",
        kind="fact",
        text="we use the httpx http client with retries",
        score=0,
        valid_at=now - timedelta(hours=1),
    )
    relevance = dict(await graphiti.cross_encoder.rank(query, [old.text, new.text]))
    assert relevance[old.text] > relevance[new.text]
    ranked = await reranked(graphiti, query, [old, new])
    assert [hit.uuid for hit in ranked] == ["new", "old"]
    assert ranked[1].score >= RECENCY_FLOOR * relevance[old.text]  # age never sinks a hit
    assert recency(None, now) == RECENCY_FLOOR  # undated: as old as can be
    assert recency(now, now) == 1.0
    assert recency(now - timedelta(days=RECENCY_HALF_LIFE_DAYS), now) == pytest.approx(
        (1 + RECENCY_FLOOR) / 2
    )


async def test_entities_are_found_by_name_without_crashing_the_server(tmp_path) -> None:
    """graphiti-core's exact-name lookup, made one name at a time, on a server of its own.

    The stock query (``n.name IN $names``) crashed FalkorDB on lists of eight names and more
    (REALTALK's chats in ``plait bench recall``); a crash here fails the lookup and the ping.
    """
    import random

    from graphiti_core.nodes import EntityNode

    from plait.adapters.backends.embedded import EmbeddedFalkorDB

    words = ["what", "a", "about", "and", "care", "day", "done", "for", "had", "hair", "my"]
    words += ["self", "some", "spa", "you", "yoga"]
    group_id = "plait-names"
    with EmbeddedFalkorDB(tmp_path) as server:
        graphiti = await make_graphiti(falkordb_url=server.url)
        try:
            await build_indices(graphiti, [group_id])
            driver = graphiti.driver.clone(group_id)
            for name in ("Kevin", "spa", "Miami"):
                node = EntityNode(name=name, group_id=group_id, labels=["Entity"], summary=name)
                await node.generate_name_embedding(graphiti.embedder)
                await node.save(driver)
            rng = random.Random(7)
            for _ in range(200):
                names = [*rng.sample(words, rng.randint(8, len(words))), "Kevin"]
                found = await EntityNode.get_by_names(driver, names, [group_id])
                assert sorted(n.name for n in found) == sorted({"Kevin", "spa"} & set(names))
            assert await graphiti.driver.client.connection.ping()
        finally:
            await graphiti.close()
