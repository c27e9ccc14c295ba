"""The OpenAI-compatible provider path (Ollama, vLLM, LM Studio), recorded and replayed with vcrpy.

A local OpenAI-compatible server, started by the tests, answers graphiti-core's structured
extraction prompts and embedding requests (with plait's offline extractor behind it). plait,
configured only with ``llm.base_url`` and ``embedder.base_url``, drains events through
graphiti-core's ``OpenAIGenericClient`` and ``OpenAIEmbedder`` to it, and searches.

Requests match on method, path and JSON body (up to the order of an entity's labels, which
graphiti-core lists from a set, so it changes with the interpreter's hash seed); the
``authorization`` header is never written.
The committed cassette replays with no server at the URL and ``record_mode="none"``, so a
request the cassette does not hold fails the test instead of reaching a network. Re-record it
after a graphiti-core upgrade changes its prompts: ``PLAIT_RECORD_CASSETTES=1 uv run pytest
tests/test_provider_wiring.py``.
"""

from __future__ import annotations

import json
import os
import re
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import vcr
import yaml
from graphiti_core.embedder.openai import OpenAIEmbedder
from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
from support.events import timed_event
from support.graphiti_provider import offline_responder, unanswered
from support.opencode_mock_provider import MockProvider

from plait.adapters.backends.graphiti import open_knowledge_graph
from plait.adapters.backends.graphiti.factory import drop_group
from plait.adapters.backends.graphiti.knowledge import GraphitiKnowledgeGraph
from plait.state.base.settings import Settings
from plait.state.events import EventKind
from plait.state.ports import episode_uuid

CASSETTE = Path(__file__).parents[1] / "cassettes" / "openai_compatible_drain.yaml"
RECORDING = os.environ.get("PLAIT_RECORD_CASSETTES") == "1"
SECRET = "sk-local-wiring-secret"
GROUP = "plaitvcr-shop"
START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


event = partial(timed_event, start=START, session="ses_wiring")


EVENTS = [
    event(
        1,
        EventKind.DECISION,
        "Use PostgreSQL as the primary datastore for orders",
        refs=("shop/orders/models.py",),
        key="orders-storage",
    ),
    event(2, EventKind.ERROR_RESOLVED, "pin psycopg to 3.1 to fix the pool crash", key="pool"),
    event(3, EventKind.RULE, "Never call the payment API from unit tests", key="tests"),
]
QUERY = "which database did we pick for storing orders?"


LABELS = re.compile(r'("entity_types?": )\[([^\]]*)\]')


def sorted_labels(match: re.Match[str]) -> str:
    return match[1] + json.dumps(sorted(json.loads(f"[{match[2]}]")))


def canonical_body(raw: bytes | str | None) -> Any:
    """A request's JSON with every entity's label list sorted inside the prompts."""
    body = json.loads(raw or "null")
    if isinstance(body, dict):
        for message in body.get("messages") or []:
            if isinstance(message.get("content"), str):
                message["content"] = LABELS.sub(sorted_labels, message["content"])
    return body


def same_body(recorded: vcr.request.Request, sent: vcr.request.Request) -> None:
    """vcrpy matcher: equal JSON bodies, up to label order."""
    assert canonical_body(recorded.body) == canonical_body(sent.body)


def recorder(record_mode: str) -> vcr.VCR:
    """vcrpy as these tests use it: match on what was asked, never store the key."""
    recording = vcr.VCR(
        record_mode=record_mode,
        match_on=["method", "path", "same_body"],
        filter_headers=["authorization"],
        decode_compressed_response=True,
    )
    recording.register_matcher("same_body", same_body)
    return recording


def closed_port() -> int:
    """A port nothing listens on: a request that escapes the cassette cannot be answered."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def server() -> Iterator[MockProvider]:
    """The local OpenAI-compatible server (offline extractor and embedder behind it)."""
    unanswered.clear()
    provider = MockProvider(responder=offline_responder).start()
    yield provider
    provider.stop()


async def open_graph(tmp_path: Path, redis_url: str, base_url: str) -> GraphitiKnowledgeGraph:
    """plait configured for an OpenAI-compatible endpoint by its settings, as a user would."""
    endpoint = {"base_url": base_url, "api_key": SECRET}
    settings = Settings.load(
        tmp_path,
        llm={**endpoint, "model": "llama3.1"},
        embedder={**endpoint, "model": "nomic-embed-text"},
    )
    return await open_knowledge_graph(settings, redis_url)


async def drain_and_search(graph: GraphitiKnowledgeGraph) -> dict[str, object]:
    """Write the events into a fresh group, search it; what ended up in the graph."""
    graphiti = await graph.ready()
    await drop_group(graphiti, GROUP)
    written = await graph.write_episodes(GROUP, EVENTS)
    driver = graphiti.driver.clone(database=GROUP)
    episodes, _, _ = await driver.execute_query("MATCH (e:Episodic) RETURN e.uuid AS uuid")
    entities, _, _ = await driver.execute_query("MATCH (n:Entity) RETURN n.name AS name")
    hits = await graph.search(QUERY, [GROUP], 5)
    return {
        "written": written,
        "episodes": sorted(record["uuid"] for record in episodes),
        "entities": sorted(record["name"] for record in entities),
        "top hit": hits[0].text if hits else "",
    }


def assert_events_landed(result: dict[str, object]) -> None:
    assert result["written"] == len(EVENTS)
    assert result["episodes"] == [episode_uuid(GROUP, EVENTS[0])]  # one episode holds all three
    entities = result["entities"]
    assert isinstance(entities, list)
    assert {"shop/orders/models.py", "error pool", "topic tests"} <= set(entities)
    assert "PostgreSQL" in str(result["top hit"])


def uses_openai_compatible_clients(graph: GraphitiKnowledgeGraph) -> None:
    assert graph.graphiti is not None
    assert isinstance(graph.graphiti.llm_client, OpenAIGenericClient)
    assert isinstance(graph.graphiti.embedder, OpenAIEmbedder)


async def test_a_local_server_is_recorded_then_replayed_after_it_stops(
    server: MockProvider, redis_url: str, tmp_path: Path
) -> None:
    cassette_path = tmp_path / "recorded.yaml"
    graph = await open_graph(tmp_path, redis_url, server.base_url)
    with recorder("all").use_cassette(str(cassette_path)) as cassette:
        recorded = await drain_and_search(graph)
    uses_openai_compatible_clients(graph)
    await graph.aclose()
    assert_events_landed(recorded)
    asked = [request.path for request in server.requests]
    assert any(path.endswith("/chat/completions") for path in asked)
    assert any(path.endswith("/embeddings") for path in asked)
    assert len(cassette) == len(asked) and not unanswered
    assert {request.body.get("model") for request in server.requests} == {
        "llama3.1",
        "nomic-embed-text",
    }
    assert SECRET not in cassette_path.read_text()

    server.stop()
    replay = await open_graph(tmp_path, redis_url, f"http://127.0.0.1:{closed_port()}/v1")
    with recorder("none").use_cassette(str(cassette_path)) as cassette:
        replayed = await drain_and_search(replay)
    await replay.aclose()
    assert cassette.all_played and cassette.play_count == len(asked)
    assert replayed == recorded


async def test_the_committed_cassette_replays_with_no_server(
    redis_url: str, tmp_path: Path
) -> None:
    if RECORDING:
        CASSETTE.unlink(missing_ok=True)
        provider = MockProvider(responder=offline_responder).start()
        base_url, mode = provider.base_url, "all"
    else:
        base_url, mode = f"http://127.0.0.1:{closed_port()}/v1", "none"
    graph = await open_graph(tmp_path, redis_url, base_url)
    try:
        with recorder(mode).use_cassette(str(CASSETTE)) as cassette:
            result = await drain_and_search(graph)
        uses_openai_compatible_clients(graph)
    finally:
        await graph.aclose()
        if RECORDING:
            provider.stop()
    assert_events_landed(result)
    if not RECORDING:
        assert cassette.all_played and cassette.play_count == len(cassette)
    stored = yaml.safe_load(CASSETTE.read_text())["interactions"]
    assert all("authorization" not in {h.lower() for h in i["request"]["headers"]} for i in stored)
    assert {i["request"]["uri"].rsplit("/", 1)[-1] for i in stored} == {"completions", "embeddings"}


def test_a_base_url_alone_selects_the_openai_compatible_provider(tmp_path: Path) -> None:
    settings = Settings.load(tmp_path, llm={"base_url": "http://127.0.0.1:11434/v1"})
    assert settings.llm.resolved() == "openai_compatible"
    assert settings.embedder.resolved() == "offline"
