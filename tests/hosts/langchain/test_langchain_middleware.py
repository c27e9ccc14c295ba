"""SessionMemoryMiddleware in a real create_agent loop with SummarizationMiddleware.

The chat model is the only fake: langchain_core's FakeMessagesListChatModel, scripted over many
turns and taught ``bind_tools``. Storage is the real embedded FalkorDB server.
"""

from __future__ import annotations

import itertools
import logging
import uuid
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool, ToolException
from langgraph.checkpoint.memory import InMemorySaver
from support.scripted_model import ScriptedChatModel

from plait import Memory
from plait.adapters.hosts.langchain import (
    RecordedMessages,
    SessionMemoryMiddleware,
    after_recording,
    inject_envelope,
    latest_request,
    select_unrecorded,
)
from plait.nodes.envelope import compose_envelope
from plait.state.events import EventKind, SessionEvent, body_max_bytes
from plait.state.snapshot import Snapshot, fold_snapshot

ENVELOPE_OPEN = "<session_memory"
SUMMARY_KWARGS = {"lc_source": "summarization"}


def write_file(path: str, content: str) -> str:
    """Write a file of the project."""
    return f"wrote {len(content)} characters to {path}"


def run_tests(target: str) -> str:
    """Run the test suite."""
    raise ToolException(f"ImportError: cannot import name 'connect' from {target}")


TOOLS = [
    StructuredTool.from_function(write_file),
    StructuredTool.from_function(run_tests, handle_tool_error=True),
]

USER_TURNS = [
    "We decided to use PostgreSQL 16 as the only database for the orders service.",
    "TODO: add a migration for the orders table.",
    "Please run the tests for the db package.",
    "Now write the repository layer.",
    "Add an index on orders.created_at.",
    "Write the API handler for listing orders.",
    "Wire the handler into the router.",
    "Finally, write the README section about the database.",
]


def tool_call(turn: int, name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(
        content="",
        id=f"ai-{turn}-call",
        tool_calls=[{"name": name, "args": args, "id": f"call-{turn}", "type": "tool_call"}],
    )


def script() -> list[BaseMessage]:
    """For each user turn: one tool call, then a final answer."""
    responses: list[BaseMessage] = []
    for turn in range(len(USER_TURNS)):
        if turn == 2:
            responses.append(tool_call(turn, "run_tests", {"target": "orders/db.py"}))
        else:
            path = f"orders/module_{turn}.py"
            responses.append(tool_call(turn, "write_file", {"path": path, "content": "x" * 40}))
        responses.append(AIMessage(content=f"Done with step {turn}.", id=f"ai-{turn}-final"))
    return responses


SUMMARY_NUMBERS = itertools.count(1)


def summarize(messages: list[AnyMessage]) -> str:
    """A deliberately lossy summarizer: it forgets every detail."""
    return f"Summary {next(SUMMARY_NUMBERS)}: earlier work happened ({len(messages)} messages)."


def envelope_count(messages: Sequence[BaseMessage]) -> int:
    return sum(message.text.count(ENVELOPE_OPEN) for message in messages)


def envelope_of(messages: Sequence[BaseMessage]) -> str:
    for message in messages:
        if ENVELOPE_OPEN in message.text:
            text = message.text
            return text[text.index(ENVELOPE_OPEN) : text.index("</session_memory>")]
    return ""


def summary_in(messages: Sequence[BaseMessage]) -> BaseMessage | None:
    return next((m for m in messages if m.additional_kwargs == SUMMARY_KWARGS), None)


async def run_agent(memory: Memory, thread_id: str) -> tuple[ScriptedChatModel, Any]:
    model = ScriptedChatModel(responses=script())
    agent = create_agent(
        model=model,
        tools=TOOLS,
        middleware=[
            SummarizationMiddleware(
                model=model, trigger=("messages", 8), keep=("messages", 3), summarizer=summarize
            ),
            SessionMemoryMiddleware(memory),
        ],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": thread_id}}
    for text in USER_TURNS:
        await agent.ainvoke({"messages": [HumanMessage(content=text)]}, config)
    return model, agent


async def test_middleware_envelope_survives_summarizations(memory: Memory) -> None:
    thread_id = f"thread-{uuid.uuid4().hex[:8]}"
    model, agent = await run_agent(memory, thread_id)

    assert len(model.received) == 2 * len(USER_TURNS)
    summaries = []
    error_seen = False
    for request in model.received:
        assert envelope_count(request) <= 1
        summary = summary_in(request)
        if summary is not None and summary.id not in summaries:
            summaries.append(summary.id)
            envelope = envelope_of(request)
            # the summarizer forgot everything; the envelope did not
            assert "PostgreSQL 16" in envelope
            assert "orders/module_0.py" in envelope
            assert "migration for the orders table" in envelope
            if error_seen:  # the failed test run came before this summary
                assert "ImportError" in envelope
            assert "PostgreSQL" not in summary.text
        error_seen = error_seen or any(
            isinstance(m, ToolMessage) and m.status == "error" for m in request
        )
    assert error_seen
    assert len(summaries) >= 2
    # the first call knows only the message it heads, which the envelope must not repeat
    assert [envelope_count(request) for request in model.received[:1]] == [0]
    assert all(envelope_count(request) == 1 for request in model.received[1:])

    state = await agent.aget_state({"configurable": {"thread_id": thread_id}})
    assert state.values["messages"]
    assert envelope_count(state.values["messages"]) == 0


async def test_middleware_records_each_message_once(memory: Memory) -> None:
    thread_id = f"thread-{uuid.uuid4().hex[:8]}"
    await run_agent(memory, thread_id)

    events = await memory.backends.store.read_events(thread_id, after_id=0, limit=10_000)
    kinds = [event.kind for event in events]
    assert kinds.count(EventKind.COMPACTION_SUMMARY) >= 2
    summary_keys = [e.key for e in events if e.kind is EventKind.COMPACTION_SUMMARY]
    assert len(summary_keys) == len(set(summary_keys))
    decisions = [e for e in events if "PostgreSQL 16" in e.summary]
    assert decisions
    assert len({e.kind for e in decisions}) == len(decisions)
    assert all(ENVELOPE_OPEN not in event.body for event in events)


async def test_middleware_uses_the_thread_id_as_session(memory: Memory) -> None:
    thread_id = f"thread-{uuid.uuid4().hex[:8]}"
    model = ScriptedChatModel(responses=[AIMessage(content="ok", id="only")])
    agent = create_agent(model=model, tools=[], middleware=[SessionMemoryMiddleware(memory)])
    await agent.ainvoke(
        {"messages": [HumanMessage(content=USER_TURNS[0])]},
        {"configurable": {"thread_id": thread_id}},
    )
    await agent.ainvoke(
        {"messages": [HumanMessage(content="And what next?")]},
        {"configurable": {"thread_id": thread_id}},
    )
    assert await memory.backends.store.read_events(thread_id, after_id=0, limit=100)
    assert "PostgreSQL 16" in envelope_of(model.received[-1])


async def test_middleware_fails_open(
    memory: Memory, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedChatModel(responses=[AIMessage(content="still answering", id="a1")])
    agent = create_agent(model=model, tools=[], middleware=[SessionMemoryMiddleware(memory)])

    async def unreachable(key: str) -> str | None:
        raise ConnectionError("hot tier is gone")

    monkeypatch.setattr(memory.backends.store, "get_cache", unreachable)
    with caplog.at_level(logging.WARNING, logger="plait"):
        result = await agent.ainvoke(
            {"messages": [HumanMessage(content="hello")]},
            {"configurable": {"thread_id": "broken"}},
        )
    assert result["messages"][-1].text == "still answering"
    assert model.received[0][-1].text == "hello"
    assert "hot tier is gone" in caplog.text
    assert envelope_count(model.received[0]) == 0


# -- pure helpers ---------------------------------------------------------------------------------


def plaits_envelope(request: str) -> str:
    """An envelope plait composed (marked as its own)."""
    prompt = SessionEvent(
        root_session_id="s", session_id="s", kind=EventKind.PROMPT, summary=request
    )
    snapshot = fold_snapshot(Snapshot(), [prompt])
    return compose_envelope(snapshot, budget_bytes=4000, snapshot_budget_bytes=2000)


def test_inject_envelope_strips_older_envelopes_and_leaves_input_alone() -> None:
    old = plaits_envelope("old")
    messages: list[AnyMessage] = [
        HumanMessage(content=f"{old}\n\nfirst", id="h1"),
        AIMessage(content="answer", id="a1"),
        HumanMessage(content=[{"type": "text", "text": old}, {"type": "text", "text": "two"}]),
    ]
    new = '<session_memory version="1"><last_request>new</last_request></session_memory>'
    injected = inject_envelope(messages, new)
    assert envelope_count(injected) == 1
    assert injected[2].content[0] == {"type": "text", "text": new}
    assert injected[2].text.endswith("two")
    assert injected[0].text.strip() == "first"
    assert ENVELOPE_OPEN in messages[0].text  # the input is not changed
    assert [m.id for m in injected] == [m.id for m in messages]
    typed = '<session_memory version="1"><last_request>x</last_request></session_memory>'
    kept = inject_envelope([HumanMessage(content=f"Why does {typed} break?")], "")
    assert kept[0].text == f"Why does {typed} break?"  # a person's words are never cut


def test_inject_envelope_without_user_message_adds_one() -> None:
    injected = inject_envelope([AIMessage(content="hi")], "<session_memory>x</session_memory>")
    assert isinstance(injected[0], HumanMessage)
    assert envelope_count(injected) == 1


def test_select_unrecorded_after_summarization_takes_only_the_summary() -> None:
    history: list[BaseMessage] = [
        HumanMessage(content="a", id="h1"),
        AIMessage(content="b", id="a1"),
        HumanMessage(content="c", id="h2"),
        AIMessage(content="d", id="a2"),
    ]
    recorded = after_recording(RecordedMessages(), history)
    assert select_unrecorded(history, recorded) == []
    summary = HumanMessage(content="summary", id="s1", additional_kwargs=SUMMARY_KWARGS)
    after_summary = [summary, history[2], history[3]]
    assert select_unrecorded(after_summary, recorded) == [summary]
    recorded = after_recording(recorded, after_summary)
    follow_up = ToolMessage(content="e", tool_call_id="c1", id="t1")
    assert select_unrecorded([*after_summary, follow_up], recorded) == [follow_up]
    restored = RecordedMessages.from_json(recorded.to_json())
    assert restored == recorded
    assert RecordedMessages.from_json("not json") == RecordedMessages()


def test_latest_request_skips_summaries_and_envelopes() -> None:
    messages: list[BaseMessage] = [
        HumanMessage(content=f"{plaits_envelope('x')}\n\nfix the login bug"),
        AIMessage(content="on it"),
        HumanMessage(content="Summary 9: stuff", additional_kwargs=SUMMARY_KWARGS),
    ]
    assert latest_request(messages) == "fix the login bug"
    assert latest_request([AIMessage(content="alone")]) == ""


async def test_no_turn_is_lost_when_recording_fails_open(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """26 turns; the hot tier refuses every third append. A turn whose recording failed open is
    sent again with the thread's next call: every message is in the log once, in order."""
    thread_id = f"thread-{uuid.uuid4().hex[:8]}"
    turns = [f"Turn {n}: we decided to call module {n} the kiwi-{n} part." for n in range(26)]
    model = ScriptedChatModel(
        responses=[AIMessage(content=f"ok {n}", id=f"a{n}") for n in range(len(turns) + 1)]
    )
    agent = create_agent(model=model, tools=[], middleware=[SessionMemoryMiddleware(memory)])
    store = memory.backends.store
    append = store.append_events
    calls = itertools.count()
    refused = 0

    async def flaky(*args: Any, **kwargs: Any) -> Any:
        nonlocal refused
        if next(calls) % 3 == 2:
            refused += 1
            raise ConnectionError("the hot tier dropped the connection")
        return await append(*args, **kwargs)

    monkeypatch.setattr(store, "append_events", flaky)
    config = {"configurable": {"thread_id": thread_id}}
    for text in turns:
        await agent.ainvoke({"messages": [HumanMessage(content=text)]}, config)
    monkeypatch.setattr(store, "append_events", append)
    await agent.ainvoke({"messages": [HumanMessage(content="That is all.")]}, config)

    assert refused >= 5
    prompts = [
        e.summary
        for e in await store.read_events(thread_id, after_id=0, limit=10_000)
        if e.kind is EventKind.PROMPT
    ]
    recorded = [p for p in prompts if p.startswith("Turn ")]
    assert [p.split(":")[0] for p in recorded] == [t.split(":")[0] for t in turns]  # once, in order
    assert "kiwi-25" in envelope_of(model.received[-1])


async def test_a_five_megabyte_message_is_recorded_capped(memory: Memory) -> None:
    thread_id = f"thread-{uuid.uuid4().hex[:8]}"
    model = ScriptedChatModel(responses=[AIMessage(content="read it", id="big")])
    agent = create_agent(model=model, tools=[], middleware=[SessionMemoryMiddleware(memory)])
    huge = "We decided to keep the whole log. " + "x" * (5 * 1024 * 1024)
    await agent.ainvoke(
        {"messages": [HumanMessage(content=huge)]}, {"configurable": {"thread_id": thread_id}}
    )
    (prompt,) = [
        e
        for e in await memory.backends.store.read_events(thread_id, after_id=0, limit=100)
        if e.kind is EventKind.PROMPT
    ]
    assert prompt.summary.startswith("We decided to keep the whole log")
    assert len(prompt.body.encode()) <= body_max_bytes(prompt.kind)
