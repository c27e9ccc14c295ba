"""plait's source tree copied into the layout it has once installed (``plait/graphs`` …).

Its subpackages live in folders of their own (``graphs/`` is ``plait.graphs``); tools that find
modules by walking folders (import-linter, grimp, mypy) read the copy.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
FOLDERS: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]


def stage_installed_layout(base: Path) -> Path:
    """Copy every package folder to where it is installed, under ``base``; return ``base``."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package, folder in sorted(FOLDERS.items(), key=lambda item: item[0].count(".")):
        target = base.joinpath(*package.split("."))
        shutil.copytree(ROOT / folder, target, ignore=ignore, dirs_exist_ok=True)
    return base


__all__ = ["FOLDERS", "PYPROJECT", "ROOT", "stage_installed_layout"]
