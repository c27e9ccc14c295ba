"""plait's MCP server: session tools (sandboxed shell, per-session corpus, stats, doctor), memory.

Every answer fits an 8 KB budget; larger output goes into the session's corpus and the answer
carries a ``corpus:<source>#<chunk>`` reference. What the tools did is recorded as session events.
``plait mcp`` serves it on stdio (:func:`run_stdio`); tests connect to :func:`build_server` in
process or launch ``plait mcp`` and talk to it over stdio. The memory tools (``memory_save`` …
``memory_suggest_topic_key``) live in :mod:`.memory_tools`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from functools import wraps
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from plait.adapters.hosts.mcp._tools import BatchStep, EventRecorder, SessionTools
from plait.adapters.hosts.mcp.catalog import GROUPS, INSTRUCTIONS, list_as_catalog, spec_of
from plait.adapters.hosts.mcp.memory_tools import register_memory_tools
from plait.adapters.hosts.mcp.sandbox import stop_groups
from plait.adapters.hosts.mcp.stdio import ToolAnswer
from plait.forgetting import Forgotten, Selection, forget, select
from plait.memory import Memory
from plait.state.base.boundary import attempt, describe
from plait.state.base.errors import PlaitError
from plait.state.base.redact import redact, redacted_logger
from plait.state.base.settings import CorpusSettings, Settings
from plait.wiring import open_corpus

logger = redacted_logger("plait.mcp")

SERVER_NAME = "plait"

SessionId = Annotated[
    str | None,
    Field(description="The agent session; defaults to $PLAIT_SESSION_ID, else 'mcp'."),
]
Timeout = Annotated[float | None, Field(description="seconds (default 30, max 120)")]


def described(server: MCPServer[Any], enabled: set[str]) -> Callable[[Callable[..., Any]], Any]:
    """Register a tool under its function name with the catalog's description, if enabled."""

    def register(tool: Callable[..., Any]) -> Any:
        spec = spec_of(tool.__name__)
        if spec is not None and spec.group in enabled:
            list_as_catalog(server, tool, spec)
        return tool

    return register


def refusing[**P](tool: Callable[P, Awaitable[str]]) -> Callable[P, Awaitable[str]]:
    """Turn every failure into a tool error whose message says why, secrets redacted.

    plait's own errors (bad input, a path outside the worktree) say it themselves; anything
    else is described in one redacted line and logged (the library would log it unredacted).
    """

    @wraps(tool)
    async def guarded(*args: P.args, **kwargs: P.kwargs) -> str:
        try:
            answer = await attempt(tool(*args, **kwargs))
        except PlaitError as error:  # misuse: the caller can fix it
            raise ToolError(redact(str(error))) from error
        if isinstance(answer, PlaitError):
            logger.warning("plait: tool %s failed: %s", tool.__name__, describe(answer))
            raise ToolError(describe(answer)) from answer
        return answer

    return guarded


def register_commands(server: MCPServer[Any], tools: SessionTools, enabled: set[str]) -> None:
    """``session_execute``, ``session_execute_file`` and ``session_batch_execute``."""
    tool = described(server, enabled)

    @tool
    @refusing
    async def session_execute(
        command: Annotated[str, Field(description="Shell command, run by bash in the worktree.")],
        timeout: Timeout = None,
        session_id: SessionId = None,
    ) -> str:
        """Run a shell command in the worktree; output over 8 KB goes to the session corpus."""
        return await tools.execute(command, timeout, session_id)

    @tool
    @refusing
    async def session_execute_file(
        path: Annotated[str, Field(description="A file inside the worktree.")],
        command: Annotated[
            str, Field(description="Command reading the file on stdin or as $FILE; default cat.")
        ] = "",
        timeout: Timeout = None,
        session_id: SessionId = None,
    ) -> str:
        """Process a worktree file with a command, without pulling the whole file into context."""
        return await tools.execute_file(path, command, timeout, session_id)

    @tool
    @refusing
    async def session_batch_execute(
        steps: Annotated[
            list[BatchStep], Field(description="Ordered steps: {command} or {search}.")
        ],
        session_id: SessionId = None,
    ) -> str:
        """Run command and search steps in order; the answers share one 8 KB budget."""
        return await tools.batch(steps, session_id)


def register_corpus(server: MCPServer[Any], tools: SessionTools, enabled: set[str]) -> None:
    """``session_index``, ``session_search`` and ``session_fetch_and_index``."""
    tool = described(server, enabled)

    @tool
    @refusing
    async def session_index(
        content: Annotated[str | None, Field(description="Text to index.")] = None,
        path: Annotated[str | None, Field(description="Or a worktree file to index.")] = None,
        source: Annotated[
            str | None, Field(description="Name of the source (default: the path).")
        ] = None,
        label: Annotated[str, Field(description="Label; same source and label replaces.")] = "",
        session_id: SessionId = None,
    ) -> str:
        """Index text or a worktree file into this session's search corpus."""
        return await tools.index(content, path, source, label, session_id)

    @tool
    @refusing
    async def session_search(
        query: Annotated[
            str,
            Field(description="Words to look for (typos tolerated), or a corpus:<source>#<n>."),
        ],
        limit: Annotated[int, Field(description="Most results to return.", ge=1, le=20)] = 5,
        source: Annotated[str | None, Field(description="Only this source.")] = None,
        session_id: SessionId = None,
    ) -> str:
        """Search this session's corpus (BM25, stemming, typos); a corpus: reference reads it."""
        return await tools.search(query, limit, source, session_id)

    @tool
    @refusing
    async def session_fetch_and_index(
        url: Annotated[str, Field(description="An http(s) URL.")],
        source: Annotated[str | None, Field(description="Source name (default: the URL).")] = None,
        label: Annotated[str, Field(description="Label; same source and label replaces.")] = "",
        session_id: SessionId = None,
    ) -> str:
        """Fetch a URL (HTML to markdown, JSON pretty-printed) and index it into the corpus."""
        return await tools.fetch_and_index(url, source, label, session_id)


def register_reports(server: MCPServer[Any], tools: SessionTools, enabled: set[str]) -> None:
    """``session_stats``, ``session_doctor`` and, over a Memory, ``session_forget``."""
    tool = described(server, enabled)

    @tool
    @refusing
    async def session_stats(session_id: SessionId = None) -> str:
        """Corpus size and sources, events recorded, and what this server kept out of context."""
        return await tools.stats(session_id)

    @tool
    @refusing
    async def session_doctor() -> str:
        """Health of plait's parts: hot tier, checkpointer, knowledge graph, providers, corpus."""
        return await tools.doctor()

    if tools.forgetting is None:
        return  # no memory behind these tools: nothing to forget

    @tool
    @refusing
    async def session_forget(
        session: Annotated[str | None, Field(description="Every event of this session.")] = None,
        before: Annotated[str | None, Field(description="Events before (ISO 8601).")] = None,
        match: Annotated[str | None, Field(description="Events mentioning this text.")] = None,
        dry_run: Annotated[bool, Field(description="List what would go; change nothing.")] = False,
    ) -> str:
        """Forget captured events and every copy plait made of them."""
        return await tools.forget(session=session, before=before, match=match, dry_run=dry_run)


def session_tools(
    memory: Memory | EventRecorder,
    *,
    worktree: Path,
    data_dir: Path,
    settings: Settings | None = None,
) -> SessionTools:
    """The session tools over ``worktree`` and the data dir's corpus (the caller closes it).

    Over a :class:`plait.Memory` events go through its dispatch and the memory's settings
    apply; anything else given is the event recorder itself (a script's, a test's).
    """
    recorder: EventRecorder = memory.dispatch if isinstance(memory, Memory) else memory
    if settings is None and isinstance(memory, Memory):
        settings = memory.settings
    corpus = settings.corpus if settings is not None else CorpusSettings()
    return SessionTools(
        recorder=recorder,
        worktree=worktree.resolve(),
        corpus=open_corpus(data_dir, corpus),
        settings=settings,
        observations=memory.observations if isinstance(memory, Memory) else None,
        forgetting=forgetting_of(memory) if isinstance(memory, Memory) else None,
        fetch_allow_hosts=tuple(settings.mcp.fetch_allow_hosts) if settings is not None else (),
    )


def forgetting_of(memory: Memory) -> Callable[[Selection, bool], Awaitable[Forgotten]]:
    """What ``session_forget`` runs over ``memory``: a forget, or with ``dry_run`` a look."""

    async def run(selection: Selection, dry_run: bool) -> Forgotten:
        return await (select if dry_run else forget)(memory, selection)

    return run


def server_over(
    tools: SessionTools,
    *,
    groups: Sequence[str] | None = None,
    lifespan: Callable[[MCPServer[Any]], Any] | None = None,
) -> MCPServer[Any]:
    """The MCP SDK's server offering ``tools`` of the enabled ``groups`` (default: all)."""
    server: MCPServer[Any] = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, lifespan=lifespan)
    enabled = set(GROUPS if groups is None else groups)
    register_commands(server, tools, enabled)
    register_corpus(server, tools, enabled)
    register_reports(server, tools, enabled)
    if tools.observations is not None:
        register_memory_tools(server, tools.observations, groups=enabled)
    return server


def build_server(
    memory: Memory | EventRecorder,
    *,
    worktree: Path,
    data_dir: Path,
    settings: Settings | None = None,
    groups: Sequence[str] | None = None,
) -> MCPServer[Any]:
    """The MCP server with the session tools and, over a ``plait.Memory``, its memory tools.

    See :func:`session_tools`. ``groups`` are the tool groups offered (default: every group).
    The corpus closes when the server's session ends.
    """
    tools = session_tools(memory, worktree=worktree, data_dir=data_dir, settings=settings)

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            stop_groups(tools.running)  # the client went away: nothing it started keeps running
            tools.corpus.close()

    return server_over(tools, groups=groups, lifespan=lifespan)


class ServerBackend:
    """Runs tool calls through the MCP SDK's server (argument checks included) over a Memory."""

    def __init__(self, server: MCPServer[Any], closing: Callable[[], Awaitable[None]]) -> None:
        """Call ``server``'s tools; ``closing`` releases what it runs on."""
        self.server = server
        self._closing = closing

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        """Run one tool: its text, whether it failed (a refusal names the reason), its data."""
        try:
            result = await self.server.call_tool(name, arguments)
        except ToolError as error:
            return ToolAnswer(text=str(error), is_error=True)
        texts = [getattr(block, "text", "") for block in getattr(result, "content", [])]
        return ToolAnswer(
            text="\n".join(texts),
            is_error=bool(getattr(result, "is_error", False)),
            structured=getattr(result, "structured_content", None),
        )

    async def aclose(self) -> None:
        """Close the corpus and the memory."""
        await self._closing()


async def open_tool_backend(project_dir: Path, settings: Settings) -> ServerBackend:
    """Open the project's memory and the MCP server over it, for :mod:`.stdio`'s front."""
    memory = await Memory.open(project_dir, settings=settings, start_background=False)
    tools = session_tools(memory, worktree=project_dir, data_dir=settings.resolved_data_dir())

    async def closing() -> None:
        stop_groups(tools.running)  # the client went away: nothing it started keeps running
        tools.corpus.close()
        await memory.aclose()

    return ServerBackend(server_over(tools, groups=settings.mcp.tools), closing)


__all__ = [
    "INSTRUCTIONS",
    "SERVER_NAME",
    "ServerBackend",
    "build_server",
    "open_tool_backend",
    "server_over",
    "session_tools",
]
