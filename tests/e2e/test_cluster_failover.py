"""A Redis Cluster primary killed under load: its replica takes over and nothing acknowledged
is lost, in order, once; calls made meanwhile wait in plait's spool (when are they recorded:
as soon as the promoted replica answers, with nobody sending anything else)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from redis.cluster import ClusterNode, RedisCluster
from support.redis_cluster import local_cluster

from plait import Memory
from plait.adapters.hosts.opencode.hooks import WIRE
from plait.adapters.hosts.opencode.hooks import host_call as opencode_call

pytestmark = pytest.mark.slow
CALLS = 60
KILL_AFTER = 15


def prompt(session: str, number: int) -> tuple[dict[str, object], dict[str, object]]:
    parts = [{"type": "text", "text": f"prompt {number}"}]
    return {"sessionID": session}, {"message": {}, "parts": parts}


async def test_a_killed_primary_loses_no_acknowledged_call(tmp_path: Path, redis_url: str) -> None:
    session = f"ses_{uuid.uuid4().hex[:10]}"
    project = tmp_path / "project"
    project.mkdir()
    with local_cluster() as cluster:
        async with Memory.open(
            project,
            tmp_path / "data",
            start_background=False,
            reconnect=True,
            redis={"url": cluster.url},
            falkordb={"url": redis_url},
            graphiti={"group_id_prefix": f"t{uuid.uuid4().hex[:10]}"},
        ) as memory:
            memory.dispatch.serve(WIRE.adapter)
            store = memory.backends.store
            key = store._key("s", session, "events")
            nodes = [ClusterNode(host, port) for host, port in cluster.startup_nodes]
            admin = RedisCluster(startup_nodes=nodes)
            owner = admin.get_node_from_key(key)
            admin.close()
            victim = next(
                process
                for port, process in zip(cluster.ports, cluster.processes, strict=True)
                if port == owner.port
            )
            kept: list[tuple[int, str]] = []
            for number in range(CALLS):
                if number == KILL_AFTER:
                    victim.kill()
                inputs, output = prompt(session, number)
                answer = await memory.dispatch.answer(
                    opencode_call("chat.message", inputs, output, f"call-{number}")
                )
                kept.append((number, answer.kept))
                await asyncio.sleep(0.05)
            assert memory.dispatch.intake is not None
            # recorded with nobody sending more, once the replica took over (a hang guard only)
            await asyncio.wait_for(memory.dispatch.intake.idle(), 60)
            events = await store.read_events(session)
    acknowledged = [number for number, where in kept if where]
    stored = [int(e.body.split()[-1]) for e in events if e.kind == "prompt"]
    assert len(acknowledged) == CALLS  # each call was kept (stored, or spooled meanwhile)
    assert stored == acknowledged  # all of them, once, in order
    assert any(where == "spooled" for _, where in kept[KILL_AFTER:])
