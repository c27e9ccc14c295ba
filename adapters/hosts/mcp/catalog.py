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


_TIMEOUT = {"type": "number", "description": "seconds"}


def _tool(
    name: str,
    group: str,
    description: str,
    *,
    required: tuple[str, ...] = (),
    optional: tuple[str, ...] = (),
    typed: dict[str, Any] | None = None,
) -> ToolSpec:
    """A tool whose arguments are strings (``required`` then ``optional``), then ``typed`` ones."""
    properties: dict[str, Any] = {key: _TEXT for key in (*required, *optional)}
    return ToolSpec(
        name=name,
        group=group,
        description=description,
        properties=properties | (typed or {}),
        required=required,
    )


_STEPS = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"command": _TEXT, "search": _TEXT, "timeout": _TIMEOUT},
    },
}
TOOLS: tuple[ToolSpec, ...] = (
    _tool(
        "session_execute",
        SHELL,
        "Run a shell command; its output is indexed.",
        required=("command",),
    ),
    _tool(
        "session_search",
        CORPUS,
        "Search indexed output; corpus:<source>#<n> reads a chunk.",
        required=("query",),
    ),
    _tool("session_fetch_and_index", CORPUS, "Fetch a URL and index it.", required=("url",)),
    _tool(
        "session_execute_file",
        SHELL_MORE,
        "Run a command on a worktree file (stdin, $FILE; default cat).",
        required=("path",),
        optional=("command",),
        typed={"timeout": _TIMEOUT},
    ),
    _tool(
        "session_batch_execute",
        SHELL_MORE,
        "Run steps in order, each {command} or {search}.",
        required=("steps",),
        typed={"steps": _STEPS},
    ),
    _tool(
        "session_index",
        CORPUS_MORE,
        "Index text (content, source) or a worktree file (path) for session_search.",
        optional=("content", "path", "source", "label"),
    ),
    _tool(
        "memory_save",
        MEMORY,
        "Save a memory; a known topic_key updates it.",
        required=("title", "content"),
        optional=("type", "topic_key"),
    ),
    _tool("memory_search", MEMORY, "Search saved memories.", required=("query",)),
    _tool("memory_get", MEMORY, "A memory in full.", required=("id",)),
    _tool("memory_context", MEMORY, "Recent memory, in brief."),
    _tool(
        "memory_update", CURATE, "Change a memory.", required=("id",), optional=("title", "content")
    ),
    _tool("memory_delete", CURATE, "Forget a memory.", required=("id",)),
    _tool(
        "session_forget",
        REPORTS,
        "Forget captured events: a session's, before an ISO date, or matching text.",
        optional=("session", "before", "match"),
        typed={"dry_run": {"type": "boolean"}},
    ),
    _tool("memory_timeline", CURATE, "Memories by time.", optional=("id",)),
    _tool("memory_stats", CURATE, "Counts of saved memory."),
    _tool(
        "memory_session_summary",
        CURATE,
        "Save this session's summary.",
        required=("content",),
    ),
    _tool(
        "memory_suggest_topic_key",
        CURATE,
        "A topic_key for a title.",
        required=("title",),
        optional=("type",),
    ),
    _tool("session_stats", REPORTS, "Corpus and event counts of this session."),
    _tool("session_doctor", REPORTS, "Health of plait's parts."),
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
