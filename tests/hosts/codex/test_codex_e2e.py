"""plait inside real Codex: ``codex exec`` headless, plait's trusted hooks, a local mock model.

The pinned ``@openai/codex`` runs offline against :class:`ResponsesMock` (a custom model
provider in the scratch Codex home's ``config.toml``); plait is installed in the project with
``plait codex install`` (the CLI, as a person runs it), which declares its hooks trusted: no ``--dangerously-bypass-hook-trust``
here, so a wrong trust hash fails the test. ``plait serve`` runs as a real process over the
test's embedded FalkorDB. Assertions are on what the model receives and what plait stored.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.hosts import BIN, ENVELOPE, HostProject, npm_binary, wait_for
from support.model_mocks import ResponsesMock

CODEX_VERSION = "0.169.0"
RUN_TIMEOUT_SECONDS = 120
pytestmark = [pytest.mark.codex, pytest.mark.slow]
PROVIDER = """\
# the test's model: a local mock of the Responses API (kept by plait's install)
model = "mock-model"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
"""


@pytest.fixture(scope="session")
def host_bin() -> Path:
    """The pinned ``codex`` executable."""
    return npm_binary("@openai/codex", CODEX_VERSION, "codex")


def reply(body: dict[str, Any]) -> str:
    """The scripted model: a summary when Codex compacts, else a short answer."""
    if "summary" in json.dumps(body.get("input", [])[-1:]).lower():
        return "We chose Postgres for the ledger."
    return "Noted."


class Project(HostProject):
    """A project with plait installed for Codex, and Codex's home pointed at the mock."""

    def __init__(self, tmp_path: Path, redis_url: str, model_url: str, codex: Path) -> None:
        super().__init__(tmp_path, redis_url)
        self.codex = codex
        self.codex_home = self.home / ".codex"
        self.codex_home.mkdir()
        (self.codex_home / "config.toml").write_text(PROVIDER.format(url=model_url))
        self.env.update(CODEX_HOME=str(self.codex_home), MOCK_API_KEY="sk-test-key")
        # as a person would: the CLI, in the project, with this Codex home
        command = [str(BIN / "plait"), "codex", "install"]
        subprocess.run(command, cwd=self.root, env=self.env, check=True, capture_output=True)

    def run(self, prompt: str, session: str = "", *config: str) -> list[dict[str, Any]]:
        """One headless turn (going on with ``session``, if given); Codex's JSON events.

        ``config``: ``key=value`` overrides of Codex's settings for this run.
        """
        command = [str(self.codex), "exec", "--json", "--skip-git-repo-check", "--trust"]
        for setting in ("features.plugins=false", *config):
            command += ["-c", setting]
        command += ["resume", session, prompt] if session else [prompt]
        out = self.execute(command, RUN_TIMEOUT_SECONDS)
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def thread_of(events: list[dict[str, Any]]) -> str:
    """The session id Codex reports for a run."""
    return next(str(e["thread_id"]) for e in events if e.get("type") == "thread.started")


def model_mock() -> ResponsesMock:
    """The mock model this module's tests talk to (the ``host_model`` fixture)."""
    return ResponsesMock(reply)


def envelopes(request: dict[str, Any]) -> str:
    """The ``<session_memory>`` blocks plait's hooks put in one request."""
    return "\n".join(ENVELOPE.findall(json.dumps(request.get("input", []))))


def compacting(request: dict[str, Any]) -> bool:
    """Whether a request is Codex asking for its compaction summary."""
    return "COMPACTION" in json.dumps(request.get("input", [])[-1:])


def test_codex_carries_memory_across_runs_compaction_and_a_dead_service(
    host_project: Project, host_model: ResponsesMock
) -> None:
    host_project.serve()
    session = thread_of(
        host_project.run("We decided to use Postgres for the ledger, never SQLite.")
    )
    assert any(envelopes(r) for r in host_model.seen()), "no envelope reached the model"
    assert "memory_search" in json.dumps(host_model.seen()[0].get("tools")), "plait's MCP tools"

    seen = len(host_model.seen())
    again = host_project.run("Which database do we use for the ledger?", session)
    assert thread_of(again) == session
    assert any("Postgres" in envelopes(r) for r in host_model.seen()[seen:])

    seen = len(host_model.seen())
    host_project.run("And what did we rule out?", session, "model_auto_compact_token_limit=5")
    after = host_model.seen()[seen:]
    summarized = next(i for i, r in enumerate(after) if compacting(r))
    resumed = after[summarized + 1]  # the first call on the compacted history
    assert "SQLite" not in reply(after[summarized])  # the summary drops it: plait brings it back
    assert "SQLite" in envelopes(resumed)

    host_project.kill_services(signal.SIGKILL)
    host_project.run("We also decided to queue jobs on Redis streams.", session)
    assert wait_for(host_project.serving)
    host_project.run("What do we queue jobs on?", session)
    assert "Redis streams" in envelopes(host_model.seen()[-1])
    host_project.stop_services()
    assert not host_project.running()


SUBAGENT_TASK = "Run the test suite and report what fails."


def function_call(number: int, name: str, **args: Any) -> dict[str, Any]:
    """A Responses function call (the sub-agent tools are in the ``multi_agent_v1`` namespace)."""
    namespaced = {"namespace": "multi_agent_v1"} if name != "exec_command" else {}
    return {
        "type": "function_call",
        "id": f"fc_{number}",
        "call_id": f"call_{number}",
        "name": name,
        "arguments": json.dumps(args),
        **namespaced,
    }


def delegating(body: dict[str, Any]) -> Any:
    """The main agent spawns a sub-agent and waits for it; the sub-agent runs a failing command."""
    items = body.get("input", [])
    said, last = json.dumps(items), items[-1] if items else {}
    asked = [json.dumps(i) for i in items if i.get("role") == "user"]
    if any(SUBAGENT_TASK in text for text in asked) and not any("Delegate" in t for t in asked):
        if "exit 37" not in said:  # the sub-agent's own thread
            command = {"cmd": "echo subagent-ran-the-suite; exit 37"}
            return function_call(90, "exec_command") | {"arguments": json.dumps(command)}
        return "The suite fails with exit 37."
    if last.get("type") == "function_call_output" and "agent_id" in str(last.get("output")):
        agent = json.loads(last["output"])["agent_id"]
        return function_call(2, "wait_agent", targets=[agent], timeout_ms=60_000)
    if last.get("type") == "function_call_output":
        return "The sub-agent reports that the suite fails."
    if "Delegate" in json.dumps(last):
        return function_call(1, "spawn_agent", message=SUBAGENT_TASK)
    return "Noted."


def test_codex_subagent_is_folded_into_its_root_session(
    tmp_path: Path, redis_url: str, host_bin: Path
) -> None:
    """The main agent spawns a Codex sub-agent (``features.multi_agent``), a thread of its own
    that runs a failing command and reports; the root session's next envelope says what the
    sub-agent found."""
    with (
        ResponsesMock(delegating) as model,
        Project(tmp_path, redis_url, model.url, host_bin) as project,
    ):
        project.serve()
        multi_agent = "features.multi_agent=true"
        events = project.run("Delegate the test run to a sub-agent.", "", multi_agent)
        spawned = [e["item"] for e in events if e.get("item", {}).get("tool") == "spawn_agent"]
        assert any(item.get("receiver_thread_ids") for item in spawned), "no sub-agent ran"
        seen = len(model.seen())
        project.run("What failed?", thread_of(events), multi_agent)
        latest = envelopes(model.seen()[seen]).split("<session_memory")[-1]
        assert "What failed?" in latest and "subagent done" in latest
        assert "found: The suite fails with exit 37." in latest
        project.stop_services()
        assert not project.running()
