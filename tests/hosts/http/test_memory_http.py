"""The memory tools over plait's HTTP service, on a real Memory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from support.service_client import app_client

from plait import Memory
from plait.adapters.hosts.http import create_app

TOKEN = "memory-token"


@pytest.fixture
async def client(
    tmp_path: Path, redis_url: str, group_prefix: str
) -> AsyncIterator[httpx.AsyncClient]:
    project = tmp_path / "project"
    project.mkdir()
    async with (
        Memory.open(
            project,
            tmp_path / "data",
            start_background=False,
            redis={"url": redis_url},
            graphiti={"group_id_prefix": group_prefix},
        ) as memory,
        app_client(create_app(memory, token=TOKEN), TOKEN) as opened,
    ):
        yield opened


async def test_http_memory_tools_save_search_and_get(client: httpx.AsyncClient) -> None:
    saved = await client.post(
        "/v1/memory/memory_save",
        json={
            "title": "Queue is Redis Streams",
            "content": "What: the drain queue is a Redis stream",
            "type": "architecture",
            "session_id": "http-session",
        },
    )
    assert saved.status_code == 200, saved.text
    observation_id = saved.json()["id"]
    found = (await client.post("/v1/memory/memory_search", json={"query": "drain queue"})).json()
    assert [hit["id"] for hit in found["results"]] == [observation_id]
    whole = (await client.post("/v1/memory/memory_get", json={"id": observation_id})).json()
    assert whole["source"] == {"kind": "tool", "name": "http", "session_id": "http-session"}
    stats = (await client.post("/v1/memory/memory_stats")).json()
    assert stats["observations"] == 1


async def test_http_memory_errors_say_what_and_where(client: httpx.AsyncClient) -> None:
    unknown = await client.post("/v1/memory/memory_get", json={"id": "o000000000000"})
    assert (unknown.status_code, unknown.json()["field"]) == (404, "id")
    bad_type = await client.post(
        "/v1/memory/memory_save", json={"title": "t", "content": "c", "type": "mood"}
    )
    assert (bad_type.status_code, bad_type.json()["field"]) == (422, "type")
    missing = await client.post("/v1/memory/memory_save", json={"content": "c"})
    assert (missing.status_code, missing.json()["field"]) == (422, "title")
    not_json = await client.post("/v1/memory/memory_save", content=b"{oops")
    assert (not_json.status_code, not_json.json()["field"]) == (400, "body")
    no_tool = await client.post("/v1/memory/memory_remember", json={})
    assert no_tool.status_code == 404
    anonymous = await client.post(
        "/v1/memory/memory_stats", headers={"authorization": "Bearer wrong"}
    )
    assert anonymous.status_code == 401
