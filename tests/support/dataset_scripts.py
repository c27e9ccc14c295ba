"""The dataset converters are scripts in ``datasets/``, not modules of plait: load them by path."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

DATASETS = Path(__file__).resolve().parents[2] / "datasets"


def load_script(name: str) -> ModuleType:
    """``datasets/<name>.py`` as a module."""
    spec = importlib.util.spec_from_file_location(name, DATASETS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
