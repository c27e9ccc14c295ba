"""One call of each kind Claude Code makes, in its payload's shape (``plait bench hooks``).

Each is ``(event, fields beside session_id and hook_event_name, whether the call records)``.
"""

from __future__ import annotations

from typing import Any

SAMPLE_CALLS: list[tuple[str, dict[str, Any], bool]] = [
    ("SessionStart", {"source": "startup"}, False),
    ("UserPromptSubmit", {"prompt": "We decided to keep the ledger in Postgres."}, True),
    ("PreToolUse", {"tool_name": "Edit", "tool_input": {"file_path": "src/ledger.py"}}, False),
    (
        "PostToolUse",
        {
            "tool_name": "Bash",
            "tool_input": {"command": "pytest -q"},
            "tool_response": {"stdout": "3 passed", "stderr": "", "exit_code": 0},
        },
        True,
    ),
    ("Stop", {"last_assistant_message": "Done: the ledger uses Postgres."}, True),
]


__all__ = ["SAMPLE_CALLS"]
