"""``plait bench footprint``: what plait's processes hold for several projects used at once.

A fresh data dir; ``plait serve`` started for each project as the plugin starts it (real
processes), every project's service sent a few hook calls (a session's start and prompts)
over HTTP, then, once the services are idle, the resident memory (``VmRSS`` from ``/proc``,
Linux) of every process plait runs: the services, the embedded FalkorDB server and its reaper.
Then nothing is sent until the services' idle time has passed: how long until nothing runs.
Run with one process for every project (the default, ``service.one_process``) and with a
process per project. Nothing here is a test: the figures go to ``docs/benchmarks.md``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from plait.adapters.hosts.http import read_service_file
from plait.adapters.hosts.opencode.replay import SessionReplay
from plait.state.base.processes import pid_alive

PLAIT = str(Path(sys.executable).parent / "plait")
SETTLE_S = 3.0


@dataclass(kw_only=True)
class FootprintReport:
    """One run: the processes and what they held."""

    projects: int
    one_process: bool
    idle_exit_s: float
    rss_mb: dict[str, float] = field(default_factory=dict)  # by role: services, server, reaper
    processes: int = 0
    gone_after_s: float | None = None  # after the last hook, until nothing ran

    @property
    def total_mb(self) -> float:
        """Every process together."""
        return sum(self.rss_mb.values())


def rss_mb(pid: int) -> float:
    """A process's resident memory in MB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def wait_healthy(data: Path, project: Path, seconds: float = 120) -> str:
    """The project's service URL once it answers its health check."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        info = read_service_file(data, project)
        if info is not None:
            try:
                if httpx.get(f"{info.url}/v1/health", timeout=1).status_code == 200:
                    return info.url
            except httpx.HTTPError:
                pass
        time.sleep(0.1)
    raise RuntimeError(f"no service for {project} after {seconds:.0f} s")


@dataclass
class HttpHooks:
    """OpenCode's hook calls posted to a service, as the plugin posts them."""

    client: httpx.AsyncClient
    url: str

    async def hook(
        self, name: str, input: dict[str, Any], output: dict[str, Any]
    ) -> dict[str, Any]:
        """One hook call over HTTP."""
        answer = await self.client.post(
            f"{self.url}/v1/hooks/{name}", json={"input": input, "output": output}, timeout=30
        )
        return dict(answer.json()) if answer.status_code == 200 else output


async def use(url: str, token: str) -> None:
    """A session's start and three prompts with their model calls."""
    headers = {"authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers) as client:
        replay = SessionReplay(runner=HttpHooks(client, url))
        await replay.start()
        for turn in range(3):
            await replay.chat(f"Turn {turn}: we decided to keep module_{turn}.py small.")
            await replay.model_call()


def plait_pids(data: Path) -> dict[str, set[int]]:
    """The processes plait runs for the data dir, by role."""
    services = set()
    for path in (data / "services").glob("*.json"):
        if path.stem.startswith("_"):
            continue
        try:
            services.add(int(json.loads(path.read_text())["pid"]))
        except (OSError, ValueError, KeyError):
            continue
    roles: dict[str, set[int]] = {"services": services, "server": set(), "reaper": set()}
    try:
        recorded = json.loads((data / "falkordb" / "server.json").read_text())
        roles["server"] = {int(recorded["pid"])}
        roles["reaper"] = {int(recorded["reaper"])} if recorded.get("reaper") else set()
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return roles


def run_footprint(projects: int, *, one_process: bool, idle_exit_s: float) -> FootprintReport:
    """Start, use and measure ``projects`` projects' services; then wait for their idle exit."""
    report = FootprintReport(projects=projects, one_process=one_process, idle_exit_s=idle_exit_s)
    with tempfile.TemporaryDirectory(prefix="plait-footprint-") as scratch:
        root = Path(scratch)
        data = root / "data"
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
        env |= {
            "PLAIT_DATA_DIR": str(data),
            "PLAIT_SERVICE__ONE_PROCESS": "true" if one_process else "false",
            "PLAIT_SERVICE__IDLE_EXIT_S": str(idle_exit_s),
            "XDG_CONFIG_HOME": str(root / "xdg"),
        }
        started: list[subprocess.Popen[bytes]] = []
        try:
            for index in range(projects):
                project = root / f"project{index}"
                project.mkdir()
                started.append(
                    subprocess.Popen(
                        [PLAIT, "serve", "--project", str(project)],
                        env=env,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
                url = wait_healthy(data, project)
                asyncio.run(use(url, (data / "token").read_text().strip()))
            time.sleep(SETTLE_S)
            roles = plait_pids(data)
            report.rss_mb = {role: sum(rss_mb(pid) for pid in pids) for role, pids in roles.items()}
            report.processes = sum(len(pids) for pids in roles.values())
            every = set().union(*roles.values())
            last_hook = time.monotonic()
            deadline = last_hook + idle_exit_s + 120
            while any(pid_alive(pid) for pid in every) and time.monotonic() < deadline:
                time.sleep(0.5)
            if not any(pid_alive(pid) for pid in every):
                report.gone_after_s = time.monotonic() - last_hook + SETTLE_S
        finally:
            for process in started:
                if process.poll() is None:
                    process.terminate()
                    process.wait(timeout=60)
    return report


def render_footprint(reports: list[FootprintReport]) -> str:
    """The markdown table of the runs."""
    rows = "\n".join(
        f"| {'one for every project' if r.one_process else 'one per project'} | {r.projects} | "
        f"{r.processes} | {r.rss_mb.get('services', 0):.0f} | {r.rss_mb.get('server', 0):.0f} | "
        f"{r.rss_mb.get('reaper', 0):.0f} | **{r.total_mb:.0f}** | "
        + (f"{r.gone_after_s:.0f}" if r.gone_after_s is not None else "still running")
        + " |"
        for r in reports
    )
    return (
        "| plait serve processes | projects | processes | services MB | embedded server MB | "
        "reaper MB | all MB | nothing running after (s) |\n|---|---|---|---|---|---|---|---|\n"
        + rows
    )


__all__ = ["SETTLE_S", "FootprintReport", "render_footprint", "run_footprint"]
