"""A synchronous handle has every public coroutine of ``Memory`` (and of its observations) as a
synchronous method, and never returns a coroutine."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

from plait import Memory
from plait.observations import Observations
from plait.sync import SyncMemory


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
        twin = getattr(SyncMemory, "close" if name == "aclose" else name, None)
        assert twin is not None and not inspect.iscoroutinefunction(twin), name
        if name != "aclose":  # the same arguments, synchronously
            async_params = list(inspect.signature(getattr(Memory, name)).parameters)
            assert list(inspect.signature(twin).parameters) == async_params, name
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


def test_the_facade_is_slim() -> None:
    """``Memory``: open/close, the typed intents, search and recall, envelope and snapshot."""
    public = [
        name
        for name, value in inspect.getmembers(Memory)
        if not name.startswith("_") and callable(value)
    ]
    assert len(public) <= 15, public


def test_a_moved_name_still_works_and_says_where_it_went(handle: SyncMemory) -> None:
    memory = handle.memory
    with pytest.warns(DeprecationWarning, match="memory.dispatch.intake"):
        assert memory.intake is memory.dispatch.intake
    with pytest.warns(DeprecationWarning, match="model_call"):
        envelope = handle.run(memory.turn("sync-2", [], query="anything"))
    assert isinstance(envelope, str)
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        memory.nonsense  # noqa: B018
