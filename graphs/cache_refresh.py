"""The cache-refresh graph: search long-term memory for the query → select → cache with a TTL.

It runs in the background when a hook sees drift; the next turn's envelope reads the cache.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from plait.nodes.refresh import rank, search_long_term, write_cache
from plait.state.background import RefreshState
from plait.state.context import PlaitContext


def build_cache_refresh_graph() -> StateGraph[
    RefreshState, PlaitContext, RefreshState, RefreshState
]:
    """Wire the cache-refresh graph."""
    builder = StateGraph(RefreshState, context_schema=PlaitContext)
    builder.add_sequence(
        [("search_long_term", search_long_term), ("rank_hits", rank), ("write_cache", write_cache)]
    )
    builder.add_edge(START, "search_long_term")
    builder.add_edge("write_cache", END)
    return builder


RefreshGraph = CompiledStateGraph[RefreshState, PlaitContext, RefreshState, RefreshState]

graph: RefreshGraph = build_cache_refresh_graph().compile()

__all__ = ["RefreshGraph", "build_cache_refresh_graph", "graph"]
