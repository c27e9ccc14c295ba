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

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

SHELL = "shell"
SHELL_MORE = "shell_more"
CORPUS = "corpus"
CORPUS_MORE = "corpus_more"
MEMORY = "memory"
CURATE = "memory_curate"
REPORTS = "reports"
GROUPS = (SHELL, SHELL_MORE, CORPUS, CORPUS_MORE, MEMORY, CURATE, REPORTS)
DEFAULT_GROUPS = (SHELL, CORPUS, MEMORY, CURATE)
MEMORY_GROUPS = (MEMORY, CURATE)  # what a shared service runs (``remote``); the rest run here
_TEXT: dict[str, Any] = {"type": "string"}
HIDDEN_ARGUMENT = "session_id"


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSpec:
    """One MCP tool as a host sees it."""

    name: str
    group: str
    description: str
    properties: dict[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()

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


def _text(description: str = "") -> dict[str, Any]:
    return {"type": "string", "description": description} if description else {"type": "string"}


_TIMEOUT = {"type": "number", "description": "seconds"}

_ID = {"id": _TEXT}
TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="session_execute",
        group=SHELL,
        description="Run a shell command; its output is indexed.",
        properties={"command": _TEXT},
        required=("command",),
    ),
    ToolSpec(
        name="session_search",
        group=CORPUS,
        description="Search indexed output; corpus:<source>#<n> reads a chunk.",
        properties={"query": _TEXT},
        required=("query",),
    ),
    ToolSpec(
        name="session_fetch_and_index",
        group=CORPUS,
        description="Fetch a URL and index it.",
        properties={"url": _TEXT},
        required=("url",),
    ),
    ToolSpec(
        name="session_execute_file",
        group=SHELL_MORE,
        description="Run a command on a worktree file (stdin, $FILE; default cat).",
        properties={"path": _TEXT, "command": _TEXT, "timeout": _TIMEOUT},
        required=("path",),
    ),
    ToolSpec(
        name="session_batch_execute",
        group=SHELL_MORE,
        description="Run steps in order, each {command} or {search}.",
        properties={
            "steps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"command": _TEXT, "search": _TEXT, "timeout": _TIMEOUT},
                },
            }
        },
        required=("steps",),
    ),
    ToolSpec(
        name="session_index",
        group=CORPUS_MORE,
        description="Index text (content, source) or a worktree file (path) for session_search.",
        properties={"content": _TEXT, "path": _TEXT, "source": _TEXT, "label": _TEXT},
    ),
    ToolSpec(
        name="memory_save",
        group=MEMORY,
        description="Save a memory; a known topic_key updates it.",
        properties={
            "title": _TEXT,
            "content": _TEXT,
            "type": _TEXT,
            "topic_key": _TEXT,
        },
        required=("title", "content"),
    ),
    ToolSpec(
        name="memory_search",
        group=MEMORY,
        description="Search saved memories.",
        properties={"query": _TEXT},
        required=("query",),
    ),
    ToolSpec(
        name="memory_get",
        group=MEMORY,
        description="A memory in full.",
        properties=_ID,
        required=("id",),
    ),
    ToolSpec(
        name="memory_context",
        group=MEMORY,
        description="Recent memory, in brief.",
    ),
    ToolSpec(
        name="memory_update",
        group=CURATE,
        description="Change a memory.",
        properties={"id": _TEXT, "title": _TEXT, "content": _TEXT},
        required=("id",),
    ),
    ToolSpec(
        name="memory_delete",
        group=CURATE,
        description="Forget a memory.",
        properties=_ID,
        required=("id",),
    ),
    ToolSpec(
        name="session_forget",
        group=REPORTS,
        description="Forget captured events: a session's, before an ISO date, or matching text.",
        properties={
            "session": _TEXT,
            "before": _TEXT,
            "match": _TEXT,
            "dry_run": {"type": "boolean"},
        },
    ),
    ToolSpec(
        name="memory_timeline",
        group=CURATE,
        description="Memories by time.",
        properties=_ID,
    ),
    ToolSpec(
        name="memory_stats",
        group=CURATE,
        description="Counts of saved memory.",
    ),
    ToolSpec(
        name="memory_session_summary",
        group=CURATE,
        description="Save this session's summary.",
        properties={"content": _TEXT},
        required=("content",),
    ),
    ToolSpec(
        name="memory_suggest_topic_key",
        group=CURATE,
        description="A topic_key for a title.",
        properties={"title": _TEXT, "type": _TEXT},
        required=("title",),
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
    "again. memory_save keeps what later sessions should know; memory_search and memory_context "
    "find what earlier sessions saved."
)


def list_as_catalog(server: Any, function: Any, spec: ToolSpec) -> None:
    """Register ``function`` with an MCP SDK server under ``spec``, listed as the catalog lists it.

    The SDK would list the schema it derives from the signature (titles, ``anyOf``, parameters
    the model need not see, such as ``session_id``); a model sees the spec's, the same whether
    ``plait mcp`` answers from the catalog or the SDK's server answers. The function may accept
    more than the spec lists.
    """
    server.add_tool(function, name=spec.name, description=spec.description, structured_output=False)
    registered = server._tool_manager.get_tool(spec.name)
    if registered is not None:
        registered.parameters = spec.input_schema()


def enabled_tools(groups: Collection[str]) -> list[ToolSpec]:
    """The tools of the enabled groups, in catalog order."""
    wanted = set(groups)
    return [tool for tool in TOOLS if tool.group in wanted]


def spec_of(name: str) -> ToolSpec | None:
    """The tool called ``name``, if plait has one."""
    return next((tool for tool in TOOLS if tool.name == name), None)


__all__ = [
    "DEFAULT_GROUPS",
    "MEMORY_GROUPS",
    "GROUPS",
    "HIDDEN_ARGUMENT",
    "INSTRUCTIONS",
    "TOOLS",
    "ToolSpec",
    "enabled_tools",
    "spec_of",
]
