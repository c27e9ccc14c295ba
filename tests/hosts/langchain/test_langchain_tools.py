"""The ``memory_*`` LangChain tools over the project's observations, in a real agent loop."""

from __future__ import annotations

import json
import uuid
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from support.scripted_model import ScriptedChatModel

from plait import Memory
from plait.adapters.hosts.langchain import memory_tools
from plait.observation_tools import TOOL_NAMES

PREFERENCE = "Always use tabs for indentation in Makefiles of the billing project."


def calling(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(
        content="",
        id=f"ai-{call_id}",
        tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}],
    )


def by_name(tools: list[BaseTool]) -> dict[str, BaseTool]:
    return {tool.name: tool for tool in tools}


async def test_memory_tools_are_the_ten_with_schemas_that_hide_the_config(memory: Memory) -> None:
    tools = by_name(memory_tools(memory, session_id="tools-test"))
    assert tuple(tools) == TOOL_NAMES
    save = tools["memory_save"].tool_call_schema.model_json_schema()
    assert set(save["properties"]) == {"title", "content", "type", "topic_key", "scope"}
    assert set(save["required"]) == {"title", "content"}
    assert set(tools["memory_get"].tool_call_schema.model_json_schema()["properties"]) == {"id"}


async def test_memory_save_answers_json_with_the_id_and_search_finds_it(memory: Memory) -> None:
    thread_id = f"tools-{uuid.uuid4().hex[:8]}"
    tools = by_name(memory_tools(memory))
    config = {"configurable": {"thread_id": thread_id}}
    message = await tools["memory_save"].ainvoke(
        {
            "type": "tool_call",
            "id": "c1",
            "name": "memory_save",
            "args": {"title": PREFERENCE, "content": f"What: {PREFERENCE}", "type": "preference"},
        },
        config,
    )
    assert isinstance(message, ToolMessage)
    saved = json.loads(message.text)
    assert message.artifact == saved and saved["action"] == "created"
    stored = await memory.observations.get(saved["id"])
    assert stored.source.session_id == thread_id and stored.source.name == "langchain"
    search = tools["memory_search"]
    found = json.loads(await search.ainvoke({"query": "Makefile indentation"}, config))
    assert [hit["id"] for hit in found["results"]] == [saved["id"]]


async def test_memory_tool_errors_name_the_field_and_store_nothing(memory: Memory) -> None:
    tools = by_name(memory_tools(memory, session_id="tools-test"))
    wrong = await tools["memory_save"].ainvoke({"title": "x", "content": "y", "type": "mood"})
    missing = await tools["memory_get"].ainvoke({"id": "o000000000000"})
    assert "type" in wrong and "mood" in wrong
    assert "no observation 'o000000000000'" in missing
    assert await memory.observations.listed() == []


async def test_agent_saves_then_finds_it_in_a_later_session(memory: Memory) -> None:
    first, second = (f"tools-{uuid.uuid4().hex[:8]}" for _ in range(2))
    writer = ScriptedChatModel(
        responses=[
            calling(
                "memory_save",
                {"title": PREFERENCE, "content": f"What: {PREFERENCE}", "type": "preference"},
                "r1",
            ),
            AIMessage(content="noted", id="ai-noted"),
        ]
    )
    agent = create_agent(model=writer, tools=memory_tools(memory))
    await agent.ainvoke(
        {"messages": [HumanMessage(content="Remember: tabs in Makefiles.")]},
        {"configurable": {"thread_id": first}},
    )
    reader = ScriptedChatModel(
        responses=[
            calling("memory_search", {"query": "indentation in Makefiles"}, "q1"),
            AIMessage(content="tabs", id="ai-tabs"),
        ]
    )
    agent = create_agent(model=reader, tools=memory_tools(memory))
    result = await agent.ainvoke(
        {"messages": [HumanMessage(content="How do we indent Makefiles?")]},
        {"configurable": {"thread_id": second}},
    )
    found = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert len(found) == 1
    assert json.loads(found[0].text)["results"][0]["title"] == PREFERENCE
