"""Which server a contract suite's Redis twin runs on: one Redis, a Redis Cluster, or none."""

from __future__ import annotations

import pytest

BACKENDS = ["redis", "redis-cluster", "memory"]


def backend_url(request: pytest.FixtureRequest) -> str | None:
    """The URL for the fixture's ``BACKENDS`` param; None for the in-memory twin."""
    if request.param == "redis":
        return str(request.getfixturevalue("redis_url"))
    if request.param == "redis-cluster":
        return str(request.getfixturevalue("redis_cluster").url)
    return None


__all__ = ["BACKENDS", "backend_url"]
