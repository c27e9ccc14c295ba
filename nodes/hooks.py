"""Nodes of the hooks and compaction graphs. Each is one small step returning a partial update."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, cast

from langgraph.runtime import Runtime

from plait.nodes.capture import QUERY_MAX_CHARS, capture
from plait.nodes.drift import jaccard, tokenize_query
from plait.nodes.envelope import compose_envelope, envelope_digest
from plait.nodes.file_recall import file_memory
from plait.nodes.routing import decide_tool_policy, target_file_size
from plait.state.base.redact import redact
from plait.state.base.settings import Settings
from plait.state.context import PlaitContext
from plait.state.envelope import memory_update
from plait.state.events import as_text
from plait.state.groups import acting_member
from plait.state.hooks import CachedRecall, HookState
from plait.state.intents import (
    CompactionAfter,
    CompactionBefore,
    HostAdapter,
    Intent,
    ModelCall,
    ToolCall,
    ToolResult,
    UserTurn,
)
from plait.state.snapshot import Snapshot, drop_duplicates

CATCH_UP_LIMIT = 1000
MODEL_CALL = "model call"
COMPACTION = "compaction"
TOOL_RESULT = "tool result"


def project_cache_key(group_id: str) -> str:
    """Cache key of the newest recall for a project (what a new session starts with)."""
    return f"recall:{group_id}"


def session_cache_key(group_id: str, root_session_id: str) -> str:
    """Cache key of the newest recall for one root session."""
    return f"recall:{group_id}:{root_session_id}"


async def read_intents(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """The host adapter node of plait's own callers: their payload already is a list of intents.

    Each host supplies its own node in its place (``build_hooks_graph(host)``), which reads
    that host's payload into intents.
    """
    return {"intents": list(state["payload"] or [])}


NATIVE = HostAdapter(name="plait")


async def capture_events(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Turn the call's intents into events (capture rules), the user's query, a lifecycle phase.

    The user's request comes out of capture redacted already; a model call's query is redacted
    here.
    """
    project = runtime.context.project_dir
    intents = state.get("intents", [])
    captured = capture(
        intents,
        state["session"],
        host=state.get("host", ""),
        root=project.as_posix() if project else "",
    )
    update: dict[str, Any] = {"events": captured.events, "lifecycle": captured.lifecycle}
    query = captured.query or model_query(intents)
    if query:
        update["query"] = query
    return update


def model_query(intents: Sequence[Intent]) -> str:
    """The first model call's query, redacted and cut like a user's request ("" for none)."""
    query = next((i.query for i in intents if isinstance(i, ModelCall) and i.query), "")
    return redact(as_text(query, QUERY_MAX_CHARS * 4))[:QUERY_MAX_CHARS] if query else ""


async def record_events(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Make new events durable in the session's log and the drain queue; drop repeats.

    A replayed call (its id seen before) records nothing again; the fold then reads what it
    recorded the first time from the log.
    """
    snapshot = state.get("snapshot") or Snapshot()
    fresh = drop_duplicates(snapshot, state.get("events", []))
    if not fresh:
        return {"events": []}
    context = runtime.context
    if (member := acting_member()) is not None:  # a team member's: their preferences stay theirs
        fresh = [event.model_copy(update={"member": member}) for event in fresh]
    stored = await context.events.append_events(
        state["session"].root_session_id,
        fresh,
        enqueue_group=context.group_id,
        call_id=state.get("call_id") or None,
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
        return {"events": [], "folded": 0}
    return {"snapshot": unseen, "cursor": unseen[-1].id, "events": [], "folded": len(unseen)}


async def record_and_fold(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Record the call's new events (:func:`record_events`), then fold (:func:`fold_snapshot`).

    One step of the graph: folding is a few microseconds of work on what was just recorded, and
    every step of a LangGraph run costs more than that.
    """
    recorded = await record_events(state, runtime)
    return await fold_snapshot(cast(HookState, {**state, **recorded}), runtime)


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
    if not envelope:
        return {}
    await runtime.context.stage.stage_envelope(state["session"].root_session_id, envelope)
    return {"staged": envelope_digest(envelope)}


async def refresh_envelope(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Recompose after events changed the snapshot; re-stage only when the envelope changed.

    So the model calls later in a turn (a bare model call takes what is staged, in one read)
    see every tool result, edit and error recorded since the user's turn.
    """
    envelope = envelope_for(state, runtime.context.settings)
    digest = envelope_digest(envelope)
    if digest == state.get("staged", envelope_digest(state.get("envelope"))):
        return {}
    await runtime.context.stage.stage_envelope(state["session"].root_session_id, envelope)
    return {"envelope": envelope or None, "staged": digest}


async def refresh_and_tell(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """:func:`refresh_envelope`, and after a tool step what memory gained, for the model.

    For a host that adds context to a tool's result (``HostAdapter.tool_context``): what the
    envelope now says that the last one a model received did not (new decisions, rules, errors,
    tasks; :func:`plait.state.envelope.memory_update`) is the answer's ``inject``, and it then
    counts as received. Other hosts never pay for the read.
    """
    changed = await refresh_envelope(state, runtime)
    envelope = changed.get("envelope")
    if not envelope or not wants(state, ToolResult):
        return changed
    stage, root = runtime.context.stage, state["session"].root_session_id
    received = await stage.received_envelopes(root)
    update = memory_update(received[0].envelope if received else "", envelope)
    if update:
        await stage.log_envelope(root, envelope, TOOL_RESULT)
        changed["inject"] = update
    return changed


async def take_envelope(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Take the envelope for this model call from the hot store (no graph state needed).

    OpenCode rebuilds the messages before every model call of a turn, so every call gets the
    current envelope, once; the staged flag tells the turn's first call it is fresh.
    """
    root = state["session"].root_session_id
    envelope, _ = await runtime.context.stage.take_envelope(root, receiver=MODEL_CALL)
    return {"inject": envelope}


async def hand_over_envelope(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Hand the freshly composed envelope to the caller (a summarizer, a model call).

    Before a compaction the session's summary observation is also asked for.
    """
    compacting = wants(state, CompactionBefore)
    if compacting:
        request_summary(state, runtime)
    envelope = state.get("envelope")
    if envelope:
        root = state["session"].root_session_id
        await runtime.context.stage.log_envelope(
            root, envelope, COMPACTION if compacting else MODEL_CALL
        )
    return {"inject": envelope}


def request_summary(state: HookState, runtime: Runtime[PlaitContext]) -> None:
    """Ask for the session's summary observation to be written in the background."""
    context = runtime.context
    context.scheduler.schedule_summary(context.group_id, state["session"].root_session_id)


async def schedule_drain(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Ask for a background drain and the session's summary (on idle, after a compaction)."""
    runtime.context.scheduler.schedule_drain(runtime.context.group_id)
    request_summary(state, runtime)
    return {}


async def schedule_prefetch(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """A new root session: fetch the project's long-term memory before its first model call.

    A refresh without a query caches the project's newest decisions, rules and preferences for
    the session; the first turn's own query refreshes it again.
    """
    session = state["session"]
    if session.session_id == session.root_session_id:
        context = runtime.context
        context.scheduler.schedule_refresh(context.group_id, session.root_session_id, "")
    return {}


async def apply_tool_policy(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Decide whether a tool call goes ahead (allow, nudge, redirect, deny), and recall.

    Before an edit, write, patch or shell command on a file, what the session knows of that
    file (its rules, decisions, errors) is the answer's ``inject``, when there is any.
    """
    call = next(i for i in state.get("intents", []) if isinstance(i, ToolCall))
    args = dict(call.args)
    policy = decide_tool_policy(
        call.tool,
        args,
        runtime.context.settings.hooks,
        file_size=target_file_size(args),
        already_nudged=state.get("nudged", False),
    )
    update: dict[str, Any] = {"policy": policy}
    if policy.action == "nudge":
        update["nudged"] = True
    recalled = file_memory(state.get("snapshot") or Snapshot(), call.tool, args)
    if recalled:
        update["inject"] = recalled
    return update


def wants(state: HookState, kind: type) -> bool:
    """Whether the call holds an intent of ``kind``."""
    return any(isinstance(intent, kind) for intent in state.get("intents", []))


def takes_prepared_envelope(state: HookState) -> bool:
    """A bare model call: it takes the envelope already prepared and records nothing."""
    intents = state.get("intents", [])
    return bool(intents) and all(isinstance(i, ModelCall) and not i.query for i in intents)


Route = Literal["record_and_fold", "read_cache", "compaction", "apply_tool_policy"]


def route_at_start(
    state: HookState,
) -> Literal["adapt_payload", "capture_events", "take_envelope"]:
    """A call that comes with its intents (its host read its payload) skips the adapter's step.

    Every step of a LangGraph run costs more than reading intents does (about 0.27 ms here).
    """
    return route_after_adapt_payload(state) if state.get("intents") else "adapt_payload"


def route_after_adapt_payload(state: HookState) -> Literal["capture_events", "take_envelope"]:
    """A bare model call has nothing to capture: it goes straight to the prepared envelope."""
    return "take_envelope" if takes_prepared_envelope(state) else "capture_events"


def route_after_capture_events(state: HookState) -> tuple[Route, ...]:
    """A tool call takes its policy, a summarizer the envelope; the rest is recorded.

    A user turn or a model call with a query also reads the cached recall, in the same step as
    recording: the two round trips overlap, and the envelope is composed in the next step.
    """
    if wants(state, CompactionBefore):
        return ("compaction",)
    if wants(state, ToolCall):
        return ("apply_tool_policy",)
    if composes_envelope(state):
        return ("record_and_fold", "read_cache")
    return ("record_and_fold",)


def composes_envelope(state: HookState) -> bool:
    """A user turn or a model call with a query: its envelope is composed in this call."""
    return wants(state, UserTurn) or wants(state, ModelCall)


def route_after_record_and_fold(
    state: HookState,
) -> Literal[
    "compose_envelope",
    "compaction",
    "refresh_envelope",
    "schedule_drain",
    "schedule_prefetch",
    "__end__",
]:
    """Turns compose; compactions rebuild; new events refresh; idle drains; new roots prefetch."""
    if composes_envelope(state):
        return "compose_envelope"
    if wants(state, CompactionAfter):
        return "compaction"
    if state.get("folded"):
        return "refresh_envelope"
    return route_after_refresh_envelope(state)


def route_after_refresh_envelope(
    state: HookState,
) -> Literal["schedule_drain", "schedule_prefetch", "__end__"]:
    """Idle drains; a new root session prefetches the project's long-term memory."""
    if state.get("lifecycle") == "idle":
        return "schedule_drain"
    if state.get("lifecycle") == "created":
        return "schedule_prefetch"
    return "__end__"


def route_after_compose_envelope(
    state: HookState,
) -> Literal["stage_envelope", "hand_over_envelope"]:
    """A model call takes the envelope now; a user turn stages it for the model call to come."""
    return "hand_over_envelope" if wants(state, ModelCall) else "stage_envelope"


def route_compaction(state: HookState) -> Literal["before", "after"]:
    """Before the summary the summarizer gets the envelope; after it, it is rebuilt and staged."""
    return "before" if wants(state, CompactionBefore) else "after"


__all__ = [
    "NATIVE",
    "Route",
    "apply_tool_policy",
    "capture_events",
    "compose",
    "detect_drift",
    "envelope_for",
    "fold_snapshot",
    "hand_over_envelope",
    "project_cache_key",
    "read_cache",
    "read_intents",
    "record_and_fold",
    "refresh_and_tell",
    "refresh_envelope",
    "route_after_adapt_payload",
    "route_after_capture_events",
    "route_after_compose_envelope",
    "route_after_record_and_fold",
    "route_after_refresh_envelope",
    "route_at_start",
    "route_compaction",
    "schedule_drain",
    "schedule_prefetch",
    "session_cache_key",
    "stage_envelope",
    "take_envelope",
]
