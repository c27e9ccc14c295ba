"""LangGraph checkpointers on plain Redis: no RedisJSON, no RediSearch, any Redis 7+ server.

FalkorDB's server (the embedded default) carries no search or JSON module, so
langgraph-checkpoint-redis cannot run on it; these savers use only strings, hashes, sets, sorted
sets and Lua scripts. Keys, under ``prefix`` (default ``plait:cp:``), with ``T`` the thread and
``N`` the namespace, each percent-encoded (the empty namespace is ``%``):

==========================  ================================================================
``%threads``                sorted set of thread ids, scored by when they expire (``inf``)
``%runs:RUN``               set of ``ID⏎T:N`` references (⏎ a newline) to its checkpoints
``T:ns``                    set of the thread's encoded namespaces
``T:N:ids``                 sorted set of checkpoint ids (score 0; ids sort in time order)
``T:N:c:ID``                hash: ``checkpoint``, ``metadata``, ``parent``, ``run`` (its key)
``T:N:w:ID``                hash of pending writes: ``task_id|idx`` → header line + blob
==========================  ================================================================

Getting a checkpoint (the newest or a named one) is one round trip, and so is putting one: each
is a server-side script. Growth is bounded two ways: ``max_checkpoints_per_thread`` keeps the
newest N checkpoints of each namespace (older ones go with their writes inside the put), and
``ttl_seconds`` makes a thread's keys expire that long after its last write. ``aprune`` /
``prune`` trim on demand. Scripts compute key names from their arguments, so the savers need a
standalone (or replicated) Redis, not Redis Cluster.

Every operation is written once, as a generator that yields batches of Redis calls and receives
their replies (:class:`_Operations`); :class:`AsyncRedisSaver` and :class:`RedisSaver` only
drive those generators over ``redis.asyncio`` and ``redis`` clients.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote, unquote

import redis
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
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from redis.exceptions import NoScriptError

from plait.adapters.backends.redis_client import (
    async_client,
    is_cluster_client,
    slot_prefix,
    sync_client,
)
from plait.adapters.backends.redis_errors import redis_errors
from plait.state.base.errors import ConfigError

DEFAULT_PREFIX = "plait:cp:"
# plait's own state types, the only classes its checkpoints may revive.
STATE_TYPES = [
    ("plait.state.intents", "SessionRef"),
    ("plait.state.hooks", "SessionRef"),  # where checkpoints before 0.2 name it
    ("plait.state.hooks", "ToolPolicy"),
    ("plait.state.hooks", "CachedRecall"),
    ("plait.state.snapshot", "Snapshot"),
    ("plait.state.snapshot", "Item"),
    ("plait.state.events", "SessionEvent"),
    ("plait.state.events", "EventKind"),
    ("plait.state.ports", "QueueEntry"),
    ("plait.state.ports", "MemoryHit"),
]
# Checkpoints past the cap a thread may hold after a put. The put script trims exactly, so none;
# kept so callers can state their bound as ``cap + TRIM_SLACK``.
TRIM_SLACK = 0
# Checkpoints read per pipelined round trip while listing.
LIST_BATCH = 32
# Oldest index entries a put with a TTL checks for checkpoints that already expired.
SWEEP_PER_PUT = 2

T = TypeVar("T")

# -- server-side scripts ------------------------------------------------------------------------
_LUA_HELPERS = """
local function drop(base, id)
  local c = base .. ':c:' .. id
  local run = redis.call('HGET', c, 'run')
  if run and run ~= '' then redis.call('SREM', run, id .. '\\n' .. base) end
  redis.call('DEL', c, base .. ':w:' .. id)
  redis.call('ZREM', base .. ':ids', id)
end
local function trim(base, keep)
  local surplus = redis.call('ZCARD', base .. ':ids') - keep
  if surplus <= 0 then return 0 end
  for _, id in ipairs(redis.call('ZRANGE', base .. ':ids', 0, surplus - 1)) do drop(base, id) end
  return surplus
end
local function touch_thread(index, thread, ttl)
  if ttl <= 0 then redis.call('ZADD', index, 'inf', thread) return end
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  redis.call('ZADD', index, now_ms + ttl * 1000, thread)
  redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. now_ms)
end
local function expire(ttl, keys)
  if ttl <= 0 then return end
  for _, key in ipairs(keys) do redis.call('EXPIRE', key, ttl) end
end
"""

# KEYS: checkpoint hash, ids, namespaces, thread index.
# ARGV: base, id, checkpoint, metadata, parent, run key, namespace segment, thread, keep, ttl.
_PUT = """
local base, id, parent, run = ARGV[1], ARGV[2], ARGV[5], ARGV[6]
local keep, ttl = tonumber(ARGV[9]), tonumber(ARGV[10])
redis.call('HSET', KEYS[1], 'checkpoint', ARGV[3], 'metadata', ARGV[4], 'parent', parent,
           'run', run)
redis.call('ZADD', KEYS[2], 0, id)
redis.call('SADD', KEYS[3], ARGV[7])
if run ~= '' then
  redis.call('SADD', run, id .. '\\n' .. base)
  expire(ttl, {run})
end
touch_thread(KEYS[4], ARGV[8], ttl)
if keep > 0 then trim(base, keep) end
if ttl > 0 then
  expire(ttl, {KEYS[1], KEYS[2], KEYS[3]})
  if parent ~= '' then expire(ttl, {base .. ':c:' .. parent, base .. ':w:' .. parent}) end
  for _, old in ipairs(redis.call('ZRANGE', KEYS[2], 0, SWEEP_LAST)) do
    if redis.call('EXISTS', base .. ':c:' .. old) == 0 then drop(base, old) end
  end
end
return 1
""".replace("SWEEP_LAST", str(SWEEP_PER_PUT - 1))

# KEYS: ids. ARGV: base, id ('' for the newest).
_GET = """
local id = ARGV[2]
if id == '' then
  id = redis.call('ZRANGE', KEYS[1], -1, -1)[1]
  if not id then return false end
end
local stored = redis.call('HGETALL', ARGV[1] .. ':c:' .. id)
if #stored == 0 then return false end
return {id, stored, redis.call('HGETALL', ARGV[1] .. ':w:' .. id)}
"""

# KEYS: ids. ARGV: base, checkpoint ids to drop.
_DROP = """
for i = 2, #ARGV do drop(ARGV[1], ARGV[i]) end
return #ARGV - 1
"""

# KEYS: namespaces, thread index. ARGV: thread base, keep, thread.
# keep = 0 deletes the thread, keep = N keeps the newest N per namespace.
_TRIM_THREAD = """
local keep = tonumber(ARGV[2])
for _, segment in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  trim(ARGV[1] .. ':' .. segment, keep)
end
if keep == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[3])
end
return 1
"""

# KEYS: source namespaces, target namespaces, thread index.
# ARGV: source thread base, target thread base, target thread, ttl.
_COPY_THREAD = """
local ttl = tonumber(ARGV[4])
local segments = redis.call('SMEMBERS', KEYS[1])
for _, segment in ipairs(segments) do
  local source, target = ARGV[1] .. ':' .. segment, ARGV[2] .. ':' .. segment
  for _, id in ipairs(redis.call('ZRANGE', source .. ':ids', 0, -1)) do
    local c, w = target .. ':c:' .. id, target .. ':w:' .. id
    redis.call('DEL', w)
    if redis.call('COPY', source .. ':c:' .. id, c, 'REPLACE') == 1 then
      redis.call('COPY', source .. ':w:' .. id, w)
      redis.call('ZADD', target .. ':ids', 0, id)
      local run = redis.call('HGET', c, 'run')
      if run and run ~= '' then redis.call('SADD', run, id .. '\\n' .. target) end
      expire(ttl, {c, w})
    end
  end
  redis.call('SADD', KEYS[2], segment)
  expire(ttl, {target .. ':ids'})
end
if #segments > 0 then
  touch_thread(KEYS[3], ARGV[3], ttl)
  expire(ttl, {KEYS[2]})
end
return #segments
"""

SCRIPTS = {
    name: _LUA_HELPERS + body
    for name, body in {
        "put": _PUT,
        "get": _GET,
        "drop": _DROP,
        "trim_thread": _TRIM_THREAD,
        "copy_thread": _COPY_THREAD,
    }.items()
}


# -- pure helpers: keys ---------------------------------------------------------------------------
def encode_segment(value: str) -> str:
    """One key segment: percent-encoded (no ``:`` survives), the empty string as ``%``."""
    return quote(str(value), safe="") or "%"


def decode_segment(segment: str) -> str:
    """Inverse of :func:`encode_segment`."""
    return "" if segment == "%" else unquote(segment)


@dataclass(frozen=True, kw_only=True)
class KeySpace:
    """Key names of one saver; pure, shared by the sync and async savers."""

    prefix: str = DEFAULT_PREFIX

    @property
    def thread_index(self) -> str:
        """Sorted set of every live thread id."""
        return self.prefix + "%threads"

    def run(self, run_id: str) -> str:
        """Set of references to a run's checkpoints."""
        return f"{self.prefix}%runs:{encode_segment(run_id)}"

    def thread(self, thread_id: str) -> str:
        """Base of a thread's keys."""
        return self.prefix + encode_segment(thread_id)

    def namespaces(self, thread_id: str) -> str:
        """Set of the thread's encoded namespaces."""
        return self.thread(thread_id) + ":ns"

    def base(self, thread_id: str, ns: str) -> str:
        """Base of one namespace's keys."""
        return f"{self.thread(thread_id)}:{encode_segment(ns)}"

    @staticmethod
    def ids(base: str) -> str:
        """Sorted set of a namespace's checkpoint ids."""
        return base + ":ids"

    @staticmethod
    def checkpoint(base: str, checkpoint_id: str) -> str:
        """Hash of one checkpoint."""
        return f"{base}:c:{checkpoint_id}"

    @staticmethod
    def writes(base: str, checkpoint_id: str) -> str:
        """Hash of one checkpoint's pending writes."""
        return f"{base}:w:{checkpoint_id}"


# -- pure helpers: (de)serialization --------------------------------------------------------------
def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _pairs(flat: Any) -> dict[Any, Any]:
    """A flat ``[field, value, …]`` reply (from a script) as a dict."""
    items = list(flat or [])
    return dict(zip(items[0::2], items[1::2], strict=True))


def pack(serde: SerializerProtocol, value: Any) -> bytes:
    """Serialize with the saver's serde into one blob: the type, a NUL byte, the bytes."""
    kind, data = serde.dumps_typed(value)
    return kind.encode() + b"\0" + data


def unpack(serde: SerializerProtocol, blob: bytes) -> Any:
    """Inverse of :func:`pack`."""
    kind, _, data = blob.partition(b"\0")
    return serde.loads_typed((kind.decode(), data))


def pack_write(serde: SerializerProtocol, task_path: str, channel: str, value: Any) -> bytes:
    """One pending write: a JSON header line ``[task_path, channel, type]`` then the bytes."""
    kind, data = serde.dumps_typed(value)
    return json.dumps([task_path, channel, kind]).encode() + b"\n" + data


def unpack_writes(serde: SerializerProtocol, stored: dict[Any, Any]) -> list[tuple[str, str, Any]]:
    """A writes hash as ``(task_id, channel, value)`` in LangGraph's ``writes_sort_key`` order."""
    keyed = []
    for field, blob in stored.items():
        task_id, _, idx = _text(field).rpartition("|")
        header, _, data = blob.partition(b"\n")
        task_path, channel, kind = json.loads(header)
        value = serde.loads_typed((kind, data))
        keyed.append((writes_sort_key(task_path, task_id, int(idx)), (task_id, channel, value)))
    return [write for _, write in sorted(keyed, key=lambda item: item[0])]


def write_fields(
    serde: SerializerProtocol,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
) -> list[tuple[str, bytes, bool]]:
    """``(field, blob, overwrite)`` per write: special channels overwrite, others keep the first."""
    fields = []
    for idx, (channel, value) in enumerate(writes):
        slot = WRITES_IDX_MAP.get(channel, idx)
        blob = pack_write(serde, task_path, channel, value)
        fields.append((f"{task_id}|{slot}", blob, channel in WRITES_IDX_MAP))
    return fields


def checkpoint_config(thread_id: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    """The config that names one checkpoint."""
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def decode_tuple(
    serde: SerializerProtocol,
    config: RunnableConfig,
    stored: dict[Any, Any],
    writes: dict[Any, Any],
    metadata: CheckpointMetadata | None = None,
) -> CheckpointTuple | None:
    """A stored checkpoint hash and writes hash as a ``CheckpointTuple`` (None when missing)."""
    if not stored:
        return None
    stored = {_text(key): value for key, value in stored.items()}
    configurable = config["configurable"]
    parent = _text(stored.get("parent", b""))
    parent_config = (
        checkpoint_config(configurable["thread_id"], configurable["checkpoint_ns"], parent)
        if parent
        else None
    )
    return CheckpointTuple(
        config=config,
        checkpoint=unpack(serde, stored["checkpoint"]),
        metadata=metadata if metadata is not None else unpack(serde, stored["metadata"]),
        parent_config=parent_config,
        pending_writes=unpack_writes(serde, writes),
    )


def matches(metadata: CheckpointMetadata, wanted: dict[str, Any] | None) -> bool:
    """Whether metadata has every key/value of the filter."""
    if not wanted:
        return True
    return all(key in metadata and metadata[key] == value for key, value in wanted.items())  # type: ignore[literal-required]


def split_reference(reference: Any) -> tuple[str, str]:
    """A run index member (checkpoint id, newline, namespace base) as ``(base, id)``."""
    checkpoint_id, _, base = _text(reference).partition("\n")
    return base, checkpoint_id


def plait_serializer() -> JsonPlusSerializer:
    """A checkpoint serializer allowed to revive plait's state types (and LangChain's own)."""
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)


# -- operations, written once ---------------------------------------------------------------------
@dataclass(frozen=True)
class Call:
    """One Redis call: a client method name (or ``script:NAME``) and its arguments."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Emit:
    """A result an operation hands out before it finishes (``list``)."""

    item: CheckpointTuple


Request = list[Call] | Emit
Operation = Generator[Request, Any, T]


def _script(name: str, keys: Sequence[str], args: Sequence[Any]) -> Call:
    return Call(f"script:{name}", (len(keys), *keys, *args))


def _where(config: RunnableConfig) -> tuple[str, str]:
    configurable = config["configurable"]
    return str(configurable["thread_id"]), str(configurable.get("checkpoint_ns") or "")


class _Operations(BaseCheckpointSaver[str]):
    """Settings, keys and every operation as a generator of Redis call batches."""

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = DEFAULT_PREFIX,
        max_checkpoints_per_thread: int | None = None,
        ttl_seconds: int | None = None,
        serde: SerializerProtocol | None = None,
    ) -> None:
        """Use an existing client (not ``decode_responses``); see ``from_conn_string``.

        Args:
            client: A ``redis.asyncio.Redis`` client (:class:`AsyncRedisSaver`) or a
                ``redis.Redis`` one (:class:`RedisSaver`).
            prefix: Prefix of every key.
            max_checkpoints_per_thread: Keep only the newest N checkpoints per thread and
                namespace (older ones and their writes are deleted on put).
            ttl_seconds: Expire a thread's keys this long after its last write.
            serde: The serializer (default: LangGraph's ``JsonPlusSerializer``).
        """
        _check_client(client)
        super().__init__(serde=serde)
        self.client = client
        self._shas: dict[str, str] = {}
        if max_checkpoints_per_thread is not None and max_checkpoints_per_thread < 1:
            raise ConfigError(
                f"max_checkpoints_per_thread must be >= 1, got {max_checkpoints_per_thread!r}"
            )
        if ttl_seconds is not None and ttl_seconds < 1:
            raise ConfigError(f"ttl_seconds must be >= 1, got {ttl_seconds!r}")
        prefix = slot_prefix(prefix, client)  # a cluster: every key of the saver on one slot
        self.keys = KeySpace(prefix=prefix)
        self.prefix = prefix
        self.max_checkpoints_per_thread = max_checkpoints_per_thread
        self.ttl_seconds = ttl_seconds

    def _get_op(self, config: RunnableConfig) -> Operation[CheckpointTuple | None]:
        thread_id, ns = _where(config)
        base = self.keys.base(thread_id, ns)
        wanted = get_checkpoint_id(config) or ""
        (found,) = yield [_script("get", [self.keys.ids(base)], [base, wanted])]
        if not found:
            return None
        checkpoint_id, stored, writes = found
        named = checkpoint_config(thread_id, ns, _text(checkpoint_id))
        return decode_tuple(self.serde, named, _pairs(stored), _pairs(writes))

    def _put_op(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata
    ) -> Operation[RunnableConfig]:
        thread_id, ns = _where(config)
        base = self.keys.base(thread_id, ns)
        merged = get_checkpoint_metadata(config, metadata)
        run_id = merged.get("run_id")
        checkpoint_id = checkpoint["id"]
        keys = [
            self.keys.checkpoint(base, checkpoint_id),
            self.keys.ids(base),
            self.keys.namespaces(thread_id),
            self.keys.thread_index,
        ]
        args = [
            base,
            checkpoint_id,
            pack(self.serde, checkpoint),
            pack(self.serde, merged),
            config["configurable"].get("checkpoint_id") or "",
            self.keys.run(str(run_id)) if run_id else "",
            encode_segment(ns),
            thread_id,
            self.max_checkpoints_per_thread or 0,
            self.ttl_seconds or 0,
        ]
        yield [_script("put", keys, args)]
        return checkpoint_config(thread_id, ns, checkpoint_id)

    def _put_writes_op(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> Operation[None]:
        thread_id, ns = _where(config)
        key = self.keys.writes(
            self.keys.base(thread_id, ns), config["configurable"]["checkpoint_id"]
        )
        calls = [
            Call("hset" if overwrite else "hsetnx", (key, field, blob))
            for field, blob, overwrite in write_fields(self.serde, writes, task_id, task_path)
        ]
        if calls and self.ttl_seconds:
            calls.append(Call("expire", (key, self.ttl_seconds)))
        if calls:
            yield calls

    def _list_op(
        self,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> Operation[None]:
        configurable = (config or {}).get("configurable", {})
        if configurable.get("thread_id") is not None:
            threads = [str(configurable["thread_id"])]
        else:
            (members,) = yield [Call("zrange", (self.keys.thread_index, 0, -1))]
            threads = sorted(_text(member) for member in members)
        wanted_id = configurable.get("checkpoint_id")
        before_id = get_checkpoint_id(before) if before else None
        remaining = limit
        for thread_id in threads:
            refs = yield from self._refs_op(thread_id, configurable.get("checkpoint_ns"))
            refs = [
                (ns, cid)
                for ns, cid in refs
                if (not wanted_id or cid == wanted_id) and (not before_id or cid < before_id)
            ]
            while refs:
                # Without a filter, a limit says how many to read: ``limit=1`` reads one.
                size = LIST_BATCH if filter or remaining is None else min(LIST_BATCH, remaining)
                chunk, refs = refs[:size], refs[size:]
                found = yield from self._load_many_op(thread_id, chunk, filter)
                for item in found:
                    yield Emit(item)
                    if remaining is not None:
                        remaining -= 1
                        if remaining <= 0:
                            return

    def _refs_op(self, thread_id: str, ns: str | None) -> Operation[list[tuple[str, str]]]:
        """(namespace, checkpoint id) pairs of a thread, newest id first."""
        if ns is not None:
            namespaces = [str(ns)]
        else:
            (segments,) = yield [Call("smembers", (self.keys.namespaces(thread_id),))]
            namespaces = [decode_segment(_text(segment)) for segment in segments]
        if not namespaces:
            return []
        replies = yield [
            Call("zrange", (self.keys.ids(self.keys.base(thread_id, n)), 0, -1)) for n in namespaces
        ]
        pairs = [(n, _text(i)) for n, ids in zip(namespaces, replies, strict=True) for i in ids]
        return sorted(pairs, key=lambda pair: pair[1], reverse=True)

    def _load_many_op(
        self, thread_id: str, refs: Sequence[tuple[str, str]], filter: dict[str, Any] | None
    ) -> Operation[list[CheckpointTuple]]:
        calls = []
        for ns, checkpoint_id in refs:
            base = self.keys.base(thread_id, ns)
            calls.append(Call("hgetall", (self.keys.checkpoint(base, checkpoint_id),)))
            calls.append(Call("hgetall", (self.keys.writes(base, checkpoint_id),)))
        replies = yield calls
        found = []
        for index, (ns, checkpoint_id) in enumerate(refs):
            stored, writes = replies[2 * index], replies[2 * index + 1]
            if not stored:
                continue
            stored = {_text(key): value for key, value in stored.items()}
            metadata = unpack(self.serde, stored["metadata"])
            if not matches(metadata, filter):
                continue
            named = checkpoint_config(thread_id, ns, checkpoint_id)
            item = decode_tuple(self.serde, named, stored, writes, metadata)
            if item is not None:
                found.append(item)
        return found

    def _trim_thread_op(self, thread_id: str, keep: int) -> Operation[None]:
        thread_id = str(thread_id)
        keys = [self.keys.namespaces(thread_id), self.keys.thread_index]
        yield [_script("trim_thread", keys, [self.keys.thread(thread_id), keep, thread_id])]

    def _delete_for_runs_op(self, run_ids: Sequence[str]) -> Operation[None]:
        run_keys = [self.keys.run(str(run_id)) for run_id in run_ids]
        if not run_keys:
            return
        replies = yield [Call("smembers", (key,)) for key in run_keys]
        by_base: dict[str, list[str]] = {}
        for members in replies:
            for member in members:
                base, checkpoint_id = split_reference(member)
                by_base.setdefault(base, []).append(checkpoint_id)
        calls = [
            _script("drop", [self.keys.ids(base)], [base, *ids]) for base, ids in by_base.items()
        ]
        yield [*calls, Call("delete", tuple(run_keys))]

    def _copy_thread_op(self, source: str, target: str) -> Operation[None]:
        source, target = str(source), str(target)
        keys = [self.keys.namespaces(source), self.keys.namespaces(target), self.keys.thread_index]
        args = [self.keys.thread(source), self.keys.thread(target), target, self.ttl_seconds or 0]
        yield [_script("copy_thread", keys, args)]

    def _prune_op(self, thread_ids: Sequence[str], strategy: str) -> Operation[None]:
        if strategy not in ("keep_latest", "delete"):
            raise ConfigError(f"unknown prune strategy {strategy!r}: use 'keep_latest' or 'delete'")
        keep = 1 if strategy == "keep_latest" else 0
        for thread_id in thread_ids:
            yield from self._trim_thread_op(thread_id, keep)


def _check_client(client: Any) -> None:
    kwargs = getattr(getattr(client, "connection_pool", None), "connection_kwargs", {})
    if kwargs.get("decode_responses"):
        raise ConfigError(
            "the checkpointer stores bytes; give it a client without decode_responses"
        )


def _call(client: Any, call: Call, shas: dict[str, str]) -> Any:
    """One call on the client itself (what its reply is, or a coroutine of it)."""
    if call.method.startswith("script:"):
        return client.evalsha(shas[call.method.removeprefix("script:")], *call.args)
    return getattr(client, call.method)(*call.args, **dict(call.kwargs))


# -- the async saver ------------------------------------------------------------------------------
class AsyncRedisSaver(_Operations):
    """Async checkpointer on plain Redis (redis-py asyncio)."""

    client: aioredis.Redis

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, url: str, **kwargs: Any) -> AsyncIterator[AsyncRedisSaver]:
        """``async with AsyncRedisSaver.from_conn_string(url) as saver``: owns its client."""
        client = async_client(url, socket_timeout=None, socket_connect_timeout=None)
        try:
            yield cls(client, **kwargs)
        finally:
            await client.aclose()

    async def _execute(self, calls: list[Call]) -> list[Any]:
        with redis_errors("checkpoint"):
            if not self._shas:
                await self._load_scripts()
            try:
                return await self._pipeline(calls)
            except NoScriptError:  # the server restarted or its scripts were flushed
                await self._load_scripts()
                return await self._pipeline(calls)

    async def _pipeline(self, calls: list[Call]) -> list[Any]:
        if is_cluster_client(self.client):  # a cluster pipeline refuses scripts: one by one
            return [await _call(self.client, call, self._shas) for call in calls]
        async with self.client.pipeline(transaction=False) as pipe:
            for call in calls:
                _call(pipe, call, self._shas)
            return await pipe.execute()

    async def _load_scripts(self) -> None:
        if is_cluster_client(self.client):  # every primary loads them (slots move)
            loaded = [await self.client.script_load(body) for body in SCRIPTS.values()]
            self._shas = dict(zip(SCRIPTS, map(_text, loaded), strict=True))
            return
        async with self.client.pipeline(transaction=False) as pipe:
            for body in SCRIPTS.values():
                pipe.script_load(body)
            self._shas = dict(zip(SCRIPTS, map(_text, await pipe.execute()), strict=True))

    async def _run(self, operation: Operation[T]) -> T:
        reply = None
        while True:
            try:
                request = operation.send(reply)
            except StopIteration as stop:
                return stop.value
            reply = None if isinstance(request, Emit) else await self._execute(request)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint named by the config, or the newest of its namespace; one round trip."""
        return await self._run(self._get_op(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Checkpoints newest first, by thread, namespace, metadata filter, ``before``, ``limit``.

        Checkpoints are read in pipelined batches of ``LIST_BATCH``.
        """
        operation = self._list_op(config, filter, before, limit)
        reply = None
        while True:
            try:
                request = operation.send(reply)
            except StopIteration:
                return
            if isinstance(request, Emit):
                reply = None
                yield request.item
            else:
                reply = await self._execute(request)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint and keep the thread within its bounds, in one round trip."""
        return await self._run(self._put_op(config, checkpoint, metadata))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes; special channels overwrite, others keep the first."""
        await self._run(self._put_writes_op(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint and write of the thread."""
        await self._run(self._trim_thread_op(thread_id, 0))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata names one of the runs."""
        await self._run(self._delete_for_runs_op(run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of one thread to another."""
        await self._run(self._copy_thread_op(source_thread_id, target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``keep_latest``: only the newest checkpoint per namespace; ``delete``: none."""
        await self._run(self._prune_op(thread_ids, strategy))

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Not supported on the async saver; use :class:`RedisSaver`."""
        raise NotImplementedError("AsyncRedisSaver is async-only; use RedisSaver for sync graphs")


# -- the sync saver -------------------------------------------------------------------------------
class RedisSaver(_Operations):
    """Sync checkpointer (redis-py): the same keys and operations as :class:`AsyncRedisSaver`."""

    client: redis.Redis

    @classmethod
    @contextmanager
    def from_conn_string(cls, url: str, **kwargs: Any) -> Iterator[RedisSaver]:
        """``with RedisSaver.from_conn_string(url) as saver``: owns its client."""
        client = sync_client(url, socket_timeout=None, socket_connect_timeout=None)
        try:
            yield cls(client, **kwargs)
        finally:
            client.close()

    def _execute(self, calls: list[Call]) -> list[Any]:
        with redis_errors("checkpoint"):
            if not self._shas:
                self._load_scripts()
            try:
                return self._pipeline(calls)
            except NoScriptError:  # the server restarted or its scripts were flushed
                self._load_scripts()
                return self._pipeline(calls)

    def _pipeline(self, calls: list[Call]) -> list[Any]:
        if is_cluster_client(self.client):  # a cluster pipeline refuses scripts: one by one
            return [_call(self.client, call, self._shas) for call in calls]
        with self.client.pipeline(transaction=False) as pipe:
            for call in calls:
                _call(pipe, call, self._shas)
            return pipe.execute()

    def _load_scripts(self) -> None:
        if is_cluster_client(self.client):  # every primary loads them (slots move)
            loaded = [self.client.script_load(body) for body in SCRIPTS.values()]
            self._shas = dict(zip(SCRIPTS, map(_text, loaded), strict=True))
            return
        with self.client.pipeline(transaction=False) as pipe:
            for body in SCRIPTS.values():
                pipe.script_load(body)
            self._shas = dict(zip(SCRIPTS, map(_text, pipe.execute()), strict=True))

    def _iterate(self, operation: Operation[T]) -> Generator[CheckpointTuple, None, T]:
        reply = None
        while True:
            try:
                request = operation.send(reply)
            except StopIteration as stop:
                return stop.value
            if isinstance(request, Emit):
                reply = None
                yield request.item
            else:
                reply = self._execute(request)

    def _run(self, operation: Operation[T]) -> T:
        iterator = self._iterate(operation)
        while True:
            try:
                next(iterator)
            except StopIteration as stop:
                return stop.value

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """See :meth:`AsyncRedisSaver.aget_tuple`."""
        return self._run(self._get_op(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """See :meth:`AsyncRedisSaver.alist`."""
        yield from self._iterate(self._list_op(config, filter, before, limit))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """See :meth:`AsyncRedisSaver.aput`."""
        return self._run(self._put_op(config, checkpoint, metadata))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """See :meth:`AsyncRedisSaver.aput_writes`."""
        self._run(self._put_writes_op(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """See :meth:`AsyncRedisSaver.adelete_thread`."""
        self._run(self._trim_thread_op(thread_id, 0))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """See :meth:`AsyncRedisSaver.adelete_for_runs`."""
        self._run(self._delete_for_runs_op(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """See :meth:`AsyncRedisSaver.acopy_thread`."""
        self._run(self._copy_thread_op(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """See :meth:`AsyncRedisSaver.aprune`."""
        self._run(self._prune_op(thread_ids, strategy))


__all__ = [
    "DEFAULT_PREFIX",
    "STATE_TYPES",
    "TRIM_SLACK",
    "AsyncRedisSaver",
    "KeySpace",
    "RedisSaver",
    "decode_segment",
    "encode_segment",
    "plait_serializer",
]
