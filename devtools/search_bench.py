"""``plait bench search``: long-term search latency on synthetic graphs of 1k, 5k and 16k facts.

Graphs are written directly with graphiti-core's bulk save (offline embeddings, no LLM), one
FalkorDB graph per size, then searched with :func:`search_memory` (the refresh path) and with
graphiti's edge full-text and edge vector searches alone, to see which part grows.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from graphiti_core import Graphiti
from graphiti_core.edges import EntityEdge, EpisodicEdge
from graphiti_core.nodes import EntityNode, EpisodeType, EpisodicNode
from graphiti_core.search.search_filters import SearchFilters
from graphiti_core.search.search_utils import (
    edge_fulltext_search,
    edge_similarity_search,
    episode_fulltext_search,
    node_fulltext_search,
)
from graphiti_core.utils.bulk_utils import add_nodes_and_edges_bulk

from plait.adapters.backends.graphiti.factory import build_indices, drop_group, make_graphiti
from plait.adapters.backends.graphiti.search import search_memory

DEFAULT_SIZES = (1_000, 5_000, 16_000)


def words_of(text: str) -> tuple[str, ...]:
    """The words of a text."""
    return tuple(text.split())


CHUNK = 500
EDGES_PER_NODE = 4
EDGES_PER_EPISODE = 8
SUBJECTS = words_of(
    "api cache client config database deploy docker endpoint error fixture graph "
    "handler index logger memory migration model parser pipeline plugin queue redis "
    "request router schema search server session settings snapshot storage stream "
    "task test token worker "
)
VERBS = words_of(
    "uses calls replaces depends on wraps validates caches retries logs serializes "
    "imports configures migrates indexes streams parses renders "
)
QUALIFIERS = words_of(
    "async batched bounded cached deterministic durable idempotent lazy local "
    "offline ordered paginated retried sharded strict typed versioned "
)
QUERIES = (
    "which database did we choose for the session cache",
    "how was the redis timeout error fixed",
    "rules for the test fixtures",
    "what does the search handler use for pagination",
    "decision about async workers and the queue",
    "parser schema validation",
    "deploy docker config for the server",
    "token refresh in the api client",
)


def fact_text(rng: random.Random, index: int) -> str:
    """A plausible fact about two project things."""
    subject, other = rng.sample(SUBJECTS, 2)
    return (
        f"The {rng.choice(QUALIFIERS)} {subject} module {rng.choice(VERBS)} the "
        f"{rng.choice(QUALIFIERS)} {other} layer (change {index})"
    )


def synthetic_graph(
    group_id: str, edge_count: int, seed: int = 0
) -> tuple[list[EntityNode], list[EntityEdge], list[EpisodicNode], list[EpisodicEdge]]:
    """Entities, facts between them and the episodes mentioning them, deterministic."""
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    node_count = max(10, edge_count // EDGES_PER_NODE)
    nodes = [
        EntityNode(
            name=f"{rng.choice(SUBJECTS)}_{i}.py" if i % 2 else f"{rng.choice(SUBJECTS)} {i}",
            group_id=group_id,
            labels=["Entity"],
            summary="",
            created_at=start,
        )
        for i in range(node_count)
    ]
    episodes: list[EpisodicNode] = []
    edges: list[EntityEdge] = []
    for i in range(edge_count):
        when = start + timedelta(minutes=i)
        if i % EDGES_PER_EPISODE == 0:
            episodes.append(
                EpisodicNode(
                    name=f"episode {i}",
                    group_id=group_id,
                    labels=[],
                    source=EpisodeType.text,
                    content=fact_text(rng, i),
                    source_description="bench",
                    created_at=when,
                    valid_at=when,
                )
            )
        source, target = rng.sample(nodes, 2)
        edges.append(
            EntityEdge(
                source_node_uuid=source.uuid,
                target_node_uuid=target.uuid,
                name="RELATES_TO_FACT",
                fact=fact_text(rng, i),
                group_id=group_id,
                episodes=[episodes[-1].uuid],
                created_at=when,
                valid_at=when,
            )
        )
    mentions = [
        EpisodicEdge(
            source_node_uuid=episodes[i // EDGES_PER_EPISODE].uuid,
            target_node_uuid=edge.source_node_uuid,
            group_id=group_id,
            created_at=start,
        )
        for i, edge in enumerate(edges)
        if i % EDGES_PER_EPISODE == 0
    ]
    return nodes, edges, episodes, mentions


async def seed_graph(graphiti: Graphiti, group_id: str, edge_count: int, seed: int = 0) -> None:
    """Write a synthetic graph of ``edge_count`` facts into ``group_id`` (emptied first)."""
    driver = graphiti.driver.clone(database=group_id)
    await driver.execute_query("MATCH (n) DETACH DELETE n")
    await build_indices(graphiti, [group_id])
    nodes, edges, episodes, mentions = synthetic_graph(group_id, edge_count, seed)
    embedder = graphiti.embedder
    names = await embedder.create_batch([n.name for n in nodes])
    for node, vector in zip(nodes, names, strict=True):
        node.name_embedding = vector
    facts = await embedder.create_batch([e.fact for e in edges])
    for edge, vector in zip(edges, facts, strict=True):
        edge.fact_embedding = vector
    await add_nodes_and_edges_bulk(driver, episodes, [], nodes, [], embedder)
    for begin in range(0, len(edges), CHUNK):
        await add_nodes_and_edges_bulk(driver, [], [], [], edges[begin : begin + CHUNK], embedder)
    await add_nodes_and_edges_bulk(driver, [], mentions, [], [], embedder)


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    """p50 and p95 (and max) of samples, in milliseconds."""
    cuts = statistics.quantiles(samples_ms, n=100, method="inclusive")
    return {"p50": round(cuts[49], 2), "p95": round(cuts[94], 2), "max": round(max(samples_ms), 2)}


async def measure(
    operation: Callable[[str], Awaitable[object]], queries: Sequence[str], rounds: int
) -> dict[str, float]:
    """Run ``operation`` over the queries ``rounds`` times (one warm-up pass not counted)."""
    for query in queries:
        await operation(query)
    samples = []
    for round_ in range(rounds):
        query = queries[round_ % len(queries)]
        started = time.perf_counter()
        await operation(query)
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples)


async def measure_size(
    graphiti: Graphiti, stock: Graphiti, group_id: str, rounds: int, queries: Sequence[str]
) -> dict[str, Any]:
    """Timings of the refresh search and of its parts, plait's and graphiti-core's own."""
    fast_driver = graphiti.driver.clone(database=group_id)
    stock_driver = stock.driver.clone(database=group_id)
    groups = [group_id]
    filters = SearchFilters()
    vectors = {q: await graphiti.embedder.create(q) for q in queries}

    def refresh(on: Graphiti) -> Callable[[str], Awaitable[object]]:
        return lambda query: search_memory(on, query, groups, 10)

    def edge_text(driver: Any) -> Callable[[str], Awaitable[object]]:
        return lambda query: edge_fulltext_search(driver, query, filters, groups, 20)

    def edge_vector(driver: Any) -> Callable[[str], Awaitable[object]]:
        return lambda query: edge_similarity_search(
            driver, vectors[query], None, None, filters, groups, 20
        )

    return {
        "search_memory": await measure(refresh(graphiti), queries, rounds),
        "search_memory (graphiti stock)": await measure(refresh(stock), queries, rounds),
        "edge_fulltext": await measure(edge_text(fast_driver), queries, rounds),
        "edge_fulltext (graphiti stock)": await measure(edge_text(stock_driver), queries, rounds),
        "edge_similarity": await measure(edge_vector(fast_driver), queries, rounds),
        "edge_similarity (graphiti stock)": await measure(
            edge_vector(stock_driver), queries, rounds
        ),
        "node_fulltext": await measure(
            lambda q: node_fulltext_search(fast_driver, q, filters, groups, 20), queries, rounds
        ),
        "episode_fulltext": await measure(
            lambda q: episode_fulltext_search(fast_driver, q, filters, groups, 20),
            queries,
            rounds,
        ),
    }


async def bench_search(
    falkordb_url: str,
    *,
    sizes: Sequence[int] = DEFAULT_SIZES,
    rounds: int = 100,
    prefix: str = "plait-bench",
    keep: bool = False,
    queries: Sequence[str] = QUERIES,
) -> dict[str, Any]:
    """Seed a graph per size, time the searches, drop the graphs (unless ``keep``).

    Returns ``{"sizes": {edges: {operation: {"p50", "p95", "max"}}}, "seed_seconds": {...},
    "rounds": n}`` in milliseconds: ``search_memory`` is the knowledge graph's part of plait's
    search (facts and entities, hybrid RRF, reranked; turns come from the recall index, see
    ``plait bench turns``); the other rows are its parts; ``(graphiti stock)`` rows are the same
    with graphiti-core's own FalkorDB queries, for comparison.
    """
    graphiti = await make_graphiti(falkordb_url=falkordb_url)
    stock = await make_graphiti(falkordb_url=falkordb_url, fast_search=False)
    report: dict[str, Any] = {"sizes": {}, "seed_seconds": {}, "rounds": rounds}
    try:
        for size in sizes:
            group_id = f"{prefix}-{size}"
            started = time.perf_counter()
            await seed_graph(graphiti, group_id, size)
            report["seed_seconds"][size] = round(time.perf_counter() - started, 2)
            report["sizes"][size] = await measure_size(graphiti, stock, group_id, rounds, queries)
            if not keep:
                await drop_group(graphiti, group_id)
    finally:
        await stock.close()
        await graphiti.close()
    return report


__all__ = ["DEFAULT_SIZES", "bench_search", "seed_graph", "synthetic_graph"]
