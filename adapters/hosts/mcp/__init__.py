"""plait's MCP server: the session tools (sandboxed shell, per-session corpus, stats, doctor).

Every answer fits an 8 KB budget; larger output goes into the session's corpus and the answer
carries a ``corpus:<source>#<chunk>`` reference. What the tools did is recorded as session events.
The server is built in :mod:`plait.adapters.hosts.mcp.server`; ``plait mcp`` serves it on stdio.
"""

from plait.adapters.hosts.mcp._tools import BatchStep, EventRecorder, SessionTools, session_for
from plait.adapters.hosts.mcp.server import build_server, run_stdio

__all__ = [
    "BatchStep",
    "EventRecorder",
    "SessionTools",
    "build_server",
    "run_stdio",
    "session_for",
]
