"""LangChain messages into plait events, with the OpenCode adapter's rules."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from support.events import events_from_messages

from plait.adapters.hosts.langchain.messages import message_text, tool_name
from plait.nodes.envelope import compose_envelope
from plait.state.events import BODY_MAX_BYTES, EventKind
from plait.state.snapshot import Snapshot, drop_duplicates, fold_snapshot


def call(call_id: str, name: str, **args) -> AIMessage:
    return AIMessage("", tool_calls=[{"id": call_id, "name": name, "args": args}])


def extract(*messages):
    return events_from_messages(list(messages), root_session_id="thread", session_id="thread")


def test_langchain_human_text_is_a_request_with_promotions() -> None:
    events = extract(HumanMessage("We decided to use Redis for the cache."))
    assert [e.kind for e in events] == [EventKind.PROMPT, EventKind.DECISION]
    assert events[1].key == "topic:cache"
    assert all(e.root_session_id == "thread" and e.session_id == "thread" for e in events)


def test_langchain_approvals_system_messages_and_envelopes_are_not_requests() -> None:
    snapshot = fold_snapshot(Snapshot(), extract(HumanMessage("Rule: never push on Fridays.")))
    envelope = compose_envelope(snapshot, budget_bytes=4000, snapshot_budget_bytes=2000)
    events = extract(
        SystemMessage("You are helpful."),
        HumanMessage("yes, go ahead"),
        HumanMessage(envelope),
    )
    assert events == []
    typed = '<session_memory version="1"><last_request>x</last_request></session_memory>'
    [prompt] = extract(HumanMessage(typed))  # a person typed it: their words, kept whole
    assert prompt.body == typed


def test_langchain_content_blocks_keep_text_only() -> None:
    message = HumanMessage(
        content=[
            {"type": "text", "text": "Read the file"},
            {"type": "image_url", "image_url": {"url": "data:..."}},
            "and fix it",
        ]
    )
    assert message_text(message) == "Read the file\nand fix it"


def test_langchain_tool_calls_become_what_the_tools_did() -> None:
    events = extract(
        call("t1", "read_file", file_path="src/a.py"),
        ToolMessage("contents", tool_call_id="t1"),
        call("t2", "edit_file", file_path="src/a.py"),
        ToolMessage("ok", tool_call_id="t2"),
        call("t3", "grep", pattern="TODO"),
        ToolMessage("a.py:1", tool_call_id="t3"),
    )
    events = [e for e in events if e.kind is not EventKind.ERROR_RESOLVED]
    assert [e.kind for e in events] == [
        EventKind.FILE_READ,
        EventKind.FILE_EDIT,
        EventKind.FILE_SEARCH,
    ]
    assert events[1].refs == ("src/a.py",)


def test_langchain_error_status_is_an_error_and_a_later_success_fixes_it() -> None:
    failed = extract(
        call("t1", "execute", command="pytest -q"),
        ToolMessage("FAILED test_a - AssertionError", tool_call_id="t1", status="error"),
    )
    [error] = failed
    assert error.kind is EventKind.ERROR and error.key.startswith("cmd:pytest|")
    snapshot = fold_snapshot(Snapshot(), failed)
    fixed = extract(
        call("t2", "execute", command="uv run pytest"),
        ToolMessage("3 passed", tool_call_id="t2"),
    )
    assert fold_snapshot(snapshot, drop_duplicates(snapshot, fixed)).errors == []


def test_langchain_an_error_fixed_in_the_same_batch_is_not_left_open() -> None:
    events = extract(
        call("t1", "bash", command="ruff check"),
        ToolMessage("E501 line too long", tool_call_id="t1", status="error"),
        call("t2", "bash", command="ruff check"),
        ToolMessage("All checks passed!", tool_call_id="t2"),
    )
    assert [e.kind for e in events] == [EventKind.ERROR_RESOLVED]
    fresh = [e for e in events if not Snapshot().is_duplicate(e)]
    assert fold_snapshot(Snapshot(), fresh).errors == []


def test_langchain_failed_file_tool_is_an_error_on_the_file() -> None:
    [error] = extract(
        call("t1", "write_file", path="ro/x.py"),
        ToolMessage("Permission denied", tool_call_id="t1", status="error"),
    )
    assert error.kind is EventKind.ERROR and error.key.startswith("file:ro/x.py|write|")


def test_langchain_subagents_start_and_finish_under_one_key() -> None:
    events = extract(
        call("t9", "task", description="explore the repo"),
        ToolMessage("found the entry point", tool_call_id="t9"),
    )
    assert [e.kind for e in events] == [EventKind.SUBAGENT_START, EventKind.SUBAGENT_FINISH]
    assert events[0].key == events[1].key == "call:t9"
    snapshot = fold_snapshot(Snapshot(), events)
    assert snapshot.subagents_open == [] and len(snapshot.subagents_done) == 1


def test_langchain_write_todos_are_tasks() -> None:
    todos = [
        {"content": "write tests", "status": "in_progress"},
        {"content": "update docs", "status": "completed"},
    ]
    events = extract(call("t1", "write_todos", todos=todos), ToolMessage("ok", tool_call_id="t1"))
    assert [e.kind for e in events] == [EventKind.TASK_UPDATE, EventKind.TASK_COMPLETE]


def test_langchain_final_answer_is_assistant_text_and_huge_text_is_capped() -> None:
    [message] = extract(AIMessage("Done. " + "y" * 5_000_000))
    assert message.kind is EventKind.MESSAGE
    assert len(message.body.encode()) <= BODY_MAX_BYTES


def test_langchain_secrets_in_tool_output_never_reach_events() -> None:
    events = extract(
        call("t1", "bash", command="env"),
        ToolMessage(
            "error: GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            tool_call_id="t1",
            status="error",
        ),
    )
    assert events and all("ghp_abcdef" not in e.model_dump_json() for e in events)


def test_langchain_unknown_tools_and_orphan_results_are_ignored() -> None:
    assert extract(ToolMessage("ok", tool_call_id="nobody")) == []
    assert (
        extract(call("t1", "weather", city="Paris"), ToolMessage("sunny", tool_call_id="t1")) == []
    )
    assert tool_name("Read_File") == "read" and tool_name(None) == "tool"
