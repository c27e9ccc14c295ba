"""One contract suite, run over every ObservationStore: Redis (embedded FalkorDB) and in-memory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from support.backends import BACKENDS, backend_url

from plait.adapters.backends.observations_memory import InMemoryObservationStore
from plait.adapters.backends.observations_redis import RedisObservationStore
from plait.state.observations import Observation, ObservationStore

GROUP = "plait-contract-0000aaaa"
START = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest, key_prefix: str) -> AsyncIterator[ObservationStore]:
    url = backend_url(request)
    kept: ObservationStore = (
        RedisObservationStore.from_url(url, prefix=key_prefix)
        if url
        else InMemoryObservationStore()
    )
    yield kept
    await kept.aclose()  # type: ignore[attr-defined]


def observation(
    number: int, *, topic: str = "", revision: int = 1, title: str = "", superseded_by: str = ""
) -> Observation:
    return Observation(
        id=f"o{number:012x}",
        type="decision",
        title=title or f"decision {number}",
        content=f"What: decision {number}",
        topic_key=topic,
        revision=revision,
        created_at=START + timedelta(minutes=number),
        updated_at=START + timedelta(minutes=number),
        superseded_by=superseded_by,
    )


def test_both_implementations_satisfy_the_protocol() -> None:
    assert isinstance(InMemoryObservationStore(), ObservationStore)
    assert isinstance(RedisObservationStore.from_url("redis://127.0.0.1:1"), ObservationStore)


async def test_observation_store_puts_gets_and_lists_oldest_first(store: ObservationStore) -> None:
    assert await store.observations_version(GROUP) == 0
    assert await store.put_observation(GROUP, observation(2), expected_revision=0) == 1
    assert await store.put_observation(GROUP, observation(1), expected_revision=0) == 2
    got = await store.get_observation(GROUP, observation(1).id)
    assert got == observation(1)
    assert [o.id for o in await store.list_observations(GROUP)] == [
        observation(1).id,
        observation(2).id,
    ]
    assert await store.observations_version(GROUP) == 2
    assert await store.get_observation(GROUP, "o000000000099") is None
    assert await store.list_observations("another-group") == []


async def test_observation_store_writes_compare_the_revision(store: ObservationStore) -> None:
    assert await store.put_observation(GROUP, observation(1), expected_revision=0)
    assert not await store.put_observation(GROUP, observation(1), expected_revision=0)
    newer = observation(1, revision=2, title="changed")
    assert not await store.put_observation(GROUP, newer, expected_revision=5)
    assert await store.put_observation(GROUP, newer, expected_revision=1)
    stored = await store.get_observation(GROUP, newer.id)
    assert stored is not None and stored.title == "changed" and stored.revision == 2


async def test_observation_store_gives_a_topic_key_one_owner(store: ObservationStore) -> None:
    assert await store.put_observation(
        GROUP, observation(1, topic="db/choice"), expected_revision=0
    )
    assert not await store.put_observation(
        GROUP, observation(2, topic="db/choice"), expected_revision=0
    )
    owner = await store.observation_for_topic(GROUP, "db/choice")
    assert owner is not None and owner.id == observation(1).id
    moved = observation(1, topic="db/engine", revision=2)
    assert await store.put_observation(GROUP, moved, expected_revision=1)
    assert await store.observation_for_topic(GROUP, "db/choice") is None
    assert await store.put_observation(
        GROUP, observation(2, topic="db/choice"), expected_revision=0
    )
    assert (await store.observation_for_topic(GROUP, "db/engine")) == moved


async def test_observation_store_forgets_and_remembers_forgetting(store: ObservationStore) -> None:
    await store.put_observation(GROUP, observation(1, topic="t/one"), expected_revision=0)
    version = await store.observations_version(GROUP)
    assert await store.delete_observation(GROUP, observation(1).id) == version + 1
    assert await store.delete_observation(GROUP, observation(1).id) == 0
    assert await store.get_observation(GROUP, observation(1).id) is None
    assert await store.observation_for_topic(GROUP, "t/one") is None
    assert await store.is_forgotten(GROUP, observation(1).id)
    assert not await store.is_forgotten(GROUP, observation(2).id)
    assert await store.observations_version(GROUP) > version


async def test_observation_store_keeps_markers_per_group(store: ObservationStore) -> None:
    assert await store.get_marker(GROUP, "seeded") is None
    await store.set_marker(GROUP, "seeded", "1")
    assert await store.get_marker(GROUP, "seeded") == "1"
    assert await store.get_marker("another-group", "seeded") is None


async def test_observation_store_lets_one_of_two_racing_writers_win(
    store: ObservationStore,
) -> None:
    first, second = observation(1, topic="race"), observation(2, topic="race")
    results = await asyncio.gather(
        store.put_observation(GROUP, first, expected_revision=0),
        store.put_observation(GROUP, second, expected_revision=0),
    )
    assert sorted(results) == [0, 1]  # one refused (0), one stored (the new version)
    assert len(await store.list_observations(GROUP)) == 1
