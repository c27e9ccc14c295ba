"""One ``plait serve`` process serves every project of a data dir, each on a port of its own.

A person uses plait in several projects in an afternoon. A process per project costs each about
170 MB (what it imports: LangGraph, graphiti-core, FastAPI), while one more project's
:class:`~plait.Memory` in a running process costs about 1 MB. So the first ``plait serve`` of a
data dir also listens on a control port, announced in ``<data_dir>/services/_user.json``
(``{"url", "pid"}``, 0600; it holds ``_user.lock`` while it runs). A later ``plait serve
--project P`` for the data dir asks it to serve P (``POST /v1/projects`` with the owner's token)
and exits; the process then serves P on a loopback port of its own, announced in P's service
file as before, so the plugin and the hook clients see no difference. Each project keeps its
lock, its idle exit, its spool and its data apart; the process ends with its last project.
``plait stop --project P`` stops P alone (``POST /v1/projects/stop``). A ``plait serve`` whose
``PLAIT_*`` environment (or provider key) differs from the running process's serves its
project itself (its settings are not the process's); ``service.one_process = false`` turns
the sharing off.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from plait.adapters.hosts.http.lifecycle import CONTROL, ServiceLock
from plait.adapters.hosts.http.service import (
    ServiceInfo,
    bind_socket,
    quiet_server,
    read_service_file,
    running_service,
)
from plait.state.base.processes import pid_alive
from plait.state.base.settings import KEY_VARIABLES
from plait.state.groups import project_key

logger = logging.getLogger(__name__)

JOIN_TIMEOUT_S = 120.0  # opening a project's memory in the running process, at the most
HEALTH_TIMEOUT_S = 2.0  # the running process's control answers its health check within this
SETTINGS_PREFIX = "PLAIT_"
NOT_SETTINGS = frozenset({"PLAIT_PROJECT_DIR", "PLAIT_SESSION_ID"})

ServeProject = Callable[[Path, asyncio.Event, ServiceLock | None], Awaitable[None]]
"""Serves one project until ``stop`` is set or it idles out (claiming its lock unless given)."""


def control_file(data_dir: Path) -> Path:
    """Where the running process announces its control port."""
    return data_dir / "services" / f"{CONTROL}.json"


def settings_environment() -> str:
    """A digest of the variables that shape settings.

    ``PLAIT_*`` (a project's own left out) and the providers' keys; only the digest crosses
    the control port, never a key.
    """
    shaping = {
        key: value
        for key, value in os.environ.items()
        if (key.startswith(SETTINGS_PREFIX) and key not in NOT_SETTINGS)
        or key in KEY_VARIABLES.values()
    }
    return hashlib.sha256(json.dumps(sorted(shaping.items())).encode()).hexdigest()


@dataclass
class Served:
    """One project the process serves."""

    stop: asyncio.Event
    task: asyncio.Task[None]


class UserService:
    """The process's projects and its control port."""

    def __init__(self, data_dir: Path, token: str, serve_project: ServeProject) -> None:
        """Serve projects of ``data_dir`` with ``serve_project``; ``token`` guards the control."""
        self.data_dir = data_dir
        self.token = token
        self.serve_project = serve_project
        self.projects: dict[str, Served] = {}
        self.stopping = asyncio.Event()

    def start(self, project_dir: Path, lock: ServiceLock | None = None) -> Served:
        """Serve ``project_dir`` (unless it is served already): its task starts now."""
        key = project_key(project_dir)
        served = self.projects.get(key)
        if served is not None and not served.task.done():
            return served
        stop = asyncio.Event()
        task = asyncio.ensure_future(self.serve_project(project_dir, stop, lock))
        self.projects[key] = served = Served(stop=stop, task=task)
        return served

    async def add(self, project_dir: Path) -> ServiceInfo | None:
        """Serve ``project_dir`` and return its service once announced (None: it failed)."""
        served = self.start(project_dir)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + JOIN_TIMEOUT_S
        while not served.task.done() and loop.time() < deadline:
            info = read_service_file(self.data_dir, project_dir)
            if info is not None and info.pid == os.getpid():
                return info
            await asyncio.sleep(0.05)
        # it ended: another process answers for the project, or it failed (in its log)
        return await asyncio.to_thread(running_service, self.data_dir, project_dir)

    def stop_project(self, key: str) -> bool:
        """Stop one project; whether it was served."""
        served = self.projects.get(key)
        if served is None or served.task.done():
            return False
        served.stop.set()
        return True

    def stop_all(self) -> None:
        """Stop every project (a signal): the process ends once they have closed."""
        self.stopping.set()
        for served in self.projects.values():
            served.stop.set()

    async def run(self, first: Path, lock: ServiceLock) -> None:
        """Serve ``first`` (its lock held), and the projects asked for, until none is left."""
        import uvicorn

        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self.stop_all)
        sock = bind_socket("127.0.0.1", 0)
        config = uvicorn.Config(
            self.control_app(), lifespan="off", access_log=False, log_config=None
        )
        control = quiet_server(config, signals=False)
        served = asyncio.ensure_future(control.serve(sockets=[sock]))
        path = announce(self.data_dir, f"http://127.0.0.1:{sock.getsockname()[1]}")
        try:
            self.start(first, lock)
            while tasks := [s.task for s in self.projects.values() if not s.task.done()]:
                await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in tasks:
                    if task.done() and not task.cancelled() and task.exception() is not None:
                        logger.warning("plait: a project stopped: %s", task.exception())
        finally:
            withdraw(path)
            control.should_exit = True
            await served
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)

    def control_app(self) -> Any:
        """The control routes (Starlette): health, add a project, stop one."""
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def body_of(request: Request) -> dict[str, Any] | None:
            try:
                body = await request.json()
            except ValueError:
                return None
            return body if isinstance(body, dict) else None

        def allowed(request: Request) -> bool:
            given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            return hmac.compare_digest(given.encode(), self.token.encode())

        async def health(_: Request) -> JSONResponse:
            keys = [key for key, s in self.projects.items() if not s.task.done()]
            return JSONResponse({"pid": os.getpid(), "projects": keys})

        async def add(request: Request) -> JSONResponse:
            if not allowed(request):
                return JSONResponse({"error": "forbidden"}, status_code=403)
            body = await body_of(request)
            if body is None or not isinstance(body.get("project_dir"), str):
                return JSONResponse({"error": "bad_request"}, status_code=400)
            if body.get("environment") != settings_environment():
                return JSONResponse({"error": "other_settings"}, status_code=409)
            if self.stopping.is_set():
                return JSONResponse({"error": "stopping"}, status_code=503)
            info = await self.add(Path(body["project_dir"]))
            if info is None:
                return JSONResponse({"error": "not_served"}, status_code=503)
            return JSONResponse(asdict(info))

        async def stop(request: Request) -> JSONResponse:
            if not allowed(request):
                return JSONResponse({"error": "forbidden"}, status_code=403)
            body = await body_of(request)
            if body is None:
                return JSONResponse({"error": "bad_request"}, status_code=400)
            return JSONResponse({"stopped": self.stop_project(str(body.get("key")))})

        return Starlette(
            routes=[
                Route("/v1/health", health),
                Route("/v1/projects", add, methods=["POST"]),
                Route("/v1/projects/stop", stop, methods=["POST"]),
            ]
        )


def announce(data_dir: Path, url: str) -> Path:
    """Write the control file (atomic, 0600)."""
    path = control_file(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump({"url": url, "pid": os.getpid()}, handle)
    temporary.replace(path)
    return path


def withdraw(path: Path) -> None:
    """Remove the control file if it is still this process's."""
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()


def control_lock(data_dir: Path) -> ServiceLock:
    """The lock the running process holds."""
    return ServiceLock(data_dir / "services" / f"{CONTROL}.lock")


def running_control(data_dir: Path) -> tuple[str, str] | None:
    """The running process's control URL and the owner's token, if there is one."""
    try:
        recorded = json.loads(control_file(data_dir).read_text())
        token = (data_dir / "token").read_text().strip()
    except (OSError, ValueError):
        return None
    if not pid_alive(int(recorded.get("pid", 0))) or not token:
        return None
    return str(recorded["url"]), token


def join(data_dir: Path, project_dir: Path) -> ServiceInfo | None:
    """Ask the running process to serve ``project_dir``; its service, or None (serve it here)."""
    import httpx

    found = running_control(data_dir)
    if found is None:
        return None
    url, token = found
    body = {"project_dir": str(project_dir), "environment": settings_environment()}
    try:
        if httpx.get(f"{url}/v1/health", timeout=HEALTH_TIMEOUT_S).status_code != 200:
            return None  # a process that does not answer at once is not waited for
        answer = httpx.post(
            f"{url}/v1/projects",
            json=body,
            headers={"authorization": f"Bearer {token}"},
            timeout=JOIN_TIMEOUT_S + 5,
        )
    except httpx.HTTPError:
        return None
    if answer.status_code != 200:
        return None
    try:
        return ServiceInfo(**answer.json())
    except (ValueError, TypeError):
        return None


def stop_in_process(data_dir: Path, key: str) -> bool:
    """Ask the running process to stop one project; whether it served it."""
    import httpx

    found = running_control(data_dir)
    if found is None:
        return False
    url, token = found
    try:
        answer = httpx.post(
            f"{url}/v1/projects/stop",
            json={"key": key},
            headers={"authorization": f"Bearer {token}"},
            timeout=10,
        )
        return answer.status_code == 200 and bool(answer.json().get("stopped"))
    except (httpx.HTTPError, ValueError):
        return False


__all__ = [
    "UserService",
    "control_file",
    "control_lock",
    "join",
    "running_control",
    "stop_in_process",
]
