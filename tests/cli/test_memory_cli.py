"""``plait memory`` as a person uses it: list, show, search, forget, export, import."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from plait.cli import app

runner = CliRunner()


@pytest.fixture
def project(
    tmp_path: Path, redis_url: str, group_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("PLAIT_REDIS__URL", redis_url)
    monkeypatch.setenv("PLAIT_GRAPHITI__GROUP_ID_PREFIX", group_prefix)
    path = tmp_path / "shop"
    path.mkdir()
    (path / "README.md").write_text("# Shop\n\nShop sells socks online.\n")
    return path


def plait(project: Path, *args: str, code: int = 0) -> str:
    result = runner.invoke(app, ["memory", *args, "--project", str(project)])
    assert result.exit_code == code, result.output
    return result.stdout


def plait_json(project: Path, *args: str, code: int = 0) -> Any:
    return json.loads(plait(project, *args, "--json", code=code))


def observation_line(**fields: Any) -> str:
    base = {
        "id": "o" + uuid.uuid4().hex[:12],
        "scope": "project",
        "type": "decision",
        "title": "Ship on Tuesdays",
        "content": "What: releases go out on Tuesdays",
        "created_at": "2026-01-02T03:04:05Z",
        "updated_at": "2026-01-02T03:04:05Z",
    }
    return json.dumps({**base, **fields})


def test_memory_list_show_search_and_forget(project: Path) -> None:
    (brief,) = plait_json(project, "list")
    assert brief["title"] == "Project brief: Shop" and brief["topic_key"] == "project/brief"
    assert "Project brief: Shop" in plait(project, "list")
    shown = plait_json(project, "show", brief["id"])
    assert shown["content"] == "What: Shop sells socks online.\nWhere: README.md"
    assert "Shop sells socks online." in plait(project, "show", brief["id"])
    found = plait_json(project, "search", "socks")
    assert [hit["id"] for hit in found["results"]] == [brief["id"]]
    forgotten = plait_json(project, "forget", brief["id"])
    assert forgotten == {**forgotten, "id": brief["id"], "action": "deleted"}
    assert plait_json(project, "list") == []
    result = runner.invoke(app, ["memory", "show", brief["id"], "--project", str(project)])
    assert result.exit_code == 1 and f"no observation {brief['id']!r}" in result.output
    bad = runner.invoke(app, ["memory", "forget", "not-an-id", "--project", str(project)])
    assert bad.exit_code == 1 and "id:" in bad.output


def test_memory_import_names_broken_lines_and_applies_the_rest(
    project: Path, tmp_path: Path
) -> None:
    good = observation_line()
    file = tmp_path / "team.jsonl"
    file.write_text("\n".join([good, "{broken", observation_line(type="mood"), ""]) + "\n")
    result = runner.invoke(app, ["memory", "import", str(file), "--project", str(project)])
    assert result.exit_code == 1
    assert "imported: 1 added" in result.stdout
    assert "line 2: not JSON" in result.stderr and "line 3: type" in result.stderr
    report = plait_json(project, "import", str(file), code=1)
    assert (report["added"], report["unchanged"], len(report["errors"])) == (0, 1, 2)
    titles = {row["title"] for row in plait_json(project, "list")}
    assert titles == {"Project brief: Shop", "Ship on Tuesdays"}


def test_memory_export_is_stable_and_scoped(project: Path, tmp_path: Path) -> None:
    file = tmp_path / "mixed.jsonl"
    personal = observation_line(scope="personal", type="preference", title="Dark mode")
    file.write_text(observation_line() + "\n" + personal + "\n")
    plait(project, "import", str(file))
    everything = plait(project, "export")
    assert everything == plait(project, "export")
    lines = [json.loads(line) for line in everything.splitlines()]
    assert [line["scope"] for line in lines] == ["personal", "project", "project"]
    team = project / ".plait" / "memory.jsonl"
    written = plait_json(project, "export", "--scope", "project", "-o", str(team))
    assert written == {"file": str(team), "observations": 2}
    assert stat.S_IMODE(team.stat().st_mode) == 0o600  # only its owner reads an export
    assert all(json.loads(line)["scope"] == "project" for line in team.read_text().splitlines())
    assert plait_json(project, "export", "--scope", "project") == [
        json.loads(line) for line in team.read_text().splitlines()
    ]
    bad = runner.invoke(app, ["memory", "export", "--scope", "team", "--project", str(project)])
    assert bad.exit_code == 2 and "--scope" in bad.output


def test_plait_memory_runs_as_a_command(project: Path) -> None:
    command = Path(sys.executable).parent / "plait"
    done = subprocess.run(
        [str(command), "memory", "list", "--json", "--project", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["title"] == "Project brief: Shop"
