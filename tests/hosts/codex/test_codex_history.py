"""``plait import-history --host codex``: a project's past Codex rollouts into memory, once."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from support.plait_cli import PLAIT, run_plait

from plait.adapters.hosts.codex.history import CodexHistory
from plait.state.history import PastCall
from plait.state.intents import AssistantText, ToolResult, UserTurn

SECRET = "sk-proj-" + "Zq9" * 30


def item(payload: dict[str, Any]) -> str:
    return json.dumps(
        {"timestamp": "2026-11-25T05:04:11Z", "type": "response_item", "payload": payload}
    )


def message(role: str, text: str) -> str:
    kind = "output_text" if role == "assistant" else "input_text"
    return item({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})


def rollout(folder: Path, session: str, cwd: Path, *lines: str) -> Path:
    day = folder / "2026" / "11" / "25"
    day.mkdir(parents=True, exist_ok=True)
    meta = {"type": "session_meta", "payload": {"id": session, "cwd": str(cwd)}}
    path = day / f"rollout-2026-11-25T05-04-11-{session}.jsonl"
    path.write_text("\n".join([json.dumps(meta), *lines]) + "\n")
    return path


def test_a_rollout_reads_as_the_hooks_would_have_carried_it(tmp_path: Path) -> None:
    project, other = tmp_path / "project", tmp_path / "other"
    rollout(
        tmp_path / "sessions",
        "s1",
        project / "src",
        message("developer", "<session_memory>injected</session_memory>"),
        message("user", "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>"),
        message("user", "We decided to store sessions in PostgreSQL."),
        item(
            {
                "type": "function_call",
                "name": "exec_command",
                "call_id": "c1",
                "arguments": '{"cmd": "pytest"}',
            }
        ),
        '{"type": "response_item", "payload": ',
        item({"type": "function_call_output", "call_id": "c1", "output": "1 failed"}),
        message("assistant", "Fixed it."),
    )
    rollout(tmp_path / "sessions", "s2", other, message("user", "another project"))
    reader = CodexHistory(folder=tmp_path / "sessions", project_dir=project)
    assert reader.sessions() == ["s1"]
    calls = list(reader.calls())
    intents = [i for c in calls if isinstance(c, PastCall) for i in c.intents]
    assert intents[0] == UserTurn(text="We decided to store sessions in PostgreSQL.")
    assert isinstance(intents[1], ToolResult) and intents[1].tool == "bash"
    assert intents[1].args["command"] == "pytest" and intents[1].output == "1 failed"
    assert intents[2] == AssistantText(text="Fixed it.")
    assert [c.where for c in calls if not isinstance(c, PastCall)] == [
        "rollout-2026-11-25T05-04-11-s1.jsonl:6"
    ]


def test_codex_sessions_are_imported_once_and_redacted(tmp_path: Path, env: dict[str, str]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    said = f"We decided to store sessions in PostgreSQL. My key is {SECRET}"
    rollout(tmp_path / "sessions", "s1", project, message("user", said))
    args = [PLAIT, "import-history", "--host", "codex", "--project", str(project)]
    args += ["--source", str(tmp_path / "sessions"), "--json"]
    first = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["events_added"] > 0
    again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert json.loads(again.stdout)["events_added"] == 0, "a second import added events"
    recalled = run_plait(env, "recall", "where do we store sessions", "--project", str(project))
    assert "PostgreSQL" in recalled.stdout and SECRET not in recalled.stdout
