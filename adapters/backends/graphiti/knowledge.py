"""plait's :class:`~plait.state.ports.KnowledgeGraph` on Graphiti and FalkorDB.

Opening connects to nothing: the connection is made, and a group's indices built, on the
first write or search, so a graph server that is down shows up there, as
:class:`~plait.BackendUnavailable` (the drain then leaves its events queued), and the
next call tries again.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import redis
from graphiti_core import Graphiti

from plait.adapters.backends.graphiti.factory import (
    ProviderConfig,
    configure_telemetry,
    make_embedder,
    make_graphiti,
    make_llm_client,
)
from plait.adapters.backends.graphiti.offline_llm import OfflineLLMClient
from plait.adapters.backends.graphiti.search import search_memory
from plait.adapters.backends.graphiti.spend import SpendLedger, meter_llm
from plait.adapters.backends.graphiti.writer import remove_episode, split_preferences, write_events
from plait.state.base.errors import BackendUnavailable
from plait.state.base.settings import KEY_VARIABLES, ProviderSettings, os_user
from plait.state.events import SessionEvent
from plait.state.groups import project_name_of, user_group_id
from plait.state.ports import Cache, GraphEntity, GraphFact, GraphPicture, MemoryHit
from plait.state.spend import describe_spend, over_cap

if TYPE_CHECKING:
    from plait.state.base.settings import Settings

logger = logging.getLogger("plait")

UNREACHABLE = (redis.ConnectionError, redis.TimeoutError, ConnectionError)


PICTURE_FACTS = """
MATCH (a:Entity)-[e:RELATES_TO]->(b:Entity)
RETURN e.uuid AS uuid, e.name AS name, e.fact AS fact, e.valid_at AS valid_at,
       e.invalid_at AS invalid_at, a.uuid AS source, b.uuid AS target
ORDER BY e.created_at DESC LIMIT $limit
"""
PICTURE_ENDS = """
MATCH (n:Entity) WHERE n.uuid IN $uuids
RETURN n.uuid AS uuid, n.name AS name, n.summary AS summary
"""
PICTURE_ENTITIES = """
MATCH (n:Entity)
RETURN n.uuid AS uuid, n.name AS name, n.summary AS summary
ORDER BY n.created_at DESC LIMIT $limit
"""
PICTURE_COUNTS = {
    "entities": "MATCH (n:Entity) RETURN count(n) AS n",
    "facts": "MATCH ()-[e:RELATES_TO]->() RETURN count(e) AS n",
    "episodes": "MATCH (e:Episodic) RETURN count(e) AS n",
}


def as_time(value: Any) -> datetime | None:
    """A stored time (a datetime, an ISO string, or nothing) as a datetime."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


def entity_fields(record: dict[str, Any]) -> dict[str, Any]:
    """A FalkorDB row as :class:`GraphEntity` fields."""
    return {
        "uuid": str(record["uuid"]),
        "name": str(record.get("name") or ""),
        "summary": str(record.get("summary") or ""),
    }


def fact_fields(record: dict[str, Any]) -> dict[str, Any]:
    """A FalkorDB row as :class:`GraphFact` fields."""
    return {
        "uuid": str(record["uuid"]),
        "name": str(record.get("name") or ""),
        "fact": str(record.get("fact") or ""),
        "source": str(record["source"]),
        "target": str(record["target"]),
        "valid_at": as_time(record.get("valid_at")),
        "invalid_at": as_time(record.get("invalid_at")),
    }


def unreachable(error: Exception, url: str) -> BackendUnavailable:
    """The plait error for a graph server that did not answer."""
    return BackendUnavailable(f"FalkorDB at {url!r} unreachable: {error}")


@dataclass
class GraphitiKnowledgeGraph:
    """Episodes written and searched through graphiti-core; preferences go to the user's group.

    Give it an open ``graphiti``, or a ``connect`` coroutine function that opens one on first
    use (retried on the next call when the server was down).
    """

    graphiti: Graphiti | None = None
    prefix: str = "plait"
    user: str = field(default_factory=os_user)
    user_preferences: bool = True
    server: str = "FalkorDB"
    connect: Callable[[], Awaitable[Graphiti]] | None = None
    ledger: SpendLedger | None = None
    llm_settings: ProviderSettings | None = None
    _connecting: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)
    _offline: Graphiti | None = field(default=None, repr=False)

    async def ready(self) -> Graphiti:
        """The open ``Graphiti``, connecting first if needed."""
        async with self._connecting:
            if self.graphiti is None:
                if self.connect is None:
                    raise BackendUnavailable("the knowledge graph is closed")
                try:
                    self.graphiti = await self.connect()
                except UNREACHABLE as error:
                    raise unreachable(error, self.server) from error
            return self.graphiti

    def offline(self, graphiti: Graphiti) -> Graphiti:
        """The same graph with the offline extractor (no LLM calls), made once."""
        if self._offline is None:
            self._offline = Graphiti(
                graph_driver=graphiti.driver,
                llm_client=OfflineLLMClient(),
                embedder=graphiti.embedder,
                cross_encoder=graphiti.cross_encoder,
            )
        return self._offline

    async def extractor(self, graphiti: Graphiti) -> Graphiti:
        """The LLM's graph, or the offline one once today's spend passed its cap (said once)."""
        if self.ledger is None or self.llm_settings is None:
            return graphiti
        spend = await self.ledger.today()
        if not over_cap(spend, self.llm_settings):
            return graphiti
        if await self.ledger.note_capped():
            logger.warning(
                "plait: the LLM spend cap is reached for today (%s); the drain extracts with "
                "the offline extractor until tomorrow",
                describe_spend(spend, self.llm_settings),
            )
        return self.offline(graphiti)

    async def write_episodes(self, group_id: str, events: Sequence[SessionEvent]) -> int:
        """Write the events as one episode (per group); count the new ones.

        Preferences go to the user's group (cross-project) when ``user_preferences``: a team
        member's to theirs (:attr:`SessionEvent.member`); they are statements made outright, so
        the offline extractor reads them (no LLM call). The groups are written concurrently
        (each is its own graph, and graphiti-core scopes a call to its group). Past the day's
        LLM spend cap the offline extractor reads everything. Raises
        :class:`~plait.BackendUnavailable` when the server does not answer.
        """
        project = project_name_of(group_id, self.prefix)
        rest, preferences = (
            split_preferences(events) if self.user_preferences else (list(events), [])
        )
        graphiti = await self.ready()
        writes = [(await self.extractor(graphiti), group_id, rest)]
        personal: dict[str, list[SessionEvent]] = {}
        for preference in preferences:  # each member's to their own group
            group = user_group_id(self.prefix, preference.member or self.user)
            personal.setdefault(group, []).append(preference)
        writes += [(self.offline(graphiti), group, said) for group, said in personal.items()]
        results = await asyncio.gather(
            *(write_events(g, group, batch, project) for g, group, batch in writes if batch),
            return_exceptions=True,
        )
        for result in results:
            if isinstance(result, UNREACHABLE):
                raise unreachable(result, self.server) from result
            if isinstance(result, BaseException):
                raise result
        return sum(results)  # type: ignore[arg-type]

    async def episode_count(self, group_id: str) -> int:
        """How many episodes the group's graph holds (what an LLM extractor was paid for)."""
        graphiti = await self.ready()
        driver = graphiti.driver.clone(database=group_id)
        records, _, _ = await driver.execute_query("MATCH (e:Episodic) RETURN count(e) AS n")
        return int(records[0]["n"]) if records else 0

    async def search(self, query: str, group_ids: Sequence[str], limit: int) -> list[MemoryHit]:
        """Hybrid search over facts, entities and episodes of the groups."""
        graphiti = await self.ready()
        try:
            return await search_memory(graphiti, query, group_ids, limit)
        except UNREACHABLE as error:
            raise unreachable(error, self.server) from error

    async def forget_episodes(self, group_id: str, episode_uuids: Sequence[str]) -> int:
        """Remove each episode the group's graph holds (see :func:`remove_episode`)."""
        if not episode_uuids:
            return 0
        graphiti = await self.ready()
        on_group = copy.copy(graphiti)  # remove_episode works on ``driver``: this group's graph
        on_group.driver = graphiti.driver.clone(database=group_id)
        removed = 0
        for episode_uuid in episode_uuids:
            try:
                removed += await remove_episode(on_group, episode_uuid)
            except UNREACHABLE as error:
                raise unreachable(error, self.server) from error
        return removed

    async def picture(self, group_id: str, limit: int) -> GraphPicture:
        """The group's newest ``limit`` facts and the graph's counts.

        The entities are every end of a listed fact, then the newest others, up to ``limit``.
        """
        graphiti = await self.ready()
        driver = graphiti.driver.clone(database=group_id)
        try:
            facts, _, _ = await driver.execute_query(PICTURE_FACTS, limit=limit)
            ends = sorted({r["source"] for r in facts} | {r["target"] for r in facts})
            named, _, _ = await driver.execute_query(PICTURE_ENDS, uuids=ends)
            newest, _, _ = await driver.execute_query(PICTURE_ENTITIES, limit=limit)
            counts = {}
            for name, query in PICTURE_COUNTS.items():
                records, _, _ = await driver.execute_query(query)
                counts[name] = int(records[0]["n"]) if records else 0
        except UNREACHABLE as error:
            raise unreachable(error, self.server) from error
        entities = {r["uuid"]: GraphEntity(**entity_fields(r)) for r in named}
        for record in newest:
            if len(entities) >= max(limit, len(ends)):
                break
            entities.setdefault(record["uuid"], GraphEntity(**entity_fields(record)))
        return GraphPicture(
            entities=tuple(entities.values()),
            facts=tuple(GraphFact(**fact_fields(r)) for r in facts),
            total_entities=counts["entities"],
            total_facts=counts["facts"],
            episodes=counts["episodes"],
        )

    async def aclose(self) -> None:
        """Close the FalkorDB connection (if one was made)."""
        graphiti, self.graphiti, self.connect = self.graphiti, None, None
        if graphiti is not None:
            await graphiti.close()


def provider_config(section: Any, *, dimensions: int | None = None) -> ProviderConfig:
    """A :class:`ProviderConfig` from an ``llm`` or ``embedder`` settings section."""
    provider = section.resolved()
    key = section.api_key.get_secret_value() if section.api_key is not None else None
    if key is None and provider in KEY_VARIABLES:
        key = os.environ.get(KEY_VARIABLES[provider])
    options: dict[str, Any] = {
        "provider": provider,
        "model": section.model,
        "base_url": section.base_url,
        "api_key": key,
    }
    if dimensions is not None:
        options["dimensions"] = dimensions
    return ProviderConfig(**options)


async def open_knowledge_graph(
    settings: Settings, falkordb_url: str, *, spend_cache: Cache | None = None
) -> GraphitiKnowledgeGraph:
    """Graphiti on the FalkorDB server at ``falkordb_url``, configured from ``settings``.

    Connects lazily: nothing is sent to the server before the first write or search. A
    provider that is misconfigured or not installed fails here, at once. An LLM provider's
    calls are counted per day in ``spend_cache`` (the hot tier's cache; this process only
    without one), which ``llm.daily_call_cap`` and ``llm.daily_token_cap`` read.
    """
    llm = make_llm_client(provider_config(settings.llm))
    ledger = None
    if settings.llm.resolved() != "offline":
        ledger = SpendLedger(spend_cache)
        llm = meter_llm(llm, ledger)
    embedder = make_embedder(
        provider_config(settings.embedder, dimensions=settings.embedder.dimensions)
    )
    configure_telemetry(settings.graphiti.telemetry)

    async def connect() -> Graphiti:
        return await make_graphiti(
            falkordb_url=falkordb_url,
            llm_client=llm,
            embedder=embedder,
            telemetry=settings.graphiti.telemetry,
            build=False,
        )

    return GraphitiKnowledgeGraph(
        prefix=settings.graphiti.group_id_prefix,
        user=settings.graphiti.resolved_user(),
        server=redacted_url(falkordb_url),
        connect=connect,
        ledger=ledger,
        llm_settings=settings.llm,
    )


def redacted_url(url: str) -> str:
    """The URL without its password, fit for messages."""
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not at:
        return url
    user = credentials.partition(":")[0]
    return f"{scheme}{sep}{user + '@' if user else ''}{host}"


__all__ = ["GraphitiKnowledgeGraph", "open_knowledge_graph", "provider_config", "redacted_url"]
