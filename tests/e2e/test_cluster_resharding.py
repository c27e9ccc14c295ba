"""A Redis Cluster resharded under load: the slots of a session's keys and of its checkpoint
thread move to other primaries while the session's calls go on. Nothing acknowledged is lost,
each call is recorded once and in order, and what waited in plait's spool meanwhile is recorded
with nobody sending more."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from redis.cluster import ClusterNode, RedisCluster
from support.cluster_runs import memory_on, prompt_run
from support.redis_cluster import LocalCluster, local_cluster, migrate_slot

pytestmark = pytest.mark.slow
CALLS = 60
MOVE_AFTER = 10

Move = tuple[int, int, int]  # from the primary on this port, to the one on that port, this slot


def owners(
    cluster: LocalCluster, keys: tuple[str, ...]
) -> tuple[list[int], list[Move], tuple[int, ...]]:
    """The ports of the primaries holding ``keys``, a move of each key's slot elsewhere, and
    every primary's port."""
    admin = RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in cluster.startup_nodes])
    try:
        primaries = tuple(node.port for node in admin.get_primaries())
        held = [admin.get_node_from_key(key).port for key in keys]
        moves = [
            (owner, next(port for port in primaries if port != owner), admin.keyslot(key))
            for owner, key in zip(held, keys, strict=True)
        ]
    finally:
        admin.close()
    return held, moves, primaries


def move_all(moves: list[Move], primaries: tuple[int, ...]) -> int:
    """Move each slot, its keys one by one with a pause between; how many keys moved."""
    return sum(
        migrate_slot(source, target, slot, primaries=primaries, pause_s=0.05)
        for source, target, slot in moves
    )


async def test_slots_moved_mid_run_lose_no_acknowledged_call(
    tmp_path: Path, redis_url: str
) -> None:
    session = f"ses_{uuid.uuid4().hex[:10]}"
    with local_cluster() as cluster:
        async with memory_on(cluster, tmp_path, redis_url) as memory:
            checkpoints = memory.dispatch.checkpointer.keys  # type: ignore[attr-defined]
            events_key = memory.backends.store._key("s", session, "events")
            keys = (events_key, str(checkpoints.namespaces(session)))
            _, moves, primaries = owners(cluster, keys)
            moving: list[asyncio.Future[int]] = []

            def move() -> None:  # the keys go one by one while the calls go on
                moving.append(asyncio.ensure_future(asyncio.to_thread(move_all, moves, primaries)))

            kept, stored = await prompt_run(memory, session, CALLS, fault_at=MOVE_AFTER, fault=move)
            finished_during = moving[0].done()
            moved = await asyncio.wait_for(moving[0], 120)
            now_at, _, _ = owners(cluster, keys)
    # the slots moved, with the session's keys and its checkpoints in them
    assert moved > 2 and now_at == [target for _, target, _ in moves]
    assert finished_during  # while the calls went on: they met the slots half moved
    assert all(kept)  # each call was kept (stored, or spooled meanwhile)
    assert stored == list(range(CALLS))  # all of them, once, in order
