"""The compaction graph: the envelope into the summarizer before, a rebuilt envelope after.

before (``experimental.session.compacting``): fold → read cache → compose → hand to summarizer.
after (``session.compacted``): fold (the summary is an event by now) → read cache → compose →
stage it for the next model call → schedule the drain. Neither waits on Graphiti.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from plait.graphs import on_the_loop
from plait.nodes.hooks import (
    compose,
    fold_snapshot,
    hand_over_envelope,
    read_cache,
    route_compaction,
    schedule_drain,
    stage_envelope,
)
from plait.state.context import PlaitContext
from plait.state.hooks import HookState


def build_compaction_graph() -> StateGraph[HookState, PlaitContext, HookState, HookState]:
    """Wire the compaction graph (uncompiled, so it can also be a node of the hooks graph)."""
    builder = StateGraph(HookState, context_schema=PlaitContext)
    builder.add_sequence(
        [
            ("fold_snapshot", fold_snapshot),
            ("read_cache", read_cache),
            ("compose_envelope", compose),
        ]
    )
    builder.add_node(hand_over_envelope)
    builder.add_sequence([stage_envelope, schedule_drain])
    builder.add_edge(START, "fold_snapshot")
    builder.add_conditional_edges(
        "compose_envelope",
        on_the_loop(route_compaction),
        {"before": "hand_over_envelope", "after": "stage_envelope"},
    )
    builder.add_edge("hand_over_envelope", END)
    builder.add_edge("schedule_drain", END)
    return builder


graph: CompiledStateGraph[HookState, PlaitContext, HookState, HookState] = (
    build_compaction_graph().compile()
)

__all__ = ["build_compaction_graph", "graph"]
