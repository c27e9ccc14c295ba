"""``plait import-history --host gemini``: a project's past Gemini CLI chats as plait's intents."""

from __future__ import annotations

import json
from pathlib import Path

from plait.adapters.hosts.gemini.history import GeminiHistory, chats_dir
from plait.state.history import PastCall
from plait.state.intents import AssistantText, ToolResult, UserTurn


def test_a_chat_file_reads_as_the_hooks_would_have_carried_it(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "gemini"
    home.mkdir()
    (home / "projects.json").write_text(json.dumps({"projects": {str(project): "proj"}}))
    folder = chats_dir(project, home)
    assert folder == home / "tmp" / "proj" / "chats"
    folder.mkdir(parents=True)
    folded = "<hook_context>&lt;session_memory&gt;x&lt;/session_memory&gt;</hook_context>\n\n"
    lines = [
        {"sessionId": "g1", "projectHash": "h", "kind": "main"},
        {"$set": {"messages": [{"type": "user", "content": [{"text": "<session_context>…"}]}]}},
        {"id": "m1", "type": "user", "content": [{"text": folded + "We decided on PostgreSQL."}]},
        {
            "id": "m2",
            "type": "gemini",
            "content": "Ran the tests.",
            "toolCalls": [
                {
                    "name": "run_shell_command",
                    "args": {"command": "pytest"},
                    "status": "error",
                    "result": [{"functionResponse": {"response": {"output": "1 failed"}}}],
                }
            ],
        },
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n{broken\n"
    (folder / "session-2026-11-25T05-15-g1.jsonl").write_text(text)
    reader = GeminiHistory(folder=folder)
    assert reader.sessions() == ["g1"]
    calls = list(reader.calls())
    intents = [i for c in calls if isinstance(c, PastCall) for i in c.intents]
    assert intents[0] == UserTurn(text="We decided on PostgreSQL.")
    assert isinstance(intents[1], ToolResult) and intents[1].tool == "bash"
    assert intents[1].exit_code == 1 and "1 failed" in intents[1].output
    assert intents[2] == AssistantText(text="Ran the tests.")
    assert [c.where for c in calls if not isinstance(c, PastCall)] == [
        "session-2026-11-25T05-15-g1.jsonl:5"
    ]
    assert len({c.call_id for c in calls if isinstance(c, PastCall)}) == 2
