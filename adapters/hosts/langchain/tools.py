"""The ``memory_*`` tools as LangChain tools, for ``create_agent(tools=...)`` or a ``ToolNode``.

The same ten tools, arguments and JSON answers as plait's MCP server and HTTP API (they all call
:class:`~plait.observation_tools.MemoryToolbox`). Each tool answers JSON text, and the same data
as the ``ToolMessage``'s artifact; a bad argument or an unknown id comes back to the model as the
tool's answer, naming the field. The session is the run's ``thread_id`` (or ``session_id``).
They replace the ``remember`` and ``recall`` tools: ``memory_save`` keeps a decision,
preference or rule, ``memory_search`` finds it. Given ``plait.connect(url, token)`` instead of a
memory, they run on that shared service (``POST /v1/memory/{tool}``) under the user's token.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from plait.adapters.hosts.langchain.middleware import (
    NO_SESSION,
    current_thread_id,
    thread_id_of,
    unwrap,
)
from plait.observation_tools import MemoryToolbox, answer_text
from plait.state.base.errors import PlaitError, UsageError
from plait.state.observations import OBSERVATION_TYPES

if TYPE_CHECKING:
    from plait.adapters.hosts.http.client import ServiceClient
    from plait.memory import Memory
    from plait.sync import SyncMemory

HOST = "langchain"
ToolResult = tuple[str, dict[str, Any]]
TYPES = ", ".join(OBSERVATION_TYPES)


class SaveArgs(BaseModel):
    """``memory_save``."""

    title: str = Field(description="Short title.")
    content: str = Field(description="What / Why / Where / Learned.")
    type: str | None = Field(default=None, description=f"One of {TYPES}.")
    topic_key: str | None = Field(default=None, description="Same key updates the memory.")
    scope: str | None = Field(default=None, description="project (default) or personal.")


class SearchArgs(BaseModel):
    """``memory_search``."""

    query: str
    type: str | None = None
    limit: int | None = None


class IdArgs(BaseModel):
    """A tool taking an observation id."""

    id: str


class UpdateArgs(BaseModel):
    """``memory_update``."""

    id: str
    title: str | None = None
    content: str | None = None
    type: str | None = None
    topic_key: str | None = None


class TimelineArgs(BaseModel):
    """``memory_timeline``."""

    id: str | None = None
    limit: int | None = None


class NoArgs(BaseModel):
    """A tool without arguments."""


class SummaryArgs(BaseModel):
    """``memory_session_summary``."""

    content: str = Field(
        description="## Goal, ## Discoveries, ## Accomplished, ## Next Steps, ## Relevant Files"
    )
    title: str | None = None


class TopicArgs(BaseModel):
    """``memory_suggest_topic_key``."""

    title: str
    type: str | None = None


TOOLS: tuple[tuple[str, str, type[BaseModel]], ...] = (
    ("memory_save", "Save a memory; a known topic_key updates it.", SaveArgs),
    ("memory_search", "Search saved memories.", SearchArgs),
    ("memory_get", "A memory in full, with revisions.", IdArgs),
    ("memory_update", "Change a memory (old version kept).", UpdateArgs),
    ("memory_delete", "Forget a memory.", IdArgs),
    ("memory_timeline", "Memories saved around one, or the latest.", TimelineArgs),
    ("memory_context", "Recent sessions and memories, in brief.", NoArgs),
    ("memory_stats", "Counts of saved memory.", NoArgs),
    ("memory_session_summary", "Save this session's summary.", SummaryArgs),
    ("memory_suggest_topic_key", "A stable topic_key for a title and type.", TopicArgs),
)


def session_of(config: RunnableConfig | None, session_id: str | None) -> str:
    """The session a call belongs to: the given one, else the run's thread; never a shared one."""
    session = session_id or thread_id_of(config) or current_thread_id()
    if not session:
        raise UsageError(NO_SESSION)
    return session


def tool_function(
    toolbox: MemoryToolbox, name: str, session_id: str | None
) -> Callable[..., Coroutine[Any, Any, tuple[str, dict[str, Any]]]]:
    """The coroutine behind one tool: JSON text and the answer as artifact."""

    async def run(config: RunnableConfig, **arguments: Any) -> tuple[str, dict[str, Any]]:
        try:
            answer = await toolbox.call(name, arguments, session_of(config, session_id))
        except PlaitError as error:
            raise ToolException(str(error)) from error
        return answer_text(answer), answer

    return run


def synchronous(
    memory: Memory, run: Callable[..., Coroutine[Any, Any, tuple[str, dict[str, Any]]]]
) -> Callable[..., tuple[str, dict[str, Any]]]:
    """A tool coroutine for ``invoke``/``stream``: run on the memory's own loop."""

    def call(config: RunnableConfig, **arguments: Any) -> tuple[str, dict[str, Any]]:
        return memory.dispatch.run_sync(run(config, **arguments))

    return call


def on_own_loop(
    memory: Memory, run: Callable[..., Coroutine[Any, Any, tuple[str, dict[str, Any]]]]
) -> Callable[..., Coroutine[Any, Any, tuple[str, dict[str, Any]]]]:
    """A tool coroutine for ``ainvoke``/``astream``: awaited on the memory's own loop."""

    async def call(config: RunnableConfig, **arguments: Any) -> tuple[str, dict[str, Any]]:
        return await memory.dispatch.run_async(run(config, **arguments))

    return call


def remote_tool(
    service: ServiceClient, name: str, session_id: str | None
) -> tuple[Callable[..., ToolResult], Callable[..., Coroutine[Any, Any, ToolResult]]]:
    """One tool run on a shared service (``POST /v1/memory/{name}``), sync and async."""

    def call(config: RunnableConfig, **arguments: Any) -> ToolResult:
        body = {key: value for key, value in arguments.items() if value is not None}
        body["session_id"] = session_of(config, session_id)
        try:
            answer = service.post(f"/v1/memory/{name}", body)
        except PlaitError as error:
            raise ToolException(str(error)) from error
        return answer_text(answer), answer

    async def acall(config: RunnableConfig, **arguments: Any) -> ToolResult:
        return await asyncio.to_thread(call, config, **arguments)

    return call, acall


def memory_tools(
    memory: Memory | SyncMemory | ServiceClient, *, session_id: str | None = None
) -> list[BaseTool]:
    """The ten ``memory_*`` tools over the project's observations (sync and async).

    Args:
        memory: The open plait memory of the project (``Memory.open`` or ``Memory.open_sync``),
            or a team's shared service (``plait.connect(url, token)``): the tools then run there,
            under the user's token.
        session_id: The session saves belong to; default the run's ``thread_id``.

    Returns:
        The tools, ready for ``create_agent(tools=...)`` or a ``ToolNode``.
    """
    from plait.adapters.hosts.http.client import ServiceClient

    functions: dict[str, tuple[Callable[..., ToolResult], Callable[..., Any]]] = {}
    if isinstance(memory, ServiceClient):
        functions = {name: remote_tool(memory, name, session_id) for name, _, _ in TOOLS}
    else:
        opened = unwrap(memory)
        toolbox = MemoryToolbox(opened.observations, host=HOST)
        for name, _, _ in TOOLS:
            run = tool_function(toolbox, name, session_id)
            functions[name] = (synchronous(opened, run), on_own_loop(opened, run))
    return [
        StructuredTool.from_function(
            func=functions[name][0],
            coroutine=functions[name][1],
            name=name,
            description=description,
            args_schema=schema,
            response_format="content_and_artifact",
            handle_tool_error=True,
        )
        for name, description, schema in TOOLS
    ]


__all__ = ["memory_tools"]
