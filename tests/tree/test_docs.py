"""The code in the docs runs.

In each file under test, the ```python blocks run in order in one namespace (top-level ``await``
allowed), and the ```bash blocks run one after the other in ``bash -euo pipefail``; both in a
temporary working directory with a temporary ``PLAIT_DATA_DIR``. README.md contributes its
```python blocks only (its bash block runs the test suite). Blocks marked ```text or ```json are
not run.
"""

from __future__ import annotations

import ast
import asyncio
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOCS = (
    "docs/quickstart-opencode.md",
    "docs/quickstart-langgraph.md",
    "docs/quickstart-researcher.md",
    "docs/architecture.md",
    "docs/operations.md",
    "docs/memory.md",
    "docs/viewer.md",
)
BLOCK = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
BASH_TIMEOUT_SECONDS = 120
DOC_MODULE = "plait_docs_example"


def code_blocks(text: str, language: str) -> list[str]:
    """The bodies of the fenced blocks of one language, in order."""
    return [body for lang, body in BLOCK.findall(text) if lang == language]


def test_code_blocks_finds_fenced_blocks() -> None:
    """The extractor takes python blocks and leaves text blocks alone."""
    text = "x\n```python\na = 1\n```\n```text\nno\n```\n```python\nb = 2\n```\n"
    assert code_blocks(text, "python") == ["a = 1\n", "b = 2\n"]
    assert code_blocks(text, "text") == ["no\n"]


def run_python(source: str, filename: str) -> dict[str, object]:
    """Run a source as a module with top-level await allowed; return its namespace.

    The module is registered in ``sys.modules`` while it runs, so type hints of classes it
    defines resolve (LangGraph reads a state schema's hints).
    """
    code = compile(source, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    module = types.ModuleType(DOC_MODULE)
    sys.modules[DOC_MODULE] = module
    try:
        result = eval(code, module.__dict__)
        if asyncio.iscoroutine(result):
            asyncio.run(result)
    finally:
        del sys.modules[DOC_MODULE]
    return module.__dict__


@pytest.fixture
def doc_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch working directory, data dir and a PATH with this venv's ``plait`` first."""
    for name in [key for key in os.environ if key.startswith("PLAIT_")]:
        monkeypatch.delenv(name)
    # as in conftest: a busy machine must not turn a doc's behaviour check into a timing test
    # (a first turn racing the background's first graphiti import can pass 250 ms there)
    monkeypatch.setenv("PLAIT_HOOKS__TIMEOUT_MS", "20000")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("PLAIT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return work


@pytest.mark.parametrize("name", [*DOCS, "README.md"])
def test_doc_python_blocks_run(name: str, doc_env: Path) -> None:
    """All python blocks of a file run, in order, in one namespace."""
    text = (ROOT / name).read_text(encoding="utf-8")
    blocks = code_blocks(text, "python")
    if name != "README.md":
        assert blocks, f"{name} has no runnable python block"
    run_python("\n".join(blocks), name)


@pytest.mark.parametrize("name", DOCS)
def test_doc_bash_blocks_run(name: str, doc_env: Path) -> None:
    """All bash blocks of a doc exit 0."""
    for block in code_blocks((ROOT / name).read_text(encoding="utf-8"), "bash"):
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=doc_env,
            capture_output=True,
            text=True,
            timeout=BASH_TIMEOUT_SECONDS,
            check=False,
        )
        assert done.returncode == 0, f"{name}:\n{block}\n{done.stdout}\n{done.stderr}"
