"""The hooks graph: one graph for every host call, one thread per root session.

adapt (the host's own node: its payload → intents; a call that brings its intents skips it); a
bare model call then takes the staged envelope; anything else goes on to capture (intents →
events), then by intent:
a user turn: record and fold, beside it read the cache → compose, beside it detect drift →
stage (for the model call to come)
a model call with a query: the same, then hand the envelope over instead of staging it
compaction before: the compaction graph hands the envelope to the summarizer
compaction after: record and fold → compaction
anything else (tool results, edits, todos, idle): record and fold → refresh the staged envelope
when the events changed it, and for a host that takes a tool result's context, say what memory
gained (→ drain when idle; a new root session: prefetch its project's long-term memory)
a tool call: the tool policy
"""

from __future__ import annotations

from typing import get_args

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from plait.graphs import on_the_loop
from plait.graphs.compaction import build_compaction_graph
from plait.nodes.hooks import (
    NATIVE,
    Route,
    apply_tool_policy,
    capture_events,
    compose,
    detect_drift,
    hand_over_envelope,
    read_cache,
    read_intents,
    record_and_fold,
    refresh_and_tell,
    refresh_envelope,
    route_after_adapt_payload,
    route_after_capture_events,
    route_after_compose_envelope,
    route_after_record_and_fold,
    route_after_refresh_envelope,
    route_at_start,
    schedule_drain,
    schedule_prefetch,
    stage_envelope,
    take_envelope,
)
from plait.state.context import PlaitContext
from plait.state.hooks import HookInput, HookOutput, HookState
from plait.state.intents import HostAdapter


def build_hooks_graph(
    host: HostAdapter = NATIVE,
) -> StateGraph[HookState, PlaitContext, HookInput, HookOutput]:
    """Wire the hooks graph; ``host`` supplies its first node, ``adapt_payload``."""
    builder = StateGraph(
        HookState, context_schema=PlaitContext, input_schema=HookInput, output_schema=HookOutput
    )
    builder.add_node("adapt_payload", host.adapt or read_intents)
    builder.add_node("capture_events", capture_events)
    builder.add_node("record_and_fold", record_and_fold)
    builder.add_node("read_cache", read_cache)
    builder.add_node("detect_drift", detect_drift)
    builder.add_node("compose_envelope", compose)
    builder.add_node("stage_envelope", stage_envelope)
    builder.add_node("hand_over_envelope", hand_over_envelope)
    builder.add_node("take_envelope", take_envelope)
    builder.add_node("compaction", build_compaction_graph().compile())
    builder.add_node(
        "refresh_envelope", refresh_and_tell if host.tool_context else refresh_envelope
    )
    builder.add_node("schedule_drain", schedule_drain)
    builder.add_node("schedule_prefetch", schedule_prefetch)
    builder.add_node("apply_tool_policy", apply_tool_policy)

    builder.add_conditional_edges(START, on_the_loop(route_at_start))
    builder.add_conditional_edges("adapt_payload", on_the_loop(route_after_adapt_payload))
    builder.add_conditional_edges(
        "capture_events", on_the_loop(route_after_capture_events), list(get_args(Route))
    )
    builder.add_conditional_edges("record_and_fold", on_the_loop(route_after_record_and_fold))
    builder.add_edge("read_cache", "detect_drift")
    builder.add_conditional_edges("compose_envelope", on_the_loop(route_after_compose_envelope))
    builder.add_conditional_edges("refresh_envelope", on_the_loop(route_after_refresh_envelope))
    last_nodes = (
        "stage_envelope",
        "hand_over_envelope",
        "take_envelope",
        "compaction",
        "schedule_drain",
        "schedule_prefetch",
    )
    for node in (*last_nodes, "apply_tool_policy", "detect_drift"):
        builder.add_edge(node, END)
    return builder


HooksGraph = CompiledStateGraph[HookState, PlaitContext, HookInput, HookOutput]

graph: HooksGraph = build_hooks_graph().compile()

__all__ = ["HooksGraph", "build_hooks_graph", "graph"]
