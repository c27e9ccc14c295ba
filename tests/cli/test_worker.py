"""``plait worker`` run forever outlives an outage of its hot tier and drains after it."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from plait import Memory
from plait.cli.worker import run_worker
from plait.devtools.load import ExternalRedis
from plait.state.base.settings import Settings


async def test_a_worker_outlives_a_redis_outage_and_drains_after_it(tmp_path: Path) -> None:
    project, data = tmp_path / "project", tmp_path / "data"
    project.mkdir()
    redis = ExternalRedis(tmp_path / "redis")
    overrides = {
        "redis": {"url": redis.start(), "drain_quiet_seconds": 0.1},
        "graphiti": {"group_id_prefix": f"t{uuid.uuid4().hex[:10]}"},
    }
    settings = Settings.load(project, data_dir=data, **overrides)
    worker = asyncio.create_task(run_worker(settings, project))
    try:
        await asyncio.sleep(1.0)
        redis.kill()
        await asyncio.sleep(3.0)  # the worker's drains fail meanwhile
        survived = not worker.done()
        redis.start()  # on the same port
        async with Memory.open(project, data, start_background=False, **overrides) as memory:
            await memory.user_turn("s1", "We decided to use Postgres for storage.")
            queued = await memory.backends.store.queue_depth()
            for _ in range(300):
                if await memory.backends.store.queue_depth() == 0:
                    break
                await asyncio.sleep(0.1)
            left = await memory.backends.store.queue_depth()
    finally:
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
        redis.kill()
    assert survived, worker.exception() if worker.done() and not worker.cancelled() else ""
    assert queued >= 1 and left == 0
