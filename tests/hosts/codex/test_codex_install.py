"""``plait codex install`` / ``uninstall`` through the CLI, on real files, and the doctor."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from support.plait_cli import invoke_plait as plait
from typer.testing import CliRunner

from plait.adapters.hosts.codex.health import codex_checks
from plait.adapters.hosts.codex.hooks import EVENTS
from plait.adapters.hosts.codex.install import hook_group, trust_hash
from plait.cli import app

USER_CONFIG = """\
# my Codex settings: kept as written
model = "gpt-5"  # the one I like

[projects."/elsewhere"]
trust_level = "trusted"
"""
USER_HOOK = {"hooks": [{"type": "command", "command": "my-linter", "timeout": 5}]}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    codex = tmp_path / "codex-home"
    codex.mkdir()
    (codex / "config.toml").write_text(USER_CONFIG)
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.setenv("PLAIT_DATA_DIR", str(tmp_path / "data"))
    return codex


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".codex").mkdir(parents=True)
    return folder


def test_the_trust_hash_is_the_one_codex_computes() -> None:
    # figures Codex 0.169.0 itself reported (`codex app-server`, hooks/list → currentHash)
    group = {
        "matcher": "*",
        "hooks": [{"type": "command", "command": "plait-hook codex PreToolUse", "timeout": 10}],
    }
    assert trust_hash("PreToolUse", group, group["hooks"][0]) == (
        "sha256:166e141305a9748fafce6786728bc5c74bf6ce43126fb58710a37cdf9ba013bd"
    )
    command = "plait-hook codex UserPromptSubmit --keep"
    group = {"hooks": [{"type": "command", "command": command, "timeout": 10}]}
    assert trust_hash("UserPromptSubmit", group, group["hooks"][0]) == (
        "sha256:11ef722cec69f00d7e56e9337f882689e4db56eecec4bebf269ec33050245e81"
    )


def test_install_writes_trusted_hooks_and_uninstall_takes_exactly_them_out(
    home: Path, project: Path
) -> None:
    hooks_file = project / ".codex" / "hooks.json"
    mine = json.dumps({"hooks": {"PreToolUse": [USER_HOOK]}}, indent=2) + "\n"
    hooks_file.write_text(mine)
    plait("codex", "install", "--project", str(project))

    hooks = json.loads(hooks_file.read_text())["hooks"]
    assert set(hooks) == set(EVENTS)
    assert hooks["PreToolUse"] == [USER_HOOK, hook_group("PreToolUse")]  # the user's stays first
    assert "/" not in hooks_file.read_text().replace("\\/", "")  # no path of this machine
    servers = tomllib.loads((project / ".codex" / "config.toml").read_text())["mcp_servers"]
    assert servers["plait"] == {"command": "plait", "args": ["mcp"]}
    user = (home / "config.toml").read_text()
    assert user.startswith(USER_CONFIG.rstrip("\n"))  # comments and layout kept
    state = tomllib.loads(user)["hooks"]["state"]
    key = f"{hooks_file}:pre_tool_use:1:0"
    assert state[key]["trusted_hash"] == trust_hash(
        "PreToolUse", hook_group("PreToolUse"), hook_group("PreToolUse")["hooks"][0]
    )
    assert len(state) == len(EVENTS)
    files = [hooks_file, project / ".codex" / "config.toml", home / "config.toml"]
    before = [path.read_text() for path in files]
    plait("codex", "install", "--project", str(project))
    assert [path.read_text() for path in files] == before  # a second install changes nothing

    plait("codex", "uninstall", "--project", str(project))
    assert hooks_file.read_text() == mine
    assert (home / "config.toml").read_text() == USER_CONFIG
    assert not (project / ".codex" / "config.toml").exists()


def test_uninstall_moves_the_trust_of_a_hook_that_moves_up(home: Path, project: Path) -> None:
    hooks_file = project / ".codex" / "hooks.json"
    plait("codex", "install", "--project", str(project))
    hooks = json.loads(hooks_file.read_text())
    hooks["hooks"]["Stop"].append(USER_HOOK)  # the user's hook after plait's
    hooks_file.write_text(json.dumps(hooks))
    with (home / "config.toml").open("a") as config:
        config.write(f'\n[hooks.state."{hooks_file}:stop:1:0"]\ntrusted_hash = "sha256:mine"\n')
    plait("codex", "uninstall", "--project", str(project))
    assert json.loads(hooks_file.read_text()) == {"hooks": {"Stop": [USER_HOOK]}}
    state = tomllib.loads((home / "config.toml").read_text())["hooks"]["state"]
    assert state == {f"{hooks_file}:stop:0:0": {"trusted_hash": "sha256:mine"}}


def test_a_broken_file_is_refused_and_nothing_is_written(home: Path, project: Path) -> None:
    (home / "config.toml").write_text("model = [unclosed\n")
    result = CliRunner().invoke(app, ["codex", "install", "--project", str(project)])
    assert result.exit_code != 0 and "config.toml" in result.output
    assert not (project / ".codex" / "hooks.json").exists()
    assert (home / "config.toml").read_text() == "model = [unclosed\n"


def test_doctor_tells_an_untrusted_project_and_a_stale_trust(home: Path, project: Path) -> None:
    assert [c.status for c in codex_checks(project)] == ["unavailable"]  # not installed: fine
    assert not codex_checks(project)[0].required
    plait("codex", "install", "--project", str(project))
    hooks = codex_checks(project)[0]
    assert hooks.status == "unavailable" and "--trust" in hooks.detail
    with (home / "config.toml").open("a") as config:
        config.write(f'\n[projects."{project.resolve()}"]\ntrust_level = "trusted"\n')
    assert [c.status for c in codex_checks(project)] == ["ok", "ok"]
    hooks_file = project / ".codex" / "hooks.json"
    changed = hooks_file.read_text().replace('"timeout": 10', '"timeout": 11', 1)
    hooks_file.write_text(changed)  # Codex would now see a modified, untrusted hook
    stale = codex_checks(project)[0]
    assert stale.status == "unavailable" and "does not trust" in stale.detail


def test_global_install_keeps_everything_in_the_codex_home(home: Path, project: Path) -> None:
    plait("codex", "install", "--global", "--project", str(project))
    assert not (project / ".codex" / "hooks.json").exists()
    config = tomllib.loads((home / "config.toml").read_text())
    assert config["mcp_servers"]["plait"]["command"] == "plait"
    assert len(config["hooks"]["state"]) == len(EVENTS)
    assert [c.status for c in codex_checks(project)] == ["ok", "ok"]
    plait("codex", "uninstall", "--global", "--project", str(project))
    assert (home / "config.toml").read_text() == USER_CONFIG
    assert not (home / "hooks.json").exists()


def test_install_offers_the_projects_past_sessions(home: Path, project: Path) -> None:
    day = home / "sessions" / "2026" / "11" / "25"
    day.mkdir(parents=True)
    meta = {"type": "session_meta", "payload": {"id": "s1", "cwd": str(project.resolve())}}
    (day / "rollout-2026-11-25T05-04-11-s1.jsonl").write_text(json.dumps(meta) + "\n")
    said = plait("codex", "install", "--project", str(project))
    assert "1 past session(s)" in said and "plait import-history --host codex" in said
