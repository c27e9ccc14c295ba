"""LangChain agents with plait under invoke, stream, ainvoke and astream; sessions; summaries.

A real ``create_agent`` with the scripted chat model, on a real Memory (embedded FalkorDB).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from support.scripted_model import ScriptedChatModel

from plait import Memory, Settings, UsageError
from plait.adapters.hosts.langchain import SessionMemoryMiddleware, memory_tools
from plait.sync import SyncMemory

ENVELOPE = re.compile(r"<session_memory[^>]*>.*?</session_memory>", re.DOTALL)


@pytest.fixture
def sync_memory(tmp_path: Path, redis_url: str) -> Iterator[SyncMemory]:
    settings = Settings.load(tmp_path, redis={"url": redis_url}, data_dir=tmp_path / "data")
    with Memory.open_sync(tmp_path, settings=settings, start_background=False) as memory:
        yield memory


def text_of(messages: list[BaseMessage]) -> str:
    return "\n".join(str(message.content) for message in messages)


def replies(*texts: str) -> list[AIMessage]:
    return [AIMessage(text) for text in texts]


def test_open_sync_is_a_handle_with_close_and_a_context_manager(
    tmp_path: Path, redis_url: str
) -> None:
    settings = Settings.load(tmp_path, redis={"url": redis_url}, data_dir=tmp_path / "data")
    memory = Memory.open_sync(tmp_path, settings=settings, start_background=False)
    try:
        memory.user_turn("sync-1", "Rule: all money amounts are Decimal.")
        assert "Decimal" in memory.envelope("sync-1")
        assert memory.group_id.startswith("plait")
    finally:
        memory.close()
    memory.close()  # twice is fine


@pytest.mark.parametrize("mode", ["invoke", "stream"])
def test_sync_agent_gets_the_envelope(sync_memory: SyncMemory, mode: str) -> None:
    model = ScriptedChatModel(responses=replies("Noted.", "Adding it."))
    agent = create_agent(
        model,
        tools=[],
        middleware=[SessionMemoryMiddleware(sync_memory)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": f"sync-{mode}"}}
    first = {"messages": [("user", "We decided to use Redis for the cache.")]}
    second = {"messages": [("user", "Now add the orders migration.")]}
    if mode == "invoke":
        agent.invoke(first, config)
        agent.invoke(second, config)
    else:
        list(agent.stream(first, config))
        list(agent.stream(second, config))
    last_call = text_of(model.received[-1])
    assert len(ENVELOPE.findall(last_call)) == 1 and "Redis" in last_call


@pytest.mark.parametrize("mode", ["ainvoke", "astream"])
async def test_async_agent_gets_the_envelope(tmp_path: Path, redis_url: str, mode: str) -> None:
    settings = Settings.load(tmp_path, redis={"url": redis_url}, data_dir=tmp_path / "data")
    async with Memory.open(tmp_path, settings=settings, start_background=False) as memory:
        model = ScriptedChatModel(responses=replies("Noted.", "Adding it."))
        agent = create_agent(
            model,
            tools=[],
            middleware=[SessionMemoryMiddleware(memory)],
            checkpointer=InMemorySaver(),
        )
        config = {"configurable": {"thread_id": f"async-{mode}"}}
        for text in ("We decided to use Redis for the cache.", "Now add the migration."):
            payload = {"messages": [("user", text)]}
            if mode == "ainvoke":
                await agent.ainvoke(payload, config)
            else:
                [chunk async for chunk in agent.astream(payload, config)]
    last_call = text_of(model.received[-1])
    assert len(ENVELOPE.findall(last_call)) == 1 and "Redis" in last_call


def test_runs_without_a_thread_never_share_a_session(sync_memory: SyncMemory) -> None:
    """Two unrelated conversations with no thread id: neither sees the other's rule."""
    model = ScriptedChatModel(responses=replies("Noted.", "Sure.", "Sure."))
    agent = create_agent(model, tools=[], middleware=[SessionMemoryMiddleware(sync_memory)])
    agent.invoke({"messages": [("user", "Rule: never use tabs in this codebase.")]})
    agent.invoke({"messages": [("user", "Write a haiku about autumn.")]})
    assert "tabs" not in text_of(model.received[-1])


def tools_by_name(memory: SyncMemory, **options: object) -> dict:
    return {tool.name: tool for tool in memory_tools(memory, **options)}  # type: ignore[arg-type]


def test_tools_without_a_session_say_so(sync_memory: SyncMemory) -> None:
    save = tools_by_name(sync_memory)["memory_save"]
    answer = save.invoke({"title": "Test style", "content": "Prefer pytest."})
    assert "thread_id" in answer  # a tool error the model reads, not a shared session


def test_memory_tools_work_synchronously(sync_memory: SyncMemory) -> None:
    tools = tools_by_name(sync_memory, session_id="tools-sync")
    saved = tools["memory_save"].invoke(
        {"title": "Test style", "content": "Prefer pytest.", "type": "preference"}
    )
    assert '"id"' in saved
    assert "Prefer pytest" in tools["memory_search"].invoke({"query": "pytest"})


def summarizing_agent(memory: object, summarizer_model: ScriptedChatModel) -> tuple:
    model = ScriptedChatModel(responses=replies(*(f"Answer {n}." for n in range(8))))
    session_memory = SessionMemoryMiddleware(memory)  # type: ignore[arg-type]
    agent = create_agent(
        model,
        tools=[],
        middleware=[
            session_memory.summarization(
                summarizer_model, trigger=("messages", 4), keep=("messages", 2)
            ),
            session_memory,
        ],
        checkpointer=InMemorySaver(),
    )
    return agent, model


TURNS = (
    "We decided to use PostgreSQL 16 as the only database.",
    "Add the orders table.",
    "Add an index on created_at.",
)


def test_summarization_gets_the_envelope_exactly_once_under_invoke(
    sync_memory: SyncMemory,
) -> None:
    summarizer = ScriptedChatModel(responses=replies("Summary: orders table added."))
    agent, _ = summarizing_agent(sync_memory, summarizer)
    config = {"configurable": {"thread_id": "summary-sync"}}
    for text in TURNS:
        agent.invoke({"messages": [("user", text)]}, config)
    assert summarizer.received, "no summarization happened"
    prompt = text_of(summarizer.received[0])
    assert len(ENVELOPE.findall(prompt)) == 1
    assert "PostgreSQL 16" in ENVELOPE.findall(prompt)[0]


async def test_summarization_gets_the_envelope_exactly_once_under_ainvoke(
    tmp_path: Path, redis_url: str
) -> None:
    settings = Settings.load(tmp_path, redis={"url": redis_url}, data_dir=tmp_path / "data")
    summarizer = ScriptedChatModel(responses=replies("Summary: orders table added."))
    async with Memory.open(tmp_path, settings=settings, start_background=False) as memory:
        agent, model = summarizing_agent(memory, summarizer)
        config = {"configurable": {"thread_id": "summary-async"}}
        for text in TURNS:
            await agent.ainvoke({"messages": [("user", text)]}, config)
    assert summarizer.received, "no summarization happened"
    prompts = [text_of(received) for received in summarizer.received]
    assert all(len(ENVELOPE.findall(prompt)) == 1 for prompt in prompts)
    assert "PostgreSQL 16" in prompts[0]
    # The agent's own calls carry it at most once (the first has nothing but its own message
    # to say, so none), the later ones once each.
    counts = [len(ENVELOPE.findall(text_of(call))) for call in model.received]
    assert max(counts) == 1 and counts[-1] == 1


async def test_run_sync_from_the_memory_loop_is_a_clear_error(
    tmp_path: Path, redis_url: str
) -> None:
    settings = Settings.load(tmp_path, redis={"url": redis_url}, data_dir=tmp_path / "data")
    async with Memory.open(tmp_path, settings=settings, start_background=False) as memory:
        with pytest.raises(UsageError, match="async API"):
            memory.dispatch.run_sync(memory.envelope("x"))


def test_one_sync_handle_serves_ainvoke_and_invoke(sync_memory: SyncMemory) -> None:
    """A handle from open_sync under ``ainvoke`` (in an ``asyncio.run`` of the caller's) runs
    plait on the handle's own loop: the turn is recorded and the next model call, under
    ``invoke``, carries it. Before, every call under ``ainvoke`` failed open ("attached to a
    different loop") and the ``invoke`` after it too ("Event loop is closed")."""
    import asyncio

    model = ScriptedChatModel(responses=replies("Noted.", "Adding it."))
    middleware = SessionMemoryMiddleware(sync_memory, session_id="mixed")
    agent = create_agent(model, tools=[], middleware=[middleware])
    asyncio.run(agent.ainvoke({"messages": [("user", "We decided to use Postgres for billing.")]}))
    agent.invoke({"messages": [("user", "Rule: all money amounts are Decimal.")]})
    second = text_of(model.received[1])
    assert "Postgres" in ENVELOPE.search(second).group(0)  # type: ignore[union-attr]
    assert "Decimal" in sync_memory.envelope("mixed")


async def test_a_memory_whose_loop_ended_is_a_clear_error(tmp_path: Path, redis_url: str) -> None:
    """A Memory opened under an ``asyncio.run`` that has ended, used from another loop."""
    import asyncio
    import threading

    settings = Settings.load(tmp_path, redis={"url": redis_url}, data_dir=tmp_path / "data")
    opened: list[Memory] = []

    def open_elsewhere() -> None:
        async def opening() -> None:
            opened.append(await Memory.open(tmp_path, settings=settings, start_background=False))

        asyncio.run(opening())

    thread = threading.Thread(target=open_elsewhere)
    thread.start()
    thread.join()
    middleware = SessionMemoryMiddleware(opened[0], session_id="gone")
    agent = create_agent(ScriptedChatModel(responses=replies("Noted.")), middleware=[middleware])
    with pytest.raises(UsageError, match="another event loop, which is not running"):
        await agent.ainvoke({"messages": [("user", "hello")]})
