"""plait's MCP server: session tools (sandboxed shell, per-session corpus, stats, doctor), memory.

Every answer fits an 8 KB budget; larger output goes into the session's corpus and the answer
carries a ``corpus:<source>#<chunk>`` reference. What the tools did is recorded as session events.
``plait mcp`` serves it on stdio (:func:`run_stdio`); tests connect to :func:`build_server` in
process or launch ``plait mcp`` and talk to it over stdio.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import wraps
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from pydantic import Field

from plait.adapters.backends.corpus import SqliteCorpus
from plait.adapters.hosts.mcp._budget import ANSWER_BUDGET_BYTES, cut_bytes
from plait.adapters.hosts.mcp._tools import (
    BatchStep,
    EventRecorder,
    LongTermMemory,
    SessionTools,
    session_for,
)
from plait.adapters.hosts.mcp.sandbox import stop_groups
from plait.boundary import describe, translate
from plait.errors import PlaitError
from plait.memory import recalled, remembered
from plait.redact import redact, redacted_logger
from plait.settings import CorpusSettings, Settings
from plait.state.events import MemoryKind
from plait.state.ports import HotStore

logger = redacted_logger("plait.mcp")
SERVER_NAME = "plait"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
STDIN_LINE_MAX_BYTES = 1 << 30  # one JSON-RPC message a line; a big index call is megabytes
REMEMBER_HOOK = "mcp.remember"
INSTRUCTIONS = (
    "Session tools of plait. Run shell commands in the worktree with session_execute; answers "
    "are capped at 8 KB and longer output is indexed into this session's corpus (a "
    "corpus:<source>#<chunk> reference is given) -- use session_search to find the part you "
    "need instead of re-running the command. memory_recall searches what earlier sessions of "
    "this project decided and learned; memory_remember keeps a decision, preference or rule "
    "for later sessions."
)

SessionId = Annotated[
    str | None,
    Field(description="The agent session; defaults to $PLAIT_SESSION_ID, else 'mcp'."),
]
Timeout = Annotated[
    float | None, Field(description="Seconds before the command is killed (default 30, max 120).")
]


def refusing[**P](tool: Callable[P, Awaitable[str]]) -> Callable[P, Awaitable[str]]:
    """Turn every failure into a tool error whose message says why, secrets redacted.

    plait's own errors (bad input, a path outside the worktree) say it themselves; anything
    else is logged here, redacted, with its traceback, and described in one line.
    """

    @wraps(tool)
    async def guarded(*args: P.args, **kwargs: P.kwargs) -> str:
        try:
            return await tool(*args, **kwargs)
        except PlaitError as error:
            raise ToolError(redact(str(error))) from error
        except Exception as error:  # the tool's boundary: the library would log it unredacted
            logger.warning("plait: tool %s failed", tool.__name__, exc_info=True)
            raise ToolError(describe(translate(error))) from error

    return guarded


def register_commands(server: MCPServer[Any], tools: SessionTools) -> None:
    """``session_execute``, ``session_execute_file`` and ``session_batch_execute``."""

    @server.tool(structured_output=False)
    @refusing
    async def session_execute(
        command: Annotated[str, Field(description="Shell command, run by bash in the worktree.")],
        timeout: Timeout = None,
        session_id: SessionId = None,
    ) -> str:
        """Run a shell command in the worktree; output over 8 KB goes to the session corpus."""
        return await tools.execute(command, timeout, session_id)

    @server.tool(structured_output=False)
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

    @server.tool(structured_output=False)
    @refusing
    async def session_batch_execute(
        steps: Annotated[
            list[BatchStep], Field(description="Ordered steps: {command} or {search}.")
        ],
        session_id: SessionId = None,
    ) -> str:
        """Run command and search steps in order; the answers share one 8 KB budget."""
        return await tools.batch(steps, session_id)


def register_corpus(server: MCPServer[Any], tools: SessionTools) -> None:
    """``session_index``, ``session_search`` and ``session_fetch_and_index``."""

    @server.tool(structured_output=False)
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

    @server.tool(structured_output=False)
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

    @server.tool(structured_output=False)
    @refusing
    async def session_fetch_and_index(
        url: Annotated[str, Field(description="An http(s) URL.")],
        source: Annotated[str | None, Field(description="Source name (default: the URL).")] = None,
        label: Annotated[str, Field(description="Label; same source and label replaces.")] = "",
        session_id: SessionId = None,
    ) -> str:
        """Fetch a public URL (HTML to markdown, JSON pretty-printed) and index it.

        Loopback, private, link-local and cloud metadata addresses are refused (redirects too),
        unless the host is listed in the mcp.fetch_allow_hosts setting.
        """
        return await tools.fetch_and_index(url, source, label, session_id)


def register_reports(server: MCPServer[Any], tools: SessionTools) -> None:
    """``session_stats`` and ``session_doctor``."""

    @server.tool(structured_output=False)
    @refusing
    async def session_stats(session_id: SessionId = None) -> str:
        """Corpus size and sources, events recorded, and what this server kept out of context."""
        return await tools.stats(session_id)

    @server.tool(structured_output=False)
    @refusing
    async def session_doctor() -> str:
        """Health of plait's parts: hot tier, checkpointer, knowledge graph, providers, corpus."""
        return await tools.doctor()


def register_memory(server: MCPServer[Any], memory: LongTermMemory) -> None:
    """``memory_remember`` and ``memory_recall``: the project's long-term memory."""

    @server.tool(structured_output=False)
    @refusing
    async def memory_remember(
        text: Annotated[
            str, Field(min_length=1, description="One self-contained sentence to keep.")
        ],
        kind: MemoryKind = "decision",
        session_id: SessionId = None,
    ) -> str:
        """Save a project decision, preference or rule so that later sessions recall it."""
        session = session_for(session_id)
        stored = await memory.remember(session, text, kind, source=REMEMBER_HOOK)
        return remembered(kind, stored, getattr(memory, "degraded", ()))

    @server.tool(structured_output=False)
    @refusing
    async def memory_recall(
        query: Annotated[str, Field(min_length=1, description="What to look for.")],
        session_id: SessionId = None,
    ) -> str:
        """Search long-term memory: decisions, preferences, rules and facts of earlier sessions."""
        answer = recalled(await memory.recall(session_for(session_id), query))
        return cut_bytes(answer, ANSWER_BUDGET_BYTES)


def build_server(
    recorder: EventRecorder,
    *,
    worktree: Path,
    data_dir: Path,
    store: HotStore | None = None,
    settings: Settings | None = None,
) -> MCPServer[Any]:
    """The MCP server with the session tools; ``store`` and ``settings`` default to the recorder's.

    With a ``plait.Memory`` as recorder, roots are resolved on its hot store and the doctor uses
    its settings.
    """
    settings = settings if settings is not None else getattr(recorder, "settings", None)
    corpus = settings.corpus if settings is not None else CorpusSettings()
    tools = SessionTools(
        recorder=recorder,
        worktree=worktree.resolve(),
        corpus=SqliteCorpus.in_data_dir(
            data_dir, ttl_days=corpus.ttl_days, max_bytes_per_root=corpus.max_bytes_per_root
        ),
        store=store if store is not None else getattr(recorder, "store", None),
        settings=settings,
        fetch_allow_hosts=tuple(settings.mcp.fetch_allow_hosts) if settings is not None else (),
    )

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        try:
            yield None
        finally:  # the client went away: nothing it started keeps running
            stop_groups(tools.running)
            tools.corpus.close()

    server: MCPServer[Any] = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, lifespan=lifespan)
    register_commands(server, tools)
    register_corpus(server, tools)
    register_reports(server, tools)
    if isinstance(recorder, LongTermMemory):
        register_memory(server, recorder)
    return server


async def run_stdio(project_dir: Path, *, settings: Settings) -> None:
    """Serve the session tools on stdio for a project until stdin closes or a signal comes.

    SIGTERM and SIGHUP (a client that goes away sends one or the other) end the server as
    stdin's end does: the commands it started are stopped, their whole process groups.
    """
    from plait.memory import Memory

    with stopped_by_signals():
        async with Memory.open(project_dir, settings=settings, start_background=False) as memory:
            data_dir = settings.resolved_data_dir()
            server = build_server(memory, worktree=project_dir, data_dir=data_dir)
            await serve_stdio(server)


async def serve_stdio(server: MCPServer[Any]) -> None:
    """``server.run_stdio_async()``, reading stdin on the event loop when it is a pipe.

    MCPServer takes no streams of its own, so its low-level server is driven directly (as
    ``run_stdio_async`` does); a library without it falls back to ``run_stdio_async``.
    """
    low = getattr(server, "_lowlevel_server", None)
    if low is None:
        await server.run_stdio_async()
        return
    async with stdin_lines() as lines, stdio_server(stdin=lines) as (read, write):
        await low.run(read, write, low.create_initialization_options())


class PipeLines:
    """A pipe's lines, read on the event loop: unlike a thread's read, cancelling stops it."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        """Read from ``reader``."""
        self.reader = reader

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


@asynccontextmanager
async def stdin_lines() -> AsyncIterator[Any]:
    """Stdin as :class:`PipeLines` when it is a pipe (as MCP clients give it), else None.

    None lets the MCP library read stdin its own way (a thread, which a signal cannot stop).
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STDIN_LINE_MAX_BYTES)
    pipe = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
    except (ValueError, OSError):  # a file or a terminal, not a pipe
        pipe.close()
        yield None
        return
    try:
        yield PipeLines(reader)
    finally:
        transport.close()


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP cancel the running task, so cleanup runs.

    The cancellation a signal caused ends the block quietly; any other is raised as usual.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    signalled: list[int] = []

    def stop(signum: int) -> None:
        signalled.append(signum)
        task.cancel()

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop, signum)
    try:
        yield
    except asyncio.CancelledError:
        if not signalled:
            raise
        task.uncancel()
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)


__all__ = ["INSTRUCTIONS", "SERVER_NAME", "build_server", "run_stdio"]
