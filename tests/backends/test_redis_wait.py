"""``redis.wait_replicas``: a recorded call is acknowledged once that many replicas have it.

Redis replicates asynchronously; with the option the hot store sends ``WAIT`` after the append,
on the connection that wrote, and raises :class:`BackendUnavailable` when too few replicas
confirm in time (the service then keeps the call in its spool and tries again). Real servers:
the suite's local Redis Cluster (3 primaries, each with one replica) and a Redis with none.
"""

from __future__ import annotations

import uuid

import pytest
import redis
from redis.cluster import ClusterNode, RedisCluster
from support.redis_cluster import LocalCluster

from plait.adapters.backends.redis_store import RedisHotStore
from plait.state.base.errors import BackendUnavailable
from plait.state.events import EventKind, SessionEvent

pytestmark = pytest.mark.slow


def said(session: str, text: str) -> SessionEvent:
    return SessionEvent(
        session_id=session,
        root_session_id=session,
        kind=EventKind.PROMPT,
        summary=text,
        body=text,
    )


def on_the_replica(cluster: LocalCluster, key: str) -> list[bytes]:
    """The list at ``key`` as the replica of its primary holds it."""
    nodes = [ClusterNode(host, port) for host, port in cluster.startup_nodes]
    client = RedisCluster(startup_nodes=nodes)
    try:
        primary = client.get_node_from_key(key)
        described = client.cluster_nodes()
    finally:
        client.close()
    primary_id = described[f"{primary.host}:{primary.port}"]["node_id"]
    address = next(at for at, node in described.items() if node["master_id"] == primary_id)
    host, port = address.split(":")
    direct = redis.Redis(host=host, port=int(port))
    try:
        direct.execute_command("READONLY")
        return list(direct.lrange(key, 0, -1))
    finally:
        direct.close()


async def test_an_append_returns_once_the_replica_has_it(redis_cluster: LocalCluster) -> None:
    store = RedisHotStore.from_url(redis_cluster.url, prefix="wait:", wait_replicas=1)
    session = f"ses-{uuid.uuid4().hex[:8]}"
    try:
        stored = await store.append_events(session, [said(session, "Use Postgres.")], call_id="c1")
        assert [event.id for event in stored] == [1]
        assert len(on_the_replica(redis_cluster, store._key("s", session, "events"))) == 1
    finally:
        await store.aclose()


async def test_too_few_replicas_refuse_the_ack_and_a_retry_waits_again(
    redis_cluster: LocalCluster,
) -> None:
    """Two replicas asked of a primary that has one: refused, on the first try and on a retry
    of the same call (which appends nothing the second time)."""
    store = RedisHotStore.from_url(
        redis_cluster.url, prefix="wait:", wait_replicas=2, wait_timeout_ms=50
    )
    session = f"ses-{uuid.uuid4().hex[:8]}"
    try:
        for _ in range(2):
            with pytest.raises(BackendUnavailable, match="1 of 2 Redis replica"):
                await store.append_events(session, [said(session, "Use Postgres.")], call_id="c1")
        assert len(await store.read_events(session)) == 1  # on the primary, once
    finally:
        await store.aclose()


async def test_a_redis_with_no_replica_refuses_the_ack(redis_url: str) -> None:
    store = RedisHotStore.from_url(
        redis_url, prefix=f"wait-{uuid.uuid4().hex[:6]}:", wait_replicas=1
    )
    try:
        with pytest.raises(BackendUnavailable, match="0 of 1 Redis replica"):
            await store.append_events("ses-1", [said("ses-1", "Use Postgres.")])
    finally:
        await store.aclose()
