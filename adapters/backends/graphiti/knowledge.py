"""plait's :class:`~plait.state.ports.KnowledgeGraph` on Graphiti and FalkorDB.

Opening connects to nothing: the connection is made, and a group's indices built, on the
first write or search, so a graph server that is down shows up there, as
:class:`~plait.errors.BackendUnavailable` (the drain then leaves its events queued), and the
next call tries again.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
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
from plait.adapters.backends.graphiti.search import search_memory
from plait.adapters.backends.graphiti.writer import split_preferences, write_events
from plait.errors import BackendUnavailable
from plait.settings import os_user
from plait.state.events import SessionEvent
from plait.state.groups import project_name_of, user_group_id
from plait.state.ports import MemoryHit

if TYPE_CHECKING:
    from plait.settings import Settings

KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
UNREACHABLE = (redis.ConnectionError, redis.TimeoutError, ConnectionError)


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
    _connecting: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

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

    async def write_episodes(self, group_id: str, events: Sequence[SessionEvent]) -> int:
        """Write the events as one episode (per group); count the new ones.

        Preferences go to the user's group (cross-project) when ``user_preferences``. The
        two groups are written concurrently (each is its own graph, and graphiti-core scopes
        a call to its group); within a group, events are written in order.
        Raises :class:`~plait.errors.BackendUnavailable` when the server does not answer.
        """
        project = project_name_of(group_id, self.prefix)
        rest, preferences = (
            split_preferences(events) if self.user_preferences else (list(events), [])
        )
        graphiti = await self.ready()
        writes = [(group_id, rest), (user_group_id(self.prefix, self.user), preferences)]
        results = await asyncio.gather(
            *(write_events(graphiti, group, batch, project) for group, batch in writes if batch),
            return_exceptions=True,
        )
        for result in results:
            if isinstance(result, UNREACHABLE):
                raise unreachable(result, self.server) from result
            if isinstance(result, BaseException):
                raise result
        return sum(results)  # type: ignore[arg-type]

    async def search(self, query: str, group_ids: Sequence[str], limit: int) -> list[MemoryHit]:
        """Hybrid search over facts, entities and episodes of the groups."""
        graphiti = await self.ready()
        try:
            return await search_memory(graphiti, query, group_ids, limit)
        except UNREACHABLE as error:
            raise unreachable(error, self.server) from error

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


async def open_knowledge_graph(settings: Settings, falkordb_url: str) -> GraphitiKnowledgeGraph:
    """Graphiti on the FalkorDB server at ``falkordb_url``, configured from ``settings``.

    Connects lazily: nothing is sent to the server before the first write or search. A
    provider that is misconfigured or not installed fails here, at once.
    """
    llm = make_llm_client(provider_config(settings.llm))
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
