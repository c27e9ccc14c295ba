"""Claude Code's hooks through ``plait-hook`` and ``POST /v1/host`` on a real Memory and service.

The client runs as the host runs it (a process per hook, JSON on stdin); the service is the real
``serve`` on a loopback port over real embedded FalkorDB. Only the model is absent.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import signal
import stat
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis
from support.certificates import self_signed
from support.command_hooks import run_hook, running
from support.local_web import free_port
from support.plait_cli import plait_env, start_serve
from support.team import team

from plait import Memory
from plait.adapters.hosts.claude_code.hooks import host_call
from plait.adapters.hosts.http.service import read_service_file
from plait.state.base.errors import InvalidHookPayload, UnknownHook
from plait.state.intents import CompactionAfter, ModelCall, SessionTarget, ToolResult, UserTurn
from plait.wiring import project_prefix


@pytest.fixture
def session() -> str:
    return f"cc-{uuid.uuid4()}"


async def hook(
    project: Path, data: Path, event: str, stdin: bytes | dict[str, Any], keep: bool = False
) -> tuple[int, dict[str, Any], str]:
    """Run ``plait-hook claude-code EVENT`` as Claude Code would."""
    return await run_hook("claude-code", project, data, event, stdin, keep)


def payload(session: str, event: str, **fields: Any) -> dict[str, Any]:
    """A Claude Code hook payload with the fields every event carries."""
    common = {"session_id": session, "transcript_path": "/dev/null", "cwd": "."}
    return common | {"hook_event_name": event} | fields


async def kinds(memory: Memory, session: str) -> list[str]:
    return [str(event.kind) for event in await memory.backends.store.read_events(session)]


# -- payload -> intents ---------------------------------------------------------------------
def test_claude_code_prompt_records_the_turn_and_wants_the_envelope(session: str) -> None:
    call = host_call("UserPromptSubmit", payload(session, "UserPromptSubmit", prompt="hi there"))
    assert call.durable and call.target == SessionTarget(session_id=session)
    assert call.payload == (UserTurn(text="hi there"), ModelCall(query="hi there"))


def test_claude_code_subagent_resolves_to_a_child_of_the_root(session: str) -> None:
    body = payload(session, "PostToolUse", agent_id="a1", tool_name="Edit", tool_response="ok")
    call = host_call("PostToolUse", body | {"tool_input": {"file_path": "src/app.py"}})
    assert isinstance(call.target, SessionTarget) and call.target.parent_id == session
    assert call.target.files == ("src/app.py",)
    assert isinstance(call.payload[0], ToolResult) and call.payload[0].tool == "edit"


def test_claude_code_session_start_after_compaction_wants_memory_back(session: str) -> None:
    call = host_call("SessionStart", payload(session, "SessionStart", source="compact"))
    assert call.payload == (CompactionAfter(), ModelCall())


def test_claude_code_bad_calls_name_why(session: str) -> None:
    with pytest.raises(UnknownHook, match="Notification"):
        host_call("Notification", payload(session, "Notification"))
    with pytest.raises(InvalidHookPayload, match="session_id"):
        host_call("UserPromptSubmit", {"prompt": "no session"})


# -- through the client and the service -----------------------------------------------------
async def test_claude_code_prompt_is_recorded_and_answered_with_context(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    async with running(tmp_path, redis_url) as memory:
        project, data = tmp_path / "project", tmp_path / "data"
        said = "We decided to use Postgres for the ledger, never SQLite."
        start = await hook(project, data, "SessionStart", payload(session, "SessionStart"))
        assert start[0] == 0
        code, answer, err = await hook(
            project, data, "UserPromptSubmit", payload(session, "x", prompt=said), keep=True
        )
        assert (code, err) == (0, "")
        assert "prompt" in await kinds(memory, session)
        code, answer, err = await hook(
            project, data, "UserPromptSubmit", payload(session, "x", prompt="go on"), keep=True
        )
        output = answer["hookSpecificOutput"]
        assert output["hookEventName"] == "UserPromptSubmit"
        assert "Postgres" in output["additionalContext"]


async def test_a_hook_goes_to_the_first_of_the_listed_services_that_answers(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    """``PLAIT_URL`` lists replicas of a shared service: a dead first one costs a refused
    connection, and the call is answered and recorded by the next, nothing spooled."""
    async with running(tmp_path, redis_url) as memory:
        project, data = tmp_path / "project", tmp_path / "data"
        live = read_service_file(data, project)
        assert live is not None
        replicas = {"PLAIT_URL": f"http://127.0.0.1:{free_port()}, {live.url}"}
        said = payload(session, "x", prompt="We decided to use Postgres for the ledger.")
        code, _, err = await run_hook(
            "claude-code", project, data, "UserPromptSubmit", said, True, env=replicas
        )
        assert (code, err) == (0, "")
        assert "prompt" in await kinds(memory, session)
        assert not list((data / "spool").rglob("hook-*.jsonl"))
        dead = {"PLAIT_URL": f"http://127.0.0.1:{free_port()}"}
        _, _, err = await run_hook(
            "claude-code", project, data, "UserPromptSubmit", said, True, env=dead
        )
        assert "waits in" in err  # no listed service answered: kept for later
    stop_flusher(next((data / "outbox").rglob(".flusher")))


async def test_a_members_hook_into_anothers_session_is_refused_and_blocks_nothing(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    """On a service a team shares, bob's hook naming alice's session is refused (403: it is
    hers) and learns nothing of it; the refusal is final, so it is not kept to be sent again
    and bob's next call, in a session of his own, goes straight through."""
    members, tokens = team(tmp_path / "tokens")
    async with running(tmp_path, redis_url, team=members) as memory:
        project, data = tmp_path / "project", tmp_path / "data"
        live = read_service_file(data, project)
        assert live is not None
        as_alice = {"PLAIT_URL": live.url, "PLAIT_TOKEN": tokens["alice"]}
        as_bob = {"PLAIT_URL": live.url, "PLAIT_TOKEN": tokens["bob"]}
        said = payload(session, "x", prompt="I prefer tabs over spaces in every file.")
        code, _, err = await run_hook(
            "claude-code", project, data, "UserPromptSubmit", said, True, env=as_alice
        )
        assert (code, err) == (0, "")
        asked = payload(session, "x", prompt="What does alice prefer?")
        code, answer, err = await run_hook(
            "claude-code", project, data, "UserPromptSubmit", asked, True, env=as_bob
        )
        assert code == 0 and "another member" in err and "tabs" not in str(answer)
        assert not list((data / "outbox").rglob("*.json"))  # not kept: sending it again won't do
        own = payload(f"{session}-bob", "x", prompt="We use Postgres for the ledger.")
        code, _, err = await run_hook(
            "claude-code", project, data, "UserPromptSubmit", own, True, env=as_bob
        )
        assert (code, err) == (0, "")
        assert "prompt" in await kinds(memory, f"{session}-bob")
        prompts = [e.body for e in await memory.backends.store.read_events(session)]
        assert not any("alice prefer" in (body or "") for body in prompts)


def stored_prompts(redis_url: str, project: Path, session: str) -> list[str]:
    """The prompts recorded for a session, in order, as the hot tier holds them."""
    client = redis.Redis.from_url(redis_url)
    try:
        raw = client.lrange(f"{project_prefix(project)}s:{session}:events", 0, -1)
    finally:
        client.close()
    events = [json.loads(line) for line in raw]
    return [e.get("body") or e["summary"] for e in events if e["kind"] == "prompt"]


async def test_a_replica_holding_a_sessions_earlier_call_gets_its_next_ones_alone(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    """Replica A answered a prompt "spooled" (its hot tier was down: the call waits in its
    spool) and was killed. The session's next prompt is not stored by replica B meanwhile: it
    waits in the outbox for A, and once A is back both are recorded, in order. Before, B
    stored the second before A, back, recorded the first."""
    project = tmp_path / "project"
    project.mkdir()
    port, down = free_port(), f"redis://127.0.0.1:{free_port()}/0"
    a_env = plait_env(tmp_path / "data-a", PLAIT_REDIS__URL=down, PLAIT_SERVICE__PORT=str(port))
    started = [start_serve(project, a_env)]
    try:
        token = (tmp_path / "data-a" / "token").read_text().strip()
        (tmp_path / "data-b").mkdir(mode=0o700)
        (tmp_path / "data-b" / "token").write_text(token)
        (tmp_path / "data-b" / "token").chmod(0o600)
        started.append(
            start_serve(project, plait_env(tmp_path / "data-b", PLAIT_REDIS__URL=redis_url))
        )
        (a, a_url), (_, b_url) = started
        client = {"PLAIT_URL": f"{a_url},{b_url}", "PLAIT_TOKEN": token}
        data = tmp_path / "client"

        async def say(text: str) -> str:
            said = payload(session, "UserPromptSubmit", prompt=text)
            code, _, err = await run_hook(
                "claude-code", project, data, "UserPromptSubmit", said, True, env=client
            )
            assert code == 0
            return err

        assert await say("first prompt") == ""  # A kept it in its spool
        a.kill()
        a.wait()
        assert "outbox" in await say("second prompt")  # held for A, not sent to B
        assert stored_prompts(redis_url, project, session) == []
        started.append(start_serve(project, dict(a_env, PLAIT_REDIS__URL=redis_url)))
        for _ in range(200):  # A is back: its spool, then the outbox (the flusher sends it)
            if len(stored_prompts(redis_url, project, session)) == 2:
                break
            await asyncio.sleep(0.1)
        # recorded with nobody sending: A adopted its spool, the flusher sent the held call
        assert stored_prompts(redis_url, project, session) == ["first prompt", "second prompt"]
        assert await say("third prompt") == ""
        for _ in range(100):
            if len(stored_prompts(redis_url, project, session)) == 3:
                break
            await asyncio.sleep(0.1)
        assert stored_prompts(redis_url, project, session) == [
            "first prompt",
            "second prompt",
            "third prompt",
        ]
    finally:
        for process, _ in started:
            process.terminate()
            process.wait(timeout=30)
        for lock in (tmp_path / "client" / "outbox").rglob(".flusher"):
            if not flusher_ended(lock):  # it ends by itself once the outbox is empty
                stop_flusher(lock)


async def test_a_chosen_service_that_is_down_gets_the_kept_calls_first_when_it_is_back(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    """With ``PLAIT_URL`` (a shared, perhaps remote service) no local service adopts a spool:
    a call no listed service kept waits, redacted, in the client's outbox, and the next hook
    sends it before its own call, so both are recorded in order; nothing is spooled."""
    async with running(tmp_path, redis_url) as memory:
        project, data = tmp_path / "project", tmp_path / "data"
        live = read_service_file(data, project)
        assert live is not None
        secret = "MYSQL_PWD=hunter2hunter2"
        first = payload(session, "x", prompt=f"We decided to use Postgres. {secret}")
        dead = {"PLAIT_URL": f"http://127.0.0.1:{free_port()}"}
        _, _, err = await run_hook(
            "claude-code", project, data, "UserPromptSubmit", first, True, env=dead
        )
        assert "outbox" in err
        kept = list((data / "outbox").rglob("*.json"))
        assert len(kept) == 1 and "hunter2hunter2" not in kept[0].read_text()
        assert stat.S_IMODE(kept[0].stat().st_mode) == 0o600
        assert await kinds(memory, session) == []
        refused = {"PLAIT_URL": live.url, "PLAIT_TOKEN": "not-the-token"}
        await run_hook("claude-code", project, data, "SessionStart", first, env=refused)
        assert len(list((data / "outbox").rglob("*.json"))) == 1  # a 401 is no answer: it waits
        second = payload(session, "x", prompt="Now wire the ledger service.")
        code, _, err = await run_hook(
            "claude-code",
            project,
            data,
            "UserPromptSubmit",
            second,
            True,
            env={"PLAIT_URL": live.url},
        )
        assert (code, err) == (0, "")
        prompts = [
            event.body or event.summary
            for event in await memory.backends.store.read_events(session)
            if str(event.kind) == "prompt"
        ]
        assert len(prompts) == 2 and "Postgres" in prompts[0] and "ledger service" in prompts[1]
        assert not list((data / "outbox").rglob("*.json"))
        assert not list((data / "spool").rglob("hook-*.jsonl"))


async def test_what_waits_in_the_outbox_is_sent_when_the_service_is_back_with_no_other_hook(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    """Liveness: a call kept in the outbox is recorded once the chosen service answers, by the
    outbox's flusher (started by the hook that kept it), without another hook to carry it;
    the flusher then ends. Before, it waited for the next hook, which may never come."""
    project, data = tmp_path / "project", tmp_path / "data"
    data.mkdir()
    (data / "token").write_text("shared-service-token")
    (data / "token").chmod(0o600)
    port = free_port()
    chosen = {"PLAIT_URL": f"http://127.0.0.1:{port}", "PLAIT_TOKEN": "shared-service-token"}
    said = payload(session, "x", prompt="We decided to use Postgres for the ledger.")
    project.mkdir()
    _, _, err = await run_hook(
        "claude-code", project, data, "UserPromptSubmit", said, True, env=chosen
    )
    assert "outbox" in err
    flusher = next((data / "outbox").rglob(".flusher"))
    async with running(tmp_path, redis_url, port=port) as memory:
        outbox = data / "outbox"
        for _ in range(300):  # its pauses are at most 4 s; nobody calls a hook meanwhile
            # recorded, then (once the service answered) the flusher removes the call's file
            if "prompt" in await kinds(memory, session) and not list(outbox.rglob("*.json")):
                break
            await asyncio.sleep(0.1)
        assert "prompt" in await kinds(memory, session)
        assert not list(outbox.rglob("*.json"))
        for _ in range(100):  # and the flusher is gone
            if flusher_ended(flusher):
                break
            await asyncio.sleep(0.1)
        assert flusher_ended(flusher)


def stop_flusher(lock: Path) -> None:
    """End the outbox's running flusher (its pid is in its lock file) and wait until it has."""
    for _ in range(200):
        pid = lock.read_text().strip()
        if pid:  # it has started
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGTERM)
            if flusher_ended(lock):
                return
        time.sleep(0.05)
    raise AssertionError("no flusher ended")


def flusher_ended(lock: Path) -> bool:
    """Whether no flusher holds the outbox's flusher lock."""
    descriptor = os.open(lock, os.O_WRONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(descriptor)
    return True


async def test_a_service_that_speaks_https_is_reached_over_tls(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    """``service.tls_cert``: the service's URL is https, and the hook client speaks TLS to it
    (the certificate checked against ``SSL_CERT_FILE``); before, it sent plain HTTP and every
    hook was lost to a service it never reached."""
    cert, key = self_signed(tmp_path)
    async with running(tmp_path, redis_url, tls=(cert, key)) as memory:
        project, data = tmp_path / "project", tmp_path / "data"
        live = read_service_file(data, project)
        assert live is not None and live.url.startswith("https://")
        trusted = {"SSL_CERT_FILE": str(cert)}
        said = payload(session, "x", prompt="We decided to use Postgres for the ledger.")
        code, _, err = await run_hook(
            "claude-code", project, data, "UserPromptSubmit", said, True, env=trusted
        )
        assert (code, err) == (0, "")
        assert "prompt" in await kinds(memory, session)
        _, _, err = await run_hook(  # a certificate it cannot check: refused, kept for later
            "claude-code",
            project,
            data,
            "UserPromptSubmit",
            said,
            True,
            env={"PLAIT_URL": live.url},
        )
        assert "outbox" in err
    stop_flusher(next((data / "outbox").rglob(".flusher")))  # it would try for 15 minutes


async def test_a_tool_step_that_changes_memory_adds_what_changed_to_its_result(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    """PostToolUse: a failed test run is a new unresolved error the model was not told of in
    memory; the answer says so, once (the same result again adds nothing)."""
    async with running(tmp_path, redis_url):
        project, data = tmp_path / "project", tmp_path / "data"
        said = payload(session, "x", prompt="We decided to keep money in integer cents.")
        await hook(project, data, "UserPromptSubmit", said, keep=True)
        failed = payload(
            session,
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": "pytest -q"},
            tool_response={"stdout": "FAILED tests/test_money.py::test_cents", "exit_code": 1},
        )
        code, answer, err = await hook(project, data, "PostToolUse", failed, keep=True)
        assert (code, err) == (0, "")
        context = answer["hookSpecificOutput"]["additionalContext"]
        assert context.startswith("<memory_update>") and "- error:" in context
        assert "integer cents" not in context  # the model was told that already
        _, again, _ = await hook(project, data, "PostToolUse", failed, keep=True)
        assert again == {}


async def test_claude_code_bad_input_never_blocks_the_host(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    async with running(tmp_path, redis_url) as memory:
        project, data = tmp_path / "project", tmp_path / "data"
        cases = [
            ("Notification", payload(session, "Notification"), "unknown"),
            ("UserPromptSubmit", {"prompt": "no session"}, "session_id"),
            ("Stop", b"{not json", "not JSON"),
        ]
        for event, body, reason in cases:
            code, answer, err = await hook(project, data, event, body, keep=True)
            assert (code, answer) == (0, {})
            assert reason in err and err.count("\n") == 1
        huge = payload(
            session,
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": "pytest tests/test_big.py"},
            tool_response={"stdout": "", "stderr": "E " * 5_000_000, "exit_code": 2},
        )
        code, _, err = await hook(project, data, "PostToolUse", huge, keep=True)
        assert (code, err) == (0, "")
        events = await memory.backends.store.read_events(session)
        assert [event.kind for event in events] == ["error"]
        assert events[0].summary.startswith("pytest")
        assert all(len(event.body) < 100_000 for event in events)


async def test_claude_code_call_kept_while_the_service_is_down_runs_when_it_is_up(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    project, data = tmp_path / "project", tmp_path / "data"
    project.mkdir()
    secret = "sk-ant-api03-" + "Q7" * 40
    said = f"We decided to deploy with Nomad. token {secret} <private>my pin 4242</private>"
    code, answer, err = await hook(
        project, data, "UserPromptSubmit", payload(session, "x", prompt=said), keep=True
    )
    assert (code, answer) == (0, {}) and "waits in" in err
    [spooled] = list((data / "spool").glob("*/hook-*.jsonl"))
    assert stat.S_IMODE(spooled.stat().st_mode) == 0o600
    assert secret not in spooled.read_text() and "4242" not in spooled.read_text()
    async with running(tmp_path, redis_url) as memory:
        for _ in range(200):
            if "prompt" in await kinds(memory, session):
                break
            await asyncio.sleep(0.05)
        [event] = [
            e for e in await memory.backends.store.read_events(session) if e.kind == "prompt"
        ]
        assert "Nomad" in event.body and secret not in event.body


async def test_claude_code_edit_recalls_what_the_session_knows_of_that_file(
    tmp_path: Path, redis_url: str, session: str
) -> None:
    async with running(tmp_path, redis_url):
        project, data = tmp_path / "project", tmp_path / "data"
        said = "We decided that src/ledger.py keeps amounts in integer cents, never floats."
        await hook(project, data, "UserPromptSubmit", payload(session, "x", prompt=said), True)

        def edit(path: str) -> dict[str, Any]:
            return payload(session, "PreToolUse", tool_name="Edit", tool_input={"file_path": path})

        _, answer, _ = await hook(project, data, "PreToolUse", edit("src/ledger.py"))
        context = answer["hookSpecificOutput"]["additionalContext"]
        assert context.startswith('<file_memory path="src/ledger.py">') and "cents" in context
        assert len(context) <= 1024
        assert (await hook(project, data, "PreToolUse", edit("src/report.py")))[1] == {}
