"""The plugin's outbox follows the service: a call kept while the service was gone is delivered
to the service that replaces it, on its new port, with no further hook call from OpenCode.

The real plugin (``plait.ts`` as JavaScript) runs in Node; the services are real ``plait
serve`` processes. The first is killed with SIGKILL, so its service file still names its old
port; the second starts on another port.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from support.local_web import free_port
from support.plait_cli import start_serve

from plait import Memory
from plait.adapters.hosts.opencode.outbox import read_calls
from plait.devtools.node_plugin import plugin_as_javascript
from plait.state.groups import project_key

DRIVER = Path(__file__).parents[2] / "support" / "outbox_driver.mjs"
REPLICA_DRIVER = DRIVER.with_name("replica_driver.mjs")
HOLD_DRIVER = DRIVER.with_name("hold_driver.mjs")

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
    process, url = start_serve(project, env)
    started.append(process)
    return url


def node_driver(
    script: Path,
    tmp_path: Path,
    env: dict[str, str],
    started: list[subprocess.Popen],
    *args: str,
) -> subprocess.Popen[str]:
    """A Node driver ``script`` of the real plugin (``tmp_path/plait.mjs``), talking by lines."""
    plugin = plugin_as_javascript(tmp_path / "plait.mjs")
    process = subprocess.Popen(
        ["node", str(script), str(plugin), *args],
        cwd=tmp_path / "project",
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    started.append(process)
    return process


def plugin_env(tmp_path: Path, redis_url: str) -> dict[str, str]:
    """The plugin's and the services' environment for ``tmp_path/project`` (made here)."""
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
    return env


def new_session() -> str:
    """A fresh OpenCode session id."""
    return f"ses_{uuid.uuid4().hex[:12]}"


def replica_of(session: str, listed: int) -> int:
    """The listed replica the plugin starts a session at (its ``spread``)."""
    return int(hashlib.sha256(session.encode()).hexdigest()[:8], 16) % listed


def drive(
    tmp_path: Path, env: dict[str, str], started: list[subprocess.Popen], session: str = ""
) -> Driver:
    """The real plugin in Node for one session (a new one by default); it has sent its first
    prompt."""
    session = session or new_session()
    driver = Driver(node_driver(DRIVER, tmp_path, env, started, session), session)
    assert driver.said() == "sent"
    return driver


@dataclass
class Driver:
    """``outbox_driver.mjs`` running: what it says, and the second prompt on demand."""

    process: subprocess.Popen[str]
    session: str

    def said(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def again(self) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write("again\n")
        self.process.stdin.flush()
        return self.said()


async def prompts_of(tmp_path: Path, redis_url: str, session: str) -> list[str]:
    """What the session's recorded prompts say, in order."""
    project, data = tmp_path / "project", tmp_path / "data"
    async with Memory.open(
        project, data, start_background=False, redis={"url": redis_url}
    ) as memory:
        events = await memory.backends.store.read_events(session)
    return [event.body for event in events if event.kind == "prompt"]


SAID = ["We decided to use Postgres.", "Rule: money is always Decimal."]


async def test_a_kept_call_follows_the_service_to_its_new_port(
    tmp_path: Path, redis_url: str, started: list[subprocess.Popen]
) -> None:
    env = plugin_env(tmp_path, redis_url)
    first_url = serve(tmp_path / "project", env, started)
    driver = drive(tmp_path, env, started)
    started[0].kill()  # SIGKILL: its service file still names its port
    started[0].wait()
    assert driver.again() == "kept"
    outbox = tmp_path / "data" / "outbox" / f"{env['OUTBOX_KEY']}.jsonl"
    assert "Decimal" not in outbox.read_text()  # sealed: what the user typed is not on disk
    assert (outbox.parent / "sealing.key").stat().st_mode & 0o777 == 0o600
    kept = read_calls(outbox)  # the service's reader opens what the plugin sealed
    assert [call["name"] for call in kept] == ["chat.message"]
    assert SAID[1] in json.dumps(kept[0]["output"]) and kept[0]["call_id"]
    second_url = serve(tmp_path / "project", env, started)
    assert second_url != first_url
    assert driver.said() == "flushed", "the outbox waited for a new hook call"
    driver.process.wait(timeout=30)
    assert await prompts_of(tmp_path, redis_url, driver.session) == SAID


async def test_calls_go_to_the_next_listed_replica_when_one_is_down(
    tmp_path: Path, redis_url: str, started: list[subprocess.Popen]
) -> None:
    """``PLAIT_URL`` lists two replicas of a shared service and the one the session starts at
    (picked by its id) is down: the call it could not take is kept and delivered to the other,
    in order (here the next prompt reaches the other replica and the outbox follows it; the
    test above covers no further call)."""
    env = plugin_env(tmp_path, redis_url)
    live = serve(tmp_path / "project", env, started)
    session = new_session()
    listed = [live, live]
    listed[replica_of(session, 2)] = f"http://127.0.0.1:{free_port()}"  # where it starts
    env.update(
        PLAIT_URL=",".join(listed),
        PLAIT_TOKEN=(tmp_path / "data" / "token").read_text().strip(),
    )
    driver = drive(tmp_path, env, started, session)
    assert driver.again() in ("kept", "delivered")
    assert driver.said() == "flushed"
    driver.process.wait(timeout=30)
    assert await prompts_of(tmp_path, redis_url, driver.session) == SAID


def second_replica(tmp_path: Path, env: dict[str, str], started: list[subprocess.Popen]) -> str:
    """Another ``plait serve`` of the project on the same Redis, with a data dir of its own and
    the first's token (as a team runs replicas); its URL."""
    other_data = tmp_path / "data-2"
    other_data.mkdir(mode=0o700)
    (other_data / "token").write_text((tmp_path / "data" / "token").read_text())
    (other_data / "token").chmod(0o600)
    return serve(tmp_path / "project", dict(env, PLAIT_DATA_DIR=str(other_data)), started)


def kept_line(session: str, text: str, to: str, key: bytes | None = None) -> str:
    """An outbox line as a plugin sending to replica ``to`` keeps a prompt of ``session``
    (sealed with ``key`` as the plugin seals it, when given; as older plugins kept it, if not)."""
    info = {"id": f"msg_{uuid.uuid4().hex[:8]}", "sessionID": session, "role": "user"}
    part = {"type": "text", "text": text, "sessionID": session, "messageID": info["id"]}
    call = {
        "name": "chat.message",
        "input": {"sessionID": session},
        "output": {"message": info, "parts": [part]},
        "call_id": str(uuid.uuid4()),
        "to": to,
    }
    if key is not None:
        nonce, body = os.urandom(12), json.dumps({k: call[k] for k in ("name", "input", "output")})
        text = AESGCM(key).encrypt(nonce, body.encode(), call["call_id"].encode())
        call = {"call_id": call["call_id"], "sealed": base64.b64encode(nonce + text).decode()}
    return json.dumps(call) + "\n"


async def test_kept_calls_go_to_the_replica_they_were_kept_for(
    tmp_path: Path, redis_url: str, started: list[subprocess.Popen]
) -> None:
    """Two live replicas share the outbox of a project: calls an OpenCode process kept for the
    second (its session's earlier calls may still be in that replica's lane) are sent to the
    second, even by a plugin whose own session goes to the first; its own call to the first.
    Each session's prompts are recorded once, in order."""
    env = plugin_env(tmp_path, redis_url)
    first = serve(tmp_path / "project", env, started)
    token = (tmp_path / "data" / "token").read_text()
    second = second_replica(tmp_path, env, started)
    earlier, session = new_session(), new_session()
    while replica_of(session, 2) != 0:  # this plugin's session starts at the first
        session = new_session()
    outbox = tmp_path / "data" / "outbox" / f"{env['OUTBOX_KEY']}.jsonl"
    outbox.parent.mkdir(parents=True, mode=0o700)
    outbox.write_text("".join(kept_line(earlier, text, second) for text in SAID))
    env.update(PLAIT_URL=f"{first},{second}", PLAIT_TOKEN=token.strip())
    driver = subprocess.run(
        ["node", str(REPLICA_DRIVER), str(plugin_as_javascript(tmp_path / "plait.mjs")), session],
        cwd=tmp_path / "project",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    batches = json.loads(driver.stdout.strip().splitlines()[-1])
    assert batches.get(second, 0) >= 1, batches  # the kept calls went to their replica
    assert await prompts_of(tmp_path, redis_url, earlier) == SAID
    assert await prompts_of(tmp_path, redis_url, session) == ["Rule: money is always Decimal."]


async def test_a_session_waits_for_the_replica_that_holds_its_earlier_calls(
    tmp_path: Path, redis_url: str, started: list[subprocess.Popen]
) -> None:
    """A replica answered a prompt "spooled" (its lane behind: the call waits in its spool) and
    then died. The session's next prompt must not be stored by the other replica before the
    first replica records the first when it is back: the plugin keeps it for that replica and
    sends it there once it answers again, so both are recorded in order; the other replica gets
    none of them. Before, the next prompt went straight to the other replica."""
    env = plugin_env(tmp_path, redis_url)
    port = free_port()
    first_env = dict(env, PLAIT_SERVICE__PORT=str(port))
    first = serve(tmp_path / "project", first_env, started)
    token = (tmp_path / "data" / "token").read_text()
    second = second_replica(tmp_path, env, started)
    session = new_session()
    while replica_of(session, 2) != 0:  # it starts at the first
        session = new_session()
    env.update(PLAIT_URL=f"{first},{second}", PLAIT_TOKEN=token.strip())
    driver = node_driver(HOLD_DRIVER, tmp_path, env, started, session, first)
    assert driver.stdin is not None and driver.stdout is not None

    def ask(line: str) -> str:
        driver.stdin.write(line + "\n")
        driver.stdin.flush()
        return driver.stdout.readline().strip()

    assert ask(f"say {SAID[0]}") == first  # answered "spooled" by the first
    serving = started[0]
    serving.kill()
    serving.wait(timeout=30)
    assert ask(f"say {SAID[1]}") == "kept"  # not sent to the second
    time.sleep(1.5)  # the plugin tries to flush meanwhile: the first does not answer
    assert serve(tmp_path / "project", first_env, started) == first  # back on its port
    batches = json.loads(ask("wait"))
    assert batches.get(first, 0) >= 1 and second not in batches, batches
    ask("end")
    driver.wait(timeout=30)
    assert await prompts_of(tmp_path, redis_url, session) == SAID


async def test_only_the_session_with_calls_in_the_outbox_waits_behind_them(
    tmp_path: Path, redis_url: str, started: list[subprocess.Popen]
) -> None:
    """The outbox holds a call of one session that cannot go yet (another plugin of the project
    holds the outbox's lock). Another session's prompt goes straight to the service; a new
    plugin of the first session (OpenCode started again) keeps its prompt behind the waiting
    call, and both are recorded in order once the outbox goes. Before, every session of the
    project queued behind any call in the outbox (under load, a single timeout sent every
    later call of every session through the outbox)."""
    env = plugin_env(tmp_path, redis_url)
    serve(tmp_path / "project", env, started)
    waiting, other = new_session(), new_session()
    outbox = tmp_path / "data" / "outbox" / f"{env['OUTBOX_KEY']}.jsonl"
    outbox.parent.mkdir(parents=True, mode=0o700)
    outbox.write_text(kept_line(waiting, "Earlier: the API is versioned.", ""))
    lock = outbox.with_name(outbox.name + ".lock")
    lock.write_text("another plugin")

    drive(tmp_path, env, started, other)
    deadline = time.monotonic() + 10  # a slow machine may answer the plugin late: it is kept
    while await prompts_of(tmp_path, redis_url, other) != SAID[:1] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert await prompts_of(tmp_path, redis_url, other) == SAID[:1]  # not behind the outbox
    assert outbox.exists()

    resumed = drive(tmp_path, env, started, waiting)
    assert await prompts_of(tmp_path, redis_url, waiting) == []  # behind its earlier call
    lock.unlink()
    assert resumed.again() in ("kept", "delivered")
    assert resumed.said() == "flushed"
    assert await prompts_of(tmp_path, redis_url, waiting) == [
        "Earlier: the API is versioned.",
        *SAID,
    ]


async def test_the_service_sends_what_opencode_left_in_the_outbox(
    tmp_path: Path, redis_url: str, started: list[subprocess.Popen]
) -> None:
    """OpenCode exited with calls in the plugin's outbox (events in flight as it closed) and no
    OpenCode runs in the project now: the running service sends them itself, in order, once
    the outbox has been left alone a few seconds. Before, they waited for the next OpenCode
    run of the project."""
    env = plugin_env(tmp_path, redis_url)
    serve(tmp_path / "project", env, started)
    session = new_session()
    outbox = tmp_path / "data" / "outbox" / f"{env['OUTBOX_KEY']}.jsonl"
    outbox.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    key = os.urandom(32)
    (outbox.parent / "sealing.key").write_text(base64.b64encode(key).decode())
    outbox.write_text("".join(kept_line(session, text, "", key) for text in SAID))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and await prompts_of(tmp_path, redis_url, session) != SAID:
        time.sleep(0.5)
    assert await prompts_of(tmp_path, redis_url, session) == SAID
    assert not outbox.exists() and not outbox.with_name(outbox.name + ".sending").exists()
    assert not outbox.with_name(outbox.name + ".lock").exists()
