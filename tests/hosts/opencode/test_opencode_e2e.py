"""plait inside real OpenCode: ``opencode run`` headless, plait's plugin, a local mock provider.

The pinned ``opencode-ai`` is installed from the npm registry once into
``~/.cache/plait-tests/opencode/<version>`` (``PLAIT_TEST_CACHE`` moves it). The plait service
runs in-process (uvicorn in a thread). Assertions are on what the provider receives.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.opencode_mock_provider import MockProvider, Reply, message_text
from support.plait_cli import PLAIT

from plait.adapters.hosts.hook_client.host import HostWire
from plait.adapters.hosts.http import load_or_create_token, project_key, serve, service_file
from plait.adapters.hosts.opencode import install_opencode
from plait.adapters.hosts.opencode.hooks import DURABLE_HOOKS, OPENCODE, WIRE, host_call
from plait.adapters.hosts.opencode.outbox import read_calls
from plait.devtools.startup import OPENCODE_VERSION, opencode_cache, opencode_env
from plait.memory import Memory
from plait.state.intents import HostCall

RUN_TIMEOUT_SECONDS = 90
MODEL_CONTEXT_TOKENS = 100_000
SUPPORT = Path(__file__).parents[2] / "support"
DENY_MESSAGE = "plait: glob over secrets is denied"
NUDGE_MESSAGE = "plait: a nudge for this download"
ENVELOPE = re.compile(r"<session_memory[^>]*>.*?</session_memory>", re.DOTALL)

E2E = [pytest.mark.opencode, pytest.mark.slow]


def e2e(test: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a test as running real OpenCode."""
    for mark in E2E:
        test = mark(test)
    return test


# -- OpenCode from npm, once ----------------------------------------------------------------------
@pytest.fixture(scope="session")
def opencode_home(opencode_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One OpenCode home (config, data, state) for the run: its database is set up once."""
    home = tmp_path_factory.mktemp("opencode-home")
    global_config = home / "config" / "opencode"
    global_config.mkdir(parents=True)
    provide_plugin_dependencies(global_config)
    return home


@pytest.fixture(scope="session")
def opencode_bin() -> Path:
    """The pinned ``opencode`` executable, installed with npm on first use."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip(f"OpenCode e2e needs node and npm on PATH (node={node}, npm={npm})")
    cache = opencode_cache()
    binary = cache / "node_modules" / ".bin" / "opencode"
    command = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"]
    if not binary.exists():
        cache.mkdir(parents=True, exist_ok=True)
        (cache / "package.json").write_text('{"private": true}\n')
        subprocess.run([*command, f"opencode-ai@{OPENCODE_VERSION}"], cwd=cache, check=True)
    deps = cache / "config-deps"
    if not (deps / "package-lock.json").exists():
        deps.mkdir(exist_ok=True)
        manifest = {"dependencies": {"@opencode-ai/plugin": OPENCODE_VERSION}}
        (deps / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
        subprocess.run(command, cwd=deps, check=True)
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == OPENCODE_VERSION
    return binary


# -- plait's service in a thread ------------------------------------------------------------------
@dataclass
class RecordingWire:
    """OpenCode's wire with scripted answers, where a test checks the plugin's side of the contract.

    Every call runs through a real ``plait.Memory``; the wire records it as it came and answers
    the plugin with known markers: an envelope first in the last user message, one appended to
    the compaction context, a deny and a nudge.
    """

    calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wire(self) -> HostWire:
        return HostWire(
            adapter=OPENCODE, call=self.call, answer=self.answer, keep_events=DURABLE_HOOKS
        )

    def call(self, name: str, payload: Any, call_id: str) -> HostCall:
        input, output = payload["input"], payload["output"]
        with self.lock:
            self.calls.append((name, json.loads(json.dumps(input)), json.loads(json.dumps(output))))
        return WIRE.call(name, payload, call_id)

    def answer(self, name: str, payload: Any, _: Any) -> dict:
        input, output = payload["input"], payload["output"]
        if name == "experimental.chat.messages.transform":
            message = output["messages"][-1]
            part = {"type": "text", "text": "<session_memory>TEST</session_memory>"}
            message["parts"].insert(0, {**part, "id": "prt_plait", "synthetic": True})
        elif name == "experimental.session.compacting":
            output["context"].append("<session_memory>COMPACTION</session_memory>")
        elif name == "tool.execute.before" and input.get("tool") == "glob":
            output["plait"] = {"action": "deny", "message": DENY_MESSAGE}
        elif name == "tool.execute.before" and "curl" in str(output.get("args", {})):
            output["plait"] = {"action": "nudge", "message": NUDGE_MESSAGE}
        return output

    def names(self) -> list[str]:
        with self.lock:
            return [name for name, _, _ in self.calls]

    def of(self, name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        with self.lock:
            return [(i, o) for n, i, o in self.calls if n == name]


class PlaitService:
    """``plait.adapters.hosts.http.serve`` on 127.0.0.1 in its own thread and event loop."""

    def __init__(
        self,
        memory: Callable[[], Awaitable[Memory]],
        data_dir: Path,
        project: Path,
        wire: HostWire = WIRE,
    ):
        self.make_memory = memory
        self.wire = wire
        self.data_dir = data_dir
        self.project = project
        self.token = load_or_create_token(data_dir)
        self.loop = asyncio.new_event_loop()
        self.task: asyncio.Task[None] | None = None
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self.main(),))
        self.error: BaseException | None = None

    async def main(self) -> None:
        memory = await self.make_memory()
        try:
            self.task = asyncio.current_task()
            await serve(
                memory,
                "127.0.0.1",
                0,
                self.token,
                data_dir=self.data_dir,
                project_dir=self.project,
                opencode=self.wire,
            )
        except asyncio.CancelledError:
            pass
        except BaseException as error:  # surfaced by url()
            self.error = error
        finally:
            await memory.aclose()

    def start(self) -> PlaitService:
        self.thread.start()
        return self

    def url(self) -> str:
        path = service_file(self.data_dir, self.project)
        deadline = time.monotonic() + 60
        while not path.exists():
            if self.error is not None or time.monotonic() > deadline:
                raise RuntimeError(f"plait service did not start: {self.error!r}")
            time.sleep(0.05)
        return json.loads(path.read_text())["url"]

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        if self.task is not None:
            self.loop.call_soon_threadsafe(self.task.cancel)
        self.thread.join(timeout=30)
        self.loop.close()


# -- a temporary OpenCode project -----------------------------------------------------------------
@dataclass
class Project:
    """A temporary project with plait's plugin installed and the mock provider configured."""

    root: Path
    home: Path
    data_dir: Path
    opencode: Path
    provider: MockProvider

    def env(
        self, plait_url: str | None, token: str | None, extra: dict[str, str | None] | None = None
    ) -> dict[str, str]:
        env = opencode_env(self.root, self.home, self.data_dir)
        env["PLAIT_NO_SPAWN"] = "1"
        if plait_url is not None:
            env["PLAIT_URL"] = plait_url
        if token is not None:
            env["PLAIT_TOKEN"] = token
        for key, value in (extra or {}).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def service(self, redis_url: str, wire: HostWire = WIRE) -> PlaitService:
        """plait's service for this project over the test's Redis, started."""

        async def memory() -> Memory:
            return await Memory.open(
                project_dir=self.root, data_dir=self.data_dir, redis={"url": redis_url}
            )

        return PlaitService(memory, self.data_dir, self.root, wire).start()

    def run(
        self,
        message: str,
        *,
        session: str | None = None,
        plait_url: str | None,
        token: str | None,
        env: dict[str, str | None] | None = None,
    ) -> str:
        """``opencode run`` once; returns the session id."""
        command = [str(self.opencode), "run", "--dir", str(self.root), "--auto"]
        command += ["-m", "mock/mock-model", "--format", "json"]
        if session is not None:
            command += ["--session", session]
        started = time.monotonic()
        result = subprocess.run(
            [*command, message],
            cwd=self.root,
            env=self.env(plait_url, token, env),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_SECONDS,
        )
        assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-3000:]
        print(f"opencode run took {time.monotonic() - started:.1f}s", flush=True)
        return session or session_id(result.stdout)


def session_id(json_lines: str) -> str:
    """The session id in ``opencode run --format json`` output."""
    for line in json_lines.splitlines():
        try:
            found = json.loads(line).get("sessionID")
        except (json.JSONDecodeError, AttributeError):
            continue
        if found:
            return str(found)
    raise AssertionError(f"no sessionID in opencode output: {json_lines[:2000]}")


def provider_config(base_url: str) -> dict[str, Any]:
    """The mock provider and model, for opencode.json."""
    model = {"name": "Mock Model", "limit": {"context": MODEL_CONTEXT_TOKENS, "output": 4096}}
    return {
        "mock": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Mock",
            "options": {"baseURL": base_url, "apiKey": "test-key"},
            "models": {"mock-model": model},
        }
    }


def provide_plugin_dependencies(config_dir: Path) -> None:
    """What OpenCode would npm-install into ``.opencode/`` on first run, copied from the cache.

    OpenCode 1.18 installs ``@opencode-ai/plugin`` into every config dir it loads; a complete
    ``node_modules`` with its ``package-lock.json`` already there saves ~5 s per new project.
    """
    template = opencode_cache() / "config-deps"
    for name in ("package.json", "package-lock.json"):
        shutil.copy(template / name, config_dir / name)
    shutil.copytree(template / "node_modules", config_dir / "node_modules", symlinks=True)


def make_project(
    tmp: Path, opencode: Path, provider: MockProvider, *, mcp: bool, home: Path | None = None
) -> Project:
    root = tmp / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "opencode.json").write_text(
        json.dumps({"autoupdate": False, "share": "disabled", "snapshot": False})
    )
    data_dir = tmp / "plait-data"
    install_opencode(root, data_dir=data_dir, command=["plait"])
    provide_plugin_dependencies(root / ".opencode")
    config = json.loads((root / "opencode.json").read_text())
    config["provider"] = provider_config(provider.base_url)
    config["model"] = config["small_model"] = "mock/mock-model"
    config["mcp"]["plait"]["enabled"] = mcp
    (root / "opencode.json").write_text(json.dumps(config, indent=2))
    return Project(root, home or tmp / "home", data_dir, opencode, provider)


@pytest.fixture
def provider() -> Iterator[MockProvider]:
    mock = MockProvider().start()
    yield mock
    mock.stop()


def after_conversation(text: str) -> str:
    """What follows the transcript in OpenCode's compaction prompt (where plugin context goes)."""
    head, marker, tail = text.rpartition("</conversation>")
    assert marker, "not a compaction prompt"
    return tail


def envelope_at_head(text: str) -> str | None:
    """The envelope a message starts with (leading whitespace and quotes ignored)."""
    match = ENVELOPE.match(text.lstrip())
    return match.group(0) if match else None


# -- the plugin's side of the contract ------------------------------------------------------------
@dataclass
class PluginScenario:
    runner: RecordingWire
    provider: MockProvider
    first_session: str
    second_session: str
    turn_one: list[Any]
    turn_two: list[Any]


@pytest.fixture(scope="module")
def plugin_scenario(
    opencode_bin: Path,
    opencode_home: Path,
    tmp_path_factory: pytest.TempPathFactory,
    redis_url: str,
) -> Iterator[PluginScenario]:
    """Turn one with a tool call, turn two in the same session overflowing into a compaction."""
    mock = MockProvider().start()
    tmp = tmp_path_factory.mktemp("plugin")
    project = make_project(tmp, opencode_bin, mock, mcp=False, home=opencode_home)
    runner = RecordingWire()

    service = project.service(redis_url, runner.wire())
    try:
        url = service.url()
        mock.script = [
            Reply(tool="bash", arguments={"command": "echo hi", "description": "Say hi"}),
            Reply(tool="glob", arguments={"pattern": "**/*.secret"}),
            Reply(text="Noted: PostgreSQL."),
        ]
        # the scenario checks where the plugin puts the service's answers, not how fast they
        # come: a budget a loaded machine cannot miss (what the plugin does without an answer,
        # its stand-ins, is tested with the service down)
        patient = {"PLAIT_TIMEOUT_MS": "5000"}
        first = project.run(
            "We decided to use PostgreSQL for storage.",
            plait_url=url,
            token=service.token,
            env=patient,
        )
        turn_one = mock.chat_requests()
        mock.clear()
        mock.script = [
            Reply(text="Big answer.", prompt_tokens=MODEL_CONTEXT_TOKENS * 2),
            Reply(text="## Objective\n- summary"),
            Reply(text="Continuing."),
        ]
        second = project.run(
            "What database?", session=first, plait_url=url, token=service.token, env=patient
        )
        turn_two = mock.chat_requests()
        yield PluginScenario(runner, mock, first, second, turn_one, turn_two)
    finally:
        service.stop()
        mock.stop()


@e2e
def test_plugin_puts_envelope_at_head_of_last_user_message(plugin_scenario: PluginScenario):
    agent_requests = [r for r in plugin_scenario.turn_one if r.tool_names]
    assert agent_requests, "no agent request reached the provider"
    for request in agent_requests:
        assert envelope_at_head(request.last_user_text()) == "<session_memory>TEST</session_memory>"
    assert "PostgreSQL" in agent_requests[0].last_user_text()


@e2e
def test_plugin_sends_documented_hook_shapes(plugin_scenario: PluginScenario):
    runner = plugin_scenario.runner
    (chat_input, chat_output), *_ = runner.of("chat.message")
    assert chat_input["sessionID"] == plugin_scenario.first_session
    assert chat_output["message"]["role"] == "user"
    assert any("PostgreSQL" in part.get("text", "") for part in chat_output["parts"])
    transform_input, transform_output = runner.of("experimental.chat.messages.transform")[0]
    assert transform_input == {}
    assert [m["info"]["role"] for m in transform_output["messages"]] == ["user"]
    before = runner.of("tool.execute.before")[0]
    assert before[0]["tool"] == "bash"
    assert before[1]["args"]["command"] == "echo hi"
    after_input, after_output = runner.of("tool.execute.after")[0]
    assert after_input["args"]["command"] == "echo hi"
    assert after_output["output"].strip() == "hi"


@e2e
def test_plugin_deny_reaches_the_model_as_tool_error(plugin_scenario: PluginScenario):
    final = plugin_scenario.turn_one[-1]
    tool_results = [m for m in final.messages if m.get("role") == "tool"]
    assert len(tool_results) == 2
    assert DENY_MESSAGE in message_text(tool_results[1])
    tools_after = [i["tool"] for i, _ in plugin_scenario.runner.of("tool.execute.after")]
    assert "glob" not in tools_after


@e2e
def test_plugin_forwards_session_events(plugin_scenario: PluginScenario):
    types = [i["event"]["type"] for i, _ in plugin_scenario.runner.of("event")]
    assert "session.created" in types
    assert "session.idle" in types
    assert "session.compacted" in types
    assert "message.part.delta" not in types
    # a finished text part is sent; what holds nothing plait reads (a message's token counts,
    # a part still streaming or running: most of what OpenCode publishes) is not
    assert "message.part.updated" in types
    received = plugin_scenario.runner.of("event")
    assert not [i for i, o in received if host_call("event", i, o).says_nothing]


@e2e
def test_plugin_puts_envelope_into_compaction_request(plugin_scenario: PluginScenario):
    compactions = [r for r in plugin_scenario.turn_two if not r.tool_names]
    assert compactions, "OpenCode did not compact"
    tail = after_conversation(compactions[0].last_user_text())
    assert "<session_memory>COMPACTION</session_memory>" in tail
    # exactly once: not also inside the conversation it summarizes (a transform runs for it)
    assert compactions[0].text().count("<session_memory>") == 1
    assert plugin_scenario.runner.of("experimental.session.compacting")[0][0] == {
        "sessionID": plugin_scenario.first_session
    }


@e2e
def test_plugin_starts_the_service_and_delivers_what_it_kept(
    opencode_bin: Path, opencode_home: Path, provider: MockProvider, tmp_path: Path, redis_url: str
):
    """No service at first: OpenCode goes on, the plugin starts one, and the first
    ``chat.message`` (sent before any service existed) arrives later through the outbox."""
    project = make_project(tmp_path, opencode_bin, provider, mcp=False, home=opencode_home)
    calls = tmp_path / "calls.jsonl"
    serve_command = [sys.executable, str(SUPPORT / "recording_serve.py"), str(calls)]
    settings = {"dataDir": str(project.data_dir), "serve": [*serve_command, str(project.data_dir)]}
    (project.root / ".opencode" / "plait.json").write_text(json.dumps(settings))
    announced = service_file(project.data_dir, project.root)
    # the service the plugin starts uses the suite's server (no embedded one to start: a busy
    # machine would spend the test's time on that)
    env = {"PLAIT_NO_SPAWN": None, "PLAIT_DATA_DIR": None, "PLAIT_REDIS__URL": redis_url}
    try:
        first = project.run("First, with no service.", plait_url=None, token=None, env=env)
        assert provider.chat_requests(), "OpenCode did not go on without plait"
        kept = kept_calls(project)  # may be flushed already if the service came up in time
        deadline = time.monotonic() + 30
        while not announced.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert announced.exists(), "the plugin did not start plait serve"
        project.run("Second.", session=first, plait_url=None, token=None, env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (
            delivered(kept, calls) and "First, with no service." in read(calls)
        ):
            time.sleep(0.1)
    finally:
        if announced.exists():
            os.kill(json.loads(announced.read_text())["pid"], signal.SIGTERM)
    recorded = [json.loads(line) for line in read(calls).splitlines()]
    chat_texts = [
        part.get("text", "")
        for call in recorded
        if call["name"] == "chat.message"
        for part in call["output"]["parts"]
    ]
    assert any("First, with no service." in text for text in chat_texts)
    assert any("Second." in text for text in chat_texts)
    assert delivered(kept, calls)


@e2e
def test_the_first_model_call_of_a_cold_start_carries_memory(
    opencode_bin: Path, opencode_home: Path, provider: MockProvider, tmp_path: Path, redis_url: str
):
    """No service, no answer kept from an earlier run (a project's first use): the plugin starts
    ``plait serve`` as it loads (here it takes over 2 s to start), and the run's first model call
    waits for it; the service primed the project's recall with the brief it seeded, so that call
    carries it. Before, it carried nothing (no service yet, and no recall until a background
    refresh ran)."""
    project = make_project(tmp_path, opencode_bin, provider, mcp=False, home=opencode_home)
    (project.root / "README.md").write_text("# Ledger\n\nLedger keeps the shop's accounts.\n")
    # a slow start (a busy machine, a cold disk): the run's first model call comes before it
    slow = f"sleep 2 && exec {shlex.quote(str(PLAIT))} serve --data-dir {shlex.quote(str(project.data_dir))}"
    serve = ["sh", "-c", slow]
    settings = {"dataDir": str(project.data_dir), "serve": serve}
    (project.root / ".opencode" / "plait.json").write_text(json.dumps(settings))
    announced = service_file(project.data_dir, project.root)
    env = {"PLAIT_NO_SPAWN": None, "PLAIT_DATA_DIR": None, "PLAIT_REDIS__URL": redis_url}
    env["PLAIT_START_WAIT_MS"] = "30000"  # a loaded CI machine starts it slowly: wait enough
    try:
        project.run(
            "We decided to use Postgres for the ledger.", plait_url=None, token=None, env=env
        )
    finally:
        deadline = time.monotonic() + 30  # the service it started is stopped, even a late one
        while not announced.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if announced.exists():
            os.kill(json.loads(announced.read_text())["pid"], signal.SIGTERM)
    requests = [r for r in provider.chat_requests() if r.tool_names]
    assert requests, "no agent request"
    envelope = envelope_at_head(requests[0].last_user_text())
    assert envelope is not None, requests[0].last_user_text()[:2000]
    assert "Project brief: Ledger" in envelope


def kept_calls(project: Project) -> list[dict[str, Any]]:
    """What the plugin keeps in its outbox for the project."""
    return read_calls(project.data_dir / "outbox" / f"{project_key(project.root)}.jsonl")


def delivered(kept: list[dict[str, Any]], calls: Path) -> bool:
    """Whether every kept event (by id) and chat message (by id) reached the service."""
    recorded = [json.loads(line) for line in read(calls).splitlines()]
    return {call_key(call) for call in kept} <= {call_key(call) for call in recorded}


def call_key(call: dict[str, Any]) -> str:
    if call["name"] == "event":
        return call["input"]["event"]["id"]
    if call["name"] == "chat.message":
        return call["output"]["message"]["id"]
    return f"{call['name']}:{call['input'].get('callID', '')}"


def read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


# -- real plait.Memory ----------------------------------------------------------------------------
@dataclass
class MemoryScenario:
    first_session: str
    turn_two: list[Any]
    turn_three: list[Any]  # with the service stopped
    new_session: list[Any]  # another session's first turn, the service still stopped


@pytest.fixture(scope="module")
def memory_scenario(
    opencode_bin: Path,
    opencode_home: Path,
    tmp_path_factory: pytest.TempPathFactory,
    redis_url: str,
) -> Iterator[MemoryScenario]:
    """Real plait.Memory: a decision in turn one; turn two overflows into a compaction."""
    mock = MockProvider().start()
    tmp = tmp_path_factory.mktemp("memory")
    project = make_project(tmp, opencode_bin, mock, mcp=False, home=opencode_home)

    service = project.service(redis_url)
    try:
        url = service.url()
        first = project.run(
            "We decided to use PostgreSQL instead of SQLite for storage. "
            "Rule: never push directly to the main branch.",
            plait_url=url,
            token=service.token,
        )
        mock.clear()
        mock.script = [
            Reply(text="Big.", prompt_tokens=MODEL_CONTEXT_TOKENS * 2),
            Reply(text="## Objective\n- summary"),
            Reply(text="Continuing."),
        ]
        project.run("Which database do we use?", session=first, plait_url=url, token=service.token)
        turn_two = mock.chat_requests()
        service.stop()  # plait stop, idle exit or a crash: nothing answers the plugin now
        mock.clear()
        mock.script = [Reply(text="Still PostgreSQL.")]
        project.run("Remind me of the database.", session=first, plait_url=url, token=service.token)
        turn_three = mock.chat_requests()
        mock.clear()
        mock.script = [Reply(text="Noted.")]
        project.run("Start the release notes.", plait_url=url, token=service.token)
        yield MemoryScenario(first, turn_two, turn_three, mock.chat_requests())
    finally:
        service.stop()
        mock.stop()


@e2e
def test_memory_envelope_carries_decision_into_next_turn(memory_scenario: MemoryScenario):
    requests = [r for r in memory_scenario.turn_two if r.tool_names]
    assert requests, "no agent request in turn two"
    last_user = requests[0].last_user_text()
    envelope = envelope_at_head(last_user)
    assert envelope is not None, last_user[:2000]
    assert re.search(r"<key_decisions>.*PostgreSQL.*</key_decisions>", envelope, re.DOTALL)
    assert "Which database do we use?" in last_user


@e2e
def test_memory_every_model_call_of_a_compacted_turn_has_memory(memory_scenario: MemoryScenario):
    """The turn that overflows: the model call before the compaction and the automatic one
    after it (OpenCode's "continue") both carry the envelope, with the decision of turn one."""
    requests = [r for r in memory_scenario.turn_two if r.tool_names]
    assert len(requests) >= 2, "no model call after the compaction"
    for request in requests:
        envelope = envelope_at_head(request.last_user_text())
        assert envelope is not None, request.last_user_text()[:2000]
        assert "PostgreSQL" in envelope


@e2e
def test_memory_with_the_service_down_the_sessions_last_envelope_stands_in(
    memory_scenario: MemoryScenario,
):
    requests = [r for r in memory_scenario.turn_three if r.tool_names]
    assert requests, "no agent request in turn three"
    last_user = requests[0].last_user_text()
    envelope = envelope_at_head(last_user)
    assert envelope is not None, last_user[:2000]
    assert "PostgreSQL" in envelope and "Remind me of the database." in last_user


@e2e
def test_memory_with_the_service_down_a_new_session_gets_the_projects_part(
    memory_scenario: MemoryScenario,
):
    """No service, a session nobody answered yet: the project's rules stand in, not what the
    other session was doing."""
    requests = [r for r in memory_scenario.new_session if r.tool_names]
    assert requests, "no agent request in the new session"
    last_user = requests[0].last_user_text()
    envelope = envelope_at_head(last_user)
    assert envelope is not None, last_user[:2000]
    assert "never push directly to the main branch" in envelope
    assert "Remind me of the database" not in envelope and "<last_request>" not in envelope


@e2e
def test_memory_envelope_goes_into_compaction(memory_scenario: MemoryScenario):
    compactions = [r for r in memory_scenario.turn_two if not r.tool_names]
    assert compactions, "OpenCode did not compact"
    found = ENVELOPE.search(after_conversation(compactions[0].last_user_text()))
    assert found is not None, compactions[0].last_user_text()[-2000:]
    assert "PostgreSQL" in found.group(0)
    assert len(ENVELOPE.findall(compactions[0].text())) == 1  # the summarizer gets it once


@e2e
def test_mcp_tools_are_offered_to_the_model(
    opencode_bin: Path, opencode_home: Path, provider: MockProvider, tmp_path: Path
):
    plait = shutil.which("plait")
    if plait is None:
        pytest.skip("the plait command is not on PATH")
    assert "mcp" in cli_command_names()  # a missing command fails, it never skips
    project = make_project(tmp_path, opencode_bin, provider, mcp=True, home=opencode_home)
    config = json.loads((project.root / "opencode.json").read_text())
    config["mcp"]["plait"]["command"][0] = plait
    (project.root / "opencode.json").write_text(json.dumps(config))
    project.run("Hello.", plait_url="http://127.0.0.1:9", token="unused")
    offered = {name for request in provider.chat_requests() for name in request.tool_names}
    assert any(name.startswith("plait_") for name in offered), sorted(offered)


@e2e
def test_global_install_is_loaded_by_opencode(
    opencode_bin: Path, provider: MockProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    home = tmp_path / "home"
    global_config = home / "config" / "opencode"
    global_config.mkdir(parents=True)
    provide_plugin_dependencies(global_config)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    data_dir = tmp_path / "plait-data"
    install_opencode(tmp_path / "project", global_=True, data_dir=data_dir, command=["plait"])
    config_file = global_config / "opencode.json"
    config = json.loads(config_file.read_text())
    config["mcp"]["plait"]["enabled"] = False
    config_file.write_text(json.dumps(config))
    root = tmp_path / "project"
    root.mkdir()
    project_config = {"snapshot": False, "provider": provider_config(provider.base_url)}
    project_config["model"] = project_config["small_model"] = "mock/mock-model"
    (root / "opencode.json").write_text(json.dumps(project_config))
    project = Project(root, home, data_dir, opencode_bin, provider)
    project.run(
        "Global install.", plait_url="http://127.0.0.1:9", token="x", env={"PLAIT_DATA_DIR": None}
    )
    kept = read_calls(data_dir / "outbox" / f"{project_key(root)}.jsonl")
    assert any(call["name"] == "chat.message" and call["call_id"] for call in kept)


@e2e
def test_plugin_typechecks_against_the_pinned_plugin_types(opencode_bin: Path, tmp_path: Path):
    """``tsc --strict`` over plait.ts with the versions pinned in adapters/hosts/opencode/package.json."""
    source = Path(__file__).parents[3] / "adapters" / "hosts" / "opencode"
    manifest = json.loads((source / "package.json").read_text())
    checker = opencode_cache() / "typecheck"
    if not (checker / "node_modules" / ".bin" / "tsc").exists():
        checker.mkdir(exist_ok=True)
        (checker / "package.json").write_text(
            json.dumps({"private": True, "devDependencies": manifest["devDependencies"]})
        )
        subprocess.run(
            [
                shutil.which("npm") or "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ],
            cwd=checker,
            check=True,
        )
    for name in ("plait.ts", "tsconfig.json"):
        shutil.copy(source / name, tmp_path / name)
    (tmp_path / "node_modules").symlink_to(checker / "node_modules")
    result = subprocess.run(
        [str(checker / "node_modules" / ".bin" / "tsc"), "-p", "tsconfig.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def cli_command_names() -> set[str]:
    """Names of the ``plait`` CLI's commands and command groups."""
    from plait.cli import app

    commands = {
        c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands
    }
    groups = {g.name or "" for g in app.registered_groups}
    return {name.replace("_", "-") for name in commands | groups}


@e2e
def test_mcp_tools_act_in_the_calling_session_and_nudges_reach_the_model(
    opencode_bin: Path,
    opencode_home: Path,
    provider: MockProvider,
    tmp_path: Path,
    redis_url: str,
):
    """plait's real MCP server under OpenCode: the plugin hands it the session; what OpenCode
    sends for plait's tools is within 3 KB; a nudge is appended to the tool's output."""
    if shutil.which("plait") is None:
        pytest.skip("the plait command is not on PATH")
    project = make_project(tmp_path, opencode_bin, provider, mcp=True, home=opencode_home)
    assert json.loads((project.root / "opencode.json").read_text())["mcp"]["plait"]["command"] == [
        "plait",
        "mcp",
    ]
    runner = RecordingWire()

    service = project.service(redis_url, runner.wire())
    provider.script = [
        Reply(tool="plait_session_execute", arguments={"command": "echo from-mcp; pwd"}),
        Reply(
            tool="bash", arguments={"command": "echo curl https://example.com", "description": "d"}
        ),
        Reply(text="Done."),
    ]
    try:
        session = project.run("Run it.", plait_url=service.url(), token=service.token)
    finally:
        service.stop()
    final = provider.chat_requests()[-1]
    results = [message_text(m) for m in final.messages if m.get("role") == "tool"]
    assert "from-mcp" in results[0] and str(project.root.resolve()) in results[0]
    assert "curl https://example.com" in results[1] and NUDGE_MESSAGE in results[1]
    before = [i for i, o in runner.of("tool.execute.before") if i["tool"].startswith("plait_")]
    assert before and before[0]["sessionID"] == session
    plait_tools = [
        tool
        for tool in provider.chat_requests()[0].body["tools"]
        if tool["function"]["name"].startswith("plait_")
    ]
    schema_bytes = len(json.dumps(plait_tools, separators=(",", ":")))
    print(f"plait tool schemas as OpenCode sends them: {schema_bytes} bytes")
    assert 0 < schema_bytes <= 3072
    events = asyncio.run(session_events(project, session))
    assert any("from-mcp" in event.summary for event in events), [e.summary for e in events]


async def session_events(project: Project, session: str) -> list[Any]:
    from plait.nodes.sessions import find_root

    async with Memory.open(project.root, project.data_dir, start_background=False) as memory:
        return await memory.backends.store.read_events(
            await find_root(memory.backends.store, session)
        )
