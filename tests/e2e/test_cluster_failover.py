"""A Redis Cluster primary killed under load: its replica takes over and nothing acknowledged
is lost, in order, once; calls made meanwhile wait in plait's spool (when are they recorded:
as soon as the promoted replica answers, with nobody sending anything else)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from redis.cluster import ClusterNode, RedisCluster
from support.cluster_runs import memory_on, prompt_run
from support.redis_cluster import local_cluster

pytestmark = pytest.mark.slow
CALLS = 60
KILL_AFTER = 15


async def test_a_killed_primary_loses_no_acknowledged_call(tmp_path: Path, redis_url: str) -> None:
    session = f"ses_{uuid.uuid4().hex[:10]}"
    with local_cluster() as cluster:
        async with memory_on(cluster, tmp_path, redis_url) as memory:
            key = memory.backends.store._key("s", session, "events")
            nodes = [ClusterNode(host, port) for host, port in cluster.startup_nodes]
            admin = RedisCluster(startup_nodes=nodes)
            owner = admin.get_node_from_key(key)
            admin.close()
            victim = next(
                process
                for port, process in zip(cluster.ports, cluster.processes, strict=True)
                if port == owner.port
            )
            kept, stored = await prompt_run(
                memory, session, CALLS, fault_at=KILL_AFTER, fault=victim.kill
            )
    assert all(kept)  # each call was kept (stored, or spooled meanwhile)
    assert stored == list(range(CALLS))  # all of them, once, in order
    assert "spooled" in kept[KILL_AFTER:]
