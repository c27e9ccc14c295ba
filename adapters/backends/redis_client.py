"""Redis clients from plait's URLs: one server, or a Redis Cluster (``redis+cluster://``).

``redis://`` / ``rediss://`` give redis-py's client of one server; ``redis+cluster://host:port``
(``rediss+cluster://`` with TLS) gives its cluster client, which finds every node from the one
named and follows slots as they move. On a cluster a script or a transaction may only touch
keys of one hash slot, so a store on a cluster puts all its keys under one hash tag
(:func:`slot_prefix`): everything of one project (the hot store: sessions, queue, checkpoints)
or of one group (observations) lives on one primary, and projects spread over the primaries.
"""

from __future__ import annotations

from typing import Any

import redis
import redis.asyncio as aioredis

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
TIMEOUTS: dict[str, Any] = {"socket_timeout": 5.0, "socket_connect_timeout": 2.0}


def is_cluster_url(url: str) -> bool:
    """Whether ``url`` names a Redis Cluster (``redis+cluster://``)."""
    return url.split("://", 1)[0].lower() in CLUSTER_SCHEMES


def plain_url(url: str) -> str:
    """``url`` with a cluster scheme turned into the scheme redis-py's clients read."""
    scheme, _, rest = url.partition("://")
    return f"{CLUSTER_SCHEMES.get(scheme.lower(), scheme)}://{rest}"


def async_client(url: str, **options: Any) -> aioredis.Redis:
    """An asyncio client for ``url`` (a cluster client for ``redis+cluster://``); lazy."""
    options = TIMEOUTS | options
    if is_cluster_url(url):
        options.pop("db", None)
        cluster: Any = aioredis.RedisCluster.from_url(plain_url(url), **options)
        return cluster  # the same commands, routed by slot
    return aioredis.Redis.from_url(url, **options)


def sync_client(url: str, **options: Any) -> redis.Redis:
    """A blocking client for ``url`` (a cluster client for ``redis+cluster://``); lazy."""
    options = TIMEOUTS | options
    if is_cluster_url(url):
        cluster: Any = redis.RedisCluster.from_url(plain_url(url), **options)
        return cluster
    return redis.Redis.from_url(url, **options)


def is_cluster_client(client: Any) -> bool:
    """Whether ``client`` is a cluster client (its keys must then share a slot per script)."""
    return isinstance(client, aioredis.RedisCluster | redis.RedisCluster)


def slot_prefix(prefix: str, client: Any) -> str:
    """``prefix`` as one hash tag on a cluster (``plait:7f3a:`` → ``{plait:7f3a}:``), else as is."""
    if not is_cluster_client(client) or "{" in prefix:
        return prefix
    return "{" + prefix.rstrip(":") + "}:"


__all__ = [
    "async_client",
    "is_cluster_client",
    "is_cluster_url",
    "plain_url",
    "slot_prefix",
    "sync_client",
]
