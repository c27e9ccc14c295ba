"""plait inside real Gemini CLI: ``gemini -p`` headless, plait's extension, a local mock model.

The pinned ``@google/gemini-cli`` runs offline against :class:`GeminiMock` with a scratch
``HOME``; plait is installed with ``plait gemini install`` (the CLI, as a person runs it) and
``plait serve`` runs as a real process over the test's embedded FalkorDB. Gemini CLI escapes
the context hooks add (``&lt;session_memory&gt;``): the assertions read it unescaped.
"""

from __future__ import annotations

import html
import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.hosts import BIN, ENVELOPE, HostProject, npm_binary
from support.model_mocks import GeminiMock

GEMINI_VERSION = "0.61.0"
RUN_TIMEOUT_SECONDS = 120
pytestmark = [pytest.mark.gemini, pytest.mark.slow]
SETTINGS = """{
  // the test's Gemini CLI: an API key (the mock's), nothing sent anywhere; kept by plait
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
"""


@pytest.fixture(scope="session")
def host_bin() -> Path:
    """The pinned ``gemini`` executable."""
    return npm_binary("@google/gemini-cli", GEMINI_VERSION, "gemini")


class Project(HostProject):
    """A project, and plait installed as the scratch user's Gemini CLI extension."""

    def __init__(
        self, tmp_path: Path, redis_url: str, model_url: str, gemini: Path, settings: str = SETTINGS
    ) -> None:
        super().__init__(tmp_path, redis_url)
        self.gemini = gemini
        (self.home / ".gemini").mkdir()
        (self.home / ".gemini" / "settings.json").write_text(settings)
        self.env.update(GOOGLE_GEMINI_BASE_URL=model_url, GEMINI_API_KEY="test-key")
        command = [str(BIN / "plait"), "gemini", "install"]
        subprocess.run(command, cwd=self.root, env=self.env, check=True, capture_output=True)

    def run(self, prompt: str, *more: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        """One headless turn (``env``: variables for it only); Gemini CLI's JSON result."""
        command = [str(self.gemini), "-p", prompt, "--yolo", "--skip-trust", *more]
        command += ["--output-format", "json"]
        out = self.execute(command, RUN_TIMEOUT_SECONDS, env)
        result: dict[str, Any] = json.loads(out[out.index("{") :])
        return result


def model_mock() -> GeminiMock:
    """The mock model this module's tests talk to (the ``host_model`` fixture)."""
    return GeminiMock(lambda body: "Noted.")


def envelopes(request: dict[str, Any]) -> str:
    """The ``<session_memory>`` blocks plait's hooks put in one request, unescaped."""
    contents = html.unescape(json.dumps(request.get("contents", [])).replace('\\"', '"'))
    return "\n".join(ENVELOPE.findall(contents))


def test_gemini_carries_memory_across_runs_and_a_dead_service(
    host_project: Project, host_model: GeminiMock
) -> None:
    host_project.serve()
    host_project.run("We decided to use Postgres for the ledger, never SQLite.")
    assert any(envelopes(r) for r in host_model.seen()), "no envelope reached the model"
    assert "memory_search" in json.dumps(host_model.seen()[0].get("tools")), "plait's MCP tools"

    seen = len(host_model.seen())
    host_project.run("Which database do we use for the ledger?", "--resume", "latest")
    assert any("Postgres" in envelopes(r) for r in host_model.seen()[seen:])
    # the prompt Gemini CLI folded SessionStart's context into was recorded without it
    assert not any("hook_context" in envelopes(r) for r in host_model.seen())

    host_project.kill_services(signal.SIGKILL)
    seen = len(host_model.seen())
    # a turn with no service at all (the hooks start none): what stands in is the standby
    nothing_starts = {"PLAIT_SERVE_COMMAND": "true"}
    said = "We also decided to queue jobs on Redis streams."
    host_project.run(said, "--resume", "latest", env=nothing_starts)
    # no service answered this turn's hooks: the session's standby answers carried its memory
    assert "Postgres" in envelopes({"contents": host_model.seen()[seen]["contents"][-1:]})
    host_project.serve()  # back: it runs what the hooks kept on disk meanwhile
    host_project.run("What do we queue jobs on?", "--resume", "latest")
    assert "Redis streams" in envelopes(host_model.seen()[-1])
    host_project.stop_services()
    assert not host_project.running()


SNAPSHOT = "<state_snapshot>The user asked for small things; nothing else matters.</state_snapshot>"


def compressing(body: dict[str, Any]) -> bool:
    """Whether a request is Gemini CLI's summarizer (its compression prompt)."""
    return "state_snapshot" in json.dumps(body.get("systemInstruction", ""))


def test_gemini_compression_loses_the_history_and_plaits_context_keeps_the_decision(
    tmp_path: Path, redis_url: str, host_bin: Path
) -> None:
    """Gemini CLI compresses the resumed session before its next model call (a low
    ``model.compressionThreshold``, as a person may set it): the summary the model writes has
    forgotten the decision, and the same call still carries it in plait's context."""
    low = SETTINGS.replace(
        '"telemetry"', '"model": {"compressionThreshold": 0.0001},\n  "telemetry"'
    )
    with (
        GeminiMock(lambda body: SNAPSHOT if compressing(body) else "Noted.") as model,
        Project(tmp_path, redis_url, model.url, host_bin, low) as project,
    ):
        project.serve()
        project.run("We decided to keep the ledger in Postgres, never SQLite.")
        seen = len(model.seen())
        project.run("Add the invoice total to the summary page.", "--resume", "latest")
        later = model.seen()[seen:]
        summarized = [n for n, request in enumerate(later) if compressing(request)]
        assert summarized, "Gemini CLI did not compress the resumed session"
        after = next(r for r in later[summarized[-1] + 1 :] if not compressing(r))
        history = html.unescape(json.dumps(after.get("contents", [])).replace('\\"', '"'))
        assert "nothing else matters" in history  # the compressed history: the summary,
        assert "Postgres" not in ENVELOPE.sub("", history)  # the decision gone from it,
        assert "Postgres" in envelopes(after)  # and plait's context, which kept it
        project.stop_services()
        assert not project.running()


def call(name: str, **args: Any) -> dict[str, Any]:
    """A function call the mock model makes."""
    return {"functionCall": {"name": name, "args": args}}


FAILING = "echo subagent-ran-the-suite; exit 37"


def delegating(body: dict[str, Any]) -> str | dict[str, Any]:
    """The main agent hands the tests to the generalist subagent, which runs them and reports."""
    said = json.dumps(body.get("contents", []))
    if "complete_task" in json.dumps(body.get("tools", [])):  # the subagent's own calls
        if "run_shell_command" not in said:
            return call("run_shell_command", command=FAILING)
        return call("complete_task", result={"response": "the suite fails"})
    last = json.dumps(body.get("contents", [])[-1:])
    if "functionResponse" in last:
        return "The subagent reports the suite fails."
    if "Delegate" in last:
        return call("invoke_agent", agent_name="generalist", prompt="Run the suite; report.")
    return "Noted."


def test_gemini_subagent_steps_are_remembered_in_the_root_session(
    tmp_path: Path, redis_url: str, host_bin: Path
) -> None:
    """The main agent delegates to Gemini CLI's generalist subagent (``invoke_agent``), whose
    shell command fails; the next turn's envelope of the root session carries that error."""
    with (
        GeminiMock(delegating) as model,
        Project(tmp_path, redis_url, model.url, host_bin) as project,
    ):
        project.serve()
        project.run("Delegate running the test suite to a subagent.")
        subagent = [r for r in model.seen() if "complete_task" in json.dumps(r.get("tools", []))]
        assert len(subagent) >= 2, "Gemini CLI ran no subagent"
        seen = len(model.seen())
        project.run("What failed?", "--resume", "latest")
        # the command the subagent ran failed: an unresolved error of the root session now
        assert "Exit Code: 37" in envelopes(model.seen()[seen])
        project.stop_services()
        assert not project.running()
