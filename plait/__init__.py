"""plait: a memory layer for AI coding agents.

``plait.Memory`` is the facade: short-term session memory that survives compaction, and
long-term recall from a Graphiti knowledge graph, for one project.

Names are loaded on first use, so ``import plait`` (or any pure helper under it) costs
milliseconds, and LangGraph, LangChain and graphiti-core load only when something needs them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from plait import _moved

# In a source checkout, graphs/, nodes/, state/ and adapters/ sit beside plait/ and an install
# maps them to plait.graphs and so on. When a tool imports plait from the checkout without that
# mapping (the checkout on sys.path ahead of the installed package: LangGraph's CLI under uvx),
# the sibling folders are found here instead.
# (os.path, not pathlib: ``plait-hook`` imports this package once per hook and must start fast)
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
if os.path.isfile(os.path.join(_CHECKOUT, "adapters", "__init__.py")) and _CHECKOUT not in __path__:
    __path__.append(_CHECKOUT)

_moved.install()

from plait.state.base.lazy import lazy_names  # noqa: E402 (found only once __path__ is set)

if TYPE_CHECKING:
    from plait.adapters.hosts.http.client import ServiceClient, connect
    from plait.memory import Memory
    from plait.state.base.errors import (
        BackendError,
        BackendUnavailable,
        ConfigError,
        InvalidHookPayload,
        MissingExtra,
        PlaitError,
        UnknownHook,
        UsageError,
    )
    from plait.state.base.settings import Settings
    from plait.state.events import EventKind, Priority, SessionEvent

_HOMES = {
    "BackendError": "plait.state.base.errors",
    "BackendUnavailable": "plait.state.base.errors",
    "ConfigError": "plait.state.base.errors",
    "InvalidHookPayload": "plait.state.base.errors",
    "MissingExtra": "plait.state.base.errors",
    "PlaitError": "plait.state.base.errors",
    "UnknownHook": "plait.state.base.errors",
    "UsageError": "plait.state.base.errors",
    "Memory": "plait.memory",
    "ServiceClient": "plait.adapters.hosts.http.client",
    "connect": "plait.adapters.hosts.http.client",
    "Settings": "plait.state.base.settings",
    "EventKind": "plait.state.events",
    "Priority": "plait.state.events",
    "SessionEvent": "plait.state.events",
}

__all__ = [
    "BackendError",
    "BackendUnavailable",
    "ConfigError",
    "EventKind",
    "InvalidHookPayload",
    "Memory",
    "MissingExtra",
    "PlaitError",
    "Priority",
    "ServiceClient",
    "SessionEvent",
    "Settings",
    "UnknownHook",
    "UsageError",
    "connect",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
