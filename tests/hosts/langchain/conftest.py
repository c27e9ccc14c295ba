"""What the LangChain host's tests share: an open Memory on the suite's Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from plait import Memory


@pytest.fixture
async def memory(tmp_path: Path, tmp_data_dir: Path, redis_url: str) -> AsyncIterator[Memory]:
    """A project's Memory with no background loops, on the suite's Redis, 20 s hook timeouts."""
    project = tmp_path / "project"
    project.mkdir()
    async with Memory.open(
        project,
        tmp_data_dir,
        start_background=False,
        redis={"url": redis_url},
        hooks={"timeout_ms": 20_000, "in_process_timeout_ms": 20_000},
    ) as opened:
        assert opened.degraded == []
        yield opened
