"""One call of each kind Gemini CLI makes, in its payload's shape (``plait bench hooks``).

Each is ``(event, fields beside session_id and hook_event_name, whether the call records)``.
"""

from __future__ import annotations

from typing import Any

AT = {"timestamp": "2026-11-25T05:15:36.824Z"}
SAMPLE_CALLS: list[tuple[str, dict[str, Any], bool]] = [
    ("SessionStart", AT | {"source": "startup"}, False),
    ("BeforeAgent", AT | {"prompt": "We decided to keep the ledger in Postgres."}, True),
    ("BeforeTool", AT | {"tool_name": "replace", "tool_input": {"file_path": "a.py"}}, False),
    (
        "AfterTool",
        AT
        | {
            "tool_name": "run_shell_command",
            "tool_input": {"command": "pytest -q"},
            "tool_response": {"llmContent": "3 passed", "returnDisplay": "3 passed"},
        },
        True,
    ),
    (
        "AfterAgent",
        AT | {"prompt": "p", "prompt_response": "Done.", "stop_hook_active": False},
        True,
    ),
]

__all__ = ["SAMPLE_CALLS"]
