"""``langgraph.json`` names plait's compiled graphs, and their shape matches the snapshots."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from langgraph.graph.state import CompiledStateGraph

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
EXPECTED_GRAPHS = {"hooks", "compaction", "drain", "cache_refresh"}


def graph_specs() -> dict[str, str]:
    return json.loads((ROOT / "langgraph.json").read_text())["graphs"]


def load_graph(spec: str) -> tuple[CompiledStateGraph, Path]:
    """Load ``./graphs/x.py:graph`` the way LangGraph Server would, under its plait name.

    The modules import ``plait.*``, so the file is imported as ``plait.graphs.x``; the test
    checks that this module is that very file.
    """
    path_text, attribute = spec.rsplit(":", 1)
    path = (ROOT / path_text).resolve()
    module = importlib.import_module(f"plait.graphs.{path.stem}")
    assert Path(module.__file__ or "").resolve() == path
    return getattr(module, attribute), path


def test_langgraph_json_names_every_plait_graph() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert set(config["graphs"]) == EXPECTED_GRAPHS
    assert config["dependencies"] == ["."]
    for spec in config["graphs"].values():
        path_text, attribute = spec.rsplit(":", 1)
        assert path_text.startswith("./graphs/")
        assert (ROOT / path_text).is_file()
        assert attribute == "graph"


@pytest.mark.parametrize("name", sorted(EXPECTED_GRAPHS))
def test_langgraph_json_graph_is_compiled(name: str) -> None:
    graph, path = load_graph(graph_specs()[name])
    assert isinstance(graph, CompiledStateGraph)
    assert path.stem == name
    assert len(graph.get_graph().nodes) > 2


@pytest.mark.parametrize("name", sorted(EXPECTED_GRAPHS))
def test_langgraph_json_graph_shape_matches_snapshot(name: str) -> None:
    graph, _ = load_graph(graph_specs()[name])
    mermaid = graph.get_graph().draw_mermaid()
    snapshot = SNAPSHOTS / f"{name}.mmd"
    if not snapshot.exists():
        snapshot.write_text(mermaid)
    assert mermaid == snapshot.read_text(), f"{name} graph wiring changed; see {snapshot}"
