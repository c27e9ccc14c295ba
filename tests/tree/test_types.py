"""plait's code type-checks (mypy, with the settings in pyproject.toml).

mypy reads a copy of the tree laid out as installed, so an import across folders
(``plait.memory`` → ``plait.graphs.hooks``) is checked with its real types, not taken as Any.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from support.layout import ROOT, stage_installed_layout


def test_the_code_type_checks(tmp_path: Path) -> None:
    layout = stage_installed_layout(tmp_path / "layout")
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "mypy-cache"),
            "-p",
            "plait",
        ],
        cwd=layout,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    found = re.search(r"in (\d+) source files", checked.stdout)
    assert found and int(found[1]) > 100, checked.stdout  # the whole package, not none of it
