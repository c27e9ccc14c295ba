"""A user's project type-checks against plait: the package ships its types (``py.typed``).

The project depends on plait by path, as uv installs such a dependency: a built wheel (here
from plait's sdist). mypy then
reads plait's own annotations, so a wrong use of the facade or of the short import paths
(``plait.langchain``, ``plait.checkpoint``) is an error in the user's code, not an ``Any``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.layout import ROOT

USER_CODE = """
from plait import Memory, PlaitError
from plait.checkpoint import AsyncRedisSaver
from plait.langchain import SessionMemoryMiddleware


async def main(saver: AsyncRedisSaver, middleware: SessionMemoryMiddleware) -> None:
    async with Memory.open(".") as memory:
        envelope: int = await memory.envelope("thread-1")
        print(envelope, saver, middleware, PlaitError)
"""

pytestmark = pytest.mark.slow


def run(*command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_a_user_project_sees_plaits_types(tmp_path: Path) -> None:
    uv = os.environ.get("UV") or shutil.which("uv")  # uv run names itself in UV
    assert uv, "uv runs the suite"
    # an sdist and a wheel built from it, in a scratch folder: nothing of an earlier build counts
    built = run(uv, "build", "--out-dir", str(tmp_path / "dist"), str(ROOT), cwd=ROOT)
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("plait-*.whl"))
    venv = tmp_path / "user-venv"
    made = run(uv, "venv", "--python", sys.executable, str(venv), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    installed = run(
        uv, "pip", "install", "--python", str(python), "--no-deps", str(wheel), cwd=tmp_path
    )
    assert installed.returncode == 0, installed.stderr
    project = tmp_path / "user-project"
    project.mkdir()
    (project / "app.py").write_text(USER_CODE)
    checked = run(
        sys.executable,
        "-m",
        "mypy",
        "--python-executable",
        str(python),
        "--no-incremental",
        "--ignore-missing-imports",
        "app.py",
        cwd=project,
    )
    report = checked.stdout + checked.stderr
    # plait resolves (no missing-stubs or not-found error) and its annotations are real: the
    # one deliberate mistake, an envelope (a str) put in an int, is found
    assert "py.typed" not in report and "import-not-found" not in report, report
    assert "import-untyped" not in report, report
    assert (
        'Incompatible types in assignment (expression has type "str", variable has type "int")'
        in report
    ), report
    assert checked.stdout.count("error:") == 1, report
