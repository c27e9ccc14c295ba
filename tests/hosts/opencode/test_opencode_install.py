"""``plait opencode install`` / ``uninstall``: no machine paths in project files, JSONC kept."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plait.adapters.hosts.opencode import install_opencode, uninstall_opencode
from plait.adapters.hosts.opencode.jsonc import loads, remove_member, set_member
from plait.cli import app
from plait.state.base.errors import ConfigError

ENTRY = {"type": "local", "command": ["plait", "mcp"], "enabled": True}
COMMENTED = """// Team config: committed, reviewed.
{
  /* the model everyone uses */
  "model": "anthropic/claude", // pinned
  "mcp": {
    // our docs server
    "docs": {"type": "remote", "url": "https://docs.example"},
  },
}
"""


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("PLAIT_DATA_DIR", str(tmp_path / "data"))


def machine_paths(text: str, *paths: Path) -> list[str]:
    return [str(path) for path in paths if str(path) in text]


def test_install_into_commented_jsonc_keeps_every_comment(project: Path, tmp_path: Path) -> None:
    config = project / "opencode.jsonc"
    config.write_text(COMMENTED)
    report = install_opencode(project)
    text = config.read_text()
    for line in COMMENTED.splitlines():
        assert line in text, line  # every original line, comments and trailing commas included
    assert loads(text)["mcp"]["plait"] == ENTRY
    assert loads(text)["mcp"]["docs"]["url"] == "https://docs.example"
    assert config in report.written and not (project / "opencode.json").exists()
    assert report.backups and report.backups[0].read_text() == COMMENTED


def test_install_writes_no_path_of_this_machine(project: Path, tmp_path: Path) -> None:
    report = install_opencode(project)
    files = [project / "opencode.json", *(project / ".opencode").rglob("*")]
    checked = [path for path in files if path.is_file()]
    assert set(report.written) <= set(checked) and len(checked) >= 2, checked  # config and plugin
    for path in checked:
        text = path.read_text()
        assert not machine_paths(text, tmp_path, Path.home(), Path(os.sys.executable).parent)
    assert not (project / ".opencode" / "plait.json").exists()
    assert loads((project / "opencode.json").read_text())["mcp"]["plait"] == ENTRY


def test_uninstall_removes_exactly_what_install_added(project: Path) -> None:
    config = project / "opencode.jsonc"
    config.write_text(COMMENTED)
    install_opencode(project)
    report = uninstall_opencode(project)
    assert config.read_text() == COMMENTED
    assert not (project / ".opencode" / "plugins" / "plait.ts").exists()
    assert project / ".opencode" / "plugins" / "plait.ts" in report.written


def test_uninstall_of_a_created_config_removes_the_file(project: Path) -> None:
    install_opencode(project)
    uninstall_opencode(project)
    assert not (project / "opencode.json").exists()


def test_install_twice_changes_nothing_the_second_time(project: Path) -> None:
    install_opencode(project)
    contents = {p: p.read_text() for p in project.rglob("*") if p.is_file()}
    second = install_opencode(project)
    assert second.changes == [] and second.backups == []
    assert {p: p.read_text() for p in project.rglob("*") if p.is_file()} == contents


def test_reinstall_over_an_edited_plugin_backs_it_up(project: Path) -> None:
    install_opencode(project)
    plugin = project / ".opencode" / "plugins" / "plait.ts"
    plugin.write_text(plugin.read_text() + "\n// my local tweak\n")
    report = install_opencode(project)
    assert "my local tweak" not in plugin.read_text()
    assert any("my local tweak" in backup.read_text() for backup in report.backups)
    assert any("had changes" in note for note in report.notes)


def test_install_refuses_a_foreign_plugin_file(project: Path) -> None:
    foreign = project / ".opencode" / "plugins" / "plait.ts"
    foreign.parent.mkdir(parents=True)
    foreign.write_text("export default {}\n")
    with pytest.raises(ConfigError, match="not plait's plugin"):
        install_opencode(project)
    assert foreign.read_text() == "export default {}\n"


def test_install_replaces_an_old_install_with_machine_paths(project: Path) -> None:
    old = project / ".opencode" / "plait.json"
    old.parent.mkdir()
    old.write_text(json.dumps({"dataDir": "/home/someone/.local/share/plait", "serve": ["x"]}))
    (project / "opencode.json").write_text(
        json.dumps({"mcp": {"plait": {"type": "local", "command": ["/venv/bin/plait", "mcp"]}}})
    )
    report = install_opencode(project)
    assert not old.exists()
    assert loads((project / "opencode.json").read_text())["mcp"]["plait"] == ENTRY
    assert any("replaced the mcp.plait entry" in note for note in report.notes)


@pytest.mark.parametrize(
    "content, reason",
    [
        ("{ nope", "not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"mcp": 3}', "'mcp' must be an object"),
    ],
)
def test_install_refuses_a_broken_config_and_loses_nothing(
    project: Path, content: str, reason: str
) -> None:
    (project / "opencode.json").write_text(content)
    with pytest.raises(ConfigError, match=reason) as raised:
        install_opencode(project)
    assert str(project / "opencode.json") in str(raised.value)
    assert (project / "opencode.json").read_text() == content


def test_install_global_uses_the_user_config_dir(project: Path, tmp_path: Path) -> None:
    report = install_opencode(project, global_=True)
    base = tmp_path / "xdg" / "opencode"
    assert base / "plugins" / "plait.ts" in report.written
    assert loads((base / "opencode.json").read_text())["mcp"]["plait"]["command"][-1] == "mcp"
    assert json.loads((base / "plait.json").read_text())["dataDir"] == str(tmp_path / "data")
    assert not (project / "opencode.json").exists()
    uninstall_opencode(project, global_=True)
    assert not (base / "plugins" / "plait.ts").exists() and not (base / "plait.json").exists()


def test_cli_install_says_what_it_did_and_what_happens_next(project: Path) -> None:
    (project / "opencode.jsonc").write_text(COMMENTED)
    result = CliRunner().invoke(app, ["opencode", "install", "--project", str(project)])
    assert result.exit_code == 0, result.output
    assert "opencode.jsonc" in result.output and "plait.ts" in result.output
    assert "What happens next" in result.output and "plait opencode uninstall" in result.output
    assert "nothing of OpenCode's is taken away" in result.output
    undone = CliRunner().invoke(app, ["opencode", "uninstall", "--project", str(project)])
    assert undone.exit_code == 0 and (project / "opencode.jsonc").read_text() == COMMENTED


def test_cli_install_on_a_broken_config_is_one_clear_line(project: Path) -> None:
    (project / "opencode.json").write_text("{ nope")
    result = CliRunner().invoke(app, ["opencode", "install", "--project", str(project)])
    assert result.exit_code == 1
    assert "opencode.json" in result.output and "not valid JSON" in result.output


def test_jsonc_edits_round_trip_on_one_line_and_empty_objects() -> None:
    for text in ('{"a": 1}', "{}\n", '{\n  "a": 1\n}\n', '{"mcp": {"x": {}}}'):
        added = set_member(text, ("mcp", "plait"), ENTRY)
        assert loads(added)["mcp"]["plait"] == ENTRY
        back = remove_member(added, ("mcp", "plait"))
        if loads(back).get("mcp") == {} and "mcp" not in loads(text):
            back = remove_member(back, ("mcp",))
        assert back == text


def doctor(project: Path) -> tuple[int, dict[str, dict]]:
    result = CliRunner().invoke(app, ["doctor", "--json", "--project", str(project)])
    checks = {c["component"]: c for c in json.loads(result.output)["checks"]}
    return result.exit_code, checks


def test_doctor_checks_the_opencode_integration(project: Path, tmp_path: Path) -> None:
    install_opencode(project)
    code, checks = doctor(project)
    assert code == 0, checks
    for part in ("opencode plugin", "opencode mcp", "service", "outbox"):
        assert checks[part]["status"] == "ok", checks[part]
    assert "not running" in checks["service"]["detail"]
    (project / ".opencode" / "plugins" / "plait.ts").unlink()
    code, checks = doctor(project)
    assert code == 1 and checks["opencode plugin"]["status"] == "unavailable"


def test_doctor_fails_when_opencode_cannot_find_plait(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_opencode(project)
    monkeypatch.setenv("PATH", "/nonexistent")
    code, checks = doctor(project)
    assert code == 1 and "cannot find 'plait'" in checks["opencode mcp"]["detail"]


def test_doctor_reports_an_outbox_backlog(project: Path, tmp_path: Path) -> None:
    from plait.adapters.hosts.http import project_key

    install_opencode(project)
    outbox = tmp_path / "data" / "outbox" / f"{project_key(project)}.jsonl"
    outbox.parent.mkdir(parents=True)
    outbox.write_text('{"name": "event"}\n{"name": "event"}\n')
    code, checks = doctor(project)
    assert (
        checks["outbox"]["status"] == "degraded" and "2 hook call(s)" in checks["outbox"]["detail"]
    )
    assert code == 0  # no service runs: the backlog waits for it


def test_doctor_fails_on_dead_letters(project: Path, tmp_path: Path) -> None:
    asyncio.run(dead_letter_one(project, tmp_path / "data"))
    code, checks = doctor(project)
    assert code == 1 and checks["dead letters"]["status"] == "unavailable"
    assert "plait dlq replay" in checks["dead letters"]["detail"]


async def dead_letter_one(project: Path, data_dir: Path) -> None:
    from plait import Memory
    from plait.state.events import EventKind, SessionEvent
    from plait.state.ports import QueueEntry

    async with Memory.open(project, data_dir, start_background=False) as memory:
        event = SessionEvent(
            root_session_id="s", session_id="s", kind=EventKind.DECISION, summary="x"
        )
        await memory.backends.store.enqueue(memory.group_id, [event])
        (entry,) = await memory.backends.store.claim("doctor-test", count=1)
        assert isinstance(entry, QueueEntry)
        await memory.backends.store.dead_letter(entry, "the graph refused it")
