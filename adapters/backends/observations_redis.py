"""Observations in Redis (the embedded FalkorDB server included): durable, by group.

Keys, under ``prefix`` (default ``plait:``), none of them expiring:

=========================  ====================================================================
``obs:{group}``            hash of observation id to its JSON
``obs:{group}:topic``      hash of topic key to the id holding it
``obs:{group}:version``    a counter bumped by every write (search indexes key on it)
``obs:{group}:forgotten``  set of forgotten ids (an import does not bring them back)
``obs:{group}:marker``     hash of small values (seeded, the shared file's hash)
=========================  ====================================================================

Writes are Lua scripts, so the revision check, the topic index and the version move together.
On a Redis Cluster the group is a hash tag (``obs:{{group}}…``): a group's keys share a slot.
"""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis

from plait.adapters.backends.redis_client import async_client, is_cluster_client
from plait.adapters.backends.redis_errors import translated
from plait.state.observations import Observation

# KEYS: observations, topics, version. ARGV: id, json, expected revision, topic key.
# Returns the new version, 0 when the revision moved, -1 when another id holds the topic key.
PUT = """
local old = redis.call('HGET', KEYS[1], ARGV[1])
local revision = 0
local old_topic = ''
if old then
  local decoded = cjson.decode(old)
  revision = tonumber(decoded['revision'])
  old_topic = decoded['topic_key'] or ''
end
if revision ~= tonumber(ARGV[3]) then return 0 end
if ARGV[4] ~= '' then
  local owner = redis.call('HGET', KEYS[2], ARGV[4])
  if owner and owner ~= ARGV[1] then return -1 end
  redis.call('HSET', KEYS[2], ARGV[4], ARGV[1])
end
if old_topic ~= '' and old_topic ~= ARGV[4] then
  if redis.call('HGET', KEYS[2], old_topic) == ARGV[1] then
    redis.call('HDEL', KEYS[2], old_topic)
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return redis.call('INCR', KEYS[3])
"""
# KEYS: observations, topics, version, forgotten. ARGV: id. Returns the new version, 0 if none.
DELETE = """
local old = redis.call('HGET', KEYS[1], ARGV[1])
if not old then return 0 end
local topic = cjson.decode(old)['topic_key'] or ''
if topic ~= '' and redis.call('HGET', KEYS[2], topic) == ARGV[1] then
  redis.call('HDEL', KEYS[2], topic)
end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
return redis.call('INCR', KEYS[3])
"""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def load_observation(raw: Any) -> Observation:
    """Parse a stored observation."""
    return Observation.model_validate_json(raw)


class RedisObservationStore:
    """:class:`~plait.state.observations.ObservationStore` on Redis."""

    def __init__(self, client: aioredis.Redis, *, prefix: str = "plait:") -> None:
        """Use ``client`` (the hot store's); keys go under ``prefix``."""
        self.client = client
        self.prefix = prefix
        self.tagged = is_cluster_client(client)

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> RedisObservationStore:
        """Connect to ``url`` (connections are made lazily)."""
        return cls(async_client(url), **kwargs)

    def _key(self, group_id: str, part: str = "") -> str:
        group = "{" + group_id + "}" if self.tagged else group_id
        return f"{self.prefix}obs:{group}" + (f":{part}" if part else "")

    @translated
    async def put_observation(
        self, group_id: str, observation: Observation, *, expected_revision: int
    ) -> int:
        """Run the compare-and-set script; the new version, or 0."""
        keys = [self._key(group_id), self._key(group_id, "topic"), self._key(group_id, "version")]
        payload = observation.model_dump_json()
        args = [observation.id, payload, expected_revision, observation.topic_key]
        result = await self._script(PUT, keys, args)
        return max(0, int(result))

    @translated
    async def get_observation(self, group_id: str, observation_id: str) -> Observation | None:
        """HGET."""
        raw = await self.client.hget(self._key(group_id), observation_id)
        return None if raw is None else load_observation(raw)

    @translated
    async def observation_for_topic(self, group_id: str, topic_key: str) -> Observation | None:
        """The topic's id, then its observation."""
        owner = await self.client.hget(self._key(group_id, "topic"), topic_key)
        raw = None if owner is None else await self.client.hget(self._key(group_id), _text(owner))
        return None if raw is None else load_observation(raw)

    @translated
    async def list_observations(self, group_id: str) -> list[Observation]:
        """HGETALL, oldest first."""
        raw = await self.client.hgetall(self._key(group_id))
        found = [load_observation(value) for value in raw.values()]
        return sorted(found, key=lambda o: (o.created_at, o.id))

    @translated
    async def delete_observation(self, group_id: str, observation_id: str) -> int:
        """Run the delete script; the new version, or 0."""
        keys = [
            self._key(group_id),
            self._key(group_id, "topic"),
            self._key(group_id, "version"),
            self._key(group_id, "forgotten"),
        ]
        return int(await self._script(DELETE, keys, [observation_id]))

    @translated
    async def is_forgotten(self, group_id: str, observation_id: str) -> bool:
        """SISMEMBER."""
        key = self._key(group_id, "forgotten")
        return bool(await self.client.sismember(key, observation_id))

    @translated
    async def observations_version(self, group_id: str) -> int:
        """GET the counter."""
        value = await self.client.get(self._key(group_id, "version"))
        return int(value or 0)

    @translated
    async def get_marker(self, group_id: str, name: str) -> str | None:
        """HGET."""
        value = await self.client.hget(self._key(group_id, "marker"), name)
        return None if value is None else _text(value)

    @translated
    async def set_marker(self, group_id: str, name: str, value: str) -> None:
        """HSET."""
        await self.client.hset(self._key(group_id, "marker"), name, value)

    async def _script(self, script: str, keys: list[str], args: list[Any]) -> Any:
        return await self.client.eval(script, len(keys), *keys, *args)

    async def aclose(self) -> None:
        """Close the client (only when this store opened it with :meth:`from_url`)."""
        await self.client.aclose()


__all__ = ["RedisObservationStore", "load_observation"]
