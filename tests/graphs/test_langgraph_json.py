"""``langgraph.json`` names plait's graphs for LangGraph Server; their shapes match snapshots.

The server's graphs (:mod:`plait.adapters.hosts.langgraph_server.graphs`) are plait's own
graphs with a context the server can build and show; ``tests/test_langgraph_server.py`` runs
them under a real ``langgraph dev``.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from langgraph.graph.state import CompiledStateGraph

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).resolve().parents[1] / "snapshots"
EXPECTED_GRAPHS = {"hooks", "compaction", "drain", "cache_refresh"}


def graph_specs() -> dict[str, str]:
    return json.loads((ROOT / "langgraph.json").read_text())["graphs"]


def load_graph(spec: str) -> CompiledStateGraph:
    """Load ``module:attribute`` the way LangGraph Server does."""
    module_name, attribute = spec.rsplit(":", 1)
    return getattr(importlib.import_module(module_name), attribute)


def test_langgraph_json_names_every_plait_graph() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert set(config["graphs"]) == EXPECTED_GRAPHS
    assert config["dependencies"] == ["."]
    for name, spec in config["graphs"].items():
        assert spec == f"plait.adapters.hosts.langgraph_server.graphs:{name}"


@pytest.mark.parametrize("name", sorted(EXPECTED_GRAPHS))
def test_langgraph_json_graph_is_compiled_with_a_schema_the_server_can_show(name: str) -> None:
    graph = load_graph(graph_specs()[name])
    assert isinstance(graph, CompiledStateGraph)
    assert set(graph.get_context_jsonschema()["properties"]) == {"project_dir", "data_dir"}
    assert name in {n.split(":")[0] for n in graph.get_graph().nodes} or name == "hooks"


@pytest.mark.parametrize("name", sorted(EXPECTED_GRAPHS))
def test_graph_shape_matches_snapshot(name: str) -> None:
    graph = importlib.import_module(f"plait.graphs.{name}").graph
    mermaid = graph.get_graph().draw_mermaid()
    snapshot = SNAPSHOTS / f"{name}.mmd"
    if not snapshot.exists():
        snapshot.write_text(mermaid)
    assert mermaid == snapshot.read_text(), f"{name} graph wiring changed; see {snapshot}"
