"""The long-running commands: ``serve``, ``mcp`` and ``worker``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.cli._common import (
    DataDirOption,
    ProjectOption,
    app,
    console,
    fail,
    load_settings,
)
from plait.errors import PlaitError
from plait.redact import redact_process_output

if TYPE_CHECKING:
    pass


@app.command()
def worker(
    project: ProjectOption = None,
    data_dir: DataDirOption = None,
    name: Annotated[str | None, typer.Option(help="Consumer name (default: host-pid).")] = None,
    once: Annotated[bool, typer.Option(help="Drain until empty, then exit.")] = False,
) -> None:
    """Drain the queue into the knowledge graph (several workers share the queue)."""
    from plait.worker import run_worker

    redact_process_output()
    settings = load_settings(project, data_dir)
    try:
        asyncio.run(run_worker(settings, project or Path.cwd(), consumer=name, once=once))
    except PlaitError as error:
        fail(str(error))
    except KeyboardInterrupt:
        pass


@app.command()
def serve(
    project: ProjectOption = None,
    data_dir: DataDirOption = None,
    host: Annotated[str | None, typer.Option(help="Bind address (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: a free one).")] = None,
) -> None:
    """Run the local HTTP service the OpenCode plugin talks to (loopback, bearer token)."""
    from plait.adapters.hosts.http import running_service
    from plait.adapters.hosts.http import serve as serve_http
    from plait.adapters.hosts.opencode.hooks import OpenCodeHooks
    from plait.memory import Memory

    redact_process_output()
    settings = load_settings(project, data_dir)
    project_dir = (project or Path.cwd()).resolve()
    if running_service(settings.resolved_data_dir(), project_dir) is not None:
        console.print("plait serve: already running for this project")
        raise typer.Exit(0)

    async def run() -> None:
        async with Memory.open(project_dir, settings=settings) as memory:
            await serve_http(
                OpenCodeHooks(memory),
                host or settings.service.host,
                settings.service.port if port is None else port,
                data_dir=settings.resolved_data_dir(),
                project_dir=project_dir,
                max_body_bytes=settings.service.max_body_bytes,
            )

    try:
        asyncio.run(run())
    except PlaitError as error:
        fail(str(error))
    except KeyboardInterrupt:
        pass


@app.command()
def mcp(project: ProjectOption = None, data_dir: DataDirOption = None) -> None:
    """Run plait's MCP server (session tools) on stdio."""
    from plait.adapters.hosts.mcp import run_stdio

    redact_process_output()
    settings = load_settings(project, data_dir)
    try:
        asyncio.run(run_stdio((project or Path.cwd()).resolve(), settings=settings))
    except PlaitError as error:
        fail(str(error))
