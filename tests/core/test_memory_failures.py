"""The Python API never raises a backend's error: with Redis dead mid-use, plait degrades and says so.

The Redis server is a real one (the embedded FalkorDB of a test's own data dir), killed with
SIGKILL while the memory is open.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from plait import Memory
from plait.adapters.backends.redis_store import RedisHotStore
from plait.memory import remembered
from plait.state.base.errors import BackendUnavailable
from plait.state.base.processes import pid_alive
from plait.state.events import EventKind, SessionEvent


def decision(text: str) -> SessionEvent:
    """A decision event of session ``s1``."""
    return SessionEvent(
        root_session_id="s1", session_id="s1", kind=EventKind.DECISION, summary=text
    )


@pytest.fixture
async def dead_redis(tmp_path: Path) -> AsyncIterator[Memory]:
    """An open memory whose Redis server was killed after its first turn."""
    async with Memory.open(tmp_path, tmp_path / "data", start_background=False) as memory:
        assert memory.backends.server is not None and memory.backends.server.info is not None
        await memory.user_turn("s1", "We decided to use Postgres for storage.")
        pid = memory.backends.server.info.pid
        os.kill(pid, signal.SIGKILL)
        for _ in range(200):
            if not pid_alive(pid):
                break
            await asyncio.sleep(0.02)
        assert memory.degraded == []
        yield memory


async def test_memory_hooks_fail_open_when_redis_dies(
    dead_redis: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    output = {"message": {"sessionID": "s1"}, "parts": [{"type": "text", "text": "more"}]}
    with caplog.at_level(logging.WARNING, logger="plait"):
        answer = await dead_redis.hook("chat.message", {"sessionID": "s1"}, output)
        envelope = await dead_redis.model_call("s1", observed=[decision("use uv")], query="storage")
        await dead_redis.user_turn("s1", "and now?")
    assert answer is output and envelope == ""
    assert dead_redis.degraded and "Redis" in dead_redis.degraded[-1]
    # the OpenCode call was kept in the spool (it runs when Redis is back); the others failed open
    assert "1 call(s) wait in the spool for the hot tier" in dead_redis.degraded
    messages = [r.getMessage() for r in caplog.records]
    assert messages and all("Redis" in message for message in messages), messages


async def test_memory_record_and_remember_never_claim_what_they_could_not_store(
    dead_redis: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="plait"):
        recorded = await dead_redis.dispatch.record(
            "s1", [decision("use uv"), decision("use ruff")]
        )
        kept = await dead_redis.remember("s1", "Deploys go through the staging cluster.")
    assert recorded == []
    assert kept.id == 0 and "staging" in kept.summary
    assert remembered("decision", kept, dead_redis.degraded).startswith("Not remembered")
    assert any("recording events failed" in reason for reason in dead_redis.degraded)
    assert any("recording events failed open: Redis" in r.getMessage() for r in caplog.records)


async def test_memory_degraded_clears_once_a_call_goes_through(
    tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with Memory.open(tmp_path, redis={"url": redis_url}, start_background=False) as memory:
        original = RedisHotStore.append_events

        async def refused(*args: object, **kwargs: object) -> list[SessionEvent]:
            raise BackendUnavailable("Redis append events failed: refused")

        monkeypatch.setattr(RedisHotStore, "append_events", refused)
        assert (await memory.remember("s1", "Use uv.")).id == 0
        assert memory.degraded
        monkeypatch.setattr(RedisHotStore, "append_events", original)
        assert (await memory.remember("s1", "Use uv.")).id > 0
        assert memory.degraded == []


def test_redis_store_translates_client_errors() -> None:
    import redis.asyncio as aioredis
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    async def refused() -> None:
        client = aioredis.Redis(host="127.0.0.1", port=1, retry=Retry(NoBackoff(), 0))
        try:
            await RedisHotStore(client).event_count("s1")
        finally:
            await client.aclose()

    with pytest.raises(BackendUnavailable, match="Redis event count failed"):
        asyncio.run(refused())


async def test_an_unreachable_knowledge_graph_shows_in_degraded(
    open_memory: Callable[..., Any],
) -> None:
    """The hot tier answers, the graph's server does not: hooks go on, and ``degraded`` says why
    once something needed the graph (a search), until it opens."""
    async with open_memory(falkordb={"url": "redis://127.0.0.1:9"}) as memory:
        assert memory.degraded == []
        await memory.user_turn("kg-down", "We decided to keep the graph on its own server.")
        hits = await memory.search("graph server")  # the recall index answers without it
        assert isinstance(hits, list)
        assert any("knowledge graph unreachable" in why for why in memory.degraded)
        assert "graph on its own server" in await memory.envelope("kg-down")
