"""LangChain and LangGraph: agent middleware, memory tools, a store, a node, a pre-model hook."""

from plait.adapters.hosts.langchain.middleware import (
    LocalSessions,
    RecordedMessages,
    SessionLink,
    SessionMemoryMiddleware,
    SessionRecorder,
    after_recording,
    current_thread_id,
    inject_envelope,
    is_summary,
    latest_request,
    message_key,
    select_unrecorded,
    summary_intent,
    thread_id_of,
)
from plait.adapters.hosts.langchain.node import (
    ENVELOPE_KEY,
    MemoryNode,
    session_memory_hook,
    session_memory_node,
)
from plait.adapters.hosts.langchain.remote import RemoteSessions
from plait.adapters.hosts.langchain.store import PlaitStore
from plait.adapters.hosts.langchain.tools import memory_tools

__all__ = [
    "ENVELOPE_KEY",
    "MemoryNode",
    "LocalSessions",
    "PlaitStore",
    "RecordedMessages",
    "RemoteSessions",
    "SessionLink",
    "SessionMemoryMiddleware",
    "SessionRecorder",
    "after_recording",
    "current_thread_id",
    "inject_envelope",
    "is_summary",
    "latest_request",
    "memory_tools",
    "message_key",
    "select_unrecorded",
    "session_memory_hook",
    "session_memory_node",
    "summary_intent",
    "thread_id_of",
]
