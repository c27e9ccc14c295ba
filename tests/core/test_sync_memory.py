"""A synchronous handle has every public coroutine of ``Memory`` (and of its observations) as a
synchronous method, and never returns a coroutine."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

from plait import Memory
from plait.memory import SyncMemory
from plait.observations import Observations


@pytest.fixture
def handle(tmp_path: Path, redis_url: str, group_prefix: str) -> Iterator[SyncMemory]:
    project = tmp_path / "project"
    project.mkdir()
    opened = Memory.open_sync(
        project,
        tmp_path / "data",
        start_background=False,
        redis={"url": redis_url},
        graphiti={"group_id_prefix": group_prefix},
    )
    yield opened
    opened.close()


def coroutine_methods(cls: type) -> list[str]:
    return [
        name
        for name, value in inspect.getmembers(cls)
        if not name.startswith("_") and inspect.iscoroutinefunction(value)
    ]


def test_every_public_coroutine_has_a_synchronous_twin(handle: SyncMemory) -> None:
    names = coroutine_methods(Memory)
    assert {"search", "recall", "user_turn", "model_call", "envelope"} <= set(names)
    for name in names:
        twin = getattr(handle, name)
        assert callable(twin) and not inspect.iscoroutinefunction(twin), name
    part_names = coroutine_methods(Observations)
    assert {"listed", "save", "delete"} <= set(part_names)
    for name in part_names:
        twin = getattr(handle.observations, name)
        assert callable(twin) and not inspect.iscoroutinefunction(twin), name


def test_a_synchronous_handle_never_returns_a_coroutine(handle: SyncMemory) -> None:
    handle.user_turn("sync-1", "We decided to use PostgreSQL for storage.")
    found = handle.search("PostgreSQL storage")
    assert isinstance(found, list)
    envelope = handle.model_call("sync-1", query="which database")
    assert isinstance(envelope, str) and "PostgreSQL" in envelope
    listed = handle.observations.listed()
    assert isinstance(listed, list)
