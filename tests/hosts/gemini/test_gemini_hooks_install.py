"""Gemini CLI's hook payloads (as 0.61.0 sends them) → intents and answers; its install, doctor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.plait_cli import invoke_plait as plait
from typer.testing import CliRunner

from plait.adapters.hosts.gemini.health import gemini_checks
from plait.adapters.hosts.gemini.hooks import COMMAND_HOST, EVENTS
from plait.adapters.hosts.gemini.install import extension_dir, settings_path
from plait.adapters.hosts.opencode import jsonc
from plait.cli import app
from plait.state.base.errors import UnknownHook
from plait.state.intents import AssistantText, ModelCall, SessionLifecycle, ToolResult, UserTurn

SESSION = "5aba0cec-7795-4576-be60-3bc00f9c44d9"
SETTINGS = """{
  // mine: kept
  "security": {"auth": {"selectedType": "gemini-api-key"}}
}
"""


def payload(event: str, **fields: Any) -> dict[str, Any]:
    common = {"session_id": SESSION, "transcript_path": "/t.jsonl", "cwd": "/p"}
    return common | {"hook_event_name": event, "timestamp": "2026-11-25T05:15:36.824Z"} | fields


def test_a_prompt_is_read_without_the_context_folded_into_it() -> None:
    folded = "<hook_context>&lt;session_memory&gt;x&lt;/session_memory&gt;</hook_context>\n\nUse Postgres"
    call = COMMAND_HOST.call("BeforeAgent", payload("BeforeAgent", prompt=folded), "c1")
    assert call.durable
    assert call.payload == (UserTurn(text="Use Postgres"), ModelCall(query="Use Postgres"))


def test_tool_results_answers_and_refusals() -> None:
    shell = payload(
        "AfterTool",
        tool_name="run_shell_command",
        tool_input={"command": "pytest"},
        tool_response={"llmContent": "Output: 1 failed", "returnDisplay": "", "error": "exit 1"},
    )
    (result,) = COMMAND_HOST.call("AfterTool", shell, "").payload
    assert isinstance(result, ToolResult) and result.tool == "bash" and result.exit_code == 1
    assert "1 failed" in result.output
    edit = payload("BeforeTool", tool_name="replace", tool_input={"file_path": "src/a.py"})
    assert COMMAND_HOST.call("BeforeTool", edit, "").target.files == ("src/a.py",)
    done = payload("AfterAgent", prompt="p", prompt_response="Done.", stop_hook_active=False)
    assert COMMAND_HOST.call("AfterAgent", done, "").payload == (
        AssistantText(text="Done."),
        SessionLifecycle(phase="idle"),
    )
    with pytest.raises(UnknownHook, match="Gemini CLI"):
        COMMAND_HOST.call("PreCompress", payload("PreCompress", trigger="auto"), "")
    inject = {"inject": "<session_memory>x</session_memory>"}
    for event in ("SessionStart", "BeforeAgent", "AfterTool"):
        context = COMMAND_HOST.answer(event, {}, inject)["hookSpecificOutput"]
        assert context == {"hookEventName": event, "additionalContext": inject["inject"]}
    assert COMMAND_HOST.answer("AfterAgent", {}, inject) == {}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PLAIT_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "home" / ".gemini").mkdir(parents=True)
    return tmp_path / "home"


def test_install_is_an_extension_and_uninstall_leaves_what_was_there(home: Path) -> None:
    assert [c.status for c in gemini_checks(home)] == ["unavailable"]
    settings_path().write_text(SETTINGS)
    plait("gemini", "install", "--project", str(home))
    hooks = json.loads((extension_dir() / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == set(EVENTS)
    assert hooks["BeforeAgent"][0]["hooks"][0]["command"] == "plait-hook gemini BeforeAgent --keep"
    assert hooks["BeforeAgent"][0]["hooks"][0]["timeout"] == 10_000  # milliseconds
    manifest = json.loads((extension_dir() / "gemini-extension.json").read_text())
    assert manifest["name"] == "plait" and manifest["mcpServers"]["plait"]["args"] == ["mcp"]
    settings = settings_path().read_text()
    assert "// mine: kept" in settings
    assert jsonc.loads(settings, "s")["hooksConfig"] == {"enabled": True}
    assert [c.status for c in gemini_checks(home)] == ["ok", "ok"]
    plait("gemini", "install", "--project", str(home))  # again: the same
    plait("gemini", "uninstall", "--project", str(home))
    assert not extension_dir().exists()
    assert settings_path().read_text() == SETTINGS


def test_doctor_tells_hooks_switched_off_and_a_broken_settings_is_refused(home: Path) -> None:
    plait("gemini", "install", "--project", str(home))
    settings_path().write_text('{"hooksConfig": {"enabled": false}}')
    assert "switched off" in gemini_checks(home)[0].detail
    settings_path().write_text("{broken")
    result = CliRunner().invoke(app, ["gemini", "uninstall", "--project", str(home)])
    assert result.exit_code != 0 and "settings.json" in result.output
    assert extension_dir().exists()  # nothing removed
