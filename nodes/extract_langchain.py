"""LangChain messages → plait events, with the same rules as the OpenCode adapter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from plait.nodes.envelope import strip_envelopes
from plait.nodes.extract_opencode import chat_message, tool_events
from plait.state.events import SessionEvent


def message_text(message: BaseMessage) -> str:
    """The plain text of a message (text blocks joined), envelopes removed."""
    content = message.content
    if isinstance(content, str):
        text = content
    else:
        text = "\n".join(
            block if isinstance(block, str) else str(block.get("text", ""))
            for block in content
            if isinstance(block, str)
            or (isinstance(block, Mapping) and block.get("type") == "text")
        )
    return strip_envelopes(text).strip()


def events_from_messages(
    messages: Sequence[BaseMessage], *, root_session_id: str, session_id: str
) -> list[SessionEvent]:
    """Events for new messages: user requests and promotions, what tools did, their errors."""
    calls: dict[str, Mapping[str, Any]] = {}
    events: list[SessionEvent] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            parts = [{"type": "text", "text": message_text(message)}]
            turn = chat_message({"sessionID": session_id}, {"parts": parts})
            events.extend(turn.events)
        elif isinstance(message, AIMessage):
            for call in message.tool_calls:
                calls[str(call.get("id"))] = call
        elif isinstance(message, ToolMessage):
            events.extend(tool_message_events(session_id, message, calls))
    return [e.model_copy(update={"root_session_id": root_session_id}) for e in events]


def tool_message_events(
    session_id: str, message: ToolMessage, calls: Mapping[str, Mapping[str, Any]]
) -> list[SessionEvent]:
    """A tool's result, read like OpenCode's ``tool.execute.after``."""
    call = calls.get(str(message.tool_call_id), {})
    tool = str(call.get("name") or message.name or "tool").lower()
    args = call.get("args") if isinstance(call.get("args"), Mapping) else {}
    metadata = {"exit": 1} if message.status == "error" else {"exit": 0}
    return tool_events(session_id, tool, args, message_text(message), metadata)


__all__ = ["events_from_messages", "message_text"]
