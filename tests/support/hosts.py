"""What the real-host end-to-end tests share: the pinned CLI from npm, a project, its service.

A host's CLI is installed from the npm registry once into
``~/.cache/plait-tests/<name>/<version>`` (``PLAIT_TEST_CACHE`` moves it). A
:class:`HostProject` is a scratch project with its own ``HOME`` and data dir, the environment
a host runs in (plait's console scripts first on PATH), and ``plait serve`` as a real process
over the test's embedded FalkorDB.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Self

import pytest

from plait.adapters.hosts.http.lifecycle import service_states, terminate

BIN = Path(sys.executable).parent
ENVELOPE = re.compile(r"<session_memory.*?</session_memory>", re.DOTALL)


def npm_binary(package: str, version: str, binary: str) -> Path:
    """The pinned host CLI, installed with npm on first use (skips without node and npm)."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip(f"{package} e2e needs node and npm on PATH")
    base = os.environ.get("PLAIT_TEST_CACHE") or Path.home() / ".cache" / "plait-tests"
    cache = Path(base) / package.rsplit("/", 1)[-1] / version
    found = cache / "node_modules" / ".bin" / binary
    if not found.exists():
        cache.mkdir(parents=True, exist_ok=True)
        (cache / "package.json").write_text('{"private": true}\n')
        command = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"]
        subprocess.run([*command, f"{package}@{version}"], cwd=cache, check=True)
    shown = subprocess.run([found, "--version"], capture_output=True, text=True, check=True)
    assert version in shown.stdout, shown.stdout
    return found


def wait_for(condition: Callable[[], bool], seconds: float = 60) -> bool:
    """Whether ``condition`` came true within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


class HostProject:
    """A project, its data dir and ``HOME``, and the environment its host runs in.

    As a context manager it ends the services of its data dir when done.
    """

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_services()

    def __init__(self, tmp_path: Path, redis_url: str) -> None:
        self.root, self.data, self.home = (tmp_path / name for name in ("project", "data", "home"))
        for folder in (self.root, self.data, self.home):
            folder.mkdir()
        keep = ("PATH", "LANG", "TERM")
        self.env = {k: v for k, v in os.environ.items() if k in keep or k.startswith("LC_")}
        self.env.update(
            PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
            HOME=str(self.home),
            PLAIT_DATA_DIR=str(self.data),
            PLAIT_REDIS__URL=redis_url,
            PLAIT_GRAPHITI__GROUP_ID_PREFIX=f"t{uuid.uuid4().hex[:10]}",
        )

    def execute(
        self, command: list[str], timeout: float = 120, env: dict[str, str] | None = None
    ) -> str:
        """Run a host's headless turn in the project (it must succeed); its standard output.

        ``env``: variables to set for this turn only.
        """
        done = subprocess.run(
            command,
            cwd=self.root,
            env=self.env | (env or {}),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def serve(self) -> subprocess.Popen[bytes]:
        """``plait serve`` for the project, answering."""
        process = subprocess.Popen(
            [str(BIN / "plait"), "serve", "--project", str(self.root)],
            cwd=self.root,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert wait_for(self.serving)
        return process

    def serving(self) -> bool:
        """Whether a ``plait serve`` of the data dir is up and answering."""
        return any(state.running and state.url for state in service_states(self.data))

    def running(self) -> bool:
        """Whether any ``plait serve`` of the data dir is still running."""
        return any(state.running for state in service_states(self.data))

    def kill_services(self, signal_number: int) -> None:
        """Send a signal to every ``plait serve`` of the data dir."""
        for state in service_states(self.data):
            if state.running and state.pid is not None:
                os.kill(state.pid, signal_number)

    def stop_services(self) -> None:
        """End every ``plait serve`` of the data dir (the hook client may have started one)."""
        for state in service_states(self.data):
            if state.running and state.pid is not None:
                terminate(state.pid)


__all__ = ["BIN", "ENVELOPE", "HostProject", "npm_binary", "wait_for"]
