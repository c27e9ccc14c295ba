"""One call of each kind Codex makes, in its payload's shape (``plait bench hooks``).

Each is ``(event, fields beside session_id and hook_event_name, whether the call records)``.
"""

from __future__ import annotations

from typing import Any

TURN = {"turn_id": "bench-turn", "model": "gpt-5", "permission_mode": "bypassPermissions"}
SAMPLE_CALLS: list[tuple[str, dict[str, Any], bool]] = [
    ("SessionStart", {"source": "startup", "model": "gpt-5"}, False),
    ("UserPromptSubmit", TURN | {"prompt": "We decided to keep the ledger in Postgres."}, True),
    (
        "PreToolUse",
        TURN | {"tool_name": "apply_patch", "tool_input": {"input": "*** Update File: a.py\n"}},
        False,
    ),
    (
        "PostToolUse",
        TURN
        | {
            "tool_name": "Bash",
            "tool_input": {"command": "pytest -q"},
            "tool_response": "3 passed",
        },
        True,
    ),
    ("Stop", TURN | {"stop_hook_active": False, "last_assistant_message": "Done."}, True),
]

__all__ = ["SAMPLE_CALLS"]
