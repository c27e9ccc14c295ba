"""LangGraph checkpointers on plain Redis: no RedisJSON, no RediSearch, any Redis 7+ server.

FalkorDB's server (the embedded default) carries no search or JSON module, so
langgraph-checkpoint-redis cannot run on it; this saver uses only strings, hashes, sets and
sorted sets. Keys, under ``prefix`` (default ``plait:cp:``), with ``T`` the thread and ``N`` the
namespace (both percent-encoded):

==========================  ================================================================
``threads``                 set of thread ids
``T:ns``                    set of the thread's namespaces
``T:N:ids``                 sorted set of checkpoint ids (score 0; ids sort in time order)
``T:N:c:ID``                hash: ``checkpoint``, ``metadata`` (serialized), ``parent``
``T:N:w:ID``                hash of pending writes: ``task_id|idx`` → serialized write
==========================  ================================================================

Growth is bounded two ways: ``max_checkpoints_per_thread`` keeps the newest N checkpoints of each
namespace (older ones go with their writes on every put), and ``ttl_seconds`` makes a thread's
keys expire after that long without a write. ``aprune`` does the same on demand.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote

import redis.asyncio as aioredis
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

DEFAULT_PREFIX = "plait:cp:"
# plait's own state types, the only classes its checkpoints may revive.
STATE_TYPES = [
    ("plait.state.hooks", "SessionRef"),
    ("plait.state.hooks", "ToolPolicy"),
    ("plait.state.hooks", "CachedRecall"),
    ("plait.state.snapshot", "Snapshot"),
    ("plait.state.snapshot", "Item"),
    ("plait.state.events", "SessionEvent"),
    ("plait.state.events", "EventKind"),
    ("plait.state.background", "ClaimedEvent"),
    ("plait.state.background", "Hit"),
]


# How many checkpoints past the cap a thread may hold before a put trims it (trimming in a batch
# keeps the common put at one round trip).
TRIM_SLACK = 4
# KEYS[1] = the namespace's id set, ARGV[1] = the namespace key prefix.
LOAD_NEWEST = """
local newest = redis.call('ZREVRANGEBYLEX', KEYS[1], '+', '-', 'LIMIT', 0, 1)[1]
if not newest then return false end
return {newest, redis.call('HGETALL', ARGV[1] .. ':c:' .. newest),
        redis.call('HGETALL', ARGV[1] .. ':w:' .. newest)}
"""


def plait_serializer() -> JsonPlusSerializer:
    """A checkpoint serializer allowed to revive plait's state types (and LangChain's own)."""
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def pack(serde: SerializerProtocol, value: Any) -> bytes:
    """Serialize with the saver's serde into one ``type\\0bytes`` blob."""
    kind, data = serde.dumps_typed(value)
    return kind.encode() + b"\0" + data


def unpack(serde: SerializerProtocol, blob: bytes) -> Any:
    """Inverse of :func:`pack`."""
    kind, _, data = blob.partition(b"\0")
    return serde.loads_typed((kind.decode(), data))


class AsyncRedisSaver(BaseCheckpointSaver[str]):
    """Async checkpointer on plain Redis (redis-py asyncio)."""

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        max_checkpoints_per_thread: int | None = None,
        ttl_seconds: int | None = None,
        serde: SerializerProtocol | None = None,
    ) -> None:
        """Use an existing client; see :meth:`from_conn_string` to own one."""
        super().__init__(serde=serde)
        self.client = client
        self.prefix = prefix
        self.max_checkpoints_per_thread = max_checkpoints_per_thread
        self.ttl_seconds = ttl_seconds

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, url: str, **kwargs: Any) -> AsyncIterator[AsyncRedisSaver]:
        """``async with AsyncRedisSaver.from_conn_string(url) as saver``: owns its client."""
        client = aioredis.Redis.from_url(url)
        try:
            yield cls(client, **kwargs)
        finally:
            await client.aclose()

    # -- keys -----------------------------------------------------------------------------------
    def _thread(self, thread_id: str) -> str:
        return self.prefix + quote(str(thread_id), safe="")

    def _ns(self, thread_id: str, ns: str) -> str:
        return f"{self._thread(thread_id)}:{quote(ns, safe='') or '_'}"

    def _ids(self, thread_id: str, ns: str) -> str:
        return self._ns(thread_id, ns) + ":ids"

    def _checkpoint(self, thread_id: str, ns: str, checkpoint_id: str) -> str:
        return f"{self._ns(thread_id, ns)}:c:{checkpoint_id}"

    def _writes(self, thread_id: str, ns: str, checkpoint_id: str) -> str:
        return f"{self._ns(thread_id, ns)}:w:{checkpoint_id}"

    def _namespaces(self, thread_id: str) -> str:
        return self._thread(thread_id) + ":ns"

    # -- reads ----------------------------------------------------------------------------------
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint named by the config, or the thread's newest in that namespace.

        The newest is found and read in one round trip (a server-side script), since every hook
        starts with this call.
        """
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = get_checkpoint_id(config)
        if checkpoint_id is not None:
            return await self._load(thread_id, ns, checkpoint_id)
        found = await self.client.eval(
            LOAD_NEWEST, 1, self._ids(thread_id, ns), self._ns(thread_id, ns)
        )
        if not found:
            return None
        newest, stored, writes = found
        return self._tuple(thread_id, ns, _text(newest), _pairs(stored), _pairs(writes))

    async def _load(self, thread_id: str, ns: str, checkpoint_id: str) -> CheckpointTuple | None:
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.hgetall(self._checkpoint(thread_id, ns, checkpoint_id))
            pipe.hgetall(self._writes(thread_id, ns, checkpoint_id))
            stored, writes = await pipe.execute()
        return self._tuple(thread_id, ns, checkpoint_id, stored, writes)

    def _tuple(
        self,
        thread_id: str,
        ns: str,
        checkpoint_id: str,
        stored: dict[Any, Any],
        writes: dict[Any, Any],
    ) -> CheckpointTuple | None:
        if not stored:
            return None
        stored = {_text(k): v for k, v in stored.items()}
        config: RunnableConfig = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint_id,
            }
        }
        parent = _text(stored.get("parent", b""))
        parent_config: RunnableConfig | None = (
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": parent}}
            if parent
            else None
        )
        return CheckpointTuple(
            config=config,
            checkpoint=unpack(self.serde, stored["checkpoint"]),
            metadata=unpack(self.serde, stored["metadata"]),
            parent_config=parent_config,
            pending_writes=self._pending_writes(writes),
        )

    def _pending_writes(self, writes: dict[Any, Any]) -> list[tuple[str, str, Any]]:
        ordered = []
        for field, blob in writes.items():
            task_id, _, idx = _text(field).rpartition("|")
            channel, value = unpack(self.serde, blob)
            ordered.append(((task_id, int(idx)), (task_id, channel, value)))
        return [write for _, write in sorted(ordered, key=lambda item: item[0])]

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Checkpoints newest first, by thread, namespace, metadata filter and ``before``."""
        configurable = (config or {}).get("configurable", {})
        threads = (
            [str(configurable["thread_id"])]
            if configurable.get("thread_id") is not None
            else sorted(_text(t) for t in await self.client.smembers(self.prefix + "threads"))
        )
        wanted_id = configurable.get("checkpoint_id")
        before_id = get_checkpoint_id(before) if before else None
        remaining = limit
        for thread_id in threads:
            for ns, checkpoint_id in await self._ids_of(thread_id, configurable.get("checkpoint_ns")):
                if wanted_id and checkpoint_id != wanted_id:
                    continue
                if before_id and checkpoint_id >= before_id:
                    continue
                found = await self._load(thread_id, ns, checkpoint_id)
                if found is None or not matches(found.metadata, filter):
                    continue
                yield found
                if remaining is not None:
                    remaining -= 1
                    if remaining <= 0:
                        return

    async def _ids_of(self, thread_id: str, ns: str | None) -> list[tuple[str, str]]:
        """(namespace, checkpoint id) pairs of a thread, newest id first."""
        namespaces = (
            [ns]
            if ns is not None
            else [_text(n) for n in await self.client.smembers(self._namespaces(thread_id))]
        )
        pairs = []
        for namespace in namespaces:
            ids = await self.client.zrevrangebylex(self._ids(thread_id, namespace), "+", "-")
            pairs.extend((namespace, _text(i)) for i in ids)
        return sorted(pairs, key=lambda pair: pair[1], reverse=True)

    # -- writes ---------------------------------------------------------------------------------
    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint; keep the thread within its bounds."""
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        parent = configurable.get("checkpoint_id") or ""
        checkpoint_id = checkpoint["id"]
        record = {
            "checkpoint": pack(self.serde, checkpoint),
            "metadata": pack(self.serde, get_checkpoint_metadata(config, metadata)),
            "parent": parent,
        }
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hset(self._checkpoint(thread_id, ns, checkpoint_id), mapping=record)
            pipe.zadd(self._ids(thread_id, ns), {checkpoint_id: 0})
            pipe.sadd(self._namespaces(thread_id), ns)
            pipe.sadd(self.prefix + "threads", thread_id)
            pipe.zcard(self._ids(thread_id, ns))
            if self.ttl_seconds:
                for key in self._thread_keys(thread_id, ns, checkpoint_id):
                    pipe.expire(key, int(self.ttl_seconds))
            count = (await pipe.execute())[4]
        keep = self.max_checkpoints_per_thread
        if keep and count > keep + TRIM_SLACK:
            await self._trim(thread_id, ns, keep)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint_id,
            }
        }

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes; special channels overwrite, others keep the first."""
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        key = self._writes(thread_id, ns, configurable["checkpoint_id"])
        async with self.client.pipeline(transaction=True) as pipe:
            for idx, (channel, value) in enumerate(writes):
                slot = WRITES_IDX_MAP.get(channel, idx)
                field = f"{task_id}|{slot}"
                blob = pack(self.serde, (channel, value))
                if channel in WRITES_IDX_MAP:
                    pipe.hset(key, field, blob)
                else:
                    pipe.hsetnx(key, field, blob)
            if self.ttl_seconds:
                pipe.expire(key, self.ttl_seconds)
            await pipe.execute()

    def _thread_keys(self, thread_id: str, ns: str, checkpoint_id: str) -> tuple[str, ...]:
        return (
            self._checkpoint(thread_id, ns, checkpoint_id),
            self._writes(thread_id, ns, checkpoint_id),
            self._ids(thread_id, ns),
            self._namespaces(thread_id),
        )

    async def _trim(self, thread_id: str, ns: str, keep: int) -> None:
        old = await self.client.zrevrangebylex(self._ids(thread_id, ns), "+", "-", keep, 1_000_000)
        if old:
            await self._drop(thread_id, ns, [_text(i) for i in old])

    async def _drop(self, thread_id: str, ns: str, checkpoint_ids: Sequence[str]) -> None:
        async with self.client.pipeline(transaction=True) as pipe:
            for checkpoint_id in checkpoint_ids:
                pipe.delete(
                    self._checkpoint(thread_id, ns, checkpoint_id),
                    self._writes(thread_id, ns, checkpoint_id),
                )
            pipe.zrem(self._ids(thread_id, ns), *checkpoint_ids)
            await pipe.execute()

    # -- maintenance ----------------------------------------------------------------------------
    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint and write of the thread."""
        thread_id = str(thread_id)
        for ns, checkpoint_id in await self._ids_of(thread_id, None):
            await self._drop(thread_id, ns, [checkpoint_id])
        namespaces = [_text(n) for n in await self.client.smembers(self._namespaces(thread_id))]
        keys = [self._ids(thread_id, ns) for ns in namespaces] + [self._namespaces(thread_id)]
        await self.client.delete(*keys)
        await self.client.srem(self.prefix + "threads", thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete checkpoints (and their writes) whose metadata names one of the runs."""
        wanted = {str(run_id) for run_id in run_ids}
        async for found in self.alist(None):
            if str(found.metadata.get("run_id")) in wanted:
                configurable = found.config["configurable"]
                await self._drop(
                    configurable["thread_id"],
                    configurable["checkpoint_ns"],
                    [configurable["checkpoint_id"]],
                )

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of one thread to another."""
        for ns, checkpoint_id in await self._ids_of(str(source_thread_id), None):
            source = (str(source_thread_id), ns, checkpoint_id)
            target = (str(target_thread_id), ns, checkpoint_id)
            stored = await self.client.hgetall(self._checkpoint(*source))
            writes = await self.client.hgetall(self._writes(*source))
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.hset(self._checkpoint(*target), mapping=stored)
                if writes:
                    pipe.hset(self._writes(*target), mapping=writes)
                pipe.zadd(self._ids(str(target_thread_id), ns), {checkpoint_id: 0})
                pipe.sadd(self._namespaces(str(target_thread_id)), ns)
                pipe.sadd(self.prefix + "threads", str(target_thread_id))
                await pipe.execute()

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``keep_latest``: only the newest checkpoint per namespace; ``delete``: all of them."""
        for thread_id in thread_ids:
            if strategy == "delete":
                await self.adelete_thread(thread_id)
                continue
            namespaces = [_text(n) for n in await self.client.smembers(self._namespaces(thread_id))]
            for ns in namespaces:
                await self._trim(str(thread_id), ns, 1)

    # -- sync API (LangGraph's sync invoke) -----------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Not supported on the async saver; use :class:`RedisSaver`."""
        raise NotImplementedError("AsyncRedisSaver is async-only; use RedisSaver for sync graphs")


def _pairs(flat: Any) -> dict[Any, Any]:
    """A flat [field, value, …] reply (from a script) as a dict."""
    items = list(flat or [])
    return dict(zip(items[0::2], items[1::2], strict=True))


def matches(metadata: CheckpointMetadata, wanted: dict[str, Any] | None) -> bool:
    """Whether metadata has every key/value of the filter."""
    if not wanted:
        return True
    return all(
        key in metadata and json.dumps(metadata[key], default=str) == json.dumps(value, default=str)
        for key, value in wanted.items()
    )


class RedisSaver(BaseCheckpointSaver[str]):
    """Sync checkpointer with the same key layout, for graphs invoked synchronously.

    It runs an :class:`AsyncRedisSaver` on a private event loop thread rather than keeping a
    second copy of every operation.
    """

    def __init__(self, url: str, **kwargs: Any) -> None:
        """Connect to ``url``; keyword arguments as for :class:`AsyncRedisSaver`."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        client = self._call(self._client(url))
        self.inner = AsyncRedisSaver(client, **kwargs)
        super().__init__(serde=self.inner.serde)

    @staticmethod
    async def _client(url: str) -> aioredis.Redis:
        return aioredis.Redis.from_url(url)

    @classmethod
    def from_conn_string(cls, url: str, **kwargs: Any) -> RedisSaver:
        """A saver owning its connection; close it with :meth:`close` (or ``with``)."""
        return cls(url, **kwargs)

    def __enter__(self) -> RedisSaver:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def close(self) -> None:
        """Close the connection and stop the loop thread."""
        self._call(self.inner.client.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """See :meth:`AsyncRedisSaver.aget_tuple`."""
        return self._call(self.inner.aget_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """See :meth:`AsyncRedisSaver.alist`."""

        async def collect() -> list[CheckpointTuple]:
            return [
                item
                async for item in self.inner.alist(config, filter=filter, before=before, limit=limit)
            ]

        yield from self._call(collect())

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """See :meth:`AsyncRedisSaver.aput`."""
        return self._call(self.inner.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """See :meth:`AsyncRedisSaver.aput_writes`."""
        self._call(self.inner.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """See :meth:`AsyncRedisSaver.adelete_thread`."""
        self._call(self.inner.adelete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """See :meth:`AsyncRedisSaver.adelete_for_runs`."""
        self._call(self.inner.adelete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """See :meth:`AsyncRedisSaver.acopy_thread`."""
        self._call(self.inner.acopy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """See :meth:`AsyncRedisSaver.aprune`."""
        self._call(self.inner.aprune(thread_ids, strategy=strategy))


__all__ = ["AsyncRedisSaver", "RedisSaver", "plait_serializer"]
