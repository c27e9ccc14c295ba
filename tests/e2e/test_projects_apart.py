"""Two projects on one server (the default: one data dir a user) never share a session, and
what an older plait left queued on that server is drained all the same."""

from __future__ import annotations

import uuid
from pathlib import Path

import redis.asyncio as aioredis

from plait import Memory
from plait.adapters.backends.redis_store import RedisHotStore
from plait.state.events import EventKind, SessionEvent
from plait.wiring import LEGACY_PREFIX, project_prefix


async def test_the_same_session_id_in_two_projects_is_two_sessions(
    tmp_path: Path, redis_url: str, group_prefix: str
) -> None:
    """LangChain thread ids (``thread-1``) repeat across projects; their memory must not."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shared = {"redis": {"url": redis_url}, "graphiti": {"group_id_prefix": group_prefix}}
    async with Memory.open(
        tmp_path / "a", tmp_path / "data", start_background=False, **shared
    ) as a:
        await a.user_turn("thread-1", "We decided to use PostgreSQL for project A's storage.")
        assert "PostgreSQL" in await a.model_call("thread-1", query="storage")
    async with Memory.open(
        tmp_path / "b", tmp_path / "data", start_background=False, **shared
    ) as b:
        envelope = await b.model_call("thread-1", query="storage")
        snapshot = await b.snapshot("thread-1")
    assert "PostgreSQL" not in envelope
    assert snapshot.decisions == []
    assert project_prefix(tmp_path / "a") != project_prefix(tmp_path / "b")


async def test_what_an_older_plait_queued_moves_to_the_project_queue(
    tmp_path: Path, redis_url: str
) -> None:
    legacy = f"t{uuid.uuid4().hex[:8]}:"  # stands in for LEGACY_PREFIX on a shared server
    old = RedisHotStore.from_url(redis_url, prefix=legacy)
    new = RedisHotStore.from_url(redis_url, prefix=project_prefix(tmp_path))
    events = [
        SessionEvent(root_session_id="s", session_id="s", kind=EventKind.DECISION, summary=text)
        for text in ("use uv", "use ruff", "use mypy")
    ]
    await old.enqueue("group-1", events[:2])
    await old.enqueue("group-2", events[2:])
    try:
        assert await new.adopt_queue(legacy) == 3
        assert await new.adopt_queue(legacy) == 0  # once
        claimed = await new.claim("test", count=10)
        assert [(e.group_id, e.event.summary) for e in claimed] == [
            ("group-1", "use uv"),
            ("group-1", "use ruff"),
            ("group-2", "use mypy"),
        ]
        assert await old.queue_depth() == 0
    finally:
        client = aioredis.Redis.from_url(redis_url)
        await client.delete(f"{legacy}drain", f"{project_prefix(tmp_path)}drain")
        await client.aclose()
        await old.aclose()
        await new.aclose()
    assert LEGACY_PREFIX == "plait:"
