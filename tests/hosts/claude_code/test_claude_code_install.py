"""``plait claude-code install`` / ``uninstall`` through the CLI, on real files, and the doctor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.plait_cli import invoke_plait as plait
from typer.testing import CliRunner

from plait.adapters.hosts.claude_code.health import claude_code_checks
from plait.adapters.hosts.claude_code.hooks import EVENTS
from plait.cli import app

USER_SETTINGS = """{
  // my own settings, kept
  "model": "opus",
  "permissions": {"allow": ["Bash(ls)"]}
}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PLAIT_DATA_DIR", str(tmp_path / "data"))
    folder = tmp_path / "project"
    (folder / ".claude").mkdir(parents=True)
    return folder


def commands(settings: dict) -> dict[str, list[str]]:
    return {
        event: [hook["command"] for group in groups for hook in group["hooks"]]
        for event, groups in settings["hooks"].items()
    }


def test_claude_code_install_adds_hooks_and_mcp_and_uninstall_restores_the_file(
    project: Path,
) -> None:
    settings = project / ".claude" / "settings.json"
    settings.write_text(USER_SETTINGS)
    plait("claude-code", "install", "--project", str(project))
    import json5

    written = json5.loads(settings.read_text())
    assert written["model"] == "opus" and "// my own settings" in settings.read_text()
    assert commands(written)["UserPromptSubmit"] == [
        "plait-hook claude-code UserPromptSubmit --keep"
    ]
    assert commands(written)["PreToolUse"] == ["plait-hook claude-code PreToolUse"]
    assert set(written["hooks"]) == set(EVENTS)
    mcp = json.loads((project / ".mcp.json").read_text())
    assert mcp["mcpServers"]["plait"] == {"type": "stdio", "command": "plait", "args": ["mcp"]}
    assert str(project) not in settings.read_text() + (project / ".mcp.json").read_text()
    assert "nothing to change" in plait("claude-code", "install", "--project", str(project))
    plait("claude-code", "uninstall", "--project", str(project))
    assert settings.read_text() == USER_SETTINGS
    assert not (project / ".mcp.json").exists()


def test_claude_code_install_keeps_the_users_own_hooks(project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    mine = {"type": "command", "command": "echo done"}
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [mine]}]}}))
    plait("claude-code", "install", "--project", str(project))
    assert commands(json.loads(settings.read_text()))["Stop"] == [
        "echo done",
        "plait-hook claude-code Stop --keep",
    ]
    plait("claude-code", "uninstall", "--project", str(project))
    assert json.loads(settings.read_text()) == {"hooks": {"Stop": [{"hooks": [mine]}]}}


def test_claude_code_install_writes_nothing_when_a_file_is_broken(project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.write_text('{"model": "opus",')
    result = CliRunner().invoke(app, ["claude-code", "install", "--project", str(project)])
    assert result.exit_code != 0 and "settings.json" in result.output
    assert settings.read_text() == '{"model": "opus",'
    assert not (project / ".mcp.json").exists()


def test_claude_code_global_install_goes_to_the_users_files(project: Path) -> None:
    plait("claude-code", "install", "--global", "--project", str(project))
    home = Path.home()
    assert "plait-hook" in (home / ".claude" / "settings.json").read_text()
    assert "plait" in json.loads((home / ".claude.json").read_text())["mcpServers"]
    assert not (project / ".mcp.json").exists()


def test_doctor_sees_claude_code_installed_twice(project: Path) -> None:
    assert claude_code_checks(project)[0].required is False
    plait("claude-code", "install", "--project", str(project))
    assert "claude-code hooks" in {check.component for check in claude_code_checks(project)}
    plait("claude-code", "install", "--global", "--project", str(project))
    [hooks] = [c for c in claude_code_checks(project) if c.component == "claude-code hooks"]
    assert hooks.status == "unavailable" and "twice" in hooks.detail
