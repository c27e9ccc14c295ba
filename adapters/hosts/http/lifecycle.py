"""One ``plait serve`` per project, exiting when idle or signalled, replaced when hung.

Files in ``<data_dir>/services/`` beside the service file (``<project_key>.json``):
    ``<project_key>.lock``  held (``flock``, exclusive) by the project's service while it runs;
                            it holds ``{"pid", "started"}`` of the holder.
The kernel drops the lock when the holder ends, however it ends, so a lock that can be taken
means no service runs, whatever files say. A second ``plait serve`` for the project finds the
lock held and then either finds the service answering its health check (and leaves it be), or,
once the holder has had :data:`START_GRACE_SECONDS` to come up, treats it as hung: it ends it
(SIGTERM, then SIGKILL) and takes its place.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from plait.state.base.errors import BackendUnavailable
from plait.state.base.processes import pid_alive

CONTROL = "_user"  # the files of the process that serves every project (``user_service``)
START_GRACE_SECONDS = 15.0
TERM_GRACE_SECONDS = 5.0
POLL_SECONDS = 0.1


def lock_path(service_file: Path) -> Path:
    """The lock beside a service file."""
    return service_file.with_suffix(".lock")


@dataclass
class ServiceLock:
    """The project's service lock (see the module docstring)."""

    path: Path
    _handle: IO[Any] | None = None

    def try_acquire(self) -> bool:
        """Take the lock if free, writing this process's pid into it; never waits."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle = self.path.open("a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return False
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "started": time.time()}))
        handle.flush()
        self._handle = handle
        return True

    def acquire(self, timeout: float) -> bool:
        """Take the lock, waiting at most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SECONDS)
        return True

    def holder(self) -> tuple[int | None, float]:
        """The pid of the holder and when it took the lock (epoch seconds), as it wrote them."""
        try:
            recorded = json.loads(self.path.read_text() or "{}")
            return int(recorded["pid"]), float(recorded["started"])
        except (OSError, ValueError, KeyError, TypeError):
            return None, 0.0

    def release(self) -> None:
        """Drop the lock."""
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


def terminate(pid: int, grace: float = TERM_GRACE_SECONDS) -> bool:
    """SIGTERM, then SIGKILL after ``grace``; whether the process is gone."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
        if not pid_alive(pid):
            return True
    return False


def take_over(
    lock: ServiceLock, *, answers: Callable[[], bool], grace: float = START_GRACE_SECONDS
) -> bool:
    """Take the lock from a holder that does not answer; False when the holder answers.

    ``answers()`` says whether the project's announced service answers its health check. The
    holder gets ``grace`` seconds from when it took the lock to come up.
    """
    deadline = time.monotonic() + grace + 2 * TERM_GRACE_SECONDS
    while True:
        if lock.try_acquire():
            return True
        if answers():
            return False
        pid, started = lock.holder()
        if time.time() - started >= grace and pid is not None and pid != os.getpid():
            if not terminate(pid):
                raise BackendUnavailable(
                    f"plait serve (pid {pid}) does not answer and cannot be stopped; "
                    f"end it by hand, then start again (lock {str(lock.path)!r})"
                )
            return lock.acquire(TERM_GRACE_SECONDS)
        if time.monotonic() > deadline:
            raise BackendUnavailable(
                f"{str(lock.path)!r} is held by a process that names no pid and does not "
                "answer; if no plait serve runs for this project, remove the file"
            )
        time.sleep(POLL_SECONDS * 2)


class IdleClock:
    """ASGI middleware that notes when a request other than the health check last arrived."""

    def __init__(self, app: Any, *, quiet_paths: frozenset[str]) -> None:
        """Wrap ``app``; requests to ``quiet_paths`` do not count as activity."""
        self.app = app
        self.quiet_paths = quiet_paths
        self.last = time.monotonic()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Note the time, then pass the request on."""
        if scope.get("type") == "http" and scope.get("path") not in self.quiet_paths:
            self.last = time.monotonic()
        await self.app(scope, receive, send)

    def idle_for(self) -> float:
        """Seconds since the last request that counts."""
        return time.monotonic() - self.last


@dataclass(frozen=True, kw_only=True)
class ServiceState:
    """What is known of one project's service: its files, and whether it runs."""

    key: str
    pid: int | None
    project_dir: str
    url: str
    running: bool


def service_states(data_dir: Path) -> list[ServiceState]:
    """Every project service the data dir knows of (a lock or a service file), running or not."""
    folder = data_dir / "services"
    keys = sorted(
        (
            {path.stem for path in folder.glob("*.lock")}
            | {path.stem for path in folder.glob("*.json")}
        )
        - {CONTROL}
    )
    return [service_state(folder, key) for key in keys]


def service_state(folder: Path, key: str) -> ServiceState:
    """One project's service, from its lock and its service file."""
    lock = ServiceLock(folder / f"{key}.lock")
    running = lock.path.exists() and not lock.try_acquire()
    lock.release()
    pid, _ = lock.holder()
    try:
        announced = json.loads((folder / f"{key}.json").read_text())
    except (OSError, ValueError):
        announced = {}
    return ServiceState(
        key=key,
        pid=pid if running else None,
        project_dir=str(announced.get("project_dir", "")),
        url=str(announced.get("url", "")) if running else "",
        running=running,
    )


def stop_service(folder: Path, key: str) -> bool:
    """Stop one project's service (SIGTERM, then SIGKILL); whether one was running."""
    state = service_state(folder, key)
    if not state.running or state.pid is None:
        (folder / f"{key}.json").unlink(missing_ok=True)
        return False
    if not terminate(state.pid):
        raise BackendUnavailable(f"plait serve (pid {state.pid}) could not be stopped")
    return True


__all__ = [
    "CONTROL",
    "START_GRACE_SECONDS",
    "ServiceState",
    "IdleClock",
    "ServiceLock",
    "lock_path",
    "service_states",
    "stop_service",
    "take_over",
    "terminate",
]
