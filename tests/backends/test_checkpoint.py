"""plait's Redis checkpointers: bounded growth, TTL, round trips, the sync saver, real graphs."""

from __future__ import annotations

import operator
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import pytest
import redis
import redis.asyncio as aioredis
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from plait.adapters.backends.checkpoint import (
    TRIM_SLACK,
    AsyncRedisSaver,
    KeySpace,
    RedisSaver,
    decode_segment,
    encode_segment,
)
from plait.state.base.errors import ConfigError


def config(thread: str, ns: str = "", checkpoint_id: str | None = None) -> dict[str, Any]:
    configurable = {"thread_id": thread, "checkpoint_ns": ns}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


async def put_many(saver: AsyncRedisSaver, thread: str, count: int, ns: str = "") -> list[str]:
    ids = []
    parent = config(thread, ns)
    for step in range(count):
        checkpoint = empty_checkpoint()
        metadata = {"source": "loop", "step": step, "run_id": f"run-{step}"}
        parent = await saver.aput(parent, checkpoint, metadata, {})
        await saver.aput_writes(parent, [("channel", step)], task_id=f"task-{step}")
        ids.append(checkpoint["id"])
    return ids


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    connection = aioredis.Redis.from_url(redis_url)
    yield connection
    await connection.aclose()


@pytest.fixture
def sync_client(redis_url: str) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(redis_url)
    yield connection
    connection.close()


async def keys_with(client: aioredis.Redis, prefix: str, part: bytes) -> list[bytes]:
    return [key for key in await client.keys(f"{prefix}*") if part in key]


def test_key_segments_are_reversible_and_never_collide() -> None:
    names = ["", "%", "_", "a:b", "child:1|x", "ns", "naïve space"]
    segments = [encode_segment(name) for name in names]
    assert len(set(segments)) == len(names)
    assert all(":" not in segment for segment in segments)
    assert [decode_segment(segment) for segment in segments] == names
    keys = KeySpace(prefix="p:")
    assert keys.namespaces("run") != keys.run("ns")
    assert keys.thread_index != keys.thread("%threads")


async def test_checkpointer_keeps_only_the_newest_checkpoints(
    client: aioredis.Redis, key_prefix: str
) -> None:
    saver = AsyncRedisSaver(client, prefix=key_prefix, max_checkpoints_per_thread=10)
    ids = await put_many(saver, "t1", 200)
    listed = [item.checkpoint["id"] async for item in saver.alist(config("t1"))]
    assert TRIM_SLACK == 0
    assert listed == list(reversed(ids[-10:]))
    assert len(await keys_with(client, key_prefix, b":c:")) == 10
    assert len(await keys_with(client, key_prefix, b":w:")) == 10
    assert len(await keys_with(client, key_prefix, b"%runs:")) == 10
    newest = await saver.aget_tuple(config("t1"))
    assert newest is not None and newest.pending_writes == [("task-199", "channel", 199)]
    await saver.aprune(["t1"])
    assert [item.checkpoint["id"] async for item in saver.alist(config("t1"))] == [ids[-1]]
    assert len(await keys_with(client, key_prefix, b":w:")) == 1


async def test_checkpointer_bounds_each_namespace_apart(
    client: aioredis.Redis, key_prefix: str
) -> None:
    saver = AsyncRedisSaver(client, prefix=key_prefix, max_checkpoints_per_thread=3)
    await put_many(saver, "t1", 6)
    child = await put_many(saver, "t1", 5, ns="child:1")
    listed = [item.config["configurable"] async for item in saver.alist(config("t1", "child:1"))]
    assert [c["checkpoint_id"] for c in listed] == list(reversed(child[-3:]))
    assert {c["checkpoint_ns"] for c in listed} == {"child:1"}
    assert len([item async for item in saver.alist({"configurable": {"thread_id": "t1"}})]) == 6


async def test_checkpointer_sets_a_ttl_on_every_key_it_writes(
    client: aioredis.Redis, key_prefix: str
) -> None:
    saver = AsyncRedisSaver(client, prefix=key_prefix, ttl_seconds=120)
    await put_many(saver, "t1", 2)
    keys = [key for key in await client.keys(f"{key_prefix}*") if b"%threads" not in key]
    ttls = [await client.ttl(key) for key in keys]
    assert len(keys) == 2 * 3 + 2  # 2 x (checkpoint, writes, run) + ids + namespaces
    assert all(0 < ttl <= 120 for ttl in ttls)
    expires_at = await client.zscore(saver.keys.thread_index, "t1")
    assert expires_at is not None and expires_at != float("inf")


async def test_checkpointer_sweeps_expired_checkpoints_and_threads(
    client: aioredis.Redis, key_prefix: str
) -> None:
    saver = AsyncRedisSaver(client, prefix=key_prefix, ttl_seconds=120)
    ids = await put_many(saver, "t1", 3)
    base = saver.keys.base("t1", "")
    await client.delete(saver.keys.checkpoint(base, ids[0]))  # as if it had expired
    await client.zadd(saver.keys.thread_index, {"gone": 1})  # a thread that expired long ago
    await put_many(saver, "t1", 1)
    assert await client.zscore(saver.keys.ids(base), ids[0]) is None
    assert await client.zscore(saver.keys.thread_index, "gone") is None
    assert await client.zscore(saver.keys.thread_index, "t1") is not None


async def test_get_and_put_take_one_round_trip_each(
    client: aioredis.Redis, key_prefix: str
) -> None:
    saver = AsyncRedisSaver(client, prefix=key_prefix, max_checkpoints_per_thread=2, ttl_seconds=60)
    await put_many(saver, "t1", 3)
    batches: list[int] = []
    execute = saver._execute

    async def counting(calls: list[Any]) -> list[Any]:
        batches.append(len(calls))
        return await execute(calls)

    saver._execute = counting  # type: ignore[method-assign]
    saved = await saver.aput(config("t1"), empty_checkpoint(), {"source": "loop", "step": 9}, {})
    assert batches == [1]
    found = await saver.aget_tuple(config("t1"))
    assert batches == [1, 1] and found is not None
    assert found.config == saved
    assert await saver.aget_tuple(saved) == found
    assert batches == [1, 1, 1]


async def test_pending_writes_follow_task_path_then_task_then_index(
    client: aioredis.Redis, key_prefix: str
) -> None:
    saver = AsyncRedisSaver(client, prefix=key_prefix)
    saved = await saver.aput(config("t1"), empty_checkpoint(), {}, {})
    await saver.aput_writes(saved, [("b", 1), ("c", 2)], task_id="zz", task_path="~a")
    await saver.aput_writes(saved, [("a", 0)], task_id="yy", task_path="~b")
    await saver.aput_writes(
        saved, [("a", "ignored"), ("__error__", "e1")], task_id="yy", task_path="~b"
    )
    await saver.aput_writes(saved, [("__error__", "e2")], task_id="yy", task_path="~b")
    found = await saver.aget_tuple(saved)
    assert found is not None
    assert found.pending_writes == [
        ("zz", "b", 1),
        ("zz", "c", 2),
        ("yy", "__error__", "e2"),
        ("yy", "a", 0),
    ]


async def test_checkpointer_reloads_its_scripts_when_the_server_forgot_them(
    client: aioredis.Redis, key_prefix: str
) -> None:
    saver = AsyncRedisSaver(client, prefix=key_prefix)
    await put_many(saver, "t1", 1)
    saver._shas = {name: "0" * 40 for name in saver._shas}
    ids = await put_many(saver, "t1", 1)
    found = await saver.aget_tuple(config("t1"))
    assert found is not None and found.checkpoint["id"] == ids[0]


async def test_checkpointer_refuses_a_decoding_client_and_bad_bounds(redis_url: str) -> None:
    decoding = aioredis.Redis.from_url(redis_url, decode_responses=True)
    with pytest.raises(ConfigError):
        AsyncRedisSaver(decoding)
    await decoding.aclose()
    with pytest.raises(ConfigError):
        RedisSaver(redis.Redis.from_url(redis_url), max_checkpoints_per_thread=0)
    async with AsyncRedisSaver.from_conn_string(redis_url) as saver:
        with pytest.raises(ConfigError, match="strategy"):
            await saver.aprune(["t1"], strategy="keep_some")


def test_sync_saver_round_trip_shares_the_async_layout(redis_url: str, key_prefix: str) -> None:
    with RedisSaver.from_conn_string(redis_url, prefix=key_prefix) as saver:
        first = empty_checkpoint()
        saved = saver.put(config("s:1"), first, {"source": "input", "step": -1, "run_id": "r1"}, {})
        saver.put_writes(saved, [("messages", {"text": "hi"})], task_id="task")
        second = empty_checkpoint()
        newest = saver.put(saved, second, {"source": "loop", "step": 0, "run_id": "r2"}, {})
        found = saver.get_tuple(saved)
        assert found is not None and found.pending_writes == [("task", "messages", {"text": "hi"})]
        assert saver.get_tuple(config("s:1")).config == newest  # type: ignore[union-attr]
        assert [item.checkpoint["id"] for item in saver.list(config("s:1"))] == [
            second["id"],
            first["id"],
        ]
        assert [item.metadata["step"] for item in saver.list(None, filter={"source": "input"})] == [
            -1
        ]
        saver.copy_thread("s:1", "s:2")
        saver.delete_for_runs(["r2"])
        assert [item.checkpoint["id"] for item in saver.list(config("s:2"))] == [first["id"]]
        saver.prune(["s:1"])
        assert [item.checkpoint["id"] for item in saver.list(config("s:1"))] == [first["id"]]
        saver.delete_thread("s:1")
        assert saver.get_tuple(config("s:1")) is None
        assert saver.get_tuple(config("s:2")) is not None


async def test_async_saver_reads_what_the_sync_saver_wrote(
    sync_client: redis.Redis, client: aioredis.Redis, key_prefix: str
) -> None:
    checkpoint = empty_checkpoint()
    RedisSaver(sync_client, prefix=key_prefix).put(
        config("t1", "ns:x"), checkpoint, {"step": 3}, {}
    )
    found = await AsyncRedisSaver(client, prefix=key_prefix).aget_tuple(config("t1", "ns:x"))
    assert found is not None and found.checkpoint["id"] == checkpoint["id"]
    assert found.metadata["step"] == 3


class CounterState(TypedDict):
    total: Annotated[int, operator.add]


def counter_graph() -> StateGraph:
    builder = StateGraph(CounterState)
    builder.add_node("add", lambda state: {"total": 1})
    builder.add_edge(START, "add")
    builder.add_edge("add", END)
    return builder


async def test_a_graph_resumes_its_thread_from_redis(redis_url: str, key_prefix: str) -> None:
    thread = {"configurable": {"thread_id": uuid.uuid4().hex}}
    options = {"prefix": key_prefix, "max_checkpoints_per_thread": 3, "ttl_seconds": 300}
    for expected in (1, 2, 3):
        async with AsyncRedisSaver.from_conn_string(redis_url, **options) as saver:
            graph = counter_graph().compile(checkpointer=saver)
            result = await graph.ainvoke({"total": 0}, thread, durability="exit")
            assert result["total"] == expected
    async with AsyncRedisSaver.from_conn_string(redis_url, **options) as saver:
        history = [item async for item in saver.alist(thread)]
        assert len(history) == 3
        graph = counter_graph().compile(checkpointer=saver)
        assert (await graph.aget_state(thread)).values["total"] == 3


def test_sync_graph_uses_the_sync_saver(sync_client: redis.Redis, key_prefix: str) -> None:
    thread = {"configurable": {"thread_id": "sync-thread"}}
    saver = RedisSaver(sync_client, prefix=key_prefix, max_checkpoints_per_thread=4)
    graph = counter_graph().compile(checkpointer=saver)
    graph.invoke({"total": 0}, thread)
    assert graph.invoke({"total": 0}, thread)["total"] == 2
    assert len(list(saver.list(thread))) == 4


async def test_list_pages_past_a_batch_with_limit_and_before(
    client: aioredis.Redis, key_prefix: str
) -> None:
    saver = AsyncRedisSaver(client, prefix=key_prefix)
    ids = list(reversed(await put_many(saver, "t1", 40)))
    assert [item.checkpoint["id"] async for item in saver.alist(config("t1"))] == ids
    limited = [item.checkpoint["id"] async for item in saver.alist(config("t1"), limit=35)]
    assert limited == ids[:35]
    before = config("t1", checkpoint_id=ids[4])
    older = [item.checkpoint["id"] async for item in saver.alist(config("t1"), before=before)]
    assert older == ids[5:]
    odd = [item async for item in saver.alist(config("t1"), filter={"step": 7})]
    assert [item.metadata["run_id"] for item in odd] == ["run-7"]
