"""The documented import path of the LangGraph node (see :mod:`plait.adapters.hosts.langchain`)."""

from plait.adapters.hosts.langchain import session_memory_hook, session_memory_node

__all__ = ["session_memory_hook", "session_memory_node"]
