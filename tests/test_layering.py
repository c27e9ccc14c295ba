"""The layering of plait, checked on its imports and definitions (issue: a host-neutral core).

The import contracts live in ``pyproject.toml`` (``[tool.importlinter]``) and are checked with
import-linter. import-linter finds a package's modules by walking its folder, and plait's
subpackages live in folders of their own (``graphs/`` is ``plait.graphs``…), so the check runs on
a copy of the tree laid out as installed.
"""

from __future__ import annotations

import ast
import graphlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest
from support.layout import FOLDERS, ROOT, stage_installed_layout

from plait.adapters.hosts.opencode.hooks import EVENT_INTENTS, HOOK_NAMES

LEAVES = (
    "plait.errors",
    "plait.settings",
    "plait.redact",
    "plait._secret_shapes",
    "plait._randomness",
    "plait.boundary",
)
# The one import that runs upward, declared in pyproject.toml with its reason.
UPWARD = ("plait.memory", "plait.adapters.hosts.opencode.hooks")
ENTRY_POINTS = (
    "plait.cli",
    "plait.devtools",
    "plait.demo",
    "plait.demo_session",
    "plait.worker",
    "plait.configref",
)
UNITS = (
    "plait.adapters.hosts",
    "plait.adapters.backends",
    "plait.graphs",
    "plait.nodes",
    "plait.state",
    "plait",
)


@pytest.fixture(scope="module")
def installed_layout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The source tree copied into the layout it has once installed: ``plait/graphs`` …"""
    return stage_installed_layout(tmp_path_factory.mktemp("layout"))


def product_files() -> Iterator[tuple[str, Path]]:
    """Every product module: its dotted name and its file."""
    for package, folder in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if package == "plait" and path.relative_to(ROOT / folder).parts[0] in FOLDERS:
                continue
            relative = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in relative.parts if p != "__init__"]
            yield ".".join([package, *parts]), path


def test_import_contracts_hold(installed_layout: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(installed_layout)}
    linter = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(linter), "--no-logo", "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        cwd=installed_layout,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def unit_of(module: str) -> str | None:
    """The folder a module belongs to; None for a leaf, "entry points" for the CLI and tools.

    ``plait/`` holds the facade and, above the hosts, the entry points that start them.
    """
    if module.startswith(LEAVES):
        return None
    if module.startswith(("plait.adapters.langchain", "plait.adapters.langgraph_node")):
        return "plait.adapters.hosts"  # the documented import paths of the LangChain host
    if module.startswith(ENTRY_POINTS):
        return "entry points"
    return next(unit for unit in UNITS if module == unit or module.startswith(unit + "."))


def test_top_level_folders_form_no_cycle(installed_layout: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(installed_layout))
    for name in [m for m in sys.modules if m == "plait" or m.startswith("plait.")]:
        monkeypatch.delitem(sys.modules, name)
    graph = grimp.build_graph("plait", exclude_type_checking_imports=True, cache_dir=None)
    assert {"plait.nodes.capture", "plait.adapters.hosts.opencode.hooks"} <= graph.modules
    edges: dict[str, set[str]] = {unit: set() for unit in (*UNITS, "entry points")}
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            if (importer, imported) == UPWARD:
                continue
            source, target = unit_of(importer), unit_of(imported)
            if source and target and source != target:
                edges[source].add(target)
    order = list(graphlib.TopologicalSorter(edges).static_order())  # raises CycleError
    assert order.index("plait.state") < order.index("plait.nodes") < order.index("plait.graphs")


def test_graphs_define_only_builders() -> None:
    for module, path in product_files():
        if not module.startswith("plait.graphs."):
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                assert node.name.startswith("build_") and node.name.endswith("_graph"), (
                    f"{module} defines {node.name!r}: graphs/ only wires"
                )


def strings_in(path: Path) -> Iterator[str]:
    """The string literals of a module, docstrings left out."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            yield node.value


def test_host_names_stay_in_their_host_adapter() -> None:
    opencode = {name for name in (*HOOK_NAMES, *EVENT_INTENTS) if "." in name}
    assert "chat.message" in opencode and "session.idle" in opencode
    for module, path in product_files():
        if not module.startswith("plait.adapters.hosts.opencode"):
            leaked = opencode & set(strings_in(path))
            assert not leaked, f"{module} names OpenCode's {sorted(leaked)}"
        if not module.startswith(("plait.adapters.hosts.langchain", "plait.adapters.lang")):
            imports = [
                node.module or ""
                for node in ast.walk(ast.parse(path.read_text()))
                if isinstance(node, ast.ImportFrom)
            ]
            assert not [
                m for m in imports if m.startswith(("langchain_core.messages", "langchain."))
            ], f"{module} uses LangChain's message types"
