"""plait's MCP server: the session tools (sandboxed shell, per-session corpus, stats, doctor).

Every answer fits an 8 KB budget; larger output goes into the session's corpus and the answer
carries a ``corpus:<source>#<chunk>`` reference. What the tools did is recorded as session events.
``plait mcp`` serves them on stdio through :mod:`.stdio` (fast handshake, tools loaded behind
it); :mod:`.server` builds the MCP SDK's server; :mod:`.catalog` says what the tools are.
Names load on first use, so the stdio front starts without the MCP SDK or LangGraph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plait.state.base.lazy import lazy_names

if TYPE_CHECKING:
    from plait.adapters.hosts.mcp._tools import (
        BatchStep,
        EventRecorder,
        SessionTools,
        session_for,
    )
    from plait.adapters.hosts.mcp.server import build_server
    from plait.adapters.hosts.mcp.stdio import run_stdio

_HOMES = {
    "BatchStep": "plait.adapters.hosts.mcp._tools",
    "EventRecorder": "plait.adapters.hosts.mcp._tools",
    "SessionTools": "plait.adapters.hosts.mcp._tools",
    "session_for": "plait.adapters.hosts.mcp._tools",
    "build_server": "plait.adapters.hosts.mcp.server",
    "run_stdio": "plait.adapters.hosts.mcp.stdio",
}

__all__ = [
    "BatchStep",
    "EventRecorder",
    "SessionTools",
    "build_server",
    "run_stdio",
    "session_for",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
