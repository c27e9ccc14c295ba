"""Nodes of the cache-refresh graph: search long-term memory, select, cache for the next turn.

A refresh with a query searches (:func:`plait.nodes.memory_search.search_memory`); one without
(a session just created) prefetches the project's newest decisions, rules and preferences, so
the first model call of a new session already carries them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from plait.nodes.hooks import project_cache_key, session_cache_key
from plait.nodes.lasting import select_hits
from plait.nodes.memory_search import prefetch_memory, recall_groups, search_memory
from plait.nodes.recall import render_recall
from plait.state.background import RefreshState
from plait.state.base.redact import redact
from plait.state.base.settings import Settings
from plait.state.context import PlaitContext
from plait.state.hooks import CachedRecall
from plait.state.ports import MemoryHit

CANDIDATES_PER_SHOWN = 3


async def search_long_term(state: RefreshState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Search the project's and the user's memory for the query (prefetch without one).

    The project's saved observations (its brief, the best matches) come first.
    """
    context = runtime.context
    groups = recall_groups(state["group_id"], context.settings)
    depth = context.settings.graphiti.search_limit * CANDIDATES_PER_SHOWN
    query = state.get("query", "")
    observed = await observation_hits(state, context)
    if query.strip():
        return {"hits": [*observed, *await search_memory(context, query, groups, depth)]}
    return {"hits": [*observed, *await prefetch_memory(context, groups, depth)]}


async def observation_hits(state: RefreshState, context: PlaitContext) -> list[MemoryHit]:
    """Saved observations relevant to the query, when the context has them."""
    if context.observations is None:
        return []
    limit = context.settings.graphiti.search_limit
    return await context.observations.recall_hits(state["group_id"], state.get("query", ""), limit)


async def rank(state: RefreshState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Keep what ``<persistent_memory>`` shows: lasting, current, each fact once, in order."""
    limit = runtime.context.settings.graphiti.search_limit
    return {"hits": select_hits(state.get("hits", []), limit)}


def cached_recall(hits: Sequence[MemoryHit], query: str, settings: Settings) -> CachedRecall:
    """Hits rendered for ``<persistent_memory>`` as the cache keeps them.

    Query and text are redacted: a graph written before redaction covered it may hold secrets.
    """
    text, refs = render_recall(hits, settings.envelope.persistent_budget_bytes)
    return CachedRecall(query=redact(query), text=redact(text), node_refs=refs)


async def write_cache(state: RefreshState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Cache the rendered recall for the session and as the project's newest, with a TTL."""
    settings = runtime.context.settings
    recall = cached_recall(state.get("hits", []), state.get("query", ""), settings)
    payload = recall.model_dump_json()
    ttl = settings.redis.cache_ttl_seconds
    cache = runtime.context.cache
    await cache.put_cache(
        session_cache_key(state["group_id"], state["root_session_id"]), payload, ttl
    )
    if recall.text:
        await cache.put_cache(project_cache_key(state["group_id"]), payload, ttl)
    return {"recall": recall}


__all__ = ["cached_recall", "rank", "recall_groups", "search_long_term", "write_cache"]
