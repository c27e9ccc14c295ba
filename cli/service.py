"""The long-running commands: ``serve``, ``mcp`` and ``worker``."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.cli import _common as cli
from plait.state.base.errors import PlaitError
from plait.state.base.redact import redact_process_output

if TYPE_CHECKING:
    from plait.adapters.hosts.http import ServiceInfo
    from plait.adapters.hosts.http.lifecycle import ServiceLock
    from plait.state.base.settings import Settings


@cli.app.command()
def worker(
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    name: Annotated[str | None, typer.Option(help="Consumer name (default: host-pid).")] = None,
    once: Annotated[bool, typer.Option(help="Drain until empty, then exit.")] = False,
) -> None:
    """Drain the queue into the knowledge graph (several workers share the queue)."""
    from plait.cli.worker import lower_this_process, run_worker

    redact_process_output()
    lower_this_process()
    settings = cli.load_settings(project, data_dir)
    try:
        cli.run(run_worker(settings, project or Path.cwd(), consumer=name, once=once))
    except PlaitError as error:
        cli.fail(str(error))
    except KeyboardInterrupt:
        pass


@cli.app.command()
def serve(
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    host: Annotated[str | None, typer.Option(help="Bind address (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: a free one).")] = None,
) -> None:
    """Run the local HTTP service the OpenCode plugin talks to (loopback, bearer token).

    One per project: a second start finds the first (or replaces it if it hangs). One process
    serves every project of the data dir (service.one_process): a start for another project
    hands it to the running process and exits. It stops on SIGTERM or Ctrl-C, and a project
    after serve.idle_exit_s without a hook (the process with its last project).
    """
    from plait.adapters.hosts.http import running_service
    from plait.adapters.hosts.http.user_service import join

    redact_process_output()
    settings = cli.load_settings(project, data_dir)
    project_dir = (project or Path.cwd()).resolve()
    directory = settings.resolved_data_dir()
    shared = settings.service.one_process and host is None and port is None
    found = running_service(directory, project_dir)
    joined = join(directory, project_dir) if found is None and shared else None
    if joined is not None:
        cli.console.print(
            f"plait serve: {project_dir} is served by the running plait service "
            f"(pid {joined.pid}) at {joined.url}"
        )
        raise typer.Exit(0)
    try:
        lock = _claim(directory, project_dir) if found is None else None
    except (PlaitError, OSError) as error:
        cli.fail(f"cannot start the service for {project_dir}: {error}")
    if lock is None:
        found = found or running_service(directory, project_dir)
        where = f" at {found.url} (pid {found.pid})" if found else ""
        cli.console.print(f"plait serve: already running for this project{where}")
        raise typer.Exit(0)
    try:
        cli.run(_serve_here(settings, data_dir, project_dir, host, port, lock, shared=shared))
    except PlaitError as error:
        cli.fail(str(error))
    except OSError as error:
        cli.fail(f"cannot serve from data dir {directory}: {error.strerror or error}")
    except KeyboardInterrupt:
        pass
    finally:
        lock.release()


def _claim(directory: Path, project_dir: Path) -> ServiceLock | None:
    """The project's service lock, taken (from a hung holder too); None when a service answers."""
    from plait.adapters.hosts.http import running_service, service_file
    from plait.adapters.hosts.http.lifecycle import ServiceLock, lock_path, take_over

    lock = ServiceLock(lock_path(service_file(directory, project_dir)))
    answers = lambda: running_service(directory, project_dir) is not None  # noqa: E731
    return lock if take_over(lock, answers=answers) else None


async def _serve_here(
    settings: Settings,
    data_dir: Path | None,
    project_dir: Path,
    host: str | None,
    port: int | None,
    lock: ServiceLock,
    *,
    shared: bool,
) -> None:
    """Serve the project (its lock held): as the data dir's one process when it can be."""
    from plait.adapters.hosts.http import load_or_create_token
    from plait.adapters.hosts.http.user_service import UserService, control_lock

    directory = settings.resolved_data_dir()
    control = control_lock(directory)
    if not shared or not control.try_acquire():  # another process is (becoming) the one
        await _serve(settings, project_dir, host, port)
        return

    async def serve_project(path: Path, stop: asyncio.Event, held: ServiceLock | None) -> None:
        await _serve_added(data_dir, path, stop, held)

    try:
        service = UserService(directory, load_or_create_token(directory), serve_project)
        await service.run(project_dir, lock)
    finally:
        control.release()


async def _serve_added(
    data_dir: Path | None, project_dir: Path, stop: asyncio.Event, lock: ServiceLock | None
) -> None:
    """Serve one project in the shared process until ``stop``; its lock claimed unless held.

    The lock is released when the project stops (the process may serve others for long after).
    """
    settings = cli.load_settings(project_dir, data_dir)  # the project's own configuration
    if lock is None:
        lock = await asyncio.to_thread(_claim, settings.resolved_data_dir(), project_dir)
        if lock is None:
            return  # another process answers for it
    try:
        await _serve(settings, project_dir, None, None, stop=stop)
    finally:
        lock.release()


async def _serve(
    settings: Settings,
    project_dir: Path,
    host: str | None,
    port: int | None,
    stop: asyncio.Event | None = None,
) -> None:
    from plait.adapters.backends.tokens import FileTokenBook
    from plait.adapters.hosts.http import serve as serve_http
    from plait.adapters.hosts.http.team import TeamTokens
    from plait.memory import Memory
    from plait.state.groups import project_key

    data = settings.resolved_data_dir()
    team = TeamTokens(FileTokenBook(data).judge, project_key(project_dir))
    async with Memory.open(project_dir, settings=settings, reconnect=True) as memory:
        await serve_http(
            memory,
            host or settings.service.host,
            settings.service.port if port is None else port,
            data_dir=data,
            project_dir=project_dir,
            max_body_bytes=settings.service.max_body_bytes,
            idle_exit_s=settings.service.idle_exit_s,
            team=team,
            tls=settings.service.tls(),
            behind_proxy=settings.service.behind_proxy,
            stop=stop,
        )


@cli.app.command()
def mcp(project: cli.ProjectOption = None, data_dir: cli.DataDirOption = None) -> None:
    """Run plait's MCP server (session tools) on stdio."""
    from plait.adapters.hosts.mcp.stdio import run_stdio

    redact_process_output()
    settings = cli.load_settings(project, data_dir)
    try:
        cli.run(run_stdio((project or Path.cwd()).resolve(), settings=settings))
    except PlaitError as error:
        cli.fail(str(error))


@cli.app.command()
def status(data_dir: cli.DataDirOption = None, json_output: cli.JsonOption = False) -> None:
    """What plait runs on this machine for the data dir: services, the embedded server."""
    from plait.adapters.backends.embedded import server_state
    from plait.adapters.hosts.http.lifecycle import service_states

    directory = cli.load_settings(None, data_dir).resolved_data_dir()
    services = [asdict(state) for state in service_states(directory)]
    server = server_state(directory)
    if json_output:
        typer.echo(json.dumps({"services": services, "embedded": server}, indent=2))
        return
    running = [state for state in services if state["running"]]
    cli.console.print(f"data dir {directory}")
    for state in running:
        cli.console.print(f"service  pid {state['pid']}  {state['url']}  {state['project_dir']}")
    if not running:
        cli.console.print("service  none running")
    if server["running"]:
        use = "in use" if server["in_use"] else "unused (stopping)"
        cli.console.print(f"embedded FalkorDB  pid {server['pid']}  port {server['port']}  {use}")
    else:
        cli.console.print("embedded FalkorDB  not running")


@cli.app.command()
def stop(
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    all_: Annotated[bool, typer.Option("--all", help="Every project's service.")] = False,
) -> None:
    """Stop the project's service (or every one); the embedded server stops once unused."""
    from plait.adapters.hosts.http import project_key
    from plait.adapters.hosts.http.lifecycle import service_states

    directory = cli.load_settings(project, data_dir).resolved_data_dir()
    keys = (
        [state.key for state in service_states(directory)]
        if all_
        else [project_key((project or Path.cwd()).resolve())]
    )
    try:
        stopped = [key for key in keys if _stop_one(directory, key)]
    except PlaitError as error:
        cli.fail(str(error))
    cli.console.print(f"stopped {len(stopped)} service(s)" if stopped else "no service was running")


def _stop_one(directory: Path, key: str) -> bool:
    """Stop one project's service: in the shared process alone, else its process."""
    import time

    from plait.adapters.hosts.http.lifecycle import service_state, stop_service
    from plait.adapters.hosts.http.user_service import stop_in_process

    folder = directory / "services"
    if stop_in_process(directory, key):
        deadline = time.monotonic() + 30
        while service_state(folder, key).running and time.monotonic() < deadline:
            time.sleep(0.05)
        if not service_state(folder, key).running:
            return True
    return stop_service(folder, key)


@cli.app.command()
def ui(
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    open_browser: Annotated[
        bool, typer.Option("--open/--no-open", help="Open the link in the browser.")
    ] = True,
    wait_s: Annotated[float, typer.Option(help="How long to wait for a service to start.")] = 60,
) -> None:
    """Open the web viewer: a one-time login link to the project's service (started if needed)."""
    import webbrowser

    from plait.adapters.hosts.http import load_or_create_token, running_service

    settings = cli.load_settings(project, data_dir)
    project_dir = (project or Path.cwd()).resolve()
    directory = settings.resolved_data_dir()
    found = running_service(directory, project_dir) or started_service(
        project_dir, directory, wait_s
    )
    if found is None:
        cli.fail(f"no plait service answers for {project_dir}; start one with `plait serve`")
    link = viewer_link(found.url, load_or_create_token(directory))
    cli.console.print(f"plait viewer: {link}", markup=False, highlight=False, soft_wrap=True)
    cli.console.print("(the link works once; run `plait ui` again for a new one)", markup=False)
    if open_browser:
        webbrowser.open(link)


def viewer_link(url: str, token: str) -> str:
    """Ask the service for a one-time login link of its viewer; the whole URL."""
    import httpx

    try:
        response = httpx.post(
            f"{url}/v1/viewer/login", headers={"Authorization": f"Bearer {token}"}, timeout=5.0
        )
        response.raise_for_status()
    except httpx.HTTPError as error:
        cli.fail(f"the service at {url} gave no login link: {error}")
    return url + str(response.json()["path"])


def started_service(project_dir: Path, data_dir: Path, wait_s: float) -> ServiceInfo | None:
    """Start ``plait serve`` for the project in the background; its info once it answers."""
    import subprocess
    import sys
    import time

    from plait.adapters.hosts.http import running_service

    command = [str(Path(sys.executable).parent / "plait"), "serve", "--project", str(project_dir)]
    command += ["--data-dir", str(data_dir)]
    subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        found = running_service(data_dir, project_dir)
        if found is not None:
            return found
        time.sleep(0.2)
    return None
