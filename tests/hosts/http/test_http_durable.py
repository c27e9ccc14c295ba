"""Accepted means durable, over the HTTP service on a real Memory (and its spool).

The contract (``plait.adapters.hosts.http.service``): a hook that records is answered 200 with
``X-Plait-Kept: stored|spooled``, or 503 with ``X-Plait-Kept: none`` when it was not kept; a call
id makes a resend harmless; text that is not valid Unicode is repaired, never a 500; a batch call
plait cannot use is dead-lettered and the calls after it run.
"""

from __future__ import annotations

import asyncio
import errno
import json
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.service_client import app_client

from plait import Memory
from plait import intake as intake_module
from plait.adapters.backends.embedded import free_port
from plait.adapters.hosts.http import (
    KEPT_HEADER,
    REASON_HEADER,
    STATUS_HEADER,
    WARNING_HEADER,
    create_app,
)
from plait.state.base.errors import BackendUnavailable

TOKEN = "durable-token"
Opened = tuple[httpx.AsyncClient, Memory]


@asynccontextmanager
async def service(tmp_path: Path, redis_url: str, **overrides: Any) -> AsyncIterator[Opened]:
    """A real Memory (with its intake and spool) behind the HTTP app."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    async with (
        Memory.open(
            project,
            tmp_path / "data",
            start_background=False,
            reconnect=True,
            redis={"url": redis_url},
            graphiti={"group_id_prefix": f"t{uuid.uuid4().hex[:10]}"},
            **overrides,
        ) as memory,
        app_client(create_app(memory, token=TOKEN), TOKEN) as client,
    ):
        yield client, memory


def prompt(session: str, text: str, call_id: str) -> dict[str, Any]:
    """A ``chat.message`` body as the plugin sends it."""
    parts = [{"type": "text", "text": text}]
    return {"input": {"sessionID": session}, "output": {"parts": parts}, "call_id": call_id}


async def prompts_of(memory: Memory, session: str) -> list[str]:
    """The prompt texts stored for a session, in order."""
    events = await memory.backends.store.read_events(session)
    return [event.body for event in events if event.kind == "prompt"]


@pytest.fixture
def session() -> str:
    return f"ses_{uuid.uuid4().hex[:12]}"


async def test_a_recorded_call_is_stored_once_however_often_it_is_sent(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    async with service(tmp_path, redis_url) as (client, memory):
        body = prompt(session, "keep module_a small", "call-1")
        first = await client.post("/v1/hooks/chat.message", json=body)
        again = await client.post("/v1/hooks/chat.message", json=body)
        batch = await client.post("/v1/hooks", json={"calls": [{"name": "chat.message", **body}]})
        stored = await prompts_of(memory, session)
    assert (first.status_code, first.headers[KEPT_HEADER]) == (200, "stored")
    assert (again.status_code, again.headers[KEPT_HEADER]) == (200, "stored")
    assert batch.json()["results"][0]["kept"] == "stored"
    assert stored == ["keep module_a small"]


async def test_a_lone_surrogate_is_replaced_never_a_500(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    # what JSON.stringify writes for an emoji cut in half: a lone high surrogate, escaped
    body = json.dumps(prompt(session, "half an emoji SURROGATE here", "call-s"))
    raw = body.replace("SURROGATE", "\\ud83d")
    async with service(tmp_path, redis_url) as (client, memory):
        single = await client.post(
            "/v1/hooks/chat.message", content=raw, headers={"content-type": "application/json"}
        )
        batch = await client.post(
            "/v1/hooks",
            content='{"calls": [{"name": "chat.message", ' + raw[1:] + "]}",
            headers={"content-type": "application/json"},
        )
        stored = await prompts_of(memory, session)
    assert (single.status_code, single.headers[KEPT_HEADER]) == (200, "stored")
    assert batch.status_code == 200 and batch.json()["results"][0]["status"] == 200
    assert stored == ["half an emoji \ufffd here"]


async def test_a_batch_call_plait_cannot_use_is_dead_lettered_and_the_rest_run(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    calls = [
        {"name": "chat.message", **prompt(session, "before", "call-a")},
        {"name": "chat.message", "input": "not an object", "output": {}, "call_id": "call-b"},
        {"name": "tool.execute.after", "input": {"sessionID": session}, "output": {}},
        {"name": "chat.message", **prompt(session, "after", "call-c")},
    ]
    async with service(tmp_path, redis_url) as (client, memory):
        response = await client.post("/v1/hooks", json={"calls": calls})
        assert memory.dispatch.intake is not None
        await memory.dispatch.intake.idle()  # a call behind another in its lane is answered spooled
        stored = await prompts_of(memory, session)
        dead = memory.dispatch.intake.dead.list_dead_calls()
    results = response.json()["results"]
    assert [result["status"] for result in results] == [200, 422, 422, 200]
    assert results[0]["kept"] == "stored" and results[3]["kept"] in ("stored", "spooled")
    assert results[1]["field"] == "input" and results[1]["dead_id"]
    assert "input.tool" in results[2]["error"] and results[2]["dead_id"]
    assert stored == ["before", "after"]
    assert {call.call_id for call in dead} >= {"call-b"}
    assert all(call.reason for call in dead)


async def test_with_the_hot_tier_down_a_call_is_spooled_and_health_says_degraded(
    tmp_path: Path, session: str
) -> None:
    down = f"redis://127.0.0.1:{free_port()}/0"
    async with service(tmp_path, down) as (client, memory):
        kept = await client.post("/v1/hooks/chat.message", json=prompt(session, "x", "call-d"))
        transform = await client.post(
            "/v1/hooks/experimental.chat.messages.transform",
            json={"input": {}, "output": {"messages": []}},
        )
        health = await client.get("/v1/health")
        public = await client.get("/v1/health", headers={"authorization": ""})
        assert memory.dispatch.intake is not None
        pending = memory.dispatch.intake.stats().pending
    assert (kept.status_code, kept.headers[KEPT_HEADER]) == (200, "spooled")
    assert "hot tier is down" in kept.headers[REASON_HEADER]
    assert transform.status_code == 200 and KEPT_HEADER not in transform.headers
    assert WARNING_HEADER in transform.headers
    report = health.json()
    assert health.status_code == 200 and health.headers[STATUS_HEADER] == "degraded"
    assert (report["status"], report["hot_tier"], report["spool_pending"]) == (
        "degraded",
        "down",
        1,
    )
    assert report["degraded"] and "degraded" not in public.json()
    assert pending == 1


async def test_a_call_that_could_not_be_kept_is_503_not_kept(tmp_path: Path, session: str) -> None:
    down = f"redis://127.0.0.1:{free_port()}/0"
    async with service(tmp_path, down, service={"spool_max_bytes": 1}) as (client, _):
        first = await client.post("/v1/hooks/chat.message", json=prompt(session, "a", "c1"))
        full = await client.post("/v1/hooks/chat.message", json=prompt(session, "b", "c2"))
        batch = await client.post(
            "/v1/hooks", json={"calls": [{"name": "chat.message", **prompt(session, "c", "c3")}]}
        )
    assert first.headers[KEPT_HEADER] == "spooled"
    assert (full.status_code, full.headers[KEPT_HEADER]) == (503, "none")
    assert full.json()["error"] == "not_kept" and "spool is full" in full.headers[REASON_HEADER]
    assert full.headers["retry-after"] == "1"
    assert batch.json()["results"][0] | {"error": ""} == {
        "status": 503,
        "kept": "none",
        "error": "",
    }


async def test_health_is_ok_while_the_hot_tier_answers(tmp_path: Path, redis_url: str) -> None:
    async with service(tmp_path, redis_url) as (client, _):
        report = (await client.get("/v1/health")).json()
    assert (report["status"], report["hot_tier"], report["spool_pending"]) == ("ok", "up", 0)
    assert report["dead_calls"] == 0
    assert "lanes" not in report  # no host call has run yet


async def test_health_says_how_long_host_calls_waited_and_ran(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    async with service(tmp_path, redis_url) as (client, _):
        for number in range(3):
            answer = await client.post(
                "/v1/hooks/chat.message", json=prompt(session, f"step {number}", f"c-{number}")
            )
            assert answer.headers["x-plait-kept"] == "stored"
        lanes = (await client.get("/v1/health")).json()["lanes"]
    assert lanes["runs"] == 3
    assert 0 < lanes["run_p50"] <= lanes["run_p99"]
    assert 0 <= lanes["wait_p50"] <= lanes["wait_p99"]


async def health_when(
    client: httpx.AsyncClient, condition: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """``/v1/health`` once ``condition`` holds (the first failed run tells the supervisor)."""
    for _ in range(100):
        report = (await client.get("/v1/health")).json()
        if condition(report):
            return report
        await asyncio.sleep(0.1)
    return report


async def test_calls_wait_in_the_spool_through_a_redis_outage_and_are_stored_in_order(
    tmp_path: Path, session: str
) -> None:
    import asyncio

    from plait.devtools.load import ExternalRedis

    redis = ExternalRedis(tmp_path / "redis")
    url = redis.start()
    try:
        async with service(tmp_path, url) as (client, memory):
            assert memory.dispatch.intake is not None
            first = await client.post("/v1/hooks/chat.message", json=prompt(session, "p0", "i0"))
            redis.kill()
            during = [
                await client.post("/v1/hooks/chat.message", json=prompt(session, f"p{n}", f"i{n}"))
                for n in range(1, 4)
            ]
            health = await health_when(client, lambda report: report["hot_tier"] == "down")
            redis.start()  # on the same port: the client reconnects, the lane resumes
            await asyncio.wait_for(memory.dispatch.intake.idle(), 30)
            stored = await prompts_of(memory, session)
            after = (await client.get("/v1/health")).json()
    finally:
        redis.kill()
    assert first.headers[KEPT_HEADER] == "stored"
    assert [answer.status_code for answer in during] == [200, 200, 200]
    assert all(answer.headers[KEPT_HEADER] == "spooled" for answer in during)
    assert (health["status"], health["hot_tier"], health["spool_pending"]) == (
        "degraded",
        "down",
        3,
    )
    assert stored == ["p0", "p1", "p2", "p3"]
    assert (after["hot_tier"], after["spool_pending"]) == ("up", 0)


async def leave_spool(
    data: Path, project: Path, lane: str, calls: list[dict[str, Any]], host: str = "opencode"
) -> None:
    """Calls kept in the project's spool by a process that then died without running them."""
    code = (
        "import json, os, sys; from pathlib import Path; "
        "from plait.adapters.backends.spool import FileSpool; "
        "spool = FileSpool.for_project(Path(sys.argv[1]), sys.argv[2]); "
        "[spool.append(call_id=c['call_id'], lane=sys.argv[3], host=sys.argv[5], call=c['replay']) "
        "for c in json.loads(sys.argv[4])]; spool.sync(); os._exit(0)"
    )
    killed = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, str(data), str(project), lane, json.dumps(calls), host
    )
    assert await killed.wait() == 0


async def test_a_spool_left_by_a_killed_service_runs_with_nobody_sending(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    """Calls a killed service had kept run as soon as the next service starts, not when the
    plugin happens to send its next call (1,107 calls once waited minutes for one)."""
    project = tmp_path / "project"
    project.mkdir()
    calls = [
        {
            "call_id": f"left-{n}",
            "replay": {
                "name": "chat.message",
                "input": {"sessionID": session},
                "output": {"parts": [{"type": "text", "text": f"We decided on step {n}."}]},
            },
        }
        for n in range(3)
    ]
    await leave_spool(tmp_path / "data", project, session, calls)
    async with service(tmp_path, redis_url) as (_, memory):
        for _ in range(200):  # up to 10 s; the adoption at start makes it immediate
            if len(await prompts_of(memory, session)) == 3:
                break
            await asyncio.sleep(0.05)
        assert await prompts_of(memory, session) == [f"We decided on step {n}." for n in range(3)]


async def test_a_spooled_call_holds_no_secret_and_no_private_span_on_disk(
    tmp_path: Path, session: str
) -> None:
    """While the hot tier is down calls wait on disk: redacted before they touch it."""
    secret = "sk-proj-" + "Zq7Lm2Xv9Rw4" * 4
    text = f"Deploy with OPENAI_API_KEY={secret} <private>my home address</private> today."
    down = f"redis://127.0.0.1:{free_port()}/0"
    async with service(tmp_path, down) as (client, _):
        kept = await client.post("/v1/hooks/chat.message", json=prompt(session, text, "call-s"))
        assert kept.headers[KEPT_HEADER] == "spooled"
        on_disk = b"".join(
            path.read_bytes() for path in (tmp_path / "data" / "spool").rglob("*") if path.is_file()
        )
    assert b"Deploy with" in on_disk  # the call is there, to run when the tier is back
    assert secret.encode() not in on_disk and b"my home address" not in on_disk


async def test_a_call_of_a_host_not_served_here_is_dead_lettered_not_parked_for_ever(
    tmp_path: Path, redis_url: str, session: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    replay = {"name": "UserPromptSubmit", "input": {"session_id": session}, "output": {}}
    await leave_spool(
        tmp_path / "data", project, session, [{"call_id": "x1", "replay": replay}], "nohost"
    )
    async with service(tmp_path, redis_url) as (_, memory):
        assert memory.dispatch.intake is not None
        assert memory.dispatch.intake.dead_count() == 0  # parked a while, in case its host comes
        monkeypatch.setattr(intake_module, "PARK_MAX_S", 0.0)
        memory.dispatch.intake.adopt()
        dead = memory.dispatch.intake.dead.list_dead_calls()
        assert memory.dispatch.intake.stats().pending == 0
    assert [(d.call_id, d.host) for d in dead] == [("x1", "nohost")]
    assert (
        "no host 'nohost' is served here (claude-code, codex, gemini, opencode)" in dead[0].reason
    )


async def test_health_is_ok_again_once_the_hot_tier_is_back(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    """A call that failed open while the tier was down no longer makes health 'degraded' once
    the tier answers again, though no call has come since."""
    async with service(tmp_path, redis_url) as (client, memory):
        memory.dispatch.supervisor.failed(BackendUnavailable("connection refused"))
        await client.post(
            "/v1/hooks/experimental.chat.messages.transform",
            json={"input": {}, "output": {"messages": []}},
        )
        during = (await client.get("/v1/health")).json()
        memory.dispatch.supervisor.answered()  # what the supervisor's next probe says
        after = (await client.get("/v1/health")).json()
    assert during["status"] == "degraded" and any("failed" in r for r in during["degraded"])
    assert after["status"] == "ok", after


async def test_a_full_disk_refuses_new_calls_and_ends_no_lane(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    """ENOSPC at the OS boundary (the spool's writes) never stops the session's lane: a call the
    spool cannot take still runs while the hot tier answers (503 only when it cannot), and the
    session's calls are stored in order."""
    async with service(tmp_path, redis_url) as (client, memory):
        assert memory.dispatch.intake is not None
        spool = memory.dispatch.intake.spool
        real_done, real_append = spool.done, spool.append

        def full(*args: Any, **kwargs: Any) -> Any:
            raise OSError(errno.ENOSPC, "No space left on device")

        spool.done = full  # type: ignore[method-assign]
        first = await client.post("/v1/hooks/chat.message", json=prompt(session, "one", "f1"))
        spool.append = full  # type: ignore[method-assign]
        unspooled = await client.post("/v1/hooks/chat.message", json=prompt(session, "two", "f2"))
        spool.done, spool.append = real_done, real_append  # type: ignore[method-assign]
        third = await client.post("/v1/hooks/chat.message", json=prompt(session, "three", "f3"))
        await memory.dispatch.intake.idle()
        stored = await prompts_of(memory, session)
    assert first.status_code == 200 and first.headers[KEPT_HEADER] == "stored"
    assert unspooled.status_code == 200 and unspooled.headers[KEPT_HEADER] == "stored"
    assert third.status_code == 200 and third.headers[KEPT_HEADER] == "stored"
    assert stored == ["one", "two", "three"]


async def test_a_connection_that_drops_while_the_tier_answers_is_retried_not_buried(
    tmp_path: Path, redis_url: str, session: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flapping tier: the probe answers, the call's own round trip drops (more times than a
    failing call is tried). The call is retried with backoff and stored, in order; no dead
    letter."""
    async with service(tmp_path, redis_url) as (client, memory):
        store = memory.backends.store
        real_append = store.append_events
        drops = {"left": intake_module.RETRY_MAX + 2}
        monkeypatch.setattr(intake_module, "RETRY_PAUSE_S", 0.01)  # the backoff's first step

        async def flapping(*args: Any, **kwargs: Any) -> Any:
            if drops["left"]:
                drops["left"] -= 1
                raise ConnectionResetError(104, "Connection reset by peer")
            return await real_append(*args, **kwargs)

        store.append_events = flapping  # type: ignore[method-assign]
        first = await client.post("/v1/hooks/chat.message", json=prompt(session, "one", "t1"))
        second = await client.post("/v1/hooks/chat.message", json=prompt(session, "two", "t2"))
        assert memory.dispatch.intake is not None
        await memory.dispatch.intake.idle()
        stored = await prompts_of(memory, session)
        dead = memory.dispatch.intake.dead_count()
    assert first.status_code == second.status_code == 200
    assert stored == ["one", "two"] and dead == 0 and drops["left"] == 0


async def test_a_model_call_that_fails_open_gets_the_sessions_last_envelope(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    """The hot tier does not answer (the service came back, its Redis did not): the transform
    fails open, and the session's standby envelope (the last it got) stands in, so the model
    call still carries memory."""

    def transform() -> dict[str, Any]:
        info = {"id": f"msg_{uuid.uuid4().hex[:8]}", "sessionID": session, "role": "user"}
        parts = [{"id": "prt_1", "type": "text", "text": "go on"}]
        output = {"messages": [{"info": info, "parts": parts}]}
        return {"input": {"sessionID": session}, "output": output}

    path = "/v1/hooks/experimental.chat.messages.transform"
    said = "We decided to use PostgreSQL for the ledger."
    async with service(tmp_path, redis_url) as (client, _):
        await client.post("/v1/hooks/chat.message", json=prompt(session, said, "p1"))
        live = await client.post(path, json=transform())
        assert "PostgreSQL" in json.dumps(live.json()) and WARNING_HEADER not in live.headers
    down = f"redis://127.0.0.1:{free_port()}/0"
    async with service(tmp_path, down) as (client, _):
        stood_in = await client.post(path, json=transform())
    assert stood_in.status_code == 200 and WARNING_HEADER in stood_in.headers  # failed open
    parts = stood_in.json()["messages"][0]["parts"]
    assert parts[0]["id"].startswith("prt_plait_") and "PostgreSQL" in parts[0]["text"]
    assert parts[1]["text"] == "go on"


async def test_a_model_call_behind_a_busy_lane_gets_the_envelope_the_hot_tier_holds(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    """The hot tier answers but the session's lane is busy (prompts queued ahead): the model
    call fails open at once, and the envelope the last turn staged stands in (one read)."""
    said = "We decided to keep invoices in PostgreSQL."
    async with service(tmp_path, redis_url) as (client, memory):
        await client.post("/v1/hooks/chat.message", json=prompt(session, said, "d1"))
        assert memory.dispatch.intake is not None
        await memory.dispatch.intake.idle()
        info = {"id": "msg_d2", "sessionID": session, "role": "user"}
        output = {"messages": [{"info": info, "parts": [{"id": "prt_1", "type": "text"}]}]}
        body = {"input": {"sessionID": session}, "output": output}
        queued = [
            client.post("/v1/hooks/chat.message", json=prompt(session, f"more {n}", f"q{n}"))
            for n in range(intake_module.LANE_BEHIND + 4)
        ]
        transform = client.post("/v1/hooks/experimental.chat.messages.transform", json=body)
        *_, late = await asyncio.gather(*queued, transform)
        await memory.dispatch.intake.idle()
    assert late.status_code == 200 and WARNING_HEADER in late.headers  # it failed open
    parts = late.json()["messages"][0]["parts"]
    assert parts[0]["id"].startswith("prt_plait_") and "PostgreSQL" in parts[0]["text"]
