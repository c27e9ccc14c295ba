"""``plait import-history --host claude-code``: past transcripts into memory, once, redacted."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.plait_cli import PLAIT, run_plait

SECRET = "sk-ant-api03-" + "Zq9" * 30


def record(kind: str, uuid: str, content: object, **more: object) -> str:
    message = {"role": kind, "content": content}
    return json.dumps({"type": kind, "uuid": uuid, "sessionId": "s1", "message": message} | more)


def test_claude_code_transcripts_are_imported_once_broken_lines_named(
    tmp_path: Path, env: dict[str, str]
) -> None:
    project, transcripts = tmp_path / "project", tmp_path / "transcripts"
    project.mkdir()
    transcripts.mkdir()
    lines = [
        record("user", "u1", f"We decided to store sessions in PostgreSQL. My key is {SECRET}"),
        record(
            "assistant",
            "a1",
            [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Bash",
                    "input": {"command": "pytest tests/test_db.py"},
                }
            ],
        ),
        '{"type": "user", "message": ',
        record(
            "user",
            "u2",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "is_error": True,
                    "content": "ImportError: no module named psycopg",
                }
            ],
        ),
        record("assistant", "a2", [{"type": "text", "text": "Installed psycopg; tests pass."}]),
    ]
    (transcripts / "s1.jsonl").write_text("\n".join(lines) + "\n")
    args = [PLAIT, "import-history", "--host", "claude-code", "--project", str(project)]
    args += ["--source", str(transcripts), "--json"]

    first = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["sessions"] == 1 and report["events_added"] > 0
    assert [s["where"] for s in report["skipped"]] == ["s1.jsonl:3"]
    again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert json.loads(again.stdout)["events_added"] == 0, "a second import added events"
    recalled = run_plait(env, "recall", "where do we store sessions", "--project", str(project))
    assert "PostgreSQL" in recalled.stdout and SECRET not in recalled.stdout + first.stdout
