"""plait: a memory layer for AI coding agents.

``plait.Memory`` is the facade: short-term session memory that survives compaction, and
long-term recall from a Graphiti knowledge graph, for one project.
"""

from plait.errors import (
    BackendUnavailable,
    ConfigError,
    InvalidHookPayload,
    MissingExtra,
    PlaitError,
    UnknownHook,
)
from plait.memory import Memory
from plait.settings import Settings
from plait.state.events import EventKind, Priority, SessionEvent

__all__ = [
    "BackendUnavailable",
    "ConfigError",
    "EventKind",
    "InvalidHookPayload",
    "Memory",
    "MissingExtra",
    "PlaitError",
    "Priority",
    "SessionEvent",
    "Settings",
    "UnknownHook",
]
