"""Command hooks in the shape Claude Code introduced and Codex follows: payloads in, answers out.

A host of this kind starts a process per hook with JSON on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name`` and the event's fields) and reads
``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`` on its stdout as context for
the model. The events that mean the same in both hosts mean the same here (SessionStart,
UserPromptSubmit, Pre/PostToolUse, Pre/PostCompact, Stop, SessionEnd); each host's folder
names its events, its tools, which calls record and which answers it reads
(:class:`CommandHooks`). A subagent's calls carry the root's ``session_id`` and their own
``agent_id``: they become a child session of the root, folded into it as subagent work.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
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

SUBAGENT_SEPARATOR = "/agent-"
OUTPUT_MAX = TEXT_MAX * 4
# A patch's file headers (``*** Add File: path``), as Codex's apply_patch writes them.
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
Reader = Callable[[Mapping[str, Any]], list[Intent]]


# -- which session and files --------------------------------------------------------------------
def tool_files(args: Mapping[str, Any]) -> tuple[str, ...]:
    """The files a tool call names: ``file_path``, ``notebook_path``, ``path``, or a patch's."""
    keys = ("file_path", "notebook_path", "path")
    path = next((args[key] for key in keys if isinstance(args.get(key), str)), "")
    if path:
        return (path[:512],)
    patch = next((args[key] for key in ("input", "patch") if isinstance(args.get(key), str)), "")
    return tuple(dict.fromkeys(name.strip()[:512] for name in PATCH_FILE.findall(patch)))[:8]


def target_of(payload: Mapping[str, Any]) -> SessionTarget:
    """The call's session: the root's, or a subagent's child session under it."""
    root = require_str(payload.get("session_id"), "session_id")
    agent = optional_str(payload.get("agent_id"))
    files = tool_files(obj(payload.get("tool_input")))
    if agent is None:
        return SessionTarget(session_id=root, files=files)
    child = f"{root}{SUBAGENT_SEPARATOR}{agent[:64]}"
    return SessionTarget(session_id=child, parent_id=root, files=files)


# -- what an event says ---------------------------------------------------------------------------
def session_start(payload: Mapping[str, Any]) -> list[Intent]:
    """A session starts, resumes, is cleared or was compacted: it wants memory back."""
    if payload.get("source") == "compact":
        return [CompactionAfter(), ModelCall()]
    return [SessionLifecycle(phase="created"), ModelCall()]


def tool_name(payload: Mapping[str, Any], tools: Mapping[str, str]) -> str:
    """Plait's name for the payload's tool (one the host does not name keeps its own)."""
    name = require_str(payload.get("tool_name"), "tool_name")
    return tools.get(name, name.lower())


def tool_output(fields: Mapping[str, Any]) -> str:
    """The text of a structured tool response (a shell's stdout and stderr, else its JSON)."""
    keys = ("stdout", "stderr", "error", "content", "output", "llmContent")
    parts = [fields.get(key) for key in keys]
    text = "\n".join(part for part in parts if isinstance(part, str) and part)
    return text or json.dumps(fields, default=str)[:OUTPUT_MAX]


def compact_before(payload: Mapping[str, Any]) -> list[Intent]:
    """The host is about to summarize the conversation (``manual`` or ``auto``)."""
    return [CompactionBefore()]


def compact_after(payload: Mapping[str, Any]) -> list[Intent]:
    """The conversation was replaced by the host's summary."""
    summary = as_text(payload.get("compact_summary", ""), OUTPUT_MAX)
    return [CompactionAfter(), CompactionSummary(text=summary)]


def stopped(payload: Mapping[str, Any]) -> list[Intent]:
    """The agent (or a subagent) finished its turn: its last words, and the session goes idle.

    The last words are ``last_assistant_message`` (Claude Code, Codex) or ``prompt_response``
    (Gemini CLI).
    """
    said_last = payload.get("last_assistant_message", payload.get("prompt_response", ""))
    last = as_text(said_last, OUTPUT_MAX)
    said: list[Intent] = [AssistantText(text=last)] if last else []
    return [*said, SessionLifecycle(phase="idle")]


def ended(payload: Mapping[str, Any]) -> list[Intent]:
    """The session ended: summarize and drain (its memory stays for a resume)."""
    return [SessionLifecycle(phase="idle")]


# -- one host -------------------------------------------------------------------------------------
HOOK_COMMAND = "plait-hook"  # what every command host's hooks run (the hook client)
# The events Claude Code introduced and Codex follows, by kind.
CLAUDE_STYLE_EVENTS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "tool_before",
    "PostToolUse": "tool_after",
    "PreCompact": "compact_before",
    "PostCompact": "compact_after",
    "Stop": "stopped",
    "SubagentStop": "stopped",
    "SessionEnd": "ended",
}
# Of those, the ones whose calls are kept until recorded, and the ones whose answer a model sees.
CLAUDE_STYLE_KEEP = frozenset(
    {"UserPromptSubmit", "PostToolUse", "PreCompact", "PostCompact", "Stop", "SubagentStop"}
)
CLAUDE_STYLE_INJECTING = frozenset(
    {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"}
)
# What each event of a host means, by kind (a host maps its event names to these).
KINDS = (
    "session_start",
    "prompt",
    "tool_before",
    "tool_after",
    "compact_before",
    "compact_after",
    "stopped",
    "ended",
)


@dataclass(frozen=True, kw_only=True)
class CommandHooks:
    """One command-hook host: its events, tools, recording events and the answers it reads.

    ``events``: the host's event names, each mapped to what it means (one of :data:`KINDS`);
    by default Claude Code's, which Codex follows, with their ``keep`` and ``injecting``.
    ``tools``: the host's tool names as plait names them. ``keep``: events whose calls record
    (installed with ``--keep``, spooled, never lost). ``injecting``: events whose answer the
    host reads as context; ``caps``: the most characters of context an event takes.
    ``prompt_of``: the user's words in a prompt payload (a host that folds its own injected
    context into the prompt takes it out here). ``deny``: a denied tool call as the host reads
    it.
    """

    name: str
    label: str
    tools: Mapping[str, str]
    events: Mapping[str, str] = field(default_factory=lambda: CLAUDE_STYLE_EVENTS)
    keep: frozenset[str] = CLAUDE_STYLE_KEEP
    injecting: frozenset[str] = CLAUDE_STYLE_INJECTING
    caps: Mapping[str, int] = field(default_factory=dict)
    prompt_of: Callable[[Mapping[str, Any]], Any] = field(default=lambda p: p.get("prompt", ""))
    deny: Callable[[str, str], dict[str, Any]] | None = None

    @cached_property
    def readers(self) -> dict[str, Reader]:
        """Each event's reader: the host's event name → its intents."""
        kinds: dict[str, Reader] = {
            "session_start": session_start,
            "prompt": self.prompt,
            "tool_before": self.tool_before,
            "tool_after": self.tool_after,
            "compact_before": compact_before,
            "compact_after": compact_after,
            "stopped": stopped,
            "ended": ended,
        }
        return {event: kinds[kind] for event, kind in self.events.items()}

    # -- reading ------------------------------------------------------------------------------
    def prompt(self, payload: Mapping[str, Any]) -> list[Intent]:
        """The user's prompt: recorded, and the envelope for the model call it starts."""
        text = as_text(self.prompt_of(payload), OUTPUT_MAX)
        return [UserTurn(text=text), ModelCall(query=text)]

    def tool_before(self, payload: Mapping[str, Any]) -> list[Intent]:
        """A tool call about to run."""
        return [ToolCall(tool=tool_name(payload, self.tools), args=obj(payload.get("tool_input")))]

    def tool_after(self, payload: Mapping[str, Any]) -> list[Intent]:
        """A finished tool call: its outcome (a shell's exit code and output, an edit's file)."""
        response = payload.get("tool_response")
        fields = obj(response)
        output = response if isinstance(response, str) else tool_output(fields)
        failed = any(fields.get(key) is True for key in ("is_error", "interrupted"))
        failed = failed or bool(fields.get("error"))
        exit_code = fields.get("exit_code", fields.get("exitCode"))
        if not isinstance(exit_code, int) or isinstance(exit_code, bool):
            exit_code = 1 if failed else None
        result = ToolResult(
            tool=tool_name(payload, self.tools),
            args=obj(payload.get("tool_input")),
            output=as_text(output, OUTPUT_MAX),
            exit_code=exit_code,
        )
        return [result]

    def intents_of(self, event: str, payload: Mapping[str, Any]) -> list[Intent]:
        """The intents of one call. Raises ``InvalidHookPayload`` naming a bad field."""
        return self.readers[event](payload)

    def host_call(self, event: str, payload: Any, call_id: str = "") -> HostCall:
        """A validated call; one that records is read in full here (refused, not kept).

        Raises ``UnknownHook`` for an event plait does not take, ``InvalidHookPayload`` naming
        the field for a payload it cannot use (a missing ``session_id``).
        """
        if event not in self.readers:
            takes = ", ".join(self.events)
            raise UnknownHook(f"unknown {self.label} event {event!r}; plait takes {takes}")
        fields = mapping(payload, "payload")
        durable = event in self.keep
        return HostCall(
            host=self.adapter,
            target=target_of(fields),
            payload=tuple(self.intents_of(event, fields)),
            call_id=call_id,
            durable=durable,
            replay={"event": event, "payload": dict(fields)} if durable else None,
        )

    def rebuild(self, replay: Mapping[str, Any], call_id: str) -> HostCall:
        """A kept call built again from its JSON form (the client's spool line has the same)."""
        return self.host_call(str(replay.get("event", "")), replay.get("payload"), call_id)

    @cached_property
    def adapter(self) -> HostAdapter:
        """The host as the hooks graph sees it."""
        tool_context = any(self.events.get(event) == "tool_after" for event in self.injecting)
        return HostAdapter(name=self.name, rebuild=self.rebuild, tool_context=tool_context)

    # -- answering ----------------------------------------------------------------------------
    def answer(self, event: str, payload: Any, output: Mapping[str, Any]) -> dict[str, Any]:
        """Plait's answer as the host reads it: context for the model, where it can take it.

        A tool policy that denies becomes the host's ``permissionDecision``; a nudge, context.
        """
        policy = output.get("policy")
        before_tool = self.events.get(event) == "tool_before"
        if before_tool and policy is not None and policy.action != "allow":
            return (self.deny or tool_policy)(policy.action, policy.message)
        inject = output.get("inject")
        if event not in self.injecting or not inject:
            return {}
        cap = self.caps.get(event)
        context = inject[:cap] if cap else inject
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}

    @cached_property
    def wire(self) -> HostWire:
        """How the service reads this host's calls and writes its answers."""
        return HostWire(
            adapter=self.adapter, call=self.host_call, answer=self.answer, keep_events=self.keep
        )


def tool_policy(action: str, message: str) -> dict[str, Any]:
    """A denied tool call (with why), or the nudge as context beside the call."""
    if action == "deny":
        decision = {"permissionDecision": "deny", "permissionDecisionReason": message}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}}
    context = {"additionalContext": message}
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **context}}


__all__ = [
    "CLAUDE_STYLE_EVENTS",
    "CLAUDE_STYLE_INJECTING",
    "CLAUDE_STYLE_KEEP",
    "HOOK_COMMAND",
    "KINDS",
    "SUBAGENT_SEPARATOR",
    "CommandHooks",
    "compact_after",
    "compact_before",
    "ended",
    "session_start",
    "stopped",
    "target_of",
    "tool_files",
]
