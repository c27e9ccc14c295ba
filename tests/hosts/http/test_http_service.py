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
from support.service_client import app_client

from plait.adapters.hosts.http import (
    WARNING_HEADER,
    ServiceInfo,
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
from plait.state.base.errors import InvalidHookPayload, UnknownHook

TOKEN = "test-token-123"
KNOWN_HOOKS = {
    "chat.message",
    "experimental.chat.messages.transform",
    "experimental.session.compacting",
    "event",
    "tool.execute.before",
    "tool.execute.after",
}


class RecordingMemory:
    """A hand-written stand-in with ``Memory.hook``'s signature that records every call."""

    def __init__(self, *, fail_with: Exception | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        self.fail_with = fail_with

    async def hook(self, name: str, input: dict[str, Any], output: dict[str, Any]) -> dict:
        if name not in KNOWN_HOOKS:
            raise UnknownHook(f"unknown hook {name!r}")
        if "sessionID" in input and not isinstance(input["sessionID"], str):
            raise InvalidHookPayload("must be a string", field="input.sessionID")
        self.calls.append((name, input, output))
        if self.fail_with is not None:
            output["context"] = ["half-done mutation"]
            raise self.fail_with
        if name == "experimental.session.compacting":
            output.setdefault("context", []).append("<session_memory/>")
        return output


def client_for(memory: Any, *, token: str | None = TOKEN, limit: int = 4096) -> httpx.AsyncClient:
    return app_client(create_app(memory, token=TOKEN, max_body_bytes=limit), token)


COMPACTING = {"input": {"sessionID": "ses_1"}, "output": {"context": []}}


async def test_hook_returns_mutated_output() -> None:
    memory = RecordingMemory()
    async with client_for(memory) as client:
        response = await client.post("/v1/hooks/experimental.session.compacting", json=COMPACTING)
    assert response.status_code == 200
    assert response.json() == {"context": ["<session_memory/>"]}
    assert memory.calls[0][0] == "experimental.session.compacting"
    assert memory.calls[0][1] == {"sessionID": "ses_1"}


@pytest.mark.parametrize("token", [None, "wrong-token", ""])
async def test_hook_without_right_token_is_401_and_records_nothing(token: str | None) -> None:
    memory = RecordingMemory()
    async with client_for(memory, token=token) as client:
        response = await client.post("/v1/hooks/event", json={"input": {}, "output": {}})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert memory.calls == []


async def test_malformed_json_is_400_naming_body() -> None:
    memory = RecordingMemory()
    async with client_for(memory) as client:
        response = await client.post(
            "/v1/hooks/event", content=b'{"input": {', headers={"content-type": "application/json"}
        )
    assert response.status_code == 400
    assert response.json()["field"] == "body"
    assert memory.calls == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"output": {}}, "input"),
        ({"input": {}}, "output"),
        ({"input": [], "output": {}}, "input"),
        ({"input": {}, "output": "text"}, "output"),
    ],
)
async def test_missing_or_wrong_field_is_400_naming_it(body: dict, field: str) -> None:
    memory = RecordingMemory()
    async with client_for(memory) as client:
        response = await client.post("/v1/hooks/event", json=body)
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert memory.calls == []


async def test_body_over_limit_is_413_before_parsing() -> None:
    memory = RecordingMemory()
    big = {"input": {"x": "a" * 5000}, "output": {}}
    async with client_for(memory, limit=4096) as client:
        response = await client.post("/v1/hooks/event", json=big)
    assert response.status_code == 413
    assert memory.calls == []


async def test_chunked_body_over_limit_is_413() -> None:
    memory = RecordingMemory()

    async def chunks():
        yield b'{"input": {"x": "'
        for _ in range(10):
            yield b"a" * 1000
        yield b'"}, "output": {}}'

    async with client_for(memory, limit=4096) as client:
        response = await client.post("/v1/hooks/event", content=chunks())
    assert response.status_code == 413
    assert memory.calls == []


async def test_invalid_payload_is_422_naming_field() -> None:
    memory = RecordingMemory()
    async with client_for(memory) as client:
        body = {"input": {"sessionID": 7}, "output": {"message": {}, "parts": []}}
        response = await client.post("/v1/hooks/chat.message", json=body)
    assert response.status_code == 422
    assert response.json()["field"] == "input.sessionID"


async def test_unknown_hook_is_404() -> None:
    async with client_for(RecordingMemory()) as client:
        response = await client.post("/v1/hooks/chat.params", json={"input": {}, "output": {}})
    assert response.status_code == 404
    assert response.json()["error"] == "unknown_hook"


async def test_memory_failure_fails_open_with_original_output() -> None:
    memory = RecordingMemory(fail_with=RuntimeError("redis went away"))
    async with client_for(memory) as client:
        response = await client.post("/v1/hooks/experimental.session.compacting", json=COMPACTING)
    assert response.status_code == 200
    assert response.json() == {"context": []}
    assert "RuntimeError" in response.headers[WARNING_HEADER]


async def test_batch_runs_every_call_in_order() -> None:
    memory = RecordingMemory()
    calls = [
        {"name": "event", "input": {"event": {"type": "session.idle"}}, "output": {}},
        {"name": "nope", "input": {}, "output": {}},
        {"name": "experimental.session.compacting", **COMPACTING},
    ]
    async with client_for(memory) as client:
        response = await client.post("/v1/hooks", json={"calls": calls})
    assert response.status_code == 200
    results = response.json()["results"]
    assert [result["status"] for result in results] == [200, 404, 200]
    assert results[2]["output"] == {"context": ["<session_memory/>"]}
    assert [call[0] for call in memory.calls] == ["event", "experimental.session.compacting"]


async def test_batch_missing_calls_is_400() -> None:
    async with client_for(RecordingMemory()) as client:
        response = await client.post("/v1/hooks", json={"call": []})
    assert response.status_code == 400
    assert response.json()["field"] == "calls"


async def test_health_and_openapi_need_no_token() -> None:
    async with client_for(RecordingMemory(), token=None) as client:
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
    info = ServiceInfo(
        url="http://127.0.0.1:1",
        host="127.0.0.1",
        port=1,
        pid=os.getpid(),
        project_dir=str(project),
    )
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


async def test_serve_announces_itself_and_answers(tmp_path: Path) -> None:
    memory = RecordingMemory()
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
            json=COMPACTING,
            headers={"authorization": f"Bearer {token}"},
        )
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert health.status_code == 200
    assert running is not None and running.url == info["url"]
    assert hook.json() == {"context": ["<session_memory/>"]}
    assert info["pid"] == os.getpid()
    assert not path.exists()


def test_running_service_ignores_a_stale_file(tmp_path: Path) -> None:
    info = ServiceInfo(
        url="http://127.0.0.1:9",
        host="127.0.0.1",
        port=9,
        pid=os.getpid(),
        project_dir=str(tmp_path),
    )
    write_service_file(tmp_path, info)
    assert running_service(tmp_path, tmp_path) is None


async def test_token_is_checked_before_the_body_limit() -> None:
    memory = RecordingMemory()
    big = {"input": {"x": "a" * 5000}, "output": {}}
    async with client_for(memory, token=None, limit=4096) as client:
        response = await client.post("/v1/hooks/event", json=big)
    assert response.status_code == 401
