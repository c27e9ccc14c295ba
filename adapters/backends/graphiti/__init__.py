"""Long-term memory: graphiti-core on FalkorDB, with an offline LLM and embedder by default.

Importing changes nothing outside plait: :func:`make_graphiti` sets graphiti-core's telemetry
from plait's ``graphiti.telemetry`` setting (off by default) and memoizes its MinHash of entity
names (:mod:`.speedups`; same results) when it builds a ``Graphiti``.
"""

from plait.adapters.backends.graphiti.episodes import episode_body_for, parse_episode_body
from plait.adapters.backends.graphiti.factory import (
    ProviderConfig,
    configure_telemetry,
    make_embedder,
    make_graphiti,
    make_llm_client,
)
from plait.adapters.backends.graphiti.knowledge import (
    GraphitiKnowledgeGraph,
    open_knowledge_graph,
)
from plait.adapters.backends.graphiti.offline_embedder import OfflineEmbedder, OfflineReranker
from plait.adapters.backends.graphiti.offline_llm import OfflineLLMClient
from plait.adapters.backends.graphiti.search import (
    search_memory,
)
from plait.adapters.backends.graphiti.writer import write_events
from plait.state.groups import group_id_for, user_group_id

__all__ = [
    "GraphitiKnowledgeGraph",
    "OfflineEmbedder",
    "OfflineLLMClient",
    "OfflineReranker",
    "ProviderConfig",
    "configure_telemetry",
    "episode_body_for",
    "group_id_for",
    "make_embedder",
    "make_graphiti",
    "make_llm_client",
    "open_knowledge_graph",
    "parse_episode_body",
    "search_memory",
    "user_group_id",
    "write_events",
]
