"""What plait's MCP tools are, as plain data: names, groups, one-line descriptions, input schemas.

``plait mcp`` answers ``tools/list`` from this table before anything heavy is imported, and a
host sends every schema listed here with every model request, so each word costs on every turn:
descriptions are one line, parameters say only what the name does not. Tools come in groups
(``mcp.tools`` in the settings switches groups on and off); a new tool joins a group or brings
its own. The MCP server registers the same tools (``server.py``) and a test holds the two to the
same names and parameters.

The session a call belongs to is not a parameter the model sees: the OpenCode plugin adds
``session_id`` to the arguments of every ``plait_*`` tool call (from ``tool.execute.before``),
and other hosts may pass it or set ``PLAIT_SESSION_ID``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SHELL = "shell"
CORPUS = "corpus"
MEMORY = "memory"
REPORTS = "reports"
GROUPS = (SHELL, CORPUS, MEMORY, REPORTS)
DEFAULT_GROUPS = (SHELL, CORPUS, MEMORY)
HIDDEN_ARGUMENT = "session_id"


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSpec:
    """One MCP tool as a host sees it."""

    name: str
    group: str
    description: str
    properties: dict[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()

    def listing(self) -> dict[str, Any]:
        """The tool as ``tools/list`` gives it."""
        schema: dict[str, Any] = {"type": "object", "properties": self.properties}
        if self.required:
            schema["required"] = list(self.required)
        return {"name": self.name, "description": self.description, "inputSchema": schema}


def _text(description: str = "") -> dict[str, Any]:
    return {"type": "string", "description": description} if description else {"type": "string"}


_TIMEOUT = {"type": "number", "description": "seconds"}

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="session_execute",
        group=SHELL,
        description="Run a shell command in the worktree; output is indexed for session_search.",
        properties={"command": _text(), "timeout": _TIMEOUT},
        required=("command",),
    ),
    ToolSpec(
        name="session_execute_file",
        group=SHELL,
        description="Run a command on a worktree file (stdin, $FILE; default cat).",
        properties={"path": _text(), "command": _text(), "timeout": _TIMEOUT},
        required=("path",),
    ),
    ToolSpec(
        name="session_batch_execute",
        group=SHELL,
        description="Run steps in order, each {command} or {search}.",
        properties={
            "steps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"command": _text(), "search": _text(), "timeout": _TIMEOUT},
                },
            }
        },
        required=("steps",),
    ),
    ToolSpec(
        name="session_index",
        group=CORPUS,
        description="Index text (content, source) or a worktree file (path) for session_search.",
        properties={
            "content": _text(),
            "path": _text(),
            "source": _text(),
            "label": _text(),
        },
    ),
    ToolSpec(
        name="session_search",
        group=CORPUS,
        description="Search indexed output and pages; corpus:<source>#<n> reads a chunk.",
        properties={
            "query": _text(),
            "limit": {"type": "integer"},
            "source": _text(),
        },
        required=("query",),
    ),
    ToolSpec(
        name="session_fetch_and_index",
        group=CORPUS,
        description="Fetch a URL and index it for session_search.",
        properties={"url": _text(), "source": _text(), "label": _text()},
        required=("url",),
    ),
    ToolSpec(
        name="memory_remember",
        group=MEMORY,
        description="Keep a project decision, preference or rule for later sessions.",
        properties={
            "text": _text("one sentence"),
            "kind": {"type": "string", "enum": ["decision", "preference", "rule"]},
        },
        required=("text",),
    ),
    ToolSpec(
        name="memory_recall",
        group=MEMORY,
        description="Search what earlier sessions decided and learned.",
        properties={"query": _text()},
        required=("query",),
    ),
    ToolSpec(
        name="session_stats",
        group=REPORTS,
        description="Corpus and event counts of this session.",
    ),
    ToolSpec(
        name="session_doctor",
        group=REPORTS,
        description="Health of plait's parts.",
    ),
)

INSTRUCTIONS = (
    "plait: session_execute runs commands and indexes their output; session_search finds it "
    "again. memory_recall and memory_remember reach this project's long-term memory."
)


def enabled_tools(groups: tuple[str, ...] | list[str]) -> list[ToolSpec]:
    """The tools of the enabled groups, in catalog order."""
    wanted = set(groups)
    return [tool for tool in TOOLS if tool.group in wanted]


def spec_of(name: str) -> ToolSpec | None:
    """The tool called ``name``, if plait has one."""
    return next((tool for tool in TOOLS if tool.name == name), None)


__all__ = [
    "DEFAULT_GROUPS",
    "GROUPS",
    "HIDDEN_ARGUMENT",
    "INSTRUCTIONS",
    "TOOLS",
    "ToolSpec",
    "enabled_tools",
    "spec_of",
]
