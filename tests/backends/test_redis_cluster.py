"""The local Redis Cluster fixture: six real redis-servers joined into 3 primaries and 3 replicas."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import RedisClusterException
from support.redis_cluster import LocalCluster

pytestmark = pytest.mark.slow

_SWAP = "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCR', KEYS[2])"


@pytest.fixture
def client(redis_cluster: LocalCluster) -> Iterator[RedisCluster]:
    nodes = [ClusterNode(host, port) for host, port in redis_cluster.startup_nodes]
    cluster_client = RedisCluster(startup_nodes=nodes, decode_responses=True)
    yield cluster_client
    cluster_client.close()


def test_three_primaries_each_with_a_replica(client: RedisCluster) -> None:
    flags = [node["flags"] for node in client.cluster_nodes().values()]
    assert sum("master" in flag for flag in flags) == 3
    assert sum("slave" in flag for flag in flags) == 3
    assert client.cluster_info()["cluster_state"] == "ok"


def test_a_script_over_hash_tagged_keys_runs_on_one_slot(client: RedisCluster) -> None:
    keys = ["plait:{session-1}:last", "plait:{session-1}:count"]
    assert client.keyslot(keys[0]) == client.keyslot(keys[1])
    assert client.eval(_SWAP, 2, *keys, "x") == 1
    assert client.get(keys[0]) == "x"


def test_a_script_over_keys_of_two_slots_is_refused(client: RedisCluster) -> None:
    keys = ["plait:session-1:last", "plait:session-2:count"]
    assert client.keyslot(keys[0]) != client.keyslot(keys[1])
    with pytest.raises(RedisClusterException, match="same key slot"):
        client.eval(_SWAP, 2, *keys, "x")
