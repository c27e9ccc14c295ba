"""``plait bench hooks``: wall time of ``plait-hook`` per command-hook host's hook, start included.

A scratch project gets a real ``plait serve`` (embedded FalkorDB); each sample is one
``plait-hook HOST EVENT`` process fed a recorded-shape payload on stdin (the host folder's
``samples``), timed from spawn to exit, as the host runs it. Each host's last row is the
service down: the client starts nothing (``PLAIT_SERVE_COMMAND=true``) and answers without
memory, spooling what records.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import Any

from plait.devtools.bench import Timing, percentiles

WARM_UP = 5
SERVE_WAIT_S = 120.0
# each command-hook host: its name for plait-hook → its folder under adapters/hosts
HOSTS = {"claude-code": "claude_code", "codex": "codex", "gemini": "gemini"}
Sample = tuple[str, dict[str, Any], bool]


def samples_of(host: str) -> list[Sample]:
    """The host's sample calls (``adapters/hosts/<folder>/samples.py``)."""
    module = import_module(f"plait.adapters.hosts.{HOSTS[host]}.samples")
    calls: list[Sample] = module.SAMPLE_CALLS
    return calls


def hook_command(host: str, event: str, keep: bool) -> list[str]:
    """``plait-hook HOST EVENT`` beside this Python (the installed console script)."""
    script = Path(sys.executable).parent / "plait-hook"
    return [str(script), host, event, *(["--keep"] if keep else [])]


def time_hook(
    host: str, event: str, body: dict[str, Any], keep: bool, cwd: Path, env: dict[str, str]
) -> float:
    """Milliseconds from spawning one hook process to its exit."""
    payload = json.dumps({"session_id": "bench", "hook_event_name": event, **body}).encode()
    command = hook_command(host, event, keep)
    started = time.perf_counter()
    subprocess.run(command, input=payload, cwd=cwd, env=env, capture_output=True)
    return (time.perf_counter() - started) * 1000


def sample(rounds: int, measure: Callable[[], float]) -> list[float]:
    """``rounds`` measurements after the warm-up ones."""
    return [measure() for _ in range(rounds + WARM_UP)][WARM_UP:]


def wait_for_service(data: Path) -> bool:
    """Whether the project's service announced itself in time."""
    deadline = time.monotonic() + SERVE_WAIT_S
    while time.monotonic() < deadline:
        if list((data / "services").glob("*.json")):
            return True
        time.sleep(0.1)
    return False


def run_hook_bench(rounds: int, hosts: tuple[str, ...] = tuple(HOSTS)) -> list[Timing]:
    """Each host's every event with the service up, then one recording event with it down."""
    with tempfile.TemporaryDirectory(prefix="plait-bench-hooks-") as scratch:
        project, data = Path(scratch) / "project", Path(scratch) / "data"
        project.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
        env |= {"PLAIT_DATA_DIR": str(data), "PLAIT_SERVE_COMMAND": "true"}
        plait = Path(sys.executable).parent / "plait"
        service = subprocess.Popen(
            [str(plait), "serve", "--project", str(project)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            if not wait_for_service(data):
                raise RuntimeError("plait serve did not come up for the hook bench")
            timings = [
                percentiles(
                    f"{host} {event} (service up)",
                    sample(rounds, partial(time_hook, host, event, body, keep, project, env)),
                )
                for host in hosts
                for event, body, keep in samples_of(host)
            ]
        finally:
            service.terminate()
            service.wait(timeout=30)
        down_env = env | {"PLAIT_DATA_DIR": str(Path(scratch) / "no-service")}
        for host in hosts:
            prompt, body, _ = samples_of(host)[1]
            down = sample(rounds, partial(time_hook, host, prompt, body, True, project, down_env))
            timings.append(percentiles(f"{host} {prompt} (service down, spooled)", down))
        return timings


__all__ = ["HOSTS", "run_hook_bench", "samples_of"]
