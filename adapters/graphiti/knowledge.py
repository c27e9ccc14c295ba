"""plait's :class:`~plait.nodes.ports.KnowledgeGraph` on Graphiti and FalkorDB."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphiti_core import Graphiti

from plait.adapters.graphiti.factory import ProviderConfig, make_graphiti
from plait.adapters.graphiti.groups import project_name_of, user_group_id
from plait.adapters.graphiti.search import MemoryHit, search_memory
from plait.adapters.graphiti.writer import add_events_as_episodes
from plait.state.events import SessionEvent

if TYPE_CHECKING:
    from plait.settings import Settings

KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


@dataclass
class GraphitiKnowledgeGraph:
    """Episodes written and searched through graphiti-core; preferences go to the user group."""

    graphiti: Graphiti
    prefix: str = "plait"
    user_preferences: bool = True

    async def write_episodes(self, group_id: str, events: Sequence[SessionEvent]) -> int:
        """Write events as one episode (preferences as one in the user group); count new."""
        user_group = user_group_id(self.prefix) if self.user_preferences else None
        return await add_events_as_episodes(
            self.graphiti,
            group_id,
            [events],
            project=project_name_of(group_id, self.prefix),
            user_group=user_group,
        )

    async def search(self, query: str, group_ids: Sequence[str], limit: int) -> list[MemoryHit]:
        """Hybrid search over facts, entities and episodes of the groups."""
        return await search_memory(self.graphiti, query, group_ids, limit)

    async def aclose(self) -> None:
        """Close the FalkorDB connection."""
        await self.graphiti.close()


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
    """Graphiti on the FalkorDB server at ``falkordb_url``, configured from ``settings``."""
    graphiti = await make_graphiti(
        falkordb_url=falkordb_url,
        llm=provider_config(settings.llm),
        embedder=provider_config(settings.embedder, dimensions=settings.embedder.dimensions),
        telemetry=settings.graphiti.telemetry,
    )
    return GraphitiKnowledgeGraph(graphiti=graphiti, prefix=settings.graphiti.group_id_prefix)


__all__ = ["GraphitiKnowledgeGraph", "open_knowledge_graph", "provider_config"]
