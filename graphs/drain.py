"""The drain graph: claim a batch → redact → index → build episodes → write to Graphiti → ack.

Failures retry with exponential backoff and jitter, then dead-letter after ``drain_retry_max``;
an unreachable graph server leaves the batch queued. Checkpointed per consumer: a worker killed
mid-batch resumes its unacked entries, and episode uuids derived from event ids keep it
exactly-once.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from plait.graphs import on_the_loop
from plait.nodes.drain import (
    ack_batch,
    build_episodes,
    claim_batch,
    dead_letter_batch,
    index_turns,
    redact_batch,
    refine_captures,
    route_after_build_episodes,
    route_after_claim_batch,
    route_after_write_episodes,
    wait_backoff,
    write_episodes,
)
from plait.state.background import DrainState
from plait.state.context import PlaitContext


def build_drain_graph() -> StateGraph[DrainState, PlaitContext, DrainState, DrainState]:
    """Wire the drain graph."""
    builder = StateGraph(DrainState, context_schema=PlaitContext)
    builder.add_node(claim_batch)
    builder.add_sequence([redact_batch, refine_captures, index_turns, build_episodes])
    for node in (write_episodes, wait_backoff, ack_batch, dead_letter_batch):
        builder.add_node(node)
    builder.add_edge(START, "claim_batch")
    builder.add_conditional_edges("claim_batch", on_the_loop(route_after_claim_batch))
    builder.add_conditional_edges("build_episodes", on_the_loop(route_after_build_episodes))
    builder.add_conditional_edges("write_episodes", on_the_loop(route_after_write_episodes))
    builder.add_edge("wait_backoff", "write_episodes")
    builder.add_edge("ack_batch", END)
    builder.add_edge("dead_letter_batch", END)
    return builder


DrainGraph = CompiledStateGraph[DrainState, PlaitContext, DrainState, DrainState]

graph: DrainGraph = build_drain_graph().compile()

__all__ = ["DrainGraph", "build_drain_graph", "graph"]
