"""A LangChain agent whose session memory lives in a team's shared service (issue #27).

A real ``plait serve`` on a loopback port, a real ``create_agent`` loop with LangGraph's in-memory
checkpointer; the chat model is the only fake. The agent reaches the service only by URL and
token (``plait.connect``), as it would from another machine.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from support.command_hooks import running
from support.local_web import free_port
from support.scripted_model import ScriptedChatModel
from support.team import team

import plait
import plait.adapters.hosts.langchain.remote as remote_module
from plait import Memory
from plait.adapters.hosts.http import read_service_file
from plait.adapters.hosts.langchain import (
    RemoteSessions,
    SessionMemoryMiddleware,
    memory_tools,
    session_memory_hook,
    session_memory_node,
)
from plait.state.events import EventKind

DECISION = "We decided to use PostgreSQL 16 as the only database for the orders service."


def envelope_of(messages: list[BaseMessage]) -> str:
    """The ``<session_memory>`` envelope the model was given, or ""."""
    text = "\n".join(message.text for message in messages)
    start = text.find("<session_memory")
    return text[start : text.index("</session_memory>")] if start >= 0 else ""


async def prompts_of(memory: Memory, session: str) -> list[str]:
    """The user prompts the service recorded for a session, in order."""
    events = await memory.backends.store.read_events(session, after_id=0, limit=1000)
    return [e.summary for e in events if e.kind is EventKind.PROMPT]


def service_of(tmp_path: Path) -> tuple[str, str]:
    """The running service's URL and the owner's token."""
    live = read_service_file(tmp_path / "data", tmp_path / "project")
    assert live is not None
    return live.url, (tmp_path / "data" / "token").read_text().strip()


def agent_over(middleware: SessionMemoryMiddleware, turns: int) -> tuple[object, ScriptedChatModel]:
    """A create_agent loop with the middleware and a scripted model of ``turns`` answers."""
    model = ScriptedChatModel(responses=[AIMessage(content=f"ok {n}") for n in range(turns)])
    agent = create_agent(
        model=model, tools=[], middleware=[middleware], checkpointer=InMemorySaver()
    )
    return agent, model


async def test_an_agent_keeps_its_session_memory_in_the_shared_service(
    tmp_path: Path, redis_url: str
) -> None:
    """Async and sync runs of one thread: every prompt recorded once, in order, in the service,
    and the next model call carries what the session decided, from a dead replica listed first."""
    async with running(tmp_path, redis_url) as memory:
        url, token = service_of(tmp_path)
        dead = f"http://127.0.0.1:{free_port()}"
        team = plait.connect(f"{dead},{url}", token)
        middleware = SessionMemoryMiddleware(team)
        remote = middleware.sessions
        assert isinstance(remote, RemoteSessions)
        posts = remote.post
        sent: list[tuple[str, int]] = []

        def counted(action: str, body: dict[str, Any]) -> dict[str, Any]:
            sent.append((action, len(body.get("messages", ()))))
            return posts(action, body)

        remote.post = counted  # type: ignore[method-assign]
        agent, model = agent_over(middleware, 4)
        thread = f"thread-{uuid.uuid4().hex[:8]}"
        config = {"configurable": {"thread_id": thread}}
        turns = [DECISION, "TODO: add a migration for the orders table.", "Now the repository."]
        await agent.ainvoke({"messages": [HumanMessage(content=turns[0])]}, config)  # type: ignore[attr-defined]
        await agent.ainvoke({"messages": [HumanMessage(content=turns[1])]}, config)  # type: ignore[attr-defined]
        # invoke (synchronous), from a thread of its own: no Memory.open_sync needed here
        await asyncio.to_thread(
            agent.invoke,  # type: ignore[attr-defined]
            {"messages": [HumanMessage(content=turns[2])]},
            config,
        )
        await team.aclose()
        remote.close()

        # each call carries only what the service has not acknowledged: the new prompt, and
        # after the run its answer
        assert sent == [("turn", 1), ("record", 1)] * 3
        prompts = await prompts_of(memory, thread)
        assert [p.rstrip(".") for p in prompts] == [t.rstrip(".") for t in turns]  # once each
        assert "PostgreSQL 16" in envelope_of(model.received[1])
        assert "PostgreSQL 16" in envelope_of(model.received[-1])
        assert "migration" in envelope_of(model.received[-1])


async def test_a_turn_made_while_the_service_is_down_is_sent_with_the_next(
    tmp_path: Path, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The service is not there for the first turn: the model call goes ahead without an
    envelope and says why; the next call, once the service is up, records both turns in order."""
    port = free_port()
    token = "a-token-for-this-test"
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "token").write_text(token)
    sessions = RemoteSessions(f"http://127.0.0.1:{port}", token)
    agent, model = agent_over(SessionMemoryMiddleware(sessions), 2)
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    config = {"configurable": {"thread_id": thread}}
    with caplog.at_level(logging.WARNING, logger="plait"):
        first = await agent.ainvoke({"messages": [HumanMessage(content=DECISION)]}, config)  # type: ignore[attr-defined]
    assert first["messages"][-1].text == "ok 0"
    assert "no plait service answered" in caplog.text
    assert envelope_of(model.received[0]) == ""

    async with running(tmp_path, redis_url, port=port) as memory:
        assert service_of(tmp_path)[1] == token
        await agent.ainvoke({"messages": [HumanMessage(content="What next?")]}, config)  # type: ignore[attr-defined]
        prompts = await prompts_of(memory, thread)
    sessions.close()
    assert [p.rstrip(".?") for p in prompts] == [DECISION.rstrip("."), "What next"]
    assert "PostgreSQL 16" in envelope_of(model.received[-1])


async def test_another_members_thread_is_refused_once_and_not_sent_again(
    tmp_path: Path, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Alice and bob both run an agent on thread "1" of a team's service: the thread is alice's
    (she came first). Bob's agent goes on without memory, told why once; its later turns do not
    send the growing thread again to be refused; nothing of bob's lands in alice's session."""
    members, tokens = team(tmp_path / "tokens")
    async with running(tmp_path, redis_url, team=members) as memory:
        url, _ = service_of(tmp_path)
        alice, bob = RemoteSessions(url, tokens["alice"]), RemoteSessions(url, tokens["bob"])
        sent: list[str] = []
        post = bob.service.post

        def counted(path: str, body: dict[str, Any], **how: Any) -> dict[str, Any]:
            sent.append(path)
            return post(path, body, **how)

        bob.service.post = counted  # type: ignore[method-assign]
        thread = {"configurable": {"thread_id": "1"}}
        mine, _ = agent_over(SessionMemoryMiddleware(alice), 1)
        await mine.ainvoke({"messages": [HumanMessage(content=DECISION)]}, thread)  # type: ignore[attr-defined]
        theirs, _ = agent_over(SessionMemoryMiddleware(bob), 3)
        with caplog.at_level(logging.WARNING, logger="plait"):
            for n in range(3):
                said = HumanMessage(content=f"Bob's turn {n}: what did alice decide?")
                answer = await theirs.ainvoke({"messages": [said]}, thread)  # type: ignore[attr-defined]
                assert answer["messages"][-1].text == f"ok {n}"  # bob's agent went on
        alice.close()
        bob.close()
        assert len(sent) == 1, sent  # refused once, then not sent again
        assert "another member" in caplog.text
        assert await prompts_of(memory, "1") == [DECISION]


async def test_a_refused_token_fails_open_and_bad_requests_say_what_is_wrong(
    tmp_path: Path, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with running(tmp_path, redis_url) as memory:
        url, token = service_of(tmp_path)
        stranger = RemoteSessions(url, "not-the-token")
        agent, _ = agent_over(SessionMemoryMiddleware(stranger), 1)
        with caplog.at_level(logging.WARNING, logger="plait"):
            answer = await agent.ainvoke(  # type: ignore[attr-defined]
                {"messages": [HumanMessage(content=DECISION)]},
                {"configurable": {"thread_id": "stranger"}},
            )
        stranger.close()
        assert answer["messages"][-1].text == "ok 0"  # the agent went on
        assert "refused the token" in caplog.text
        assert await prompts_of(memory, "stranger") == []

        auth = {"authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=url, headers=auth) as client:
            unknown = await client.post("/v1/langchain/forget", json={"session_id": "s"})
            assert unknown.status_code == 404
            assert unknown.json()["field"] == "action"
            no_json = await client.post("/v1/langchain/turn", content=b"{not json")
            assert no_json.status_code == 400
            no_session = await client.post("/v1/langchain/turn", json={"messages": []})
            assert (no_session.status_code, no_session.json()["field"]) == (400, "session_id")
            bad = await client.post(
                "/v1/langchain/turn",
                json={"session_id": "s", "messages": [{"type": "human", "data": {}}, {"x": 1}]},
            )
            assert bad.status_code == 422
            assert bad.json()["field"] == "messages 0"
            assert await prompts_of(memory, "s") == []
            fine = await client.post(
                "/v1/langchain/turn",
                json={
                    "session_id": "s",
                    "messages": [{"type": "human", "data": {"content": DECISION}}],
                },
            )
            assert fine.status_code == 200
            assert fine.json()["recorded"] is True
            assert len(await prompts_of(memory, "s")) == 1


async def test_the_pre_model_hook_and_node_reach_the_service_too(
    tmp_path: Path, redis_url: str
) -> None:
    async with running(tmp_path, redis_url) as memory:
        url, token = service_of(tmp_path)
        team = plait.connect(url, token)
        hook = session_memory_hook(team)
        node = session_memory_node(team, envelope_key="memory")
        config = {"configurable": {"thread_id": "hand-built"}}
        first = [HumanMessage(content=DECISION, id="h1")]
        await hook.ainvoke({"messages": first}, config)
        later = [*first, AIMessage(content="Noted.", id="a1"), HumanMessage("Next?", id="h2")]
        given = await asyncio.to_thread(hook.invoke, {"messages": later}, config)
        found = await node.ainvoke({"messages": later}, config)
        await team.aclose()
        assert "PostgreSQL 16" in envelope_of(given["llm_input_messages"])
        assert "PostgreSQL 16" in found["memory"]
        assert [p.rstrip(".?") for p in await prompts_of(memory, "hand-built")] == [
            DECISION.rstrip("."),
            "Next",
        ]


async def test_a_long_thread_goes_in_batches_each_remembered_once_recorded(
    tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread sent whole (a restarted agent) that is bigger than one request may carry goes
    as several, in order; a message longer than a request may carry is cut, not refused."""
    monkeypatch.setattr(remote_module, "MESSAGE_MAX_CHARS", 3000)
    async with running(tmp_path, redis_url) as memory:
        url, token = service_of(tmp_path)
        sessions = RemoteSessions(url, token, batch_bytes=2000)
        sent: list[tuple[str, int]] = []
        longest = 0
        posts = sessions.post

        def counted(action: str, body: dict[str, Any]) -> dict[str, Any]:
            nonlocal longest
            sent.append((action, len(body.get("messages", ()))))
            texts = [m["data"]["content"] for m in body.get("messages", ())]
            longest = max([longest, *map(len, texts)])
            return posts(action, body)

        sessions.post = counted  # type: ignore[method-assign]
        thread: list[BaseMessage] = []
        for n in range(6):
            thread.append(
                HumanMessage(f"Turn {n}: we decided module {n} is the kiwi-{n} part. " * 8)
            )
            thread.append(AIMessage(f"Noted {n}.", id=f"a{n}"))
        thread.append(HumanMessage("Decision: keep the whole log. " + "x" * 10_000, id="big"))
        envelope = await sessions.aturn("long", thread)
        again = await sessions.aturn("long", thread)  # nothing new: nothing sent but the turn
        sessions.close()
        prompts = await prompts_of(memory, "long")

    assert len(sent) > 3 and {action for action, _ in sent[:-2]} == {"record"}
    assert sum(count for _, count in sent[:-1]) == len(thread)  # each message sent once
    assert sent[-1] == ("turn", 0)
    assert longest == 3000  # the big message was cut to what one request may carry
    assert [p.split(":")[0] for p in prompts[:6]] == [f"Turn {n}" for n in range(6)]
    assert prompts[6].startswith("Decision: keep the whole log")
    assert "kiwi-5" in envelope and "kiwi-5" in again


async def test_the_memory_tools_run_on_the_service_under_the_users_token(
    tmp_path: Path, redis_url: str
) -> None:
    """Saved there (the session is the run's thread), found there under invoke and ainvoke; a
    field the service refuses comes back to the model naming it; a dead service says so."""
    async with running(tmp_path, redis_url) as memory:
        url, token = service_of(tmp_path)
        team = plait.connect(url, token)
        tools = {tool.name: tool for tool in memory_tools(team)}
        config = {"configurable": {"thread_id": "tools-remote"}}
        call = {"type": "tool_call", "id": "c1", "name": "memory_save"}
        args = {"title": "Ledger rounding", "content": "Round half-even.", "type": "decision"}
        saved = await tools["memory_save"].ainvoke({**call, "args": args}, config)
        stored = await memory.observations.get(saved.artifact["id"])
        assert stored.title == "Ledger rounding"
        assert stored.source.session_id == "tools-remote"
        search = {"type": "tool_call", "id": "c2", "name": "memory_search"}
        found = await asyncio.to_thread(
            tools["memory_search"].invoke, {**search, "args": {"query": "ledger rounding"}}, config
        )
        assert found.artifact["results"][0]["id"] == saved.artifact["id"]
        bad = await tools["memory_save"].ainvoke(
            {**call, "args": {**args, "type": "not-a-type"}}, config
        )
        assert bad.status == "error" and "type" in bad.text
        await team.aclose()
    dead = plait.connect(f"http://127.0.0.1:{free_port()}", token)
    gone = {tool.name: tool for tool in memory_tools(dead)}
    answer = await gone["memory_stats"].ainvoke(
        {"type": "tool_call", "id": "c3", "name": "memory_stats", "args": {}}, config
    )
    assert answer.status == "error" and "no plait service answered" in answer.text, answer.text
    await dead.aclose()
