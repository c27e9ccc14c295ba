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
from support.redis_cluster import LocalCluster, local_cluster, migrate_slot

from plait import Memory
from plait.adapters.hosts.opencode.hooks import WIRE
from plait.adapters.hosts.opencode.hooks import host_call as opencode_call

pytestmark = pytest.mark.slow
CALLS = 60
MOVE_AFTER = 10

Move = tuple[int, int, int]  # from the primary on this port, to the one on that port, this slot


def prompt(session: str, number: int) -> tuple[dict[str, object], dict[str, object]]:
    parts = [{"type": "text", "text": f"prompt {number}"}]
    return {"sessionID": session}, {"message": {}, "parts": parts}


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
            checkpoints = memory.dispatch.checkpointer.keys  # type: ignore[attr-defined]
            keys = (store._key("s", session, "events"), str(checkpoints.namespaces(session)))
            _, moves, primaries = owners(cluster, keys)
            kept: list[tuple[int, str]] = []
            moving: asyncio.Future[int] | None = None
            for number in range(CALLS):
                if number == MOVE_AFTER:  # the keys go one by one while the calls go on
                    moving = asyncio.ensure_future(asyncio.to_thread(move_all, moves, primaries))
                inputs, output = prompt(session, number)
                answer = await memory.dispatch.answer(
                    opencode_call("chat.message", inputs, output, f"call-{number}")
                )
                kept.append((number, answer.kept))
                await asyncio.sleep(0.05)
            assert moving is not None
            finished_during = moving.done()
            moved = await asyncio.wait_for(moving, 120)
            assert memory.dispatch.intake is not None
            # recorded with nobody sending more (a hang guard only)
            await asyncio.wait_for(memory.dispatch.intake.idle(), 60)
            events = await store.read_events(session)
            now_at, _, _ = owners(cluster, keys)
    # the slots moved, with the session's keys and its checkpoints in them
    assert moved > 2 and now_at == [target for _, target, _ in moves]
    assert finished_during  # while the calls went on: they met the slots half moved
    acknowledged = [number for number, where in kept if where]
    stored = [int(e.body.split()[-1]) for e in events if e.kind == "prompt"]
    assert len(acknowledged) == CALLS  # each call was kept (stored, or spooled meanwhile)
    assert stored == acknowledged  # all of them, once, in order
