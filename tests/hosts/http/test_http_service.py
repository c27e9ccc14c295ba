"""The HTTP service through its public surface: httpx against the ASGI app."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.plait_cli import service_info
from support.service_client import app_client

from plait import Memory
from plait.adapters.hosts.http import (
    KEPT_HEADER,
    WARNING_HEADER,
    create_app,
    load_or_create_token,
    project_key,
    read_service_file,
    remove_service_file,
    running_service,
    serve,
    service_file,
    write_service_file,
)

TOKEN = "test-token-123"


async def sessions(memory: Memory) -> list[str]:
    """The sessions the memory has recorded anything for."""
    listed = await memory.backends.store.list_sessions(memory.group_id, offset=0, limit=100)
    return [seen.session_id for seen in listed]


def client_for(
    memory: Memory, *, token: str | None = TOKEN, limit: int = 4096
) -> httpx.AsyncClient:
    return app_client(create_app(memory, token=TOKEN, max_body_bytes=limit), token)


CHAT = {
    "input": {"sessionID": "ses_1"},
    "output": {
        "message": {},
        "parts": [{"type": "text", "text": "We decided to use PostgreSQL for storage."}],
    },
}
COMPACTING = {"input": {"sessionID": "ses_1"}, "output": {"context": []}}


async def test_hook_returns_mutated_output(memory: Memory) -> None:
    async with client_for(memory) as client:
        chat = await client.post("/v1/hooks/chat.message", json=CHAT)
        response = await client.post("/v1/hooks/experimental.session.compacting", json=COMPACTING)
    assert chat.status_code == 200 and chat.headers[KEPT_HEADER] == "stored"
    assert response.status_code == 200
    (context,) = response.json()["context"]
    assert context.startswith("<session_memory") and "PostgreSQL" in context
    assert KEPT_HEADER not in response.headers  # compacting records nothing
    assert await sessions(memory) == ["ses_1"]


@pytest.mark.parametrize("token", [None, "wrong-token", ""])
async def test_hook_without_right_token_is_401_and_records_nothing(
    memory: Memory, token: str | None
) -> None:
    async with client_for(memory, token=token) as client:
        response = await client.post("/v1/hooks/chat.message", json=CHAT)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert await sessions(memory) == []


async def test_malformed_json_is_400_naming_body(memory: Memory) -> None:
    async with client_for(memory) as client:
        response = await client.post(
            "/v1/hooks/event", content=b'{"input": {', headers={"content-type": "application/json"}
        )
    assert response.status_code == 400
    assert response.json()["field"] == "body"
    assert await sessions(memory) == []


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"output": {}}, 422, "input"),
        ({"input": {}}, 422, "output"),
        ({"input": [], "output": {}}, 422, "input"),
        ({"input": {}, "output": "text"}, 422, "output"),
        ([], 400, "body"),
        ({"input": {}, "output": {}, "call_id": 7}, 400, "call_id"),
    ],
)
async def test_missing_or_wrong_field_is_refused_naming_it(
    memory: Memory, body: Any, status: int, field: str
) -> None:
    async with client_for(memory) as client:
        response = await client.post("/v1/hooks/tool.execute.before", json=body)
    assert response.status_code == status
    assert response.json()["field"] == field
    assert await sessions(memory) == []


async def test_body_over_limit_is_413_before_parsing(memory: Memory) -> None:
    big = {**CHAT, "padding": "a" * 5000}
    async with client_for(memory, limit=4096) as client:
        response = await client.post("/v1/hooks/chat.message", json=big)
    assert response.status_code == 413
    assert await sessions(memory) == []


async def test_chunked_body_over_limit_is_413(memory: Memory) -> None:

    async def chunks():
        yield b'{"input": {"x": "'
        for _ in range(10):
            yield b"a" * 1000
        yield b'"}, "output": {}}'

    async with client_for(memory, limit=4096) as client:
        response = await client.post("/v1/hooks/event", content=chunks())
    assert response.status_code == 413
    assert await sessions(memory) == []


async def test_invalid_payload_is_422_naming_field_and_dead_lettered(memory: Memory) -> None:
    async with client_for(memory) as client:
        body = {"input": {"sessionID": 7}, "output": {"message": {}, "parts": []}}
        response = await client.post("/v1/hooks/chat.message", json=body)
    assert response.status_code == 422
    assert response.json()["field"] == "input.sessionID"
    assert memory.dispatch.intake is not None
    (dead,) = memory.dispatch.intake.dead.list_dead_calls()
    assert dead.host == "opencode" and "must be" in dead.reason
    assert await sessions(memory) == []


async def test_unknown_hook_is_404(memory: Memory) -> None:
    async with client_for(memory) as client:
        response = await client.post("/v1/hooks/chat.params", json={"input": {}, "output": {}})
    assert response.status_code == 404
    assert response.json()["error"] == "unknown_hook"


async def test_a_call_plait_cannot_run_fails_open_with_the_original_output(
    tmp_path: Path, group_prefix: str
) -> None:
    """The hot tier does not answer: a call that records nothing answers as it came, says why."""
    async with (
        Memory.open(
            tmp_path,
            tmp_path / "data",
            start_background=False,
            reconnect=True,
            redis={"url": "redis://127.0.0.1:9"},
            graphiti={"group_id_prefix": group_prefix},
        ) as memory,
        client_for(memory) as client,
    ):
        response = await client.post("/v1/hooks/experimental.session.compacting", json=COMPACTING)
    assert response.status_code == 200
    assert response.json() == {"context": []}
    assert "hot tier is down" in response.headers[WARNING_HEADER]


async def test_batch_runs_every_call_in_order(memory: Memory, group_prefix: str) -> None:
    session = {"sessionID": f"ses_{group_prefix}"}  # a session no other test wrote to
    calls = [
        {"name": "chat.message", "call_id": f"{group_prefix}-1", **CHAT, "input": session},
        {"name": "nope", "input": {}, "output": {}},
        {"name": "experimental.session.compacting", **COMPACTING, "input": session},
    ]
    async with client_for(memory) as client:
        response = await client.post("/v1/hooks", json={"calls": calls})
    assert response.status_code == 200
    results = response.json()["results"]
    assert [result["status"] for result in results] == [200, 404, 200]
    assert results[0]["kept"] == "stored"
    (context,) = results[2]["output"]["context"]
    assert "PostgreSQL" in context
    assert await sessions(memory) == [session["sessionID"]]


async def test_batch_missing_calls_is_400(memory: Memory) -> None:
    async with client_for(memory) as client:
        response = await client.post("/v1/hooks", json={"call": []})
    assert response.status_code == 400
    assert response.json()["field"] == "calls"


async def test_health_and_openapi_need_no_token(memory: Memory) -> None:
    async with client_for(memory, token=None) as client:
        health = await client.get("/v1/health")
        schema = await client.get("/openapi.json")
    assert health.json()["status"] == "ok"
    paths = schema.json()["paths"]
    assert "/v1/hooks/{name}" in paths
    body = paths["/v1/hooks/{name}"]["post"]["requestBody"]["content"]["application/json"]
    assert set(body["schema"]["required"]) == {"input", "output"}


def test_token_is_created_once_with_mode_0600(tmp_path: Path) -> None:
    first = load_or_create_token(tmp_path / "data")
    second = load_or_create_token(tmp_path / "data")
    path = tmp_path / "data" / "token"
    assert first == second
    assert len(first) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_token_file_too_open_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("existing\n")
    path.chmod(0o644)
    assert load_or_create_token(tmp_path) == "existing"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_service_file_round_trip(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    info = service_info(project)
    path = write_service_file(tmp_path, info)
    assert path == tmp_path / "services" / f"{project_key(project)}.json"
    assert read_service_file(tmp_path, project) == info
    remove_service_file(tmp_path, info)
    assert read_service_file(tmp_path, project) is None


def test_project_key_follows_symlinks(tmp_path: Path) -> None:
    project = tmp_path / "real"
    project.mkdir()
    (tmp_path / "link").symlink_to(project)
    assert project_key(tmp_path / "link") == project_key(project)
    assert len(project_key(project)) == 16


async def test_serve_announces_itself_and_answers(
    tmp_path: Path, memory: Memory, group_prefix: str
) -> None:
    compacting = {**COMPACTING, "input": {"sessionID": f"ses_{group_prefix}"}}
    task = asyncio.create_task(
        serve(memory, "127.0.0.1", 0, data_dir=tmp_path / "data", project_dir=tmp_path)
    )
    path = service_file(tmp_path / "data", tmp_path)
    for _ in range(200):
        if path.exists():
            break
        await asyncio.sleep(0.02)
    info = json.loads(path.read_text())
    token = (tmp_path / "data" / "token").read_text().strip()
    running = await asyncio.to_thread(running_service, tmp_path / "data", tmp_path)
    async with httpx.AsyncClient(base_url=info["url"]) as client:
        health = await client.get("/v1/health")
        hook = await client.post(
            "/v1/hooks/experimental.session.compacting",
            json=compacting,
            headers={"authorization": f"Bearer {token}"},
        )
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert health.status_code == 200
    assert running is not None and running.url == info["url"]
    assert hook.status_code == 200 and hook.json() == {"context": []}  # nothing to say yet
    assert info["pid"] == os.getpid()
    assert not path.exists()
    async with httpx.AsyncClient(base_url=info["url"]) as client:  # cancelled: not listening
        with pytest.raises(httpx.ConnectError):
            await client.get("/v1/health")


def test_running_service_ignores_a_stale_file(tmp_path: Path) -> None:
    info = service_info(tmp_path, 9)
    write_service_file(tmp_path, info)
    assert running_service(tmp_path, tmp_path) is None


async def test_token_is_checked_before_the_body_limit(memory: Memory) -> None:
    big = {"input": {"x": "a" * 5000}, "output": {}}
    async with client_for(memory, token=None, limit=4096) as client:
        response = await client.post("/v1/hooks/event", json=big)
    assert response.status_code == 401
