"""Claude Code's command hooks in, plait's intents out, and plait's answer as Claude Code's JSON.

The only place that knows Claude Code's hook events and payload fields (checked against
Claude Code 2.1.331; see ``/docs/hosts.md``). Every payload carries ``session_id``,
``transcript_path``, ``cwd`` and ``hook_event_name``; a subagent's calls carry the root's
``session_id`` and their own ``agent_id``: they become a child session of the root, folded
into it as subagent work. Context reaches the model through
``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`` on SessionStart,
UserPromptSubmit, PreToolUse and PostToolUse; the other events cannot inject.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from plait.adapters.hosts.hook_client.host import HostWire
from plait.adapters.hosts.payload_fields import mapping, obj, optional_str, require_str
from plait.state.base.errors import UnknownHook
from plait.state.events import TEXT_MAX, as_text
from plait.state.intents import (
    AssistantText,
    CompactionAfter,
    CompactionBefore,
    CompactionSummary,
    HostAdapter,
    HostCall,
    Intent,
    ModelCall,
    SessionLifecycle,
    SessionTarget,
    ToolCall,
    ToolResult,
    UserTurn,
)

NAME = "claude-code"
# SessionStart's context is cut by Claude Code near 10,000 characters: stay under it.
SESSION_START_MAX = 9500
# Events whose calls record something: installed with --keep, spooled, never lost.
KEEP_EVENTS = frozenset(
    {"UserPromptSubmit", "PostToolUse", "PreCompact", "PostCompact", "Stop", "SubagentStop"}
)
# Events whose answer Claude Code reads as context for the model.
INJECTING = frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"})
# Claude Code's tool names, as plait names tools (ToolResult.tool).
TOOLS = {
    "Read": "read",
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Bash": "bash",
    "Grep": "grep",
    "Glob": "glob",
    "LS": "list",
    "Task": "task",
    "Agent": "task",
    "WebFetch": "webfetch",
    "WebSearch": "websearch",
    "TodoWrite": "todowrite",
}
SUBAGENT_SEPARATOR = "/agent-"


# -- which session ------------------------------------------------------------------------------
def target_of(payload: Mapping[str, Any]) -> SessionTarget:
    """The call's session: the root's, or a subagent's child session under it."""
    root = require_str(payload.get("session_id"), "session_id")
    agent = optional_str(payload.get("agent_id"))
    files = tool_files(obj(payload.get("tool_input")))
    if agent is None:
        return SessionTarget(session_id=root, files=files)
    child = f"{root}{SUBAGENT_SEPARATOR}{agent[:64]}"
    return SessionTarget(session_id=child, parent_id=root, files=files)


def tool_files(args: Mapping[str, Any]) -> tuple[str, ...]:
    """The file a tool call names (``file_path``, ``notebook_path``, ``path``)."""
    keys = ("file_path", "notebook_path", "path")
    path = next((args[key] for key in keys if isinstance(args.get(key), str)), "")
    return (path[:512],) if path else ()


# -- what an event says ---------------------------------------------------------------------------
def session_start(payload: Mapping[str, Any]) -> list[Intent]:
    """A session starts, resumes, is cleared or was compacted: it wants memory back."""
    if payload.get("source") == "compact":
        return [CompactionAfter(), ModelCall()]
    return [SessionLifecycle(phase="created"), ModelCall()]


def prompt(payload: Mapping[str, Any]) -> list[Intent]:
    """The user's prompt: recorded, and the envelope for the model call it starts."""
    text = as_text(payload.get("prompt", ""), TEXT_MAX * 4)
    return [UserTurn(text=text), ModelCall(query=text)]


def tool_name(payload: Mapping[str, Any]) -> str:
    """Plait's name for the payload's tool (an MCP tool keeps its own, lowercased)."""
    name = require_str(payload.get("tool_name"), "tool_name")
    return TOOLS.get(name, name.lower())


def tool_before(payload: Mapping[str, Any]) -> list[Intent]:
    """A tool call about to run."""
    return [ToolCall(tool=tool_name(payload), args=obj(payload.get("tool_input")))]


def tool_after(payload: Mapping[str, Any]) -> list[Intent]:
    """A finished tool call: its outcome (a shell's exit code and output, an edit's file)."""
    response = payload.get("tool_response")
    fields = obj(response)
    output = response if isinstance(response, str) else tool_output(fields)
    failed = fields.get("is_error") is True or fields.get("interrupted") is True
    exit_code = fields.get("exit_code", fields.get("exitCode"))
    if not isinstance(exit_code, int) or isinstance(exit_code, bool):
        exit_code = 1 if failed else None
    return [
        ToolResult(
            tool=tool_name(payload),
            args=obj(payload.get("tool_input")),
            output=as_text(output, TEXT_MAX * 4),
            exit_code=exit_code,
        )
    ]


def tool_output(fields: Mapping[str, Any]) -> str:
    """The text of a structured tool response (a shell's stdout and stderr, else its JSON)."""
    parts = [fields.get(key) for key in ("stdout", "stderr", "error", "content")]
    text = "\n".join(part for part in parts if isinstance(part, str) and part)
    return text or json.dumps(fields, default=str)[: TEXT_MAX * 4]


def compact_before(payload: Mapping[str, Any]) -> list[Intent]:
    """Claude Code is about to summarize the conversation (``manual`` or ``auto``)."""
    return [CompactionBefore()]


def compact_after(payload: Mapping[str, Any]) -> list[Intent]:
    """The conversation was replaced by Claude Code's summary."""
    summary = as_text(payload.get("compact_summary", ""), TEXT_MAX * 4)
    return [CompactionAfter(), CompactionSummary(text=summary)]


def stopped(payload: Mapping[str, Any]) -> list[Intent]:
    """The agent (or a subagent) finished its turn: its last words, and the session goes idle."""
    last = as_text(payload.get("last_assistant_message", ""), TEXT_MAX * 4)
    said: list[Intent] = [AssistantText(text=last)] if last else []
    return [*said, SessionLifecycle(phase="idle")]


def ended(payload: Mapping[str, Any]) -> list[Intent]:
    """The session ended: summarize and drain (its memory stays for a resume)."""
    return [SessionLifecycle(phase="idle")]


EVENTS: dict[str, Callable[[Mapping[str, Any]], list[Intent]]] = {
    "SessionStart": session_start,
    "UserPromptSubmit": prompt,
    "PreToolUse": tool_before,
    "PostToolUse": tool_after,
    "PreCompact": compact_before,
    "PostCompact": compact_after,
    "Stop": stopped,
    "SubagentStop": stopped,
    "SessionEnd": ended,
}


def intents_of(event: str, payload: Mapping[str, Any]) -> list[Intent]:
    """The intents of one call. Raises ``InvalidHookPayload`` naming a bad field."""
    return EVENTS[event](payload)


# -- the call -------------------------------------------------------------------------------------
def host_call(event: str, payload: Any, call_id: str = "") -> HostCall:
    """A validated Claude Code call; one that records is read in full here (refused, not kept).

    Raises ``UnknownHook`` for an event plait does not take, ``InvalidHookPayload`` naming the
    field for a payload it cannot use (a missing ``session_id``).
    """
    if event not in EVENTS:
        raise UnknownHook(f"unknown Claude Code event {event!r}; plait takes {', '.join(EVENTS)}")
    fields = mapping(payload, "payload")
    target = target_of(fields)
    durable = event in KEEP_EVENTS
    intents = tuple(intents_of(event, fields))
    return HostCall(
        host=CLAUDE_CODE,
        target=target,
        payload=intents,
        call_id=call_id,
        durable=durable,
        replay={"event": event, "payload": dict(fields)} if durable else None,
    )


def rebuild(replay: Mapping[str, Any], call_id: str) -> HostCall:
    """A kept call built again from its JSON form (the client's spool line has the same)."""
    return host_call(str(replay.get("event", "")), replay.get("payload"), call_id)


CLAUDE_CODE = HostAdapter(name=NAME, rebuild=rebuild)


# -- the answer ---------------------------------------------------------------------------------
def answer(event: str, payload: Any, output: Mapping[str, Any]) -> dict[str, Any]:
    """Plait's answer as Claude Code reads it: context for the model, where it can take it.

    A tool policy that denies becomes Claude Code's ``permissionDecision``; a nudge, context.
    """
    policy = output.get("policy")
    if event == "PreToolUse" and policy is not None and policy.action != "allow":
        return tool_policy(policy.action, policy.message)
    inject = output.get("inject")
    if event not in INJECTING or not inject:
        return {}
    if event == "SessionStart":
        inject = inject[:SESSION_START_MAX]
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": inject}}


def tool_policy(action: str, message: str) -> dict[str, Any]:
    """A denied tool call (with why), or the nudge as context beside the call."""
    if action == "deny":
        decision = {"permissionDecision": "deny", "permissionDecisionReason": message}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}}
    context = {"additionalContext": message}
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **context}}


COMMAND_HOST = HostWire(adapter=CLAUDE_CODE, call=host_call, answer=answer, keep_events=KEEP_EVENTS)

__all__ = [
    "CLAUDE_CODE",
    "COMMAND_HOST",
    "EVENTS",
    "KEEP_EVENTS",
    "answer",
    "host_call",
    "intents_of",
    "rebuild",
]
