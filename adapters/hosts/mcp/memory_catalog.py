"""The memory tools as a host lists them: names, groups, one-line descriptions, input schemas.

Plain data (stdlib only), so a catalog can answer ``tools/list`` before anything heavy loads;
:mod:`.memory_tools` registers the same tools with the MCP SDK and lists exactly these schemas.
``memory`` (save, search, get, context) is what an agent needs every session; ``memory_curate``
(update, delete, timeline, stats, session summary, topic keys) is for tending memory, and a host
short of schema room can leave it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MEMORY_GROUP = "memory"
CURATION_GROUP = "memory_curate"
MEMORY_GROUPS = (MEMORY_GROUP, CURATION_GROUP)
# plait.state.observations.OBSERVATION_TYPES and SCOPES (a test holds them equal).
TYPES = (
    "decision",
    "architecture",
    "bugfix",
    "discovery",
    "pattern",
    "config",
    "preference",
    "learning",
    "session_summary",
    "progress",
)
SCOPES = ("project", "personal")
_TEXT: dict[str, Any] = {"type": "string"}


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryToolSpec:
    """One memory tool as ``tools/list`` shows it."""

    name: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...] = ()
    group: str = MEMORY_GROUP

    def input_schema(self) -> dict[str, Any]:
        """The tool's input schema, as listed."""
        schema: dict[str, Any] = {"type": "object", "properties": self.properties}
        if self.required:
            schema["required"] = list(self.required)
        return schema

    def listing(self) -> dict[str, Any]:
        """The tool as ``tools/list`` gives it."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema(),
        }


MEMORY_TOOL_SPECS: tuple[MemoryToolSpec, ...] = (
    MemoryToolSpec(
        name="memory_save",
        description="Save a memory (content: What/Why/Where/Learned); same topic_key updates it.",
        properties={
            "title": _TEXT,
            "content": _TEXT,
            "type": {"type": "string", "enum": list(TYPES)},
            "topic_key": _TEXT,
            "scope": {"type": "string", "enum": list(SCOPES)},
        },
        required=("title", "content"),
    ),
    MemoryToolSpec(
        name="memory_search",
        description="Search saved memories.",
        properties={"query": _TEXT},
        required=("query",),
    ),
    MemoryToolSpec(
        name="memory_get",
        description="A memory in full, with revisions.",
        properties={"id": _TEXT},
        required=("id",),
    ),
    MemoryToolSpec(
        name="memory_update",
        group=CURATION_GROUP,
        description="Change a memory (old version kept).",
        properties={"id": _TEXT, "title": _TEXT, "content": _TEXT},
        required=("id",),
    ),
    MemoryToolSpec(
        name="memory_delete",
        group=CURATION_GROUP,
        description="Forget a memory.",
        properties={"id": _TEXT},
        required=("id",),
    ),
    MemoryToolSpec(
        name="memory_timeline",
        group=CURATION_GROUP,
        description="Memories saved around one, or the latest.",
        properties={"id": _TEXT},
    ),
    MemoryToolSpec(
        name="memory_context",
        description="Recent sessions and memories, in brief.",
        properties={},
    ),
    MemoryToolSpec(
        name="memory_stats",
        group=CURATION_GROUP,
        description="Counts of saved memory.",
        properties={},
    ),
    MemoryToolSpec(
        name="memory_session_summary",
        group=CURATION_GROUP,
        description="Save this session's summary "
        "(## Goal, Discoveries, Accomplished, Next Steps, Relevant Files).",
        properties={"content": _TEXT},
        required=("content",),
    ),
    MemoryToolSpec(
        name="memory_suggest_topic_key",
        group=CURATION_GROUP,
        description="A stable topic_key for a title and type.",
        properties={"title": _TEXT, "type": _TEXT},
        required=("title",),
    ),
)


__all__ = [
    "CURATION_GROUP",
    "MEMORY_GROUP",
    "MEMORY_GROUPS",
    "MEMORY_TOOL_SPECS",
    "SCOPES",
    "TYPES",
    "MemoryToolSpec",
]
