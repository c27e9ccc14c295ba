"""LangChain messages → plait's intents (the capture rules then apply as for every host).

A ``HumanMessage`` is a user turn, an ``AIMessage``'s tool calls and the ``ToolMessage``
answering each are tool results (``status="error"`` is a failure; ``"success"`` is no verdict,
so a traceback in its text still is one), and an ``AIMessage``'s final
text is assistant text. Tool names of common LangChain toolkits (``read_file``, ``execute``,
``write_todos``…) map to plait's (``read``, ``bash``…).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from plait.state.envelope import strip_envelopes
from plait.state.events import as_text, clean_text
from plait.state.intents import (
    TODO_TOOLS,
    AssistantText,
    HostAdapter,
    Intent,
    SubagentStarted,
    Task,
    TasksChanged,
    ToolResult,
    UserTurn,
)

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
TODOS_MAX = 50
HOST = "langchain"
# LangChain's calls carry intents already (read here, in the middleware), so its graph node is
# plait's own reader; the name marks where the events came from.
LANGCHAIN = HostAdapter(name=HOST)


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
    return strip_envelopes(clean_text(text)).strip()


def block_text(block: Any) -> str:
    """The text of one content block ("" for images, tool-use and other blocks)."""
    if isinstance(block, str):
        return as_text(block)
    if isinstance(block, Mapping) and block.get("type") == "text":
        return as_text(block.get("text", ""))
    return ""


def tool_name(name: Any) -> str:
    """A tool's name in plait's vocabulary (``read_file`` → ``read``)."""
    lowered = as_text(name or "tool", 100).lower()
    return TOOL_ALIASES.get(lowered, lowered)


def intents_from_messages(messages: Sequence[BaseMessage]) -> list[Intent]:
    """What new messages say: user turns, what tools did, subagents, todos, final answers."""
    calls: dict[str, Mapping[str, Any]] = {}
    intents: list[Intent] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            intents.append(UserTurn(text=message_text(message)))
        elif isinstance(message, AIMessage):
            intents.extend(ai_intents(message, calls))
        elif isinstance(message, ToolMessage):
            intents.extend(tool_message_intents(message, calls))
    return intents


def ai_intents(message: AIMessage, calls: dict[str, Mapping[str, Any]]) -> list[Intent]:
    """Remember the tool calls; a subagent call starts one; a final answer is assistant text."""
    intents: list[Intent] = []
    for call in message.tool_calls:
        call_id = str(call.get("id"))
        calls[call_id] = call
        args = call.get("args") or {}
        if tool_name(call.get("name")) == "task":
            description = as_text(args.get("description") or args.get("prompt") or "", 200)
            intents.append(SubagentStarted(key=f"call:{call_id}", description=description))
        elif tool_name(call.get("name")) in TODO_TOOLS:
            intents.extend(todo_intents(args))
    text = message_text(message)
    if text and not message.tool_calls:
        intents.append(AssistantText(text=text))
    return intents


def todo_intents(args: Mapping[str, Any]) -> list[Intent]:
    """A ``write_todos`` call: the whole todo list."""
    todos = args.get("todos")
    if not isinstance(todos, list):
        return []
    tasks = tuple(
        Task(
            content=as_text(todo.get("content"), 1000),
            status=as_text(todo.get("status") or "pending", 40),
            id=str(todo.get("id") or ""),
        )
        for todo in todos[:TODOS_MAX]
        if isinstance(todo, Mapping)
    )
    return [TasksChanged(tasks=tasks)]


def tool_message_intents(
    message: ToolMessage, calls: Mapping[str, Mapping[str, Any]]
) -> list[Intent]:
    """A tool's result."""
    call_id = str(message.tool_call_id)
    call = calls.get(call_id, {})
    tool = tool_name(call.get("name") or message.name)
    if tool in TODO_TOOLS:
        return []
    args = call.get("args") if isinstance(call.get("args"), Mapping) else {}
    result = ToolResult(
        tool=tool,
        args=args or {},
        output=message_text(message),
        exit_code=1 if message.status == "error" else None,  # "success" is no verdict
        child_session=f"call:{call_id}" if tool == "task" else "",
    )
    return [result]


__all__ = [
    "HOST",
    "LANGCHAIN",
    "TOOL_ALIASES",
    "intents_from_messages",
    "message_text",
    "tool_name",
]
