"""LangChain messages → plait events, with the same rules as the OpenCode adapter.

A ``HumanMessage`` is read like OpenCode's ``chat.message``, an ``AIMessage``'s tool calls and
the ``ToolMessage`` answering each like ``tool.execute.after`` (``status="error"`` is a failure),
and an ``AIMessage``'s final text like an assistant text part. Tool names of common LangChain
toolkits (``read_file``, ``execute``, ``write_todos``…) map to OpenCode's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from plait.nodes.envelope import strip_envelopes
from plait.nodes.extract_opencode import (
    TODOS_MAX,
    as_text,
    chat_message,
    make_event,
    todo_event,
    tool_events,
)
from plait.state.events import EventKind, SessionEvent

TOOL_ALIASES: dict[str, str] = {
    "read_file": "read",
    "view_file": "read",
    "cat": "read",
    "write_file": "write",
    "create_file": "write",
    "edit_file": "edit",
    "str_replace": "edit",
    "str_replace_editor": "edit",
    "apply_patch": "patch",
    "execute": "bash",
    "terminal": "bash",
    "run_command": "bash",
    "shell_command": "bash",
    "file_search": "glob",
    "list_files": "ls",
    "search": "grep",
    "subagent": "task",
}
TODO_TOOLS = frozenset({"write_todos", "todowrite", "todo_write"})
HOOK = "langchain"


def message_text(message: BaseMessage) -> str:
    """The plain text of a message (text blocks joined), envelopes removed, size-capped."""
    content: Any = message.content
    if isinstance(content, str):
        text = as_text(content)
    elif isinstance(content, list):
        texts = (block_text(block) for block in content[:200])
        text = as_text("\n".join(text for text in texts if text))
    else:
        text = as_text(content)
    return strip_envelopes(text).strip()


def block_text(block: Any) -> str:
    """The text of one content block ("" for images, tool-use and other blocks)."""
    if isinstance(block, str):
        return as_text(block)
    if isinstance(block, Mapping) and block.get("type") == "text":
        return as_text(block.get("text", ""))
    return ""


def tool_name(name: Any) -> str:
    """A tool's name in OpenCode's vocabulary (``read_file`` → ``read``)."""
    lowered = as_text(name or "tool", 100).lower()
    return TOOL_ALIASES.get(lowered, lowered)


def events_from_messages(
    messages: Sequence[BaseMessage], *, root_session_id: str, session_id: str
) -> list[SessionEvent]:
    """Events for new messages: requests and promotions, what tools did, their errors."""
    calls: dict[str, Mapping[str, Any]] = {}
    events: list[SessionEvent] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            events.extend(human_events(session_id, message))
        elif isinstance(message, AIMessage):
            events.extend(ai_events(session_id, message, calls))
        elif isinstance(message, ToolMessage):
            events.extend(tool_message_events(session_id, message, calls))
    collapsed = without_errors_fixed_later(events)
    return [e.model_copy(update={"root_session_id": root_session_id}) for e in collapsed]


def human_events(session_id: str, message: HumanMessage) -> list[SessionEvent]:
    """A user message, read with the rules of OpenCode's ``chat.message``."""
    parts = [{"type": "text", "text": message_text(message)}]
    return chat_message({"sessionID": session_id}, {"parts": parts}).events


def ai_events(
    session_id: str, message: AIMessage, calls: dict[str, Mapping[str, Any]]
) -> list[SessionEvent]:
    """Remember the tool calls; a subagent call starts one; a final answer is assistant text."""
    events: list[SessionEvent] = []
    for call in message.tool_calls:
        call_id = str(call.get("id"))
        calls[call_id] = call
        if tool_name(call.get("name")) == "task":
            events.append(subagent_started(session_id, call_id, call.get("args") or {}))
        elif tool_name(call.get("name")) in TODO_TOOLS:
            events.extend(todo_events(session_id, call.get("args") or {}))
    text = message_text(message)
    if text and not message.tool_calls:
        events.append(make_event(session_id, EventKind.MESSAGE, text, HOOK, body=text))
    return events


def subagent_started(session_id: str, call_id: str, args: Mapping[str, Any]) -> SessionEvent:
    """A ``task`` tool call: a subagent starts, keyed by the call id."""
    description = as_text(args.get("description") or args.get("prompt") or "subagent", 200)
    summary = f"subagent {description}"
    return make_event(session_id, EventKind.SUBAGENT_START, summary, HOOK, key=f"call:{call_id}")


def todo_events(session_id: str, args: Mapping[str, Any]) -> list[SessionEvent]:
    """A ``write_todos`` call: the whole todo list, as OpenCode's ``todo.updated``."""
    todos = args.get("todos")
    if not isinstance(todos, list):
        return []
    found = [todo_event(session_id, t) for t in todos[:TODOS_MAX] if isinstance(t, Mapping)]
    return [event for event in found if event is not None]


def tool_message_events(
    session_id: str, message: ToolMessage, calls: Mapping[str, Mapping[str, Any]]
) -> list[SessionEvent]:
    """A tool's result, read like OpenCode's ``tool.execute.after``."""
    call_id = str(message.tool_call_id)
    call = calls.get(call_id, {})
    tool = tool_name(call.get("name") or message.name)
    if tool in TODO_TOOLS:
        return []
    args = call.get("args") if isinstance(call.get("args"), Mapping) else {}
    failed = message.status == "error"
    metadata: dict[str, Any] = {"exit": 1 if failed else 0}
    if tool == "task":
        metadata["sessionId"] = f"call:{call_id}"
    return tool_events(session_id, tool, args, message_text(message), metadata)


def without_errors_fixed_later(events: Sequence[SessionEvent]) -> list[SessionEvent]:
    """Drop an error whose fix (same key) comes later in the same batch.

    The fix itself stays, so it still resolves an older error of that key; judged against a
    snapshot with no such error it is a duplicate and goes too.
    """
    fixed_after: set[str] = set()
    kept: list[SessionEvent] = []
    for event in reversed(events):
        if event.kind is EventKind.ERROR_RESOLVED:
            fixed_after.add(event.key)
        elif event.kind is EventKind.ERROR and event.key and event.key in fixed_after:
            continue
        kept.append(event)
    return kept[::-1]


__all__ = ["TOOL_ALIASES", "events_from_messages", "message_text", "tool_name"]
