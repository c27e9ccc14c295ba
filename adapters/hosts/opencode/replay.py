"""Replay a coding session through :class:`plait.Memory` as OpenCode would send it.

Each method sends the hook calls OpenCode 1.18 makes for one thing happening in a session (shapes in
``docs/opencode-hooks.md``). The demo, the benchmarks, the compaction tests and the notebooks
all drive plait through this, so they exercise the same path a real OpenCode session does.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Protocol

_ids = itertools.count(1)


def new_id(prefix: str) -> str:
    """An OpenCode-style id (``ses_…``, ``msg_…``, ``prt_…``)."""
    return f"{prefix}_{next(_ids):08d}"


def text_part(session_id: str, message_id: str, text: str) -> dict[str, Any]:
    """An OpenCode text part."""
    return {
        "id": new_id("prt"),
        "sessionID": session_id,
        "messageID": message_id,
        "type": "text",
        "text": text,
    }


class HookRunner(Protocol):
    """What runs OpenCode's hooks: ``OpenCodeHooks(memory)``, or anything wrapping it."""

    async def hook(
        self, name: str, input: dict[str, Any], output: dict[str, Any]
    ) -> dict[str, Any]:
        """Run one hook and return the mutated ``output``."""
        ...


@dataclass
class SessionReplay:
    """One OpenCode session (or subagent session) as a sequence of hook calls."""

    runner: HookRunner
    session_id: str = field(default_factory=lambda: new_id("ses"))
    parent_id: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    clock_ms: int = 1_795_000_000_000

    def _now(self) -> int:
        self.clock_ms += 1000
        return self.clock_ms

    async def event(self, event_type: str, **properties: Any) -> None:
        """Send one bus event."""
        properties.setdefault("sessionID", self.session_id)
        payload = {"event": {"id": new_id("evt"), "type": event_type, "properties": properties}}
        await self.runner.hook("event", payload, {})

    async def start(self) -> None:
        """``session.created`` (with ``parentID`` for a subagent session)."""
        info: dict[str, Any] = {
            "id": self.session_id,
            "projectID": "demo",
            "title": "session",
            "time": {"created": self._now(), "updated": self.clock_ms},
        }
        if self.parent_id:
            info["parentID"] = self.parent_id
        await self.event("session.created", info=info)

    async def user(self, text: str) -> str:
        """A user prompt: ``chat.message``, then the model call's ``messages.transform``.

        Returns the text of the last user message as the provider would receive it.
        """
        await self.chat(text)
        return await self.model_call()

    async def chat(self, text: str) -> None:
        """Only the ``chat.message`` half of :meth:`user`."""
        message_id = new_id("msg")
        message = {
            "id": message_id,
            "role": "user",
            "sessionID": self.session_id,
            "time": {"created": self._now()},
            "agent": "build",
        }
        parts = [text_part(self.session_id, message_id, text)]
        await self.runner.hook(
            "chat.message", {"sessionID": self.session_id}, {"message": message, "parts": parts}
        )
        self.history.append({"info": message, "parts": parts})

    async def model_call(self) -> str:
        """One model request: ``messages.transform`` over a copy of the history."""
        messages = [
            {"info": dict(m["info"]), "parts": [dict(p) for p in m["parts"]]}
            for m in self.history[-6:]
        ]
        output = await self.runner.hook(
            "experimental.chat.messages.transform", {}, {"messages": messages}
        )
        last_user = next(m for m in reversed(output["messages"]) if m["info"].get("role") == "user")
        return "\n".join(p.get("text", "") for p in last_user["parts"] if p.get("type") == "text")

    async def assistant(self, text: str, *, summary: bool = False) -> None:
        """An assistant reply, as ``message.updated`` and ``message.part.updated`` events."""
        message_id = new_id("msg")
        info: dict[str, Any] = {
            "id": message_id,
            "sessionID": self.session_id,
            "role": "assistant",
            "time": {"created": self._now(), "completed": self.clock_ms},
            "finish": "stop",
        }
        if summary:
            info["summary"] = True
        part = text_part(self.session_id, message_id, text)
        part["time"] = {"start": self.clock_ms, "end": self.clock_ms}
        await self.event("message.part.updated", part=part, time=self.clock_ms)
        await self.event("message.updated", info=info)
        self.history.append({"info": info, "parts": [part]})

    async def edit(self, path: str, old: str, new: str) -> dict[str, Any]:
        """The ``edit`` tool on ``path``, applied."""
        arguments = {"filePath": path, "oldString": old, "newString": new}
        return await self.tool("edit", arguments, "Edit applied successfully.")

    async def tool(
        self,
        tool: str,
        args: dict[str, Any],
        output: str = "",
        *,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A tool call: ``tool.execute.before`` (returns its output, with any policy) and after."""
        call_id = new_id("call")
        before = await self.runner.hook(
            "tool.execute.before",
            {"tool": tool, "sessionID": self.session_id, "callID": call_id},
            {"args": dict(args)},
        )
        await self.runner.hook(
            "tool.execute.after",
            {"tool": tool, "sessionID": self.session_id, "callID": call_id, "args": args},
            {"title": tool, "output": output, "metadata": metadata or {}},
        )
        return before

    async def todos(self, *items: tuple[str, str]) -> None:
        """``todo.updated`` with (content, status) pairs."""
        todos = [
            {"id": f"todo-{index}", "content": content, "status": status, "priority": "medium"}
            for index, (content, status) in enumerate(items, start=1)
        ]
        await self.event("todo.updated", todos=todos)

    async def file_edited(self, path: str) -> None:
        """``file.edited`` (OpenCode sends no session id with it)."""
        payload = {
            "event": {"id": new_id("evt"), "type": "file.edited", "properties": {"file": path}}
        }
        await self.runner.hook("event", payload, {})

    async def error(self, message: str, name: str = "UnknownError") -> None:
        """``session.error``."""
        await self.event("session.error", error={"name": name, "data": {"message": message}})

    async def branch(self, name: str) -> None:
        """``vcs.branch.updated`` (OpenCode sends no session id with it)."""
        event = {"id": new_id("evt"), "type": "vcs.branch.updated", "properties": {"branch": name}}
        await self.runner.hook("event", {"event": event}, {})

    async def idle(self) -> None:
        """``session.idle``: the turn is over."""
        await self.event("session.idle")

    async def compact(self, summary: str) -> list[str]:
        """A compaction, as OpenCode runs it.

        ``session.compacting`` (returns the context plait added), the summary
        message, ``session.compacted``; the history shrinks to the summary.
        """
        output = await self.runner.hook(
            "experimental.session.compacting", {"sessionID": self.session_id}, {"context": []}
        )
        await self.assistant(summary, summary=True)
        await self.event("session.compacted")
        self.history = self.history[-1:]
        return list(output.get("context", []))

    def child(self) -> SessionReplay:
        """A subagent session under this one."""
        return SessionReplay(runner=self.runner, parent_id=self.session_id, clock_ms=self.clock_ms)


__all__ = ["HookRunner", "SessionReplay", "new_id", "text_part"]
