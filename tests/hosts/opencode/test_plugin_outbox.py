"""The plugin's outbox follows the service: a call kept while the service was gone is delivered
to the service that replaces it, on its new port, with no further hook call from OpenCode.

The real plugin (``plait.ts`` as JavaScript) runs in Node; the services are real ``plait
serve`` processes. The first is killed with SIGKILL, so its service file still names its old
port; the second starts on another port.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.local_web import free_port

from plait import Memory
from plait.adapters.hosts.http import service_file
from plait.devtools.node_plugin import plugin_as_javascript
from plait.state.groups import project_key

PLAIT = str(Path(sys.executable).parent / "plait")
DRIVER = Path(__file__).parents[2] / "support" / "outbox_driver.mjs"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js"),
]


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen]]:
    processes: list[subprocess.Popen] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()


def serve(project: Path, env: dict[str, str], started: list[subprocess.Popen]) -> str:
    """A ``plait serve`` for the project; its URL once it announced itself."""
    path = service_file(Path(env["PLAIT_DATA_DIR"]), project)
    before = path.read_text() if path.exists() else ""
    process = subprocess.Popen(
        [PLAIT, "serve", "--project", str(project)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    started.append(process)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists() and path.read_text() not in ("", before):
            return json.loads(path.read_text())["url"]
        time.sleep(0.05)
    raise AssertionError("plait serve did not start")


async def test_a_kept_call_follows_the_service_to_its_new_port(
    tmp_path: Path, redis_url: str, started: list[subprocess.Popen]
) -> None:
    project, data = tmp_path / "project", tmp_path / "data"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAIT_", "XDG_CONFIG"))}
    env.update(
        PLAIT_DATA_DIR=str(data),
        PLAIT_REDIS__URL=redis_url,
        PLAIT_SERVE_COMMAND=json.dumps(["true"]),  # the plugin must not start one itself here
        XDG_CONFIG_HOME=str(tmp_path / "xdg"),
        OUTBOX_KEY=project_key(project),
    )
    first_url = serve(project, env, started)
    plugin = plugin_as_javascript(tmp_path / "plait.mjs")
    session = f"ses_{uuid.uuid4().hex[:12]}"
    driver = subprocess.Popen(
        ["node", str(DRIVER), str(plugin), session],
        cwd=project,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    started.append(driver)
    assert driver.stdin is not None and driver.stdout is not None
    assert driver.stdout.readline().strip() == "sent"
    started[0].kill()  # SIGKILL: its service file still names its port
    started[0].wait()
    driver.stdin.write("again\n")
    driver.stdin.flush()
    assert driver.stdout.readline().strip() == "kept"
    second_url = serve(project, env, started)
    assert second_url != first_url
    assert driver.stdout.readline().strip() == "flushed", "the outbox waited for a new hook call"
    driver.wait(timeout=30)
    async with Memory.open(
        project, data, start_background=False, redis={"url": redis_url}
    ) as memory:
        events = await memory.backends.store.read_events(session)
    prompts = [event.body for event in events if event.kind == "prompt"]
    assert prompts == ["We decided to use Postgres.", "Rule: money is always Decimal."]


async def test_calls_go_to_the_next_listed_replica_when_one_is_down(
    tmp_path: Path, redis_url: str, started: list[subprocess.Popen]
) -> None:
    """``PLAIT_URL`` lists two replicas of a shared service and the first is down: the call it
    could not take is kept and delivered to the second, in order, with no further hook call."""
    project, data = tmp_path / "project", tmp_path / "data"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAIT_", "XDG_CONFIG"))}
    env.update(
        PLAIT_DATA_DIR=str(data),
        PLAIT_REDIS__URL=redis_url,
        PLAIT_SERVE_COMMAND=json.dumps(["true"]),
        XDG_CONFIG_HOME=str(tmp_path / "xdg"),
        OUTBOX_KEY=project_key(project),
    )
    live = serve(project, env, started)
    env.update(
        PLAIT_URL=f"http://127.0.0.1:{free_port()},{live}",
        PLAIT_TOKEN=(data / "token").read_text().strip(),
    )
    plugin = plugin_as_javascript(tmp_path / "plait.mjs")
    session = f"ses_{uuid.uuid4().hex[:12]}"
    driver = subprocess.Popen(
        ["node", str(DRIVER), str(plugin), session],
        cwd=project,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    started.append(driver)
    assert driver.stdin is not None and driver.stdout is not None
    assert driver.stdout.readline().strip() == "sent"
    driver.stdin.write("again\n")
    driver.stdin.flush()
    assert driver.stdout.readline().strip() in ("kept", "delivered")
    assert driver.stdout.readline().strip() == "flushed"
    driver.wait(timeout=30)
    async with Memory.open(
        project, data, start_background=False, redis={"url": redis_url}
    ) as memory:
        events = await memory.backends.store.read_events(session)
    prompts = [event.body for event in events if event.kind == "prompt"]
    assert prompts == ["We decided to use Postgres.", "Rule: money is always Decimal."]
