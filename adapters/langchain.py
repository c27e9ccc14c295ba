"""The documented import path of the LangChain integration.

The code lives in :mod:`plait.adapters.hosts.langchain`.
"""

from plait.adapters.hosts.langchain import (
    SessionMemoryMiddleware,
    inject_envelope,
    memory_tools,
)

__all__ = ["SessionMemoryMiddleware", "inject_envelope", "memory_tools"]
