"""``plait bench middleware``: a real create_agent loop with and without plait's middleware."""

from __future__ import annotations

import logging

import pytest

from plait import Memory
from plait.adapters.hosts.langchain.bench import agent_turns
from plait.devtools.middleware_bench import bench_middleware, remote_turns


async def test_each_turn_is_timed_and_plait_records_what_was_said(memory: Memory) -> None:
    assert len(await agent_turns(None, 3)) == 3
    timings = await bench_middleware(memory, turns=10)
    assert [t.samples for t in timings] == [10, 10, 10]
    assert all(t.p50 <= t.p95 <= t.p99 for t in timings)
    sessions = await memory.backends.store.list_sessions(memory.group_id)  # the turns were kept
    assert sessions


async def test_turns_over_a_service_of_their_own_are_timed_and_never_fail_open(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``--remote``: a real ``plait serve`` in another process; no turn went without memory."""
    with caplog.at_level(logging.WARNING, logger="plait"):
        samples = await remote_turns(5)
    assert len(samples) == 5 and all(sample > 0 for sample in samples)
    assert "failed open" not in caplog.text
