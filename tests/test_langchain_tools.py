"""``remember`` and ``recall``: LangChain tools over the project's long-term memory."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from support.scripted_model import ScriptedChatModel

from plait import Memory
from plait.adapters.hosts.langchain import memory_tools
from plait.state.events import EventKind

PREFERENCE = "Always use tabs for indentation in Makefiles of the billing project."


def calling(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(
        content="",
        id=f"ai-{call_id}",
        tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}],
    )


def by_name(tools: list[BaseTool]) -> dict[str, BaseTool]:
    return {tool.name: tool for tool in tools}


@pytest.fixture
async def memory(tmp_path: Path, tmp_data_dir: Path, redis_url: str) -> AsyncIterator[Memory]:
    project = tmp_path / "project"
    project.mkdir()
    async with Memory.open(
        project,
        tmp_data_dir,
        start_background=False,
        redis={"url": redis_url},
        hooks={"timeout_ms": 20_000},
    ) as opened:
        assert opened.degraded == []
        yield opened


def test_memory_tools_schemas_hide_the_config() -> None:
    tools = by_name(memory_tools(memory=None))  # type: ignore[arg-type]
    assert set(tools) == {"remember", "recall"}
    assert set(tools["remember"].tool_call_schema.model_json_schema()["properties"]) == {
        "text",
        "kind",
    }
    assert set(tools["recall"].tool_call_schema.model_json_schema()["properties"]) == {"query"}


async def test_remember_records_into_the_thread(memory: Memory) -> None:
    thread_id = f"tools-{uuid.uuid4().hex[:8]}"
    remember = by_name(memory_tools(memory))["remember"]
    reply = await remember.ainvoke(
        {"text": PREFERENCE, "kind": "preference"},
        {"configurable": {"thread_id": thread_id}},
    )
    assert "Remembered (preference)" in reply
    events = await memory.store.read_events(thread_id, after_id=0, limit=10)
    assert [(e.kind, e.summary) for e in events] == [(EventKind.PREFERENCE, PREFERENCE)]
    assert await memory.store.queue_depth() >= 1


async def test_agent_remembers_then_recalls_in_a_later_session(memory: Memory) -> None:
    first, second = (f"tools-{uuid.uuid4().hex[:8]}" for _ in range(2))
    writer = ScriptedChatModel(
        responses=[
            calling("remember", {"text": PREFERENCE, "kind": "preference"}, "r1"),
            AIMessage(content="noted", id="ai-noted"),
        ]
    )
    agent = create_agent(model=writer, tools=memory_tools(memory))
    await agent.ainvoke(
        {"messages": [HumanMessage(content="Remember: tabs in Makefiles.")]},
        {"configurable": {"thread_id": first}},
    )
    assert memory.background is not None
    report = await memory.background.drain()
    assert report.written >= 1

    reader = ScriptedChatModel(
        responses=[
            calling("recall", {"query": "indentation in Makefiles"}, "q1"),
            AIMessage(content="tabs", id="ai-tabs"),
        ]
    )
    agent = create_agent(model=reader, tools=memory_tools(memory))
    result = await agent.ainvoke(
        {"messages": [HumanMessage(content="How do we indent Makefiles?")]},
        {"configurable": {"thread_id": second}},
    )
    recalled = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert len(recalled) == 1
    assert "tabs" in recalled[0].text.lower()
    assert "Makefiles" in recalled[0].text
