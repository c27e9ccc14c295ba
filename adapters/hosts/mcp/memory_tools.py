"""The memory tools of plait's MCP server: the ten ``memory_*`` tools, in two groups.

``memory`` (save, search, get, context) is what an agent needs every session;
``memory_curate`` (update, delete, timeline, stats, session summary, topic keys) is for tending
it, and can be left out of a host's tool list to save schema bytes on every request.

A host sends every tool's schema with every model request, so these are lean: one-line
descriptions and only the parameters a model needs (:mod:`.catalog`, plain data
listed without loading the SDK). The functions registered behind them accept a little
more than they list — ``session_id`` (the OpenCode plugin adds it; else ``$PLAIT_SESSION_ID``),
``files``, ``scope`` and ``all`` for search — and the host-neutral
:class:`~plait.observation_tools.MemoryToolbox` checks everything, naming the field it refuses.
Each answer is JSON text and the same JSON as structured content.

They replace ``memory_remember`` and ``memory_recall``: ``memory_save`` keeps a decision,
preference or rule (and every other type), ``memory_search`` finds it the moment it is saved.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

from plait.adapters.hosts.mcp._tools import session_for
from plait.adapters.hosts.mcp.catalog import MEMORY_GROUPS, TOOLS, list_as_catalog
from plait.observation_tools import MemoryToolbox, answer_text
from plait.state.base.errors import PlaitError

if TYPE_CHECKING:
    from plait.observations import Observations

HOST = "mcp"
MEMORY_TOOL_SPECS = tuple(spec for spec in TOOLS if spec.group in MEMORY_GROUPS)


def tool_answer(answer: dict[str, Any]) -> CallToolResult:
    """An answer as JSON text and as structured content."""
    return CallToolResult(
        content=[TextContent(type="text", text=answer_text(answer))], structured_content=answer
    )


class MemoryToolRunner:
    """Runs a memory tool for the MCP server: the session, the toolbox, errors as tool errors."""

    def __init__(self, observations: Observations) -> None:
        """Serve the tools over a project's observations."""
        self.toolbox = MemoryToolbox(observations, host=HOST)

    async def run(self, name: str, session_id: str | None, **arguments: Any) -> CallToolResult:
        """Run ``name``; plait's own errors (a bad field, an unknown id) become tool errors."""
        try:
            answer = await self.toolbox.call(name, arguments, session_for(session_id))
        except PlaitError as error:
            raise ToolError(str(error)) from error
        return tool_answer(answer)


def memory_functions(runner: MemoryToolRunner) -> list[Any]:
    """The functions behind the ten tools (every parameter optional: the toolbox checks)."""

    async def memory_save(
        title: str | None = None,
        content: str | None = None,
        type: str | None = None,
        topic_key: str | None = None,
        scope: str | None = None,
        files: list[str] | None = None,
        session_id: str | None = None,
    ) -> CallToolResult:
        return await runner.run(
            "memory_save",
            session_id,
            title=title,
            content=content,
            type=type,
            topic_key=topic_key,
            scope=scope,
            files=files,
        )

    async def memory_search(
        query: str | None = None,
        type: str | None = None,
        limit: int | None = None,
        scope: str | None = None,
        all: bool | None = None,
        session_id: str | None = None,
    ) -> CallToolResult:
        return await runner.run(
            "memory_search", session_id, query=query, type=type, limit=limit, scope=scope, all=all
        )

    async def memory_get(id: str | None = None, session_id: str | None = None) -> CallToolResult:
        return await runner.run("memory_get", session_id, id=id)

    async def memory_update(
        id: str | None = None,
        title: str | None = None,
        content: str | None = None,
        type: str | None = None,
        topic_key: str | None = None,
        session_id: str | None = None,
    ) -> CallToolResult:
        return await runner.run(
            "memory_update",
            session_id,
            id=id,
            title=title,
            content=content,
            type=type,
            topic_key=topic_key,
        )

    async def memory_delete(id: str | None = None, session_id: str | None = None) -> CallToolResult:
        return await runner.run("memory_delete", session_id, id=id)

    async def memory_timeline(
        id: str | None = None, limit: int | None = None, session_id: str | None = None
    ) -> CallToolResult:
        return await runner.run("memory_timeline", session_id, id=id, limit=limit)

    async def memory_context(session_id: str | None = None) -> CallToolResult:
        return await runner.run("memory_context", session_id)

    async def memory_stats(session_id: str | None = None) -> CallToolResult:
        return await runner.run("memory_stats", session_id)

    async def memory_session_summary(
        content: str | None = None, title: str | None = None, session_id: str | None = None
    ) -> CallToolResult:
        return await runner.run("memory_session_summary", session_id, content=content, title=title)

    async def memory_suggest_topic_key(
        title: str | None = None, type: str | None = None, session_id: str | None = None
    ) -> CallToolResult:
        return await runner.run("memory_suggest_topic_key", session_id, title=title, type=type)

    return [
        memory_save,
        memory_search,
        memory_get,
        memory_update,
        memory_delete,
        memory_timeline,
        memory_context,
        memory_stats,
        memory_session_summary,
        memory_suggest_topic_key,
    ]


def register_memory_tools(
    server: MCPServer[Any], observations: Observations, *, groups: Collection[str] | None = None
) -> None:
    """Add the memory tools of ``groups`` (default both) to ``server``, listed lean."""
    runner = MemoryToolRunner(observations)
    specs = {spec.name: spec for spec in MEMORY_TOOL_SPECS}
    enabled = set(MEMORY_GROUPS if groups is None else groups)
    for function in memory_functions(runner):
        spec = specs[function.__name__]
        if spec.group not in enabled:
            continue
        list_as_catalog(server, function, spec)


__all__ = [
    "MEMORY_TOOL_SPECS",
    "register_memory_tools",
    "tool_answer",
]
