"""plait's Redis checkpointer: bounded growth, TTL, the sync saver, a real graph resuming."""

from __future__ import annotations

import operator
import uuid
from typing import Annotated

import redis
import redis.asyncio as aioredis
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from plait.adapters.checkpoint import TRIM_SLACK, AsyncRedisSaver, RedisSaver


def config(thread: str) -> dict:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}


async def put_many(saver: AsyncRedisSaver, thread: str, count: int) -> list[str]:
    ids = []
    parent = config(thread)
    for step in range(count):
        checkpoint = empty_checkpoint()
        parent = await saver.aput(parent, checkpoint, {"source": "loop", "step": step}, {})
        await saver.aput_writes(parent, [("channel", step)], task_id=f"task-{step}")
        ids.append(checkpoint["id"])
    return ids


async def test_checkpointer_keeps_only_the_newest_checkpoints(redis_url: str, key_prefix: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    saver = AsyncRedisSaver(client, prefix=key_prefix, max_checkpoints_per_thread=10)
    ids = await put_many(saver, "t1", 203)
    listed = [item.checkpoint["id"] async for item in saver.alist(config("t1"))]
    assert 10 <= len(listed) <= 10 + TRIM_SLACK
    assert listed == list(reversed(ids[-len(listed):]))
    keys = await client.keys(f"{key_prefix}*")
    assert len([k for k in keys if b":c:" in k]) == len(listed)
    assert len([k for k in keys if b":w:" in k]) == len(listed)
    await saver.aprune(["t1"])
    assert [item.checkpoint["id"] async for item in saver.alist(config("t1"))] == [ids[-1]]
    newest = await saver.aget_tuple(config("t1"))
    assert newest is not None and newest.pending_writes == [("task-202", "channel", 202)]
    await client.aclose()


async def test_checkpointer_sets_a_ttl_on_thread_keys(redis_url: str, key_prefix: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    saver = AsyncRedisSaver(client, prefix=key_prefix, ttl_seconds=120)
    await put_many(saver, "t1", 2)
    keys = await client.keys(f"{key_prefix}t1*")
    ttls = [await client.ttl(key) for key in keys]
    assert keys and all(0 < ttl <= 120 for ttl in ttls)
    await client.aclose()


def test_sync_saver_round_trip(redis_url: str, key_prefix: str) -> None:
    with RedisSaver.from_conn_string(redis_url, prefix=key_prefix) as saver:
        checkpoint = empty_checkpoint()
        saved = saver.put(config("s1"), checkpoint, {"source": "input", "step": -1}, {})
        found = saver.get_tuple(saved)
        assert found is not None and found.checkpoint["id"] == checkpoint["id"]
        assert [item.checkpoint["id"] for item in saver.list(config("s1"))] == [checkpoint["id"]]
        saver.delete_thread("s1")
        assert saver.get_tuple(config("s1")) is None


class CounterState(TypedDict):
    total: Annotated[int, operator.add]


def counter_graph():
    builder = StateGraph(CounterState)
    builder.add_node("add", lambda state: {"total": 1})
    builder.add_edge(START, "add")
    builder.add_edge("add", END)
    return builder


async def test_a_graph_resumes_its_thread_from_redis(redis_url: str, key_prefix: str) -> None:
    thread = {"configurable": {"thread_id": uuid.uuid4().hex}}
    async with AsyncRedisSaver.from_conn_string(redis_url, prefix=key_prefix) as saver:
        graph = counter_graph().compile(checkpointer=saver)
        assert (await graph.ainvoke({"total": 0}, thread))["total"] == 1
    async with AsyncRedisSaver.from_conn_string(redis_url, prefix=key_prefix) as saver:
        graph = counter_graph().compile(checkpointer=saver)
        assert (await graph.ainvoke({"total": 0}, thread))["total"] == 2


def test_sync_graph_uses_the_sync_saver(redis_url: str, key_prefix: str) -> None:
    thread = {"configurable": {"thread_id": "sync-thread"}}
    with RedisSaver(redis_url, prefix=key_prefix) as saver:
        graph = counter_graph().compile(checkpointer=saver)
        graph.invoke({"total": 0}, thread)
        assert graph.invoke({"total": 0}, thread)["total"] == 2
    assert redis.Redis.from_url(redis_url).keys(f"{key_prefix}*")
