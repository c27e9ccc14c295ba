"""The notebooks in ``notebooks/`` run top to bottom on the embedded default, with no key.

Each one is executed in a fresh kernel (nbclient), in a temporary working directory; the
notebooks make their own temporary data and project directories. They are committed without
outputs, so a stale output can never pass for a result.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT_SECONDS = 240


def test_notebooks_exist() -> None:
    """The four notebooks the docs point to are there."""
    names = {path.stem for path in NOTEBOOKS}
    assert {"01-anatomy", "02-session-replay", "03-knowledge-graph", "04-time-travel"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_committed_without_outputs(path: Path) -> None:
    """No cell carries outputs or an execution count."""
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: cell {cell.id} has outputs"
            assert cell.execution_count is None, f"{path.name}: cell {cell.id} was executed"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every cell runs without an error (the notebooks assert what they show)."""
    for name in [key for key in os.environ if key.startswith("PLAIT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.setenv("PLAIT_DATA_DIR", str(tmp_path / "data"))
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_SECONDS,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "error"
    ]
    assert errors == []
    images = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if "image/png" in output.get("data", {})
    ]
    assert images or path.stem == "04-time-travel", "the notebook should draw something"
