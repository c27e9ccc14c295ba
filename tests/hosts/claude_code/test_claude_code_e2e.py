"""plait inside real Claude Code: ``claude -p`` headless, plait's hooks, a local mock model.

The pinned ``@anthropic-ai/claude-code`` runs offline against :class:`AnthropicMock` with a
scratch ``HOME``; plait is installed in the project with ``plait claude-code install`` and
``plait serve`` runs as a real process over the test's embedded FalkorDB. Assertions are on
what the model receives and what plait stored.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from support.hosts import ENVELOPE, HostProject, npm_binary, wait_for
from support.model_mocks import AnthropicMock

from plait.adapters.hosts.claude_code.install import install_claude_code

CLAUDE_CODE_VERSION = "2.1.331"
RUN_TIMEOUT_SECONDS = 120
pytestmark = [pytest.mark.claude_code, pytest.mark.slow]


@pytest.fixture(scope="session")
def host_bin() -> Path:
    """The pinned ``claude`` executable."""
    return npm_binary("@anthropic-ai/claude-code", CLAUDE_CODE_VERSION, "claude")


def reply(body: dict[str, Any]) -> str:
    """The scripted model: a summary when Claude Code compacts (it asks in the last user turn)."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    if users and "<summary>" in json.dumps(users[-1]):
        return "<summary>We chose Postgres for the ledger.</summary>"
    return "Noted."


class Project(HostProject):
    """A project with plait installed for Claude Code."""

    def __init__(self, tmp_path: Path, redis_url: str, model_url: str, claude: Path) -> None:
        super().__init__(tmp_path, redis_url)
        self.claude = claude
        install_claude_code(self.root, backup_dir=tmp_path / "backups")
        self.env.update(
            ANTHROPIC_BASE_URL=model_url,
            ANTHROPIC_API_KEY="sk-ant-test-key",
            DISABLE_TELEMETRY="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_ERROR_REPORTING="1",
            IS_SANDBOX="1",
        )

    def run(self, prompt: str, *more: str) -> dict[str, Any]:
        """One headless turn; Claude Code's JSON result."""
        command = [str(self.claude), "-p", prompt, "--dangerously-skip-permissions", *more]
        command += ["--output-format", "json"]
        out = self.execute(command, RUN_TIMEOUT_SECONDS)
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return result


def model_mock() -> AnthropicMock:
    """The mock model this module's tests talk to (the ``host_model`` fixture)."""
    return AnthropicMock(reply)


def texts(request: dict[str, Any]) -> str:
    """Everything the model was sent in one request (system, messages), as text."""
    return json.dumps({"system": request.get("system"), "messages": request.get("messages")})


def envelopes(request: dict[str, Any]) -> str:
    """The ``<session_memory>`` blocks plait's hooks put in one request."""
    return "\n".join(ENVELOPE.findall(texts(request)))


def test_claude_code_carries_memory_across_runs_compaction_and_a_dead_service(
    host_project: Project, host_model: AnthropicMock
) -> None:
    host_project.serve()
    first = host_project.run("We decided to use Postgres for the ledger, never SQLite.")
    session = first["session_id"]
    assert any("<session_memory" in texts(r) for r in host_model.seen()), "no envelope reached it"
    # Claude Code 2.1 offers MCP tools deferred: by name, for its ToolSearch tool to load
    offered = json.dumps(host_model.seen()[0])
    assert "mcp__plait__memory_search" in offered and "## plait" in offered

    seen = len(host_model.seen())
    again = host_project.run("Which database do we use for the ledger?", "--resume", session)
    later = host_model.seen()[seen:]
    assert again["session_id"] == session
    assert any("Postgres" in envelopes(r) for r in later)

    seen = len(host_model.seen())
    host_project.run("/compact", "--resume", session)
    host_project.run("And what did we rule out?", "--resume", session)
    after = host_model.seen()[seen:]
    assert any(reply(r).startswith("<summary>") for r in after), "no compaction ran"
    # the summary names Postgres only: what was ruled out comes back through plait
    assert "SQLite" not in json.dumps(after[-1]["messages"][0]) and "SQLite" in envelopes(after[-1])

    host_project.kill_services(signal.SIGKILL)
    down = host_project.run("We also decided to queue jobs on Redis streams.", "--resume", session)
    assert down["session_id"] == session and not down.get("is_error")
    assert wait_for(host_project.serving)
    stored = host_project.run("What do we queue jobs on?", "--resume", session)
    assert not stored.get("is_error")
    assert "Redis streams" in envelopes(host_model.seen()[-1])
    host_project.stop_services()
    assert not host_project.running()
