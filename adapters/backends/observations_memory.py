"""Observations in process memory: the degraded-mode fallback and the reference implementation.

The same semantics as :class:`~plait.adapters.backends.observations_redis.RedisObservationStore`
(compare-and-set on the revision, one owner per topic key, forgotten ids, a version per group),
so one contract suite runs over both (``tests/contracts/test_observation_store_contract.py``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from plait.state.observations import Observation


@dataclass
class _Group:
    observations: dict[str, Observation] = field(default_factory=dict)
    topics: dict[str, str] = field(default_factory=dict)
    forgotten: set[str] = field(default_factory=set)
    markers: dict[str, str] = field(default_factory=dict)
    version: int = 0


@dataclass
class InMemoryObservationStore:
    """:class:`~plait.state.observations.ObservationStore` in a dict; nothing persists."""

    _groups: dict[str, _Group] = field(default_factory=lambda: defaultdict(_Group))

    async def put_observation(
        self, group_id: str, observation: Observation, *, expected_revision: int
    ) -> int:
        """Compare the revision, claim the topic key, store, bump the version."""
        group = self._groups[group_id]
        old = group.observations.get(observation.id)
        if (old.revision if old else 0) != expected_revision:
            return 0
        topic = observation.topic_key
        if topic and group.topics.get(topic, observation.id) != observation.id:
            return 0
        released = old.topic_key if old and old.topic_key != topic else ""
        if released and group.topics.get(released) == observation.id:
            del group.topics[released]
        if topic:
            group.topics[topic] = observation.id
        group.observations[observation.id] = observation
        group.version += 1
        return group.version

    async def get_observation(self, group_id: str, observation_id: str) -> Observation | None:
        """By id."""
        return self._groups[group_id].observations.get(observation_id)

    async def observation_for_topic(self, group_id: str, topic_key: str) -> Observation | None:
        """By topic key."""
        group = self._groups[group_id]
        owner = group.topics.get(topic_key)
        return None if owner is None else group.observations.get(owner)

    async def list_observations(self, group_id: str) -> list[Observation]:
        """Oldest first."""
        found = self._groups[group_id].observations.values()
        return sorted(found, key=lambda o: (o.created_at, o.id))

    async def delete_observation(self, group_id: str, observation_id: str) -> int:
        """Forget it and remember that it was forgotten; the new version, or 0."""
        group = self._groups[group_id]
        old = group.observations.pop(observation_id, None)
        if old is None:
            return 0
        if old.topic_key and group.topics.get(old.topic_key) == observation_id:
            del group.topics[old.topic_key]
        group.forgotten.add(observation_id)
        group.version += 1
        return group.version

    async def is_forgotten(self, group_id: str, observation_id: str) -> bool:
        """Whether it was forgotten."""
        return observation_id in self._groups[group_id].forgotten

    async def observations_version(self, group_id: str) -> int:
        """The write counter."""
        return self._groups[group_id].version

    async def get_marker(self, group_id: str, name: str) -> str | None:
        """A kept value."""
        return self._groups[group_id].markers.get(name)

    async def set_marker(self, group_id: str, name: str, value: str) -> None:
        """Keep a value."""
        self._groups[group_id].markers[name] = value

    async def aclose(self) -> None:
        """Nothing to release."""


__all__ = ["InMemoryObservationStore"]
