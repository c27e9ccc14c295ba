"""Module paths that name a module living elsewhere, resolved on import.

Two kinds: the short paths users type (``plait.langchain``, ``plait.checkpoint``), which are the
same module objects as the host and backend modules they name, and the paths of modules that moved
(``plait.errors`` is ``plait.state.base.errors`` now), which still work for one release and warn.
An alias is not an import: the facade's folder never imports the host folders above it, so the
folders keep one direction (``docs/architecture.md``). Type checkers read the ``.pyi`` stubs beside
this file for the short paths.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

SHORT_PATHS = {
    "plait.langchain": "plait.adapters.hosts.langchain",
    "plait.checkpoint": "plait.adapters.backends.checkpoint",
}
MOVED = {
    "plait.errors": "plait.state.base.errors",
    "plait.settings": "plait.state.base.settings",
    "plait.boundary": "plait.state.base.boundary",
    "plait.redact": "plait.state.base.redact",
    "plait.demo": "plait.cli.demo",
    "plait.demo_session": "plait.devtools.demo_session",
    "plait.worker": "plait.cli.worker",
    "plait.configref": "plait.devtools.configref",
    "plait.adapters.checkpoint": "plait.adapters.backends.checkpoint",
    "plait.adapters.langchain": "plait.adapters.hosts.langchain",
    "plait.adapters.langgraph_node": "plait.adapters.hosts.langchain",
}


class _Alias:
    """Loads an alias as the module it names (the same object, so types and state are shared).

    A loader by its two methods, not an ``importlib.abc.Loader``: that import alone (it pulls
    ``importlib.resources``) costs ``plait-hook`` several milliseconds on every hook.
    """

    def __init__(self, target: str, *, moved: bool) -> None:
        self.target = target
        self.moved = moved

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        if self.moved:
            warnings.warn(
                f"{spec.name!r} moved to {self.target!r}; the old path goes in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the named module ran when it was imported."""


class AliasFinder:
    """Finds the aliased paths above and the modules below them (``plait.langchain.node``).

    Every other name is left to the usual finders.
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        named = SHORT_PATHS.get(fullname) or MOVED.get(fullname)
        if named is None:
            return None
        alias = _Alias(named, moved=fullname in MOVED)
        return importlib.machinery.ModuleSpec(fullname, alias)  # type: ignore[arg-type]


def install() -> None:
    """Put the finder first on ``sys.meta_path``, once."""
    if not any(isinstance(finder, AliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())
