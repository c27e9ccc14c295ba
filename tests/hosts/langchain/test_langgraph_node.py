"""plait's pre_model_hook in create_react_agent, and its node in a hand-built StateGraph."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import create_react_agent
from support.scripted_model import ScriptedChatModel
from typing_extensions import TypedDict

from plait import Memory
from plait.adapters.hosts.langchain import inject_envelope
from plait.adapters.hosts.langchain.node import session_memory_hook, session_memory_node

ENVELOPE_OPEN = "<session_memory"
DECISION = "We decided to use PostgreSQL 16 as the only database for the orders service."


def envelope_count(messages: Sequence[BaseMessage]) -> int:
    return sum(message.text.count(ENVELOPE_OPEN) for message in messages)


def write_file(path: str) -> str:
    """Write a file of the project."""
    return f"wrote {path}"


async def test_pre_model_hook_injects_without_touching_history(memory: Memory) -> None:
    thread_id = f"react-{uuid.uuid4().hex[:8]}"
    model = ScriptedChatModel(
        responses=[
            AIMessage(
                content="",
                id="call-1",
                tool_calls=[
                    {
                        "name": "write_file",
                        "args": {"path": "orders/db.py"},
                        "id": "tc-1",
                        "type": "tool_call",
                    }
                ],
            ),
            AIMessage(content="written", id="final-1"),
            AIMessage(content="next", id="final-2"),
        ]
    )
    agent = create_react_agent(
        model,
        [StructuredTool.from_function(write_file)],
        pre_model_hook=session_memory_hook(memory),
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": thread_id}}
    await agent.ainvoke({"messages": [HumanMessage(content=DECISION)]}, config)
    await agent.ainvoke({"messages": [HumanMessage(content="What now?")]}, config)

    assert len(model.received) == 3
    # the first call's envelope would only repeat the message it heads: it is left out
    assert [envelope_count(request) for request in model.received] == [0, 1, 1]
    assert "PostgreSQL 16" in model.received[-1][-1].text
    assert "orders/db.py" in model.received[-1][-1].text
    state = await agent.aget_state(config)
    assert envelope_count(state.values["messages"]) == 0
    events = await memory.backends.store.read_events(thread_id, after_id=0, limit=100)
    assert any("PostgreSQL 16" in event.summary for event in events)


class ChatState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    session_memory: str


async def test_node_in_hand_built_graph_uses_the_given_session(memory: Memory) -> None:
    session_id = f"custom-{uuid.uuid4().hex[:8]}"
    model = ScriptedChatModel(
        responses=[AIMessage(content="one", id="m1"), AIMessage(content="two", id="m2")]
    )

    async def call_model(state: ChatState) -> dict[str, Any]:
        messages = inject_envelope(state["messages"], state.get("session_memory", ""))
        return {"messages": [await model.ainvoke(messages)]}

    builder = StateGraph(ChatState)
    builder.add_node("session_memory", session_memory_node(memory, session_id=session_id))
    builder.add_node("call_model", call_model)
    builder.add_edge(START, "session_memory")
    builder.add_edge("session_memory", "call_model")
    builder.add_edge("call_model", END)
    graph = builder.compile(checkpointer=InMemorySaver())

    config = {"configurable": {"thread_id": "ignored-thread"}}
    await graph.ainvoke({"messages": [HumanMessage(content=DECISION)]}, config)
    result = await graph.ainvoke({"messages": [HumanMessage(content="Go on.")]}, config)

    assert "PostgreSQL 16" in result["session_memory"]
    assert [envelope_count(request) for request in model.received] == [0, 1]
    assert envelope_count(result["messages"]) == 0
    events = await memory.backends.store.read_events(session_id, after_id=0, limit=100)
    assert any("PostgreSQL 16" in event.summary for event in events)
    assert await memory.backends.store.read_events("ignored-thread", after_id=0, limit=100) == []
    recorded = [(event.kind, event.summary) for event in events]
    assert len(recorded) == len(set(recorded))  # the second run recorded only its new messages


def test_node_and_hook_run_under_invoke_with_a_sync_memory(tmp_path: Path, redis_url: str) -> None:
    """``graph.invoke`` (not only ``ainvoke``) runs the node, through Memory.open_sync."""
    project = tmp_path / "sync-project"
    project.mkdir()
    with Memory.open_sync(
        project, tmp_path / "sync-data", start_background=False, redis={"url": redis_url}
    ) as sync_memory:
        model = ScriptedChatModel(
            responses=[AIMessage(content="one", id="s1"), AIMessage(content="two", id="s2")]
        )

        def call_model(state: ChatState) -> dict[str, Any]:
            messages = inject_envelope(state["messages"], state.get("session_memory", ""))
            return {"messages": [model.invoke(messages)]}

        builder = StateGraph(ChatState)
        builder.add_node("session_memory", session_memory_node(sync_memory))
        builder.add_node("call_model", call_model)
        builder.add_edge(START, "session_memory")
        builder.add_edge("session_memory", "call_model")
        builder.add_edge("call_model", END)
        graph = builder.compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": f"sync-{uuid.uuid4().hex[:8]}"}}
        graph.invoke({"messages": [HumanMessage(content=DECISION)]}, config)
        result = graph.invoke({"messages": [HumanMessage(content="Go on.")]}, config)
        hook = session_memory_hook(sync_memory)
        prepared = hook.invoke({"messages": [HumanMessage(content="And now?")]}, config)
    assert "PostgreSQL 16" in result["session_memory"]
    assert [envelope_count(request) for request in model.received] == [0, 1]
    assert envelope_count(prepared["llm_input_messages"]) == 1
