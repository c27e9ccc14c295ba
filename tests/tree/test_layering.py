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

from plait.adapters.hosts.claude_code import hooks as claude_code_hooks
from plait.adapters.hosts.codex import hooks as codex_hooks
from plait.adapters.hosts.gemini import hooks as gemini_hooks
from plait.adapters.hosts.opencode.hooks import EVENT_INTENTS, HOOK_NAMES

# The one import that runs upward, declared in pyproject.toml with its reason.
UPWARD = ("plait.memory", "plait.adapters.hosts.opencode.hooks")


@pytest.fixture(scope="module")
def installed_layout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The source tree copied into the layout it has once installed: ``plait/graphs`` …"""
    return stage_installed_layout(tmp_path_factory.mktemp("layout"))


def product_files() -> Iterator[tuple[str, Path]]:
    """Every product module: its dotted name and its file."""
    for package, folder in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
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
    assert "3 kept, 0 broken" in result.stdout


def room_of(path: Path) -> str:
    """The folder a module's file sits in, read as a room: a top-level folder of the checkout,
    but ``adapters/`` is two rooms, the hosts above the facade and the backends below it."""
    parts = path.relative_to(ROOT).parts
    if parts[0] == "adapters" and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0]


def import_graph(installed_layout: Path, monkeypatch: pytest.MonkeyPatch) -> grimp.ImportGraph:
    monkeypatch.syspath_prepend(str(installed_layout))
    for name in [m for m in sys.modules if m == "plait" or m.startswith("plait.")]:
        monkeypatch.delitem(sys.modules, name)
    return grimp.build_graph("plait", exclude_type_checking_imports=True, cache_dir=None)


def test_folders_form_no_cycle(installed_layout: Path, monkeypatch) -> None:
    """Read as rooms, no folder imports a folder that imports it back (``state/base`` apart)."""
    graph = import_graph(installed_layout, monkeypatch)
    files = dict(product_files())
    assert {"plait.nodes.capture", "plait.adapters.hosts.opencode.hooks"} <= graph.modules
    edges: dict[str, set[str]] = {room_of(path): set() for path in files.values()}
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            if (importer, imported) == UPWARD or imported not in files:
                continue
            source, target = room_of(files[importer]), room_of(files[imported])
            if source != target:
                edges[source].add(target)
    order = list(graphlib.TopologicalSorter(edges).static_order())  # raises CycleError
    assert order.index("state") < order.index("nodes") < order.index("graphs")
    assert order.index("graphs") < order.index("plait") < order.index("adapters/hosts")
    assert order.index("adapters/backends") < order.index("plait") < order.index("cli")


def test_leaves_import_only_leaves(installed_layout: Path, monkeypatch) -> None:
    """``state/base`` (errors, settings, the boundary, redaction) imports nothing else of plait."""
    graph = import_graph(installed_layout, monkeypatch)
    leaves = {m for m in graph.modules if m.startswith("plait.state.base")}
    assert "plait.state.base.errors" in leaves
    for leaf in leaves:
        outside = {
            m
            for m in graph.find_modules_directly_imported_by(leaf)
            if m.startswith("plait.") and m not in leaves
        }
        assert not outside, f"{leaf} imports {sorted(outside)}"


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


def command_host_owners() -> dict[str, set[str]]:
    """Each command-hook host event name → the host folders that take it (tool names are left
    out: ``apply_patch`` or ``Bash`` are every agent's words)."""
    hosts = {"claude_code": claude_code_hooks, "codex": codex_hooks, "gemini": gemini_hooks}
    owners: dict[str, set[str]] = {}
    for name, host in hosts.items():
        for event in host.EVENTS:
            owners.setdefault(event, set()).add(name)
    return owners


def test_host_names_stay_in_their_host_adapter() -> None:
    opencode = {name for name in (*HOOK_NAMES, *EVENT_INTENTS) if "." in name}
    assert "chat.message" in opencode and "session.idle" in opencode
    owners = command_host_owners()
    assert owners["UserPromptSubmit"] == {"claude_code", "codex"} and owners["BeforeAgent"] == {
        "gemini"
    }
    for module, path in product_files():
        literals = {name for name in strings_in(path) if len(name) > len("Stop")}
        if not module.startswith("plait.adapters.hosts.opencode"):
            leaked = opencode & literals
            assert not leaked, f"{module} names OpenCode's {sorted(leaked)}"
        for event in literals & set(owners):
            # a host's event names live in its folder (the shared payload shape's, also there)
            allowed = ("command_hooks", *owners[event])
            assert module.startswith(tuple(f"plait.adapters.hosts.{a}" for a in allowed)), (
                f"{module} names {sorted(owners[event])}'s {event}"
            )
        if not module.startswith("plait.adapters.hosts.langchain"):
            imports = [
                node.module or ""
                for node in ast.walk(ast.parse(path.read_text()))
                if isinstance(node, ast.ImportFrom)
            ]
            assert not [
                m for m in imports if m.startswith(("langchain_core.messages", "langchain."))
            ], f"{module} uses LangChain's message types"


def test_the_hook_client_loads_no_heavy_dependency() -> None:
    """``plait-hook`` runs once per hook: it must start in milliseconds (stdlib only)."""
    import subprocess
    import sys

    heavy = (
        "pydantic",
        "langgraph",
        "langchain_core",
        "httpx",
        "fastapi",
        "redis",
        "graphiti_core",
    )
    code = (
        "import sys, plait.adapters.hosts.hook_client; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"
