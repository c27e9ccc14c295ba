"""A service a team shares: a session is closed to every member but the one who started it.

Every route that names a session (OpenCode's hooks and batches, the command hosts', LangChain's,
a session's summary) answers another member 403 and tells them nothing of it; the service's
owner enters any session. With the hot tier down, a member's model call is stood in for only by
what that member was answered before. A real Memory on real Redis behind the app, in process.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from support.service_client import app_client
from support.team import team

from plait import Memory
from plait.adapters.backends.embedded import free_port
from plait.adapters.hosts.http import WARNING_HEADER, create_app

OWNER = "owner-token"
TRANSFORM = "/v1/hooks/experimental.chat.messages.transform"


@asynccontextmanager
async def service(tmp_path: Path, redis_url: str) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
    """The app on a real Memory, and a client for each of the owner, alice and bob."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    async with Memory.open(
        project,
        tmp_path / "data",
        start_background=False,
        reconnect=True,
        redis={"url": redis_url},
        graphiti={"group_id_prefix": "owners"},
    ) as memory:
        members, tokens = team(tmp_path / "tokens")
        app = create_app(memory, token=OWNER, team=members)
        tokens["owner"] = OWNER
        clients = {who: app_client(app, token) for who, token in tokens.items()}
        try:
            yield clients
        finally:
            for client in clients.values():
                await client.aclose()


def said(session: str, text: str) -> dict[str, Any]:
    parts = [{"type": "text", "text": text}]
    call_id = uuid.uuid4().hex
    return {"input": {"sessionID": session}, "output": {"parts": parts}, "call_id": call_id}


def transform(session: str) -> dict[str, Any]:
    info = {"id": f"msg_{uuid.uuid4().hex[:8]}", "sessionID": session, "role": "user"}
    output = {"messages": [{"info": info, "parts": [{"id": "prt_1", "type": "text"}]}]}
    return {"input": {"sessionID": session}, "output": output}


async def test_another_members_session_is_refused_on_every_route(
    tmp_path: Path, redis_url: str
) -> None:
    async with service(tmp_path, redis_url) as client:
        alice, bob, owner = client["alice"], client["bob"], client["owner"]
        assert (
            await alice.post(
                "/v1/hooks/chat.message",
                json=said("ses_a", "I prefer tabs over spaces in every file."),
            )
        ).status_code == 200
        mine = await alice.post(TRANSFORM, json=transform("ses_a"))
        assert mine.status_code == 200 and "tabs" in mine.text

        refused = {
            "transform": await bob.post(TRANSFORM, json=transform("ses_a")),
            "chat.message": await bob.post(
                "/v1/hooks/chat.message", json=said("ses_a", "what does alice like?")
            ),
            "claude-code": await bob.post(
                "/v1/host",
                json={
                    "host": "claude-code",
                    "event": "UserPromptSubmit",
                    "payload": {
                        "session_id": "ses_a",
                        "hook_event_name": "UserPromptSubmit",
                        "prompt": "what does alice like?",
                    },
                },
            ),
            "langchain": await bob.post(
                "/v1/langchain/turn", json={"session_id": "ses_a", "messages": []}
            ),
            "summary": await bob.post(
                "/v1/memory/memory_session_summary",
                json={"session_id": "ses_a", "content": "Nothing happened here."},
            ),
        }
        for route, answer in refused.items():
            assert answer.status_code == 403, (route, answer.text)
            assert answer.json()["error"] == "not_your_session", route
            assert answer.json()["field"] == "session_id" and "tabs" not in answer.text, route
        batch = await bob.post(
            "/v1/hooks",
            json={"calls": [{"name": "chat.message", **said("ses_a", "and now?")}]},
        )
        assert [result["status"] for result in batch.json()["results"]] == [403]

        assert "tabs" in (await owner.post(TRANSFORM, json=transform("ses_a"))).text
        assert (
            await bob.post("/v1/hooks/chat.message", json=said("ses_b", "Use Postgres."))
        ).status_code == 200
        again = await alice.post(TRANSFORM, json=transform("ses_a"))
        assert "tabs" in again.text and "alice like" not in again.text and "now?" not in again.text


async def test_with_the_hot_tier_down_a_member_gets_only_their_own_stand_in(
    tmp_path: Path, redis_url: str
) -> None:
    async with service(tmp_path, redis_url) as client:
        alice, owner = client["alice"], client["owner"]
        await alice.post("/v1/hooks/chat.message", json=said("ses_a", "I prefer tabs over spaces."))
        assert "tabs" in (await alice.post(TRANSFORM, json=transform("ses_a"))).text
        await owner.post("/v1/hooks/chat.message", json=said("ses_o", "We deploy on Fridays."))
        assert "Fridays" in (await owner.post(TRANSFORM, json=transform("ses_o"))).text
    down = f"redis://127.0.0.1:{free_port()}/0"
    async with service(tmp_path, down) as client:
        answers = {
            ("alice", "ses_a"): await client["alice"].post(TRANSFORM, json=transform("ses_a")),
            ("bob", "ses_a"): await client["bob"].post(TRANSFORM, json=transform("ses_a")),
            ("bob", "ses_new"): await client["bob"].post(TRANSFORM, json=transform("ses_new")),
            ("alice", "ses_o"): await client["alice"].post(TRANSFORM, json=transform("ses_o")),
        }
    for who, answer in answers.items():
        assert answer.status_code == 200 and WARNING_HEADER in answer.headers, who  # failed open
    texts = {who: json.dumps(answer.json()) for who, answer in answers.items()}
    assert "tabs" in texts[("alice", "ses_a")]
    assert not any(word in texts[("bob", "ses_a")] for word in ("tabs", "Fridays"))
    assert "Fridays" not in texts[("bob", "ses_new")] and "Fridays" not in texts[("alice", "ses_o")]
