"""A package's public names, each loaded from its module on first use (PEP 562).

``import plait`` and ``plait.adapters.hosts.mcp`` stay cheap this way: LangGraph, LangChain,
graphiti-core and the MCP SDK load only when a name that needs them is first read.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's ``__getattr__`` and ``__dir__`` for ``homes`` (name → module holding it).

    A name read once is kept in the package, so the module is looked up only the first time.
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *homes})

    return __getattr__, __dir__


__all__ = ["lazy_names"]
