"""plait on a Redis Cluster (3 primaries, 3 replicas; real redis-servers): ``redis+cluster://``.

The hot store, the checkpoints and the observations of a project run on the cluster with each
store's keys on one hash slot; projects spread over the primaries.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from redis.cluster import ClusterNode, RedisCluster
from support.redis_cluster import LocalCluster

from plait import Memory
from plait.forgetting import Selection, forget
from plait.state.groups import project_key
from plait.state.observations import ObservationDraft

pytestmark = pytest.mark.slow


def on_cluster(cluster: LocalCluster, graph_url: str) -> dict[str, Any]:
    """How a Memory opens for these tests: the hot tier on the cluster, the graph on its server."""
    return {
        "start_background": False,
        "redis": {"url": cluster.url},
        "falkordb": {"url": graph_url},
        "graphiti": {"group_id_prefix": f"t{uuid.uuid4().hex[:10]}"},
    }


def spread_projects(tmp_path: Path, cluster: LocalCluster) -> list[Path]:
    """Three project folders whose hot stores hash to at least two primaries (keys are hashed:
    any three projects land on one primary one time in nine)."""
    client = RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in cluster.startup_nodes])
    try:
        candidates = [tmp_path / f"project-{number}" for number in range(12)]
        owner = {
            path: str(client.get_node_from_key(f"{{plait:{project_key(path)}}}:x"))
            for path in candidates
        }
    finally:
        client.close()
    first = candidates[0]
    other = next(path for path in candidates if owner[path] != owner[first])
    return [first, other, next(p for p in candidates if p not in (first, other))]


async def test_a_session_and_its_memory_on_a_redis_cluster(
    tmp_path: Path, redis_cluster: LocalCluster, redis_url: str
) -> None:
    """The knowledge graph is a FalkorDB server of its own (the suite's embedded one)."""
    projects = spread_projects(tmp_path, redis_cluster)
    for number, project in enumerate(projects):
        project.mkdir()
        opening = on_cluster(redis_cluster, redis_url)
        async with Memory.open(project, tmp_path / "data", **opening) as memory:
            await memory.user_turn("ses-1", f"We decided to use Postgres {number} for the ledger.")
            await memory.user_turn("ses-1", "Rule: never commit to main.")
            envelope = await memory.envelope("ses-1")
            assert f"Postgres {number}" in envelope and "never commit to main" in envelope
            draft = ObservationDraft(title=f"Ledger store {number}", content="Postgres")
            saved = await memory.observations.save(draft)
            found = await memory.observations.search("ledger store")
            assert saved.observation.id in [hit.id for hit, _ in found]
            assert (await forget(memory, Selection(match=f"Postgres {number}"))).events
            assert f"Postgres {number}" not in await memory.envelope("ses-1")

    nodes = [ClusterNode(host, port) for host, port in redis_cluster.startup_nodes]
    client = RedisCluster(startup_nodes=nodes)
    try:
        ours = tuple(f"{{plait:{project_key(project)}}}:" for project in projects)
        keys = [
            key.decode()
            for key in client.scan_iter(match="*plait:*", count=1000)
            if key.decode().startswith(ours)
        ]
        slots = {client.keyslot(key) for key in keys}
        owners = {str(client.get_node_from_key(key)) for key in keys}
    finally:
        client.close()
    assert len(slots) == len(projects)  # one slot a project's hot store
    assert len(owners) >= 2  # and the projects' keys are not all on one primary


async def test_doctor_reports_the_cluster_and_the_graph_server_apart(
    tmp_path: Path, redis_cluster: LocalCluster, redis_url: str
) -> None:
    from plait.doctor import run_checks
    from plait.state.base.settings import Settings

    settings = Settings(
        data_dir=tmp_path / "data",
        redis={"url": redis_cluster.url},
        falkordb={"url": redis_url},
    )
    checks = {c.component: c for c in await run_checks(settings, tmp_path)}
    assert checks["hot tier"].status == "ok" and "Redis Cluster" in checks["hot tier"].detail
    assert checks["checkpointer"].status == "ok"
    graph = checks["knowledge graph"]
    assert graph.status == "ok" and "FalkorDB at" in graph.detail
    password = redis_url.split("://:", 1)[1].split("@", 1)[0]  # the suite's server has one
    assert password and password not in graph.detail and "[REDACTED]" in graph.detail


def test_sync_code_on_a_redis_cluster(
    tmp_path: Path, redis_cluster: LocalCluster, redis_url: str
) -> None:
    """The blocking paths: ``Memory.open_sync`` and the sync checkpointer (``RedisSaver``)."""
    from langgraph.checkpoint.base import empty_checkpoint

    from plait.adapters.backends.checkpoint import RedisSaver

    opening = on_cluster(redis_cluster, redis_url)
    with Memory.open_sync(tmp_path, tmp_path / "data", **opening) as memory:
        memory.user_turn("ses-sync", "We decided to ship on Fridays.")
        assert "ship on Fridays" in memory.envelope("ses-sync")

    config = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
    with RedisSaver.from_conn_string(redis_cluster.url, prefix="plait:sync:cp:") as saver:
        checkpoint = empty_checkpoint()
        saved = saver.put(config, checkpoint, {"source": "input", "step": 1}, {})
        found = saver.get_tuple(saved)
        assert found is not None and found.checkpoint["id"] == checkpoint["id"]
        assert len(list(saver.list(config))) == 1
        saver.delete_thread("t1")
        assert saver.get_tuple(config) is None
