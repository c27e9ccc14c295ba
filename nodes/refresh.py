"""Nodes of the cache-refresh graph: search long-term memory, rank, cache for the next turn."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from plait.nodes.hooks import project_cache_key, session_cache_key
from plait.nodes.recall import rank_hits, render_recall
from plait.redact import redact
from plait.settings import Settings
from plait.state.background import RefreshState
from plait.state.context import PlaitContext
from plait.state.groups import user_group_id
from plait.state.hooks import CachedRecall
from plait.state.ports import MemoryHit


def recall_groups(group_id: str, settings: Settings) -> list[str]:
    """The groups a recall searches: the project's, and the user's preferences."""
    return [group_id, user_group_id(settings.graphiti.group_id_prefix)]


async def search_graph(state: RefreshState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Hybrid search of the project group and the user's preference group.

    The project's saved observations (its brief, the best matches) come first.
    """
    context = runtime.context
    observed = await observation_hits(state, context)
    if context.knowledge is None:
        return {"hits": observed}
    found = await context.knowledge.search(
        state["query"],
        recall_groups(state["group_id"], context.settings),
        context.settings.graphiti.search_limit,
    )
    return {"hits": [*observed, *found]}


async def observation_hits(state: RefreshState, context: PlaitContext) -> list[MemoryHit]:
    """Saved observations relevant to the query, when the context has them."""
    if context.observations is None:
        return []
    limit = context.settings.graphiti.search_limit
    return await context.observations.recall_hits(state["group_id"], state["query"], limit)


async def rank(state: RefreshState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Drop repeats, best first, within the search limit."""
    limit = runtime.context.settings.graphiti.search_limit
    return {"hits": rank_hits(state.get("hits", []), limit=limit)}


async def write_cache(state: RefreshState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Cache the rendered recall for the session and as the project's newest, with a TTL.

    Query and text are redacted: a graph written before redaction covered it may hold secrets.
    """
    settings = runtime.context.settings
    text, refs = render_recall(state.get("hits", []), settings.envelope.persistent_budget_bytes)
    recall = CachedRecall(query=redact(state["query"]), text=redact(text), node_refs=refs)
    payload = recall.model_dump_json()
    ttl = settings.redis.cache_ttl_seconds
    cache = runtime.context.cache
    await cache.put_cache(
        session_cache_key(state["group_id"], state["root_session_id"]), payload, ttl
    )
    if text:
        await cache.put_cache(project_cache_key(state["group_id"]), payload, ttl)
    return {"recall": recall}


__all__ = ["rank", "recall_groups", "search_graph", "write_cache"]
