"""Nothing left running: one ``plait serve`` per project, stopped by signals, idleness, ``plait stop``.

Real processes: ``plait serve`` with its embedded FalkorDB server in a temporary data dir. After
each test nothing it started may still run.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.plait_cli import PLAIT, plait_env, run_plait

from plait.adapters.hosts.http import service_file
from plait.adapters.hosts.http.lifecycle import ServiceLock, lock_path
from plait.state.base.processes import pid_alive


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def env(data_dir: Path, tmp_path: Path) -> dict[str, str]:
    return plait_env(data_dir, XDG_CONFIG_HOME=str(tmp_path / "xdg"))


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts; killed at the end whatever happened."""
    processes: list[subprocess.Popen[str]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()


def wait_for(condition, seconds: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def healthy(data_dir: Path, project: Path) -> bool:
    try:
        info = json.loads(service_file(data_dir, project).read_text())
        with urllib.request.urlopen(info["url"] + "/v1/health", timeout=0.5) as answer:
            return answer.status == 200
    except (OSError, ValueError, KeyError):
        return False


def serve(
    project: Path, env: dict[str, str], started: list[subprocess.Popen[str]]
) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [PLAIT, "serve", "--project", str(project)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started.append(process)
    return process


def server_pids(data_dir: Path) -> tuple[int, int]:
    recorded = json.loads((data_dir / "falkordb" / "server.json").read_text())
    return recorded["pid"], recorded["reaper"]


def nothing_left(data_dir: Path, pids: tuple[int, ...]) -> bool:
    return not any(pid_alive(pid) for pid in pids) and not list(
        (data_dir / "services").glob("*.json")
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_stops_on_a_signal_with_its_embedded_server(
    project: Path, data_dir: Path, env: dict[str, str], started: list, sig: int
) -> None:
    process = serve(project, env, started)
    assert wait_for(lambda: healthy(data_dir, project)), process.stderr
    pids = server_pids(data_dir)
    process.send_signal(sig)
    assert process.wait(timeout=30) == 0
    assert wait_for(lambda: nothing_left(data_dir, (process.pid, *pids)), 10)


def test_second_serve_finds_the_first(
    project: Path, data_dir: Path, env: dict[str, str], started: list
) -> None:
    first = serve(project, env, started)
    assert wait_for(lambda: healthy(data_dir, project))
    second = subprocess.run(
        [PLAIT, "serve", "--project", str(project)], env=env, capture_output=True, text=True
    )
    assert second.returncode == 0
    assert "already running for this project at http://127.0.0.1" in second.stdout
    assert str(first.pid) in second.stdout
    assert first.poll() is None


def test_a_hung_service_is_replaced_not_joined(
    project: Path, data_dir: Path, env: dict[str, str], started: list
) -> None:
    """A process holds the project's lock and never answers: the next serve ends it."""
    lock = lock_path(service_file(data_dir, project))
    code = (
        "import json, sys, time; from pathlib import Path; "
        "from plait.adapters.hosts.http.lifecycle import ServiceLock; "
        f"lock = ServiceLock(Path({str(lock)!r})); assert lock.try_acquire(); "
        "lock._handle.seek(0); lock._handle.truncate(); "
        "lock._handle.write(json.dumps({'pid': __import__('os').getpid(), 'started': 0})); "
        "lock._handle.flush(); print('holding', flush=True); time.sleep(600)"
    )
    hung = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    started.append(hung)
    assert hung.stdout is not None and hung.stdout.readline().strip() == "holding"
    replacement = serve(project, env, started)
    assert wait_for(lambda: healthy(data_dir, project))
    assert hung.wait(timeout=30) != 0
    announced = json.loads(service_file(data_dir, project).read_text())
    assert announced["pid"] == replacement.pid


def test_serve_exits_when_idle(
    project: Path, data_dir: Path, env: dict[str, str], started: list
) -> None:
    process = serve(project, {**env, "PLAIT_SERVICE__IDLE_EXIT_S": "3"}, started)
    assert wait_for(lambda: healthy(data_dir, project))
    pids = server_pids(data_dir)
    assert process.wait(timeout=30) == 0
    assert wait_for(lambda: nothing_left(data_dir, (process.pid, *pids)), 10)


def test_a_stale_service_file_and_lock_do_not_stop_a_start(
    project: Path, data_dir: Path, env: dict[str, str], started: list
) -> None:
    announced = service_file(data_dir, project)
    announced.parent.mkdir(parents=True)
    dead = {"url": "http://127.0.0.1:9", "host": "127.0.0.1", "port": 9, "pid": 999_999}
    announced.write_text(json.dumps({**dead, "project_dir": str(project), "version": "1"}))
    lock_path(announced).write_text('{"pid": 999999, "started": 0}')
    process = serve(project, env, started)
    assert wait_for(lambda: healthy(data_dir, project))
    assert json.loads(announced.read_text())["pid"] == process.pid


def test_status_and_stop(project: Path, data_dir: Path, env: dict[str, str], started: list) -> None:
    process = serve(project, env, started)
    assert wait_for(lambda: healthy(data_dir, project))
    pids = server_pids(data_dir)
    status = subprocess.run(
        [PLAIT, "status", "--json"], env=env, capture_output=True, text=True, check=True
    )
    report = json.loads(status.stdout)
    assert [s["pid"] for s in report["services"] if s["running"]] == [process.pid]
    assert report["embedded"]["running"] and report["embedded"]["in_use"]
    stopped = subprocess.run(
        [PLAIT, "stop", "--project", str(project)], env=env, capture_output=True, text=True
    )
    assert stopped.returncode == 0 and "stopped 1 service" in stopped.stdout
    assert process.wait(timeout=30) == 0
    assert wait_for(lambda: nothing_left(data_dir, (process.pid, *pids)), 10)
    again = json.loads(
        subprocess.run(
            [PLAIT, "status", "--json"], env=env, capture_output=True, text=True, check=True
        ).stdout
    )
    assert not any(s["running"] for s in again["services"])
    assert not again["embedded"]["running"]


def test_lock_can_be_taken_once(tmp_path: Path) -> None:
    first, second = ServiceLock(tmp_path / "x.lock"), ServiceLock(tmp_path / "x.lock")
    assert first.try_acquire()
    assert not second.try_acquire()
    first.release()
    assert second.try_acquire()
    second.release()


def announced_pid(data_dir: Path, project: Path) -> int:
    return int(json.loads(service_file(data_dir, project).read_text())["pid"])


def test_one_process_serves_every_project_and_stops_them_one_by_one(
    tmp_path: Path, project: Path, data_dir: Path, env: dict[str, str], started: list
) -> None:
    """The second project of a data dir is served by the running process (one process, not
    two of ~170 MB each), on a port of its own; ``plait stop --project`` stops that project
    alone, and a signal stops the rest and the process."""
    other = tmp_path / "other"
    other.mkdir()
    process = serve(project, env, started)
    assert wait_for(lambda: healthy(data_dir, project))
    pids = server_pids(data_dir)
    joined = run_plait(env, "serve", "--project", str(other))
    assert joined.returncode == 0 and "served by the running plait service" in joined.stdout
    assert healthy(data_dir, other)
    assert announced_pid(data_dir, other) == announced_pid(data_dir, project) == process.pid
    first, second = (json.loads(service_file(data_dir, p).read_text()) for p in (project, other))
    assert first["port"] != second["port"]
    stopped = subprocess.run(
        [PLAIT, "stop", "--project", str(project)], env=env, capture_output=True, text=True
    )
    assert "stopped 1 service" in stopped.stdout
    assert not service_file(data_dir, project).exists() and healthy(data_dir, other)
    assert ServiceLock(lock_path(service_file(data_dir, project))).try_acquire()  # released
    assert process.poll() is None
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    assert wait_for(lambda: nothing_left(data_dir, (process.pid, *pids)), 10)


def test_a_start_with_other_settings_is_not_joined(
    tmp_path: Path, project: Path, data_dir: Path, env: dict[str, str], started: list
) -> None:
    """A ``plait serve`` whose PLAIT_* environment differs serves its project itself: the
    running process's settings are not its own."""
    other = tmp_path / "other"
    other.mkdir()
    process = serve(project, env, started)
    assert wait_for(lambda: healthy(data_dir, project))
    own = serve(other, {**env, "PLAIT_SERVICE__IDLE_EXIT_S": "600"}, started)
    assert wait_for(lambda: healthy(data_dir, other))
    assert announced_pid(data_dir, other) == own.pid != process.pid
    for running in (own, process):
        running.send_signal(signal.SIGTERM)
        assert running.wait(timeout=30) == 0
