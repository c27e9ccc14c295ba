"""Nodes of the hooks and compaction graphs. Each is one small step returning a partial update."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from plait.nodes.drift import jaccard, tokenize_query
from plait.nodes.envelope import compose_envelope
from plait.nodes.hosts import parse_hook
from plait.nodes.routing import decide_tool_policy, target_file_size
from plait.settings import Settings
from plait.state.context import PlaitContext
from plait.state.hooks import CachedRecall, HookState
from plait.state.snapshot import Snapshot, drop_duplicates

CATCH_UP_LIMIT = 1000
TURN_HOOK = "plait.turn"


def project_cache_key(group_id: str) -> str:
    """Cache key of the newest recall for a project (what a new session starts with)."""
    return f"recall:{group_id}"


def session_cache_key(group_id: str, root_session_id: str) -> str:
    """Cache key of the newest recall for one root session."""
    return f"recall:{group_id}:{root_session_id}"


async def adapt_payload(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """The host adapter: turn the host's payload into plait events and a host event name.

    ``plait.turn`` is the host-neutral hook: its payload already holds plait events (the
    LangChain middleware sends it), so nothing is parsed.
    """
    if state["hook"] == TURN_HOOK:
        payload = state["payload"]
        return {"events": list(payload.get("events", [])), "query": payload.get("query", "")}
    parsed = state.get("parsed") or parse_hook(state["hook"], state["payload"], state["session"])
    update: dict[str, Any] = {"events": parsed.events, "host_event": parsed.host_event}
    if parsed.query:
        update["query"] = parsed.query
    return update


async def record_events(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Make new events durable in the session's log and the drain queue; drop repeats."""
    snapshot = state.get("snapshot") or Snapshot()
    fresh = drop_duplicates(snapshot, state.get("events", []))
    if not fresh:
        return {"events": []}
    context = runtime.context
    stored = await context.events.append_events(
        state["session"].root_session_id, fresh, enqueue_group=context.group_id
    )
    return {"events": stored}


async def fold_snapshot(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Fold every logged event the snapshot has not seen (this call's and other processes').

    When this call's events follow straight on from the cursor nothing else was logged
    meanwhile, and they are folded without reading the log back.
    """
    cursor = state.get("cursor", 0)
    recorded = state.get("events", [])
    if recorded and recorded[0].id == cursor + 1:
        unseen = recorded
    else:
        root = state["session"].root_session_id
        log = runtime.context.events
        unseen = await log.read_events(root, after_id=cursor, limit=CATCH_UP_LIMIT)
    if not unseen:
        return {"events": []}
    return {"snapshot": unseen, "cursor": unseen[-1].id, "events": []}


async def read_cache(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Read the cached long-term recall: this session's, else the project's newest."""
    context = runtime.context
    root = state["session"].root_session_id
    raw = await context.cache.get_cache(session_cache_key(context.group_id, root))
    if raw is None:
        raw = await context.cache.get_cache(project_cache_key(context.group_id))
    return {"recall": CachedRecall.model_validate_json(raw) if raw else None}


async def detect_drift(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Schedule a background refresh on a session's first turn or when the query drifted."""
    query = state.get("query", "")
    recall = state.get("recall")
    cached = recall.query if recall else ""
    similarity = jaccard(tokenize_query(query), tokenize_query(cached))
    drifted = (
        not state.get("turns") or similarity < runtime.context.settings.graphiti.drift_threshold
    )
    if drifted and query:
        context = runtime.context
        context.scheduler.schedule_refresh(
            context.group_id, state["session"].root_session_id, query
        )
    return {"drift": drifted, "turns": state.get("turns", 0) + 1}


def envelope_for(state: HookState, settings: Settings) -> str:
    """The ``<session_memory>`` envelope of a state: its snapshot and its cached recall."""
    recall = state.get("recall")
    return compose_envelope(
        state.get("snapshot") or Snapshot(),
        persistent=recall.text if recall else None,
        node_refs=tuple(recall.node_refs) if recall else (),
        budget_bytes=settings.envelope.budget_bytes,
        snapshot_budget_bytes=settings.snapshot.budget_bytes,
        persistent_budget_bytes=settings.envelope.persistent_budget_bytes,
    )


async def compose(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Compose the envelope from the snapshot and the cached recall."""
    return {"envelope": envelope_for(state, runtime.context.settings) or None}


async def stage_envelope(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Stage the envelope for this turn's ``messages.transform``."""
    envelope = state.get("envelope")
    if envelope:
        await runtime.context.stage.stage_envelope(state["session"].root_session_id, envelope)
    return {}


async def take_envelope(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Take the envelope for this model call from the hot store (no graph state needed).

    OpenCode rebuilds the messages before every model call of a turn, so every call gets the
    current envelope, once; the staged flag tells the turn's first call it is fresh.
    """
    envelope, _ = await runtime.context.stage.take_envelope(state["session"].root_session_id)
    return {"inject": envelope}


async def hand_over_envelope(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Hand the freshly composed envelope to the caller (a summarizer, a model call)."""
    return {"inject": state.get("envelope")}


async def schedule_drain(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Ask for a background drain (on idle and after a compaction)."""
    runtime.context.scheduler.schedule_drain(runtime.context.group_id)
    return {}


async def apply_tool_policy(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Decide whether a tool call goes ahead: allow, nudge, redirect or deny."""
    tool_input = state["payload"].get("input") or {}
    args = (state["payload"].get("output") or {}).get("args")
    args = args if isinstance(args, dict) else {}
    policy = decide_tool_policy(
        str(tool_input.get("tool", "")),
        args,
        runtime.context.settings.hooks,
        file_size=target_file_size(args),
        already_nudged=state.get("nudged", False),
    )
    update: dict[str, Any] = {"policy": policy}
    if policy.action == "nudge":
        update["nudged"] = True
    return update


Route = Literal["record_events", "take_envelope", "compaction", "apply_tool_policy"]


def route_after_adapt_payload(state: HookState) -> Route:
    """Pick the path for the hook."""
    hook = state["hook"]
    if hook == "experimental.chat.messages.transform":
        return "take_envelope"
    if hook == "experimental.session.compacting":
        return "compaction"
    if hook == "tool.execute.before":
        return "apply_tool_policy"
    return "record_events"


def route_after_fold_snapshot(
    state: HookState,
) -> Literal["read_cache", "compaction", "schedule_drain", "__end__"]:
    """A user message goes on to compose; idle drains; a compacted session runs compaction."""
    if state["hook"] in ("chat.message", TURN_HOOK):
        return "read_cache"
    host_event = state.get("host_event", "")
    if host_event == "session.compacted":
        return "compaction"
    if host_event == "session.idle":
        return "schedule_drain"
    return "__end__"


def route_after_compose_envelope(
    state: HookState,
) -> Literal["stage_envelope", "hand_over_envelope"]:
    """OpenCode takes the envelope in a later hook; a ``plait.turn`` caller takes it now."""
    return "hand_over_envelope" if state["hook"] == TURN_HOOK else "stage_envelope"


def route_compaction(state: HookState) -> Literal["before", "after"]:
    """``session.compacting`` is before the summary; ``session.compacted`` after it."""
    return "before" if state["hook"] == "experimental.session.compacting" else "after"


__all__ = [
    "TURN_HOOK",
    "adapt_payload",
    "apply_tool_policy",
    "compose",
    "detect_drift",
    "envelope_for",
    "fold_snapshot",
    "hand_over_envelope",
    "project_cache_key",
    "read_cache",
    "record_events",
    "route_after_adapt_payload",
    "route_after_compose_envelope",
    "route_after_fold_snapshot",
    "route_compaction",
    "schedule_drain",
    "session_cache_key",
    "stage_envelope",
    "take_envelope",
]
