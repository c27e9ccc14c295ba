"""Service wiring: which servers plait talks to, started or connected once per process."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import redis.asyncio as aioredis

from plait.adapters.backends.embedded import EmbeddedFalkorDB
from plait.adapters.backends.embedders import choice_for, open_embedder
from plait.adapters.backends.memory_store import InMemoryHotStore
from plait.adapters.backends.private_files import secure_data_dir
from plait.adapters.backends.recall_index import SqliteRecallIndex
from plait.adapters.backends.redis_store import RedisHotStore
from plait.boundary import describe
from plait.errors import BackendUnavailable
from plait.redact import redacted_logger
from plait.settings import Settings
from plait.state.ports import HotStore
from plait.state.recall import RecallIndex, TextEmbedder

logger = redacted_logger("plait")

CONNECT_TIMEOUT_SECONDS = 2.0


@dataclass
class Backends:
    """The hot store, the Redis client and URL behind it, the embedded server if plait started one.

    ``redis`` is the client the store uses; the checkpointer shares it, and closing the store
    closes it.
    """

    settings: Settings
    store: HotStore
    redis_url: str | None
    server: EmbeddedFalkorDB | None = None
    redis: aioredis.Redis | None = None
    degraded: list[str] = field(default_factory=list)

    @property
    def falkordb_url(self) -> str | None:
        """``falkordb.url``, or the Redis server (the embedded one carries the module)."""
        return self.settings.falkordb.url or self.redis_url

    async def aclose(self) -> None:
        """Close connections and release the embedded server (even if closing them failed)."""
        try:
            await self.store.aclose()
        finally:
            if self.server is not None:
                await asyncio.to_thread(self.server.stop)


def describe_url(url: str) -> str:
    """A URL without its user name and password, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or parts.path
    return f"{parts.scheme}://{host}:{parts.port}" if parts.port else f"{parts.scheme}://{host}"


async def connect_redis(url: str) -> aioredis.Redis:
    """Connect and PING within the connect timeout, or raise :class:`BackendUnavailable`."""
    client = aioredis.Redis.from_url(
        url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS, socket_timeout=5.0
    )
    try:
        await asyncio.wait_for(client.ping(), CONNECT_TIMEOUT_SECONDS)
    except (OSError, TimeoutError, aioredis.RedisError) as error:
        await client.aclose()
        reason = describe(error)
        raise BackendUnavailable(f"redis.url {describe_url(url)} unreachable: {reason}") from None
    return client


async def open_backends(settings: Settings, *, allow_degraded: bool = True) -> Backends:
    """Start or reach the hot tier; with ``allow_degraded``, fall back to memory with a warning.

    The data dir, when it exists, is tightened first: it 0700, plait's files in it 0600.
    """
    await asyncio.to_thread(secure_data_dir, settings.resolved_data_dir())
    server: EmbeddedFalkorDB | None = None
    try:
        if settings.redis.url:
            url = settings.redis.url
        else:
            server = EmbeddedFalkorDB(settings.resolved_data_dir())
            url = (await asyncio.to_thread(server.start)).url
        client = await connect_redis(url)
    except BackendUnavailable as error:
        if server is not None:
            await asyncio.to_thread(server.stop)
        if not allow_degraded:
            raise
        logger.warning("plait: %s; using in-memory fallback (nothing persists)", error)
        fallback = InMemoryHotStore(session_ttl_seconds=settings.redis.session_ttl_seconds)
        return Backends(settings=settings, store=fallback, redis_url=None, degraded=[str(error)])
    store = RedisHotStore(client, session_ttl_seconds=settings.redis.session_ttl_seconds)
    return Backends(settings=settings, store=store, redis_url=url, server=server, redis=client)


def open_recall(settings: Settings) -> tuple[RecallIndex, TextEmbedder | None]:
    """The recall index in the data dir and the embedder its vectors come from (None: words).

    Neither touches a file or loads a model until first used.
    """
    embedder = open_embedder(choice_for(settings))
    model = embedder.name if embedder is not None else None
    index = SqliteRecallIndex.in_data_dir(settings.resolved_data_dir(), vector_model=model)
    return index, embedder


__all__ = ["Backends", "connect_redis", "describe_url", "open_backends", "open_recall"]
