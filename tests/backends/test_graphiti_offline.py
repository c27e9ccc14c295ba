"""Graphiti on a real FalkorDB with the offline LLM and embedder: groups, episodes, recall."""

from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import pytest
from graphiti_core.llm_client.client import LLMClient
from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
from graphiti_core.prompts.dedupe_edges import EdgeDuplicate
from graphiti_core.prompts.extract_edges import EdgeTimestamps
from graphiti_core.prompts.extract_nodes import ExtractedEntities
from graphiti_core.prompts.lib import prompt_library
from graphiti_core.prompts.models import Message
from graphiti_core.utils.maintenance import dedup_helpers
from support.events import timed_event

from plait.adapters.backends.graphiti import (
    OfflineEmbedder,
    OfflineLLMClient,
    OfflineReranker,
    ProviderConfig,
    episode_body_for,
    group_id_for,
    make_graphiti,
    make_llm_client,
    parse_episode_body,
    search_memory,
    user_group_id,
    write_events,
)
from plait.adapters.backends.graphiti.extraction import extract_entities, extract_facts
from plait.adapters.backends.graphiti.factory import TELEMETRY_ENV, make_embedder
from plait.adapters.backends.graphiti.knowledge import GraphitiKnowledgeGraph, open_knowledge_graph
from plait.adapters.backends.graphiti.offline_embedder import cosine, embed_text
from plait.adapters.backends.graphiti.offline_llm import clean_input
from plait.adapters.backends.graphiti.speedups import install as install_speedups
from plait.state.base.errors import ConfigError, MissingExtra
from plait.state.events import EventKind
from plait.state.groups import project_name_of
from plait.state.ports import KnowledgeGraph

START = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


event = partial(timed_event, start=START, session="ses_a")


SESSION = [
    event(
        1,
        EventKind.DECISION,
        "Use FalkorDB as the graph database for long-term memory",
        refs=("adapters/graphiti/factory.py",),
        key="storage",
    ),
    event(2, EventKind.FILE_EDIT, "edited src/app.py", refs=("src/app.py", "App.run"), key="x"),
    event(
        3,
        EventKind.ERROR,
        "pytest: ImportError cannot import name Foo",
        refs=("tests/test_app.py",),
        key="pytest:ImportError",
    ),
    event(
        4, EventKind.ERROR_RESOLVED, "renamed Foo to Bar in src/app.py", key="pytest:ImportError"
    ),
    event(5, EventKind.RULE, "Always run `uv run pytest -q` before committing", key="tests"),
    event(6, EventKind.ENV_CHANGE, "uv add httpx", key="env:httpx"),
    event(7, EventKind.PREFERENCE, "Prefer tabs over spaces in Go files", key="indent"),
]


def group() -> str:
    return f"plait-test-{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def graphiti(redis_url: str) -> AsyncIterator[object]:
    instance = await make_graphiti(falkordb_url=redis_url)
    yield instance
    await instance.close()


async def count(graphiti, group_id: str, pattern: str) -> int:
    driver = graphiti.driver.clone(database=group_id)
    records, _, _ = await driver.execute_query(f"MATCH {pattern} RETURN count(*) AS c")
    return records[0]["c"]


# -- groups -------------------------------------------------------------------------------------
def test_group_ids_are_stable_sanitized_and_distinct(tmp_path: Path) -> None:
    project = tmp_path / "My Shop (v2)!"
    project.mkdir()
    other = tmp_path / "elsewhere" / "My Shop (v2)!"
    other.mkdir(parents=True)
    first = group_id_for("plait", project)
    assert first == group_id_for("plait", project / "." / "")
    assert first.startswith("plait-My-Shop-v2-")
    assert all(c.isalnum() or c in "-_" for c in first)
    assert first != group_id_for("plait", other)
    assert project_name_of(first, "plait") == "My-Shop-v2"
    assert user_group_id("plait", "alice") == "plait-user-alice" != first
    assert user_group_id("a b/c", "Bob Smith") == "a-b-c-user-Bob-Smith"
    assert user_group_id("plait", "alice") != user_group_id("plait", "bob")


# -- episode bodies and extraction --------------------------------------------------------------
def test_episode_body_round_trips_events() -> None:
    tricky = event(9, EventKind.DECISION, "Keep a | b, c\nsplit", refs=("x, y.py",), body="d|e")
    project, lines = parse_episode_body(episode_body_for([*SESSION, tricky], "shop"))
    assert project == "shop"
    assert [line.kind for line in lines] == [e.kind.value for e in [*SESSION, tricky]]
    assert lines[0].refs == ("adapters/graphiti/factory.py",)
    assert lines[0].key == "storage"
    assert lines[-1].summary == "Keep a / b, c split"
    assert lines[-1].refs == ("x; y.py",)
    assert lines[-1].detail == "d/e"
    assert parse_episode_body("just some prose") == ("", [])


def test_extraction_finds_files_symbols_libraries_commands_and_facts() -> None:
    _, lines = parse_episode_body(episode_body_for(SESSION, "shop"))
    entities = {(e.name, e.type) for e in extract_entities(lines, "shop")}
    assert {
        ("shop", "Project"),
        ("adapters/graphiti/factory.py", "File"),
        ("src/app.py", "File"),
        ("App.run", "Symbol"),
        ("httpx", "Library"),
        ("uv run pytest -q", "Command"),
        ("the user", "Person"),
        ("error pytest:ImportError", "Error"),
    } <= entities
    facts = {f.fact: f for f in extract_facts(lines, "shop")}
    decision = facts[
        "Decided: Use FalkorDB as the graph database for long-term memory (topic: storage)"
    ]
    assert (decision.source, decision.target) == ("shop", "topic storage")
    fix = facts["Fix for pytest:ImportError: renamed Foo to Bar in src/app.py"]
    assert fix.source == "error pytest:ImportError"
    assert fix.relation == "FIXED_BY"
    assert facts[
        "The user prefers: Prefer tabs over spaces in Go files (topic: indent)"
    ].source == ("the user")
    assert "Rule: Always run `uv run pytest -q` before committing (topic: tests)" in facts
    assert not any("edited" in f and "Decided" in f for f in facts)


def test_prose_that_reads_like_an_install_command_names_no_library() -> None:
    said = [
        "Today I went to go get my hair done and had a spa day for some self care.",
        "Run pip install httpx and then the tests; go get github.com/spf13/cobra@v1.8.0 too.",
        "We npm install left-pad, then yarn add react@18 and carry on",
    ]
    text = "\n".join(
        f"- discovery @2024-01-12T22:08:5{n}+00:00 | {line}" for n, line in enumerate(said)
    )
    _, lines = parse_episode_body(f"plait episode v1\n{text}")
    libraries = [e.name for e in extract_entities(lines, "") if e.type == "Library"]
    assert libraries == ["httpx", "github.com/spf13/cobra", "left-pad", "react"]


# -- the offline LLM ----------------------------------------------------------------------------
async def test_offline_llm_answers_graphiti_prompts_from_the_episode() -> None:
    client = OfflineLLMClient()
    body = episode_body_for(SESSION[:2], "shop")
    messages = prompt_library.extract_nodes.extract_text(
        {
            "episode_content": body,
            "entity_types": [
                {"entity_type_id": 0, "entity_type_name": "Entity"},
                {"entity_type_id": 1, "entity_type_name": "File"},
            ],
            "previous_episodes": [],
            "custom_extraction_instructions": "",
            "source_description": "",
        }
    )
    answer = await client.generate_response(messages, response_model=ExtractedEntities)
    found = {e["name"]: e["entity_type_id"] for e in answer["extracted_entities"]}
    assert found["src/app.py"] == 1
    assert found["shop"] == 0  # Project is not offered here: the default type
    assert "Use FalkorDB" not in " ".join(found)


async def test_offline_llm_is_honest_about_unknown_prompts() -> None:
    client = OfflineLLMClient()
    answer = await client.generate_response(
        [Message(role="system", content="x"), Message(role="user", content="When was it?")],
        response_model=EdgeTimestamps,
    )
    assert answer == {"valid_at": None, "invalid_at": None}
    assert client.unknown_requests["EdgeTimestamps"] == 1


async def test_offline_llm_supersedes_only_the_same_topic() -> None:
    client = OfflineLLMClient()
    messages = prompt_library.dedupe_edges.resolve_edge(
        {
            "existing_edges": [{"idx": 0, "fact": "Decided: use tabs (topic: indent)"}],
            "edge_invalidation_candidates": [
                {"idx": 1, "fact": "Decided: use spaces (topic: indent)"},
                {"idx": 2, "fact": "Decided: use uv (topic: tooling)"},
            ],
            "new_edge": "Decided: use tabs (topic: indent)",
        }
    )
    answer = await client.generate_response(messages, response_model=EdgeDuplicate)
    assert answer == {"duplicate_facts": [0], "contradicted_facts": [1]}


def test_offline_prompt_cleaning_matches_graphiti() -> None:
    client = OfflineLLMClient()
    alphabet = [chr(code) for code in range(300)] + list("\u200b\u200d\ufeff\u2060\ud800é😀")
    rng = random.Random(5)
    texts = ["", "plain\ttext\r\n", "a\x00b\x1fc\u200bd\ud800e"]
    texts += ["".join(rng.choice(alphabet) for _ in range(40)) for _ in range(500)]
    for text in texts:
        assert clean_input(text) == LLMClient._clean_input(client, text)
    assert clean_input("a\x00b\x1fc\u200bd\ud800e") == "abcde"


async def test_offline_llm_skips_the_json_schema_no_one_reads() -> None:
    client = OfflineLLMClient()
    messages = [
        Message(role="system", content="extract"),
        Message(role="user", content=f"<CURRENT MESSAGE>\n{episode_body_for(SESSION[:1])}\n"),
    ]
    messages[1].content += "</CURRENT MESSAGE>\u200b"
    answer = await client.generate_response(messages, response_model=ExtractedEntities)
    names = {e["name"] for e in answer["extracted_entities"]}
    assert "adapters/graphiti/factory.py" in names
    assert "Respond with a JSON object" not in messages[-1].content
    assert messages[-1].content.endswith("</CURRENT MESSAGE>")  # cleaned all the same


def test_memoized_minhash_is_installed_and_gives_graphiti_signatures() -> None:
    assert install_speedups()
    signature = dedup_helpers._minhash_signature
    assert signature.plait_original is not None
    assert install_speedups() and dedup_helpers._minhash_signature is signature  # once only
    for name in ["src/app.py", "error pytest:ImportError", "ab", ""]:
        shingles = dedup_helpers._shingles(name)
        assert signature(shingles) == signature.plait_original(shingles)
        assert signature(list(shingles)) == signature(shingles)


# -- the offline embedder -----------------------------------------------------------------------
def test_cached_embeddings_are_fresh_lists() -> None:
    first = embed_text("Use FalkorDB for memory", 64)
    first[0] = 99.0
    again = embed_text("Use FalkorDB for memory", 64)
    assert again[0] != 99.0 and again == embed_text("Use FalkorDB for memory", 64)
    assert embed_text("", 8) == [0.0] * 8


async def test_offline_embedder_similarity_sanity() -> None:
    embedder = OfflineEmbedder(256)
    fact, paraphrase, unrelated = await embedder.create_batch(
        [
            "Decided: use FalkorDB as the graph database for long-term memory",
            "which db did we choose for the graph?",
            "rename the CSS classes of the login button",
        ]
    )
    assert len(fact) == 256
    assert abs(sum(x * x for x in fact) - 1.0) < 1e-9
    assert cosine(fact, paraphrase) > cosine(fact, unrelated) + 0.2
    assert await embedder.create("same text") == embed_text("same text", 256)
    assert cosine(embed_text("parseConfig"), embed_text("parse_config")) > 0.8


async def test_offline_reranker_matches_on_content_words_not_stopwords() -> None:
    question = "How does the user like functions to be written?"
    answer = "Full type hints everywhere, and keep functions small, under 20 lines."
    chatter = "Does that work with the async session?"
    ranked = await OfflineReranker().rank(question, [chatter, answer])
    assert [passage for passage, _ in ranked] == [answer, chatter]
    # the stored vectors keep every word: old graphs and new queries still agree
    assert embed_text(chatter) != embed_text(chatter, content_only=True)


# -- factory ------------------------------------------------------------------------------------
def test_providers_and_missing_extras() -> None:
    assert isinstance(make_llm_client(ProviderConfig()), OfflineLLMClient)
    local = make_llm_client(
        ProviderConfig(provider="openai_compatible", base_url="http://127.0.0.1:1/v1", model="m")
    )
    assert isinstance(local, OpenAIGenericClient)
    with pytest.raises(ConfigError):
        make_llm_client(ProviderConfig(provider="openai_compatible"))
    with pytest.raises(ConfigError):
        make_llm_client(ProviderConfig(provider="gemini"))
    if importlib.util.find_spec("anthropic") is None:
        with pytest.raises(MissingExtra, match="anthropic"):
            make_llm_client(ProviderConfig(provider="anthropic", api_key="k"))
    if importlib.util.find_spec("sentence_transformers") is None:
        with pytest.raises(MissingExtra, match="sentence-transformers"):
            make_embedder(ProviderConfig(provider="sentence_transformers"))
    assert isinstance(make_embedder(ProviderConfig(dimensions=64)), OfflineEmbedder)


async def test_telemetry_is_off_unless_opted_in(redis_url: str, monkeypatch) -> None:
    monkeypatch.setenv(TELEMETRY_ENV, "true")
    instance = await make_graphiti(falkordb_url=redis_url)
    assert os.environ[TELEMETRY_ENV] == "false"
    await instance.close()
    instance = await make_graphiti(falkordb_url=redis_url, telemetry=True)
    assert os.environ[TELEMETRY_ENV] == "true"
    await instance.close()
    env = {k: v for k, v in os.environ.items() if k != TELEMETRY_ENV}
    code = "import os, plait.adapters.backends.graphiti; print(os.environ.get('GRAPHITI_TELEMETRY_ENABLED'))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "None", out.stderr  # importing changes nothing


# -- real FalkorDB ------------------------------------------------------------------------------
async def test_events_become_episodes_and_a_paraphrase_recalls_the_decision(graphiti) -> None:
    group_id = group()
    written = await write_events(graphiti, group_id, SESSION[:6])
    assert written == 6
    assert graphiti.llm_client.unknown_requests.get("ExtractedEntities", 0) == 0
    hits = await search_memory(graphiti, "which database did we pick for the graph?", [group_id], 5)
    assert hits[0].kind == "fact"
    assert "FalkorDB" in hits[0].text
    assert hits[0].valid_at == START + timedelta(minutes=1)
    fixes = await search_memory(graphiti, "how did we fix the ImportError", [group_id], 10)
    assert any("renamed Foo to Bar" in h.text for h in fixes)


async def test_replay_does_not_duplicate(graphiti) -> None:
    group_id = group()
    assert await write_events(graphiti, group_id, SESSION[:3], project="shop") == 3
    episodes = await count(graphiti, group_id, "(e:Episodic)")
    facts = await count(graphiti, group_id, "()-[r:RELATES_TO]->()")
    entities = await count(graphiti, group_id, "(n:Entity)")
    assert (episodes, facts) == (1, 3)  # one episode holds the three events
    # the same events again, and an overlapping batch with one new event: only the new one
    assert await write_events(graphiti, group_id, SESSION[:3], project="shop") == 0
    assert await write_events(graphiti, group_id, SESSION[1:4], project="shop") == 1
    assert await count(graphiti, group_id, "(e:Episodic)") == 2
    assert await count(graphiti, group_id, "()-[r:RELATES_TO]->()") == facts + 1
    assert await count(graphiti, group_id, "(n:Entity)") == entities + 0  # the error is reused


async def test_groups_are_isolated_and_preferences_go_to_the_user_group(graphiti) -> None:
    prefix = group()
    knowledge = GraphitiKnowledgeGraph(graphiti=graphiti, prefix=prefix, user="ada")
    shop, blog = f"{prefix}-shop-0a1b2c3d", f"{prefix}-blog-0a1b2c3d"
    users = user_group_id(prefix, "ada")
    assert await knowledge.write_episodes(shop, SESSION) == len(SESSION)
    assert await count(graphiti, users, "(e:Episodic)") == 1
    other = event(1, EventKind.DECISION, "Use SQLite as the database of the blog", key="storage")
    await write_events(graphiti, blog, [other], project="blog")
    blog_hits = await search_memory(graphiti, "database FalkorDB SQLite", [blog], 10)
    assert blog_hits and all("FalkorDB" not in h.text and h.group_id == blog for h in blog_hits)
    shop_hits = await search_memory(graphiti, "tabs or spaces in Go", [shop], 10)
    assert not any("tabs" in h.text for h in shop_hits)
    both = await search_memory(graphiti, "tabs or spaces in Go", [shop, users], 10)
    assert any("tabs over spaces" in h.text and h.group_id == users for h in both)


async def test_a_new_decision_on_the_same_topic_supersedes_the_old(graphiti) -> None:
    group_id = group()
    old = event(1, EventKind.DECISION, "Use tabs for indentation", key="indent")
    new = event(2, EventKind.DECISION, "Use four spaces for indentation", key="indent")
    # in two drain batches (within one, the drain sends only the newer: without_superseded)
    await write_events(graphiti, group_id, [old], project="shop")
    await write_events(graphiti, group_id, [new], project="shop")
    hits = await search_memory(graphiti, "indentation tabs spaces", [group_id], 10)
    facts = [h.text for h in hits if h.kind == "fact"]
    assert any("four spaces" in f for f in facts)
    assert not any("Use tabs" in f for f in facts)
    assert all(h.kind != "episode" for h in hits)  # turns come from the recall index
    entities = [h.text for h in hits if h.kind == "entity"]
    assert any("four spaces" in e for e in entities)
    assert not any("Use tabs" in e for e in entities)  # nor in entity summaries
    stale = await search_memory(graphiti, "indentation tabs", [group_id], 10, include_invalid=True)
    assert any(h.kind == "fact" and "Use tabs" in h.text and not h.is_current for h in stale)
    assert any(h.kind == "entity" and "Use tabs" in h.text for h in stale)


async def test_knowledge_graph_port_on_settings(redis_url: str, tmp_path: Path) -> None:
    from plait.state.base.settings import Settings

    settings = Settings.load(tmp_path, data_dir=tmp_path)
    knowledge = await open_knowledge_graph(settings, redis_url)
    try:
        assert isinstance(knowledge, KnowledgeGraph)
        group_id = group_id_for("plait", tmp_path / f"proj{uuid.uuid4().hex[:6]}")
        assert await knowledge.write_episodes(group_id, SESSION) == len(SESSION)
        assert await knowledge.write_episodes(group_id, SESSION) == 0
        users = user_group_id("plait", settings.graphiti.resolved_user())
        hits = await knowledge.search("go indentation preference", [group_id, users], 5)
        assert any("tabs over spaces" in h.text for h in hits)
    finally:
        await knowledge.aclose()
