"""The embedded FalkorDB server: persisted, shared by processes on one data dir, clear failures."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from plait.adapters.backends.embedded import EmbeddedFalkorDB, answers_ping, pid_alive
from plait.state.base.errors import BackendUnavailable


def test_embedded_server_runs_falkordb_and_persists_across_restarts(tmp_data_dir: Path) -> None:
    with EmbeddedFalkorDB(tmp_data_dir) as server:
        client = redis.Redis.from_url(server.url)
        client.set("plait:test", "kept")
        result = client.execute_command("GRAPH.QUERY", "g", "CREATE (:Fact {name: 'x'}) RETURN 1")
        assert result[0] == [b"1"]
        client.close()
    with EmbeddedFalkorDB(tmp_data_dir) as server:
        client = redis.Redis.from_url(server.url)
        assert client.get("plait:test") == b"kept"
        rows = client.execute_command("GRAPH.QUERY", "g", "MATCH (f:Fact) RETURN f.name")
        assert rows[1] == [[b"x"]]
        client.close()


def test_embedded_server_is_shared_and_the_last_user_stops_it(tmp_data_dir: Path) -> None:
    first = EmbeddedFalkorDB(tmp_data_dir)
    second = EmbeddedFalkorDB(tmp_data_dir)
    info = first.start()
    assert second.start().port == info.port
    assert first.owner and not second.owner
    first.stop()
    assert pid_alive(info.pid)
    assert answers_ping(info)
    second.stop()
    assert not (tmp_data_dir / "falkordb" / "server.json").exists()
    deadline = time.monotonic() + 30
    while pid_alive(info.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not pid_alive(info.pid)


def test_embedded_server_is_reused_by_another_process(tmp_data_dir: Path) -> None:
    with EmbeddedFalkorDB(tmp_data_dir) as server:
        code = (
            "from pathlib import Path; from plait.adapters.backends.embedded import EmbeddedFalkorDB;"
            f"s = EmbeddedFalkorDB(Path({str(tmp_data_dir)!r})); i = s.start();"
            "print(i.port, s.owner); s.stop()"
        )
        output = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
        assert output == [str(server.info.port), "False"]
        assert redis.Redis.from_url(server.url).ping()


def test_embedded_server_password_file_is_private(tmp_data_dir: Path) -> None:
    with EmbeddedFalkorDB(tmp_data_dir):
        mode = (tmp_data_dir / "falkordb" / "password").stat().st_mode & 0o777
    assert mode == 0o600


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_embedded_server_unwritable_data_dir_is_a_clear_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(BackendUnavailable, match="not usable"):
        EmbeddedFalkorDB(locked / "data").start()


def test_embedded_server_data_dir_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("not a directory")
    with pytest.raises(BackendUnavailable, match="data dir .* is not usable"):
        EmbeddedFalkorDB(blocker).start()


def wait_gone(pid: int, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not pid_alive(pid)


def holder(data_dir: Path) -> subprocess.Popen[str]:
    """A process that starts (or joins) the server, says so, then sleeps: it never stops it."""
    code = (
        "import time; from pathlib import Path; "
        "from plait.adapters.backends.embedded import EmbeddedFalkorDB; "
        f"server = EmbeddedFalkorDB(Path({str(data_dir)!r})); server.start(); print('up', flush=True); "
        "time.sleep(120)"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "up"
    return process


def test_embedded_server_stops_when_its_only_user_is_killed(tmp_data_dir: Path) -> None:
    """A process that dies without stop() (SIGKILL) leaves nothing running: the reaper stops it."""
    process = holder(tmp_data_dir)
    recorded = json.loads((tmp_data_dir / "falkordb" / "server.json").read_text())
    assert pid_alive(recorded["reaper"])
    process.kill()
    process.wait()
    assert wait_gone(recorded["pid"]), "the server outlived the last process that used it"
    assert wait_gone(recorded["reaper"])
    assert not (tmp_data_dir / "falkordb" / "server.json").exists()


def test_embedded_server_stops_when_its_user_is_killed_and_its_data_dir_deleted(
    tmp_path: Path,
) -> None:
    """A script that used a temporary data dir, deleted it and died: nothing is left running."""
    data_dir = tmp_path / "scratch-data"
    process = holder(data_dir)
    recorded = json.loads((data_dir / "falkordb" / "server.json").read_text())
    process.kill()
    process.wait()
    shutil.rmtree(data_dir)
    assert wait_gone(recorded["pid"]), "the server outlived its user and its deleted data dir"
    assert wait_gone(recorded["reaper"])


def test_embedded_server_waits_for_every_user_and_replaces_a_dead_reaper(
    tmp_data_dir: Path,
) -> None:
    first = holder(tmp_data_dir)
    recorded = json.loads((tmp_data_dir / "falkordb" / "server.json").read_text())
    os.kill(recorded["reaper"], signal.SIGKILL)
    assert wait_gone(recorded["reaper"])
    second = holder(tmp_data_dir)  # joins the server, and starts a new reaper
    replaced = json.loads((tmp_data_dir / "falkordb" / "server.json").read_text())
    assert replaced["pid"] == recorded["pid"] and replaced["reaper"] != recorded["reaper"]
    first.kill()
    first.wait()
    time.sleep(1.5)
    assert pid_alive(recorded["pid"]), "stopped while a process still used it"
    second.kill()
    second.wait()
    assert wait_gone(recorded["pid"])


def test_embedded_server_stop_by_the_last_user_ends_the_process(tmp_data_dir: Path) -> None:
    server = EmbeddedFalkorDB(tmp_data_dir)
    info = server.start()
    server.stop()
    assert not (tmp_data_dir / "falkordb" / "server.json").exists()
    assert wait_gone(info.pid)
