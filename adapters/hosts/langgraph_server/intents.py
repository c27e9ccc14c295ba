"""plait's intents as JSON, for callers of the graphs over LangGraph Server's REST API.

A payload is a list of objects, each with a ``type`` (``user_turn``, ``model_call``,
``compaction_before`` …, see :data:`INTENT_TYPES`) and that intent's fields::

    [{"type": "user_turn", "text": "Rule: never commit to main."}, {"type": "model_call"}]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from plait.state.base.errors import InvalidHookPayload
from plait.state.intents import (
    AssistantText,
    BranchChanged,
    CommandRun,
    CompactionAfter,
    CompactionBefore,
    CompactionSummary,
    FileChanged,
    Intent,
    ModelCall,
    SessionLifecycle,
    SessionRef,
    ToolCall,
    ToolResult,
    UserTurn,
)

INTENT_TYPES: dict[str, type] = {
    "user_turn": UserTurn,
    "assistant_text": AssistantText,
    "model_call": ModelCall,
    "compaction_before": CompactionBefore,
    "compaction_after": CompactionAfter,
    "compaction_summary": CompactionSummary,
    "tool_call": ToolCall,
    "tool_result": ToolResult,
    "session_lifecycle": SessionLifecycle,
    "file_changed": FileChanged,
    "branch_changed": BranchChanged,
    "command_run": CommandRun,
}
# The fields each intent takes (anything else in its JSON is ignored).
INTENT_FIELDS: dict[type, frozenset[str]] = {
    kind: frozenset(field.name for field in dataclasses.fields(kind))
    for kind in INTENT_TYPES.values()
}


def intent_of(item: Any, index: int) -> Intent:
    """One intent from its JSON form, or :class:`InvalidHookPayload` naming the field."""
    if isinstance(item, Intent):
        return item  # already an intent (Python callers)
    if not isinstance(item, Mapping):
        raise InvalidHookPayload("must be an object with a 'type'", field=f"payload[{index}]")
    kind = INTENT_TYPES.get(str(item.get("type")))
    if kind is None:
        known = ", ".join(INTENT_TYPES)
        raise InvalidHookPayload(f"type must be one of {known}", field=f"payload[{index}].type")
    names = INTENT_FIELDS[kind]
    try:
        return kind(**{key: value for key, value in item.items() if key in names})
    except TypeError as error:
        raise InvalidHookPayload(str(error), field=f"payload[{index}]") from None


def intents_of(payload: Any) -> list[Intent]:
    """Every intent of a payload (a list; one object is a list of one)."""
    items = payload if isinstance(payload, list) else [payload] if payload else []
    return [intent_of(item, index) for index, item in enumerate(items)]


def session_of(value: Any) -> SessionRef:
    """The run's session: a ``SessionRef``, or its JSON (``root_session_id`` defaults to it)."""
    if isinstance(value, SessionRef):
        return value
    if isinstance(value, str):
        return SessionRef(session_id=value, root_session_id=value)
    if not isinstance(value, Mapping) or not value.get("session_id"):
        raise InvalidHookPayload("must name a session_id", field="session")
    root = value.get("root_session_id") or value["session_id"]
    return SessionRef(session_id=str(value["session_id"]), root_session_id=str(root))


__all__ = ["INTENT_TYPES", "intent_of", "intents_of", "session_of"]
