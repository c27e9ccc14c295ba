"""``plait mcp`` on stdio: the handshake and the tool list at once, the tools once they are loaded.

A host (OpenCode) waits for an MCP server's ``initialize`` and ``tools/list`` before its first
model call, and the MCP SDK with plait's memory behind it takes seconds to import. So this front
speaks MCP's stdio transport itself (newline-delimited JSON-RPC 2.0, the ``initialize``
handshake; nothing but the standard library and :mod:`.catalog`), answers the handshake and
``tools/list`` from the catalog, and starts loading the real server (the MCP SDK's server over
``plait.Memory``, :func:`plait.adapters.hosts.mcp.server.open_tool_backend`) on the first
``tools/call``, in a thread. A host starts an MCP server for every run and most runs call no
plait tool: loading it anyway would cost every run its CPU (and its exit), so the first call
pays for it instead (about two seconds). Conformance is tested with the MCP
SDK's own client (``tests/hosts/mcp/test_mcp_server.py``).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import signal
import stat
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from plait.adapters.hosts.mcp.catalog import INSTRUCTIONS, ToolSpec

if TYPE_CHECKING:
    from plait.state.base.settings import Settings

SERVER_MODULE = "plait.adapters.hosts.mcp.server"
REMOTE_MODULE = "plait.adapters.hosts.mcp.remote"
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = PROTOCOL_VERSIONS[-1]
SERVER_VERSION = "0.1.0"
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class ToolBackend(Protocol):
    """What runs a tool call: the real server, once loaded."""

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        """Run tool ``name``: its answer."""
        ...

    async def aclose(self) -> None:
        """Release what the backend holds (the memory, the corpus)."""
        ...


class RpcError(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def negotiate(requested: Any) -> str:
    """The protocol version to answer with: the client's if this server speaks it, else ours."""
    return requested if requested in PROTOCOL_VERSIONS else LATEST_VERSION


def initialize_result(params: dict[str, Any]) -> dict[str, Any]:
    """The answer to ``initialize``."""
    return {
        "protocolVersion": negotiate(params.get("protocolVersion")),
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "plait", "version": SERVER_VERSION},
        "instructions": INSTRUCTIONS,
    }


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolAnswer:
    """What a tool answered: its text, whether it failed, and its structured content if any."""

    text: str
    is_error: bool = False
    structured: dict[str, Any] | None = None


def tool_result(answer: ToolAnswer) -> dict[str, Any]:
    """The answer to ``tools/call``."""
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": answer.text}],
        "isError": answer.is_error,
    }
    if answer.structured is not None:
        result["structuredContent"] = answer.structured
    return result


def response(request_id: Any, result: Any) -> dict[str, Any]:
    """A JSON-RPC result."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


class StdioFront:
    """One MCP session over a pair of byte streams."""

    def __init__(
        self,
        tools: list[ToolSpec],
        open_backend: Callable[[], Awaitable[ToolBackend]],
        *,
        output: IO[bytes] | None = None,
    ) -> None:
        """Offer ``tools``; ``open_backend`` loads what runs them (once, awaited by calls).

        Args:
            tools: the tools listed (the enabled groups of the catalog).
            open_backend: loads the real server; called once, in the background.
            output: where answers go (default: stdout).
        """
        self.tools = tools
        self.names = {tool.name for tool in tools}
        self._open_backend = open_backend
        self._backend: asyncio.Task[ToolBackend] | None = None
        self._output = output or sys.stdout.buffer
        self._calls: set[asyncio.Task[None]] = set()

    def start_loading(self) -> None:
        """Begin loading the backend (idempotent)."""
        if self._backend is None:
            self._backend = asyncio.ensure_future(self._open_backend())

    async def backend(self) -> ToolBackend:
        """The loaded backend (waits for it)."""
        self.start_loading()
        assert self._backend is not None
        return await asyncio.shield(self._backend)

    def send(self, message: dict[str, Any]) -> None:
        """Write one message, one line."""
        self._output.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
        self._output.flush()

    async def handle_line(self, line: bytes) -> None:
        """Answer one line from the client (requests that run tools answer when they finish)."""
        try:
            message = json.loads(line)
        except ValueError:
            self.send(error_response(None, PARSE_ERROR, "not JSON"))
            return
        for item in message if isinstance(message, list) else [message]:
            self.dispatch(item)

    def dispatch(self, message: Any) -> None:
        """Answer a request now, or in a task for ``tools/call``; notifications get no answer."""
        if not isinstance(message, dict) or "method" not in message:
            if isinstance(message, dict) and ("result" in message or "error" in message):
                return  # an answer to a request this server never makes
            self.send(error_response(None, INVALID_REQUEST, "not a JSON-RPC request"))
            return
        if "id" not in message:
            return  # notifications: initialized, cancelled, roots changed
        request_id, method = message["id"], message["method"]
        params = message.get("params") or {}
        if method == "tools/call":
            task = asyncio.ensure_future(self.answer_call(request_id, params))
            self._calls.add(task)
            task.add_done_callback(self._calls.discard)
            return
        try:
            self.send(response(request_id, self.answer(method, params)))
        except RpcError as error:
            self.send(error_response(request_id, error.code, error.message))

    def answer(self, method: str, params: dict[str, Any]) -> Any:
        """The result of a request that needs no tool."""
        if method == "initialize":
            return initialize_result(params)
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": [tool.listing() for tool in self.tools]}
        raise RpcError(METHOD_NOT_FOUND, f"method {method!r} is not supported")

    async def answer_call(self, request_id: Any, params: dict[str, Any]) -> None:
        """Run a tool and send its answer; a failure is a tool error, never a crash."""
        name, arguments = params.get("name"), params.get("arguments") or {}
        if name not in self.names or not isinstance(arguments, dict):
            message = f"unknown tool {name!r}" if name not in self.names else "bad arguments"
            self.send(error_response(request_id, INVALID_PARAMS, message))
            return
        from plait.state.base.boundary import (  # the server is loaded or loading by now
            attempt,
            describe,
        )
        from plait.state.base.errors import PlaitError

        answer = await attempt(self.call_backend(str(name), arguments))
        if isinstance(answer, PlaitError):  # the backend failed to load or crashed: say so
            answer = ToolAnswer(text=f"plait: {describe(answer)}", is_error=True)
        self.send(response(request_id, tool_result(answer)))

    async def call_backend(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        """Run a tool on the backend (loading it first if it is not loaded yet)."""
        return await (await self.backend()).call(name, arguments)

    async def serve(self, reader: asyncio.StreamReader) -> None:
        """Read lines until the client closes stdin; then stop the calls in flight and close.

        A client that closes stdin has gone (MCP's way to shut a stdio server down): nobody
        reads the answers of calls still running, so they are cancelled, and the commands they
        started are stopped with the backend.
        """
        try:
            while line := await reader.readline():
                if line.strip():
                    await self.handle_line(line)
        finally:
            for call in self._calls:
                call.cancel()
            if self._calls:
                await asyncio.gather(*self._calls, return_exceptions=True)
            await self.close_backend()

    async def close_backend(self) -> None:
        """Close the backend if it loaded; cancel its loading if not."""
        if self._backend is None:
            return
        if not self._backend.done():
            self._backend.cancel()
        try:
            backend = await self._backend
        except (asyncio.CancelledError, Exception):
            return
        await backend.aclose()


async def stdin_reader() -> asyncio.StreamReader:
    """An asyncio reader over this process's stdin.

    A pipe, socket or terminal is watched by the event loop. A file or ``/dev/null`` cannot be
    (the loop's selector refuses them): it is read whole in a thread, then the reader ends, so
    ``plait mcp < /dev/null`` exits at once instead of waiting forever.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    mode = os.fstat(sys.stdin.fileno()).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or sys.stdin.isatty():
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        return reader
    reader.feed_data(await asyncio.to_thread(sys.stdin.buffer.read))
    reader.feed_eof()
    return reader


async def run_stdio(project_dir: Path, *, settings: Settings) -> None:
    """Serve the project's tools on stdio until stdin closes (``plait mcp``).

    With ``PLAIT_URL`` naming another machine (``mcp.remote``) the memory tools run on that
    service (:mod:`.remote`) and only they are offered; else every enabled tool runs here,
    over the project's own memory.
    """
    from plait.adapters.hosts.mcp.catalog import MEMORY_GROUPS, enabled_tools

    tools = enabled_tools(settings.mcp.tools)
    remote = remote_service(settings.mcp.remote, os.environ.get("PLAIT_URL", ""))
    if remote:
        tools = [tool for tool in tools if tool.group in MEMORY_GROUPS]

    async def open_backend() -> ToolBackend:
        if remote:
            module = await import_in_background(REMOTE_MODULE)
            data = str(settings.resolved_data_dir())
            backend: ToolBackend = module.open_remote_backend(data, str(project_dir))
            return backend
        module = await import_in_background(SERVER_MODULE)
        opened: ToolBackend = await module.open_tool_backend(project_dir, settings)
        return opened

    await serve_stdio(tools, open_backend)


def remote_service(mode: str, urls: str) -> bool:
    """Whether the memory tools run on the service in ``PLAIT_URL`` (``mcp.remote``).

    ``auto``: when it names another machine (a service on this one shares its memory, and the
    session tools need that memory here); ``always``: whenever it is set; ``never``.
    """
    from plait.adapters.hosts.hook_client._client import on_other_machines

    if mode == "never" or not urls.strip():
        return False
    return mode == "always" or on_other_machines(urls)


async def import_in_background(name: str) -> Any:
    """Import a module in a daemon thread: the loop keeps answering, and an exit never waits.

    (``asyncio.to_thread`` would do the first; but its threads are joined when the process
    exits, so a host closing the server mid-import would wait for the whole import.)
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def work() -> None:
        try:
            module = importlib.import_module(name)
        except BaseException as error:  # handed to the awaiting task
            loop.call_soon_threadsafe(_settle, done, None, error)
        else:
            loop.call_soon_threadsafe(_settle, done, module, None)

    threading.Thread(target=work, name="plait-mcp-import", daemon=True).start()
    return await done


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


async def serve_stdio(
    tools: list[ToolSpec], open_backend: Callable[[], Awaitable[ToolBackend]]
) -> None:
    """Serve MCP on this process's stdin and stdout until stdin closes or a signal comes.

    SIGTERM and SIGHUP (a client that goes away sends one or the other) end the server as
    stdin's end does: the backend closes, and the commands it started are stopped.
    """
    front = StdioFront(tools, open_backend)
    with stopped_by_signals():
        await front.serve(await stdin_reader())


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


__all__ = ["PROTOCOL_VERSIONS", "StdioFront", "ToolBackend", "run_stdio", "serve_stdio"]
