"""plait's code type-checks (mypy, with the settings in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("adapters", "graphs", "nodes", "plait", "state")


def test_the_code_type_checks() -> None:
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", *SOURCES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
