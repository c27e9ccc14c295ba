"""OpenCode payloads (shapes recorded from OpenCode 1.18) into plait events."""

from __future__ import annotations

import pytest
from plait.nodes.extract_langchain import events_from_messages
from plait.nodes.extract_opencode import extract_opencode, program_of
from plait.state.events import EventKind

from plait.errors import InvalidHookPayload, UnknownHook


def chat(text: str, **part) -> tuple[dict, dict]:
    parts = [
        {
            "id": "prt_1",
            "sessionID": "ses_1",
            "messageID": "msg_1",
            "type": "text",
            "text": text,
            **part,
        }
    ]
    return {"sessionID": "ses_1"}, {
        "message": {"id": "msg_1", "role": "user", "sessionID": "ses_1"},
        "parts": parts,
    }


def kinds(turn) -> list[EventKind]:
    return [event.kind for event in turn.events]


def test_chat_message_records_the_request_and_promotions() -> None:
    turn = extract_opencode("chat.message", *chat("We decided to use Redis for the cache."))
    assert turn.session_id == "ses_1"
    assert kinds(turn) == [EventKind.PROMPT, EventKind.DECISION]
    assert turn.query.startswith("We decided")


def test_chat_message_approval_and_synthetic_parts_are_not_requests() -> None:
    assert extract_opencode("chat.message", *chat("yes, do it")).events == []
    assert extract_opencode("chat.message", *chat("injected", synthetic=True)).events == []


def test_chat_message_drops_an_earlier_envelope_from_the_text() -> None:
    text = '<session_memory version="1"><last_request>old</last_request></session_memory>\nRun the tests.'
    [prompt] = extract_opencode("chat.message", *chat(text)).events
    assert prompt.summary == "Run the tests."


def test_transform_takes_the_session_from_the_messages() -> None:
    messages = [{"info": {"id": "m", "sessionID": "ses_9", "role": "user"}, "parts": []}]
    assert (
        extract_opencode(
            "experimental.chat.messages.transform", {}, {"messages": messages}
        ).session_id
        == "ses_9"
    )
    with pytest.raises(InvalidHookPayload, match="output.messages"):
        extract_opencode("experimental.chat.messages.transform", {}, {"messages": "nope"})


@pytest.mark.parametrize(
    ("tool", "args", "output", "metadata", "expected"),
    [
        ("read", {"filePath": "a.py"}, "...", {}, [EventKind.FILE_READ]),
        ("edit", {"filePath": "a.py"}, "ok", {}, [EventKind.FILE_EDIT]),
        ("write", {"filePath": "b.py"}, "ok", {}, [EventKind.FILE_WRITE]),
        ("grep", {"pattern": "TODO"}, "a.py:1", {}, [EventKind.FILE_SEARCH]),
        ("bash", {"command": "pytest -q"}, "1 failed", {"exit": 1}, [EventKind.ERROR]),
        (
            "bash",
            {"command": "uv run pytest -q"},
            "3 passed",
            {"exit": 0},
            [EventKind.ERROR_RESOLVED],
        ),
        (
            "bash",
            {"command": "git commit -am x"},
            "done",
            {"exit": 0},
            [EventKind.ERROR_RESOLVED, EventKind.GIT],
        ),
        ("task", {"description": "explore"}, "found it", {}, [EventKind.SUBAGENT_FINISH]),
        ("todowrite", {}, "[]", {}, []),
    ],
)
def test_tool_results_become_what_the_tool_did(tool, args, output, metadata, expected) -> None:
    turn = extract_opencode(
        "tool.execute.after",
        {"tool": tool, "sessionID": "ses_1", "callID": "c", "args": args},
        {"title": tool, "output": output, "metadata": metadata},
    )
    assert kinds(turn) == expected


def test_a_failing_command_and_its_fix_share_a_key() -> None:
    def run(command: str, exit_code: int):
        return extract_opencode(
            "tool.execute.after",
            {"tool": "bash", "sessionID": "s", "callID": "c", "args": {"command": command}},
            {
                "output": "FAILED tests/test_x.py::test_a - AssertionError",
                "metadata": {"exit": exit_code},
            },
        ).events[0]

    failure, fix = run("pytest -q tests/test_x.py", 1), run("uv run pytest", 0)
    assert failure.key == fix.key == "cmd:pytest"
    assert "FAILED tests/test_x.py::test_a" in failure.summary


def test_program_of_skips_runners() -> None:
    assert program_of("uv run python -m pytest -q") == "pytest"
    assert program_of("FOO=1 npm test") == "npm"
    assert program_of("unbalanced 'quote") == "unbalanced"


def event(kind: str, **properties) -> tuple[dict, dict]:
    return {"event": {"id": "evt_1", "type": kind, "properties": properties}}, {}


def test_bus_events_map_to_plait_events() -> None:
    created = extract_opencode(
        "event",
        *event(
            "session.created",
            sessionID="ses_c",
            info={"id": "ses_c", "parentID": "ses_p", "title": "explore"},
        ),
    )
    assert (created.session_id, created.parent_id, kinds(created)) == (
        "ses_c",
        "ses_p",
        [EventKind.SUBAGENT_START],
    )
    todos = extract_opencode(
        "event",
        *event(
            "todo.updated",
            sessionID="s",
            todos=[
                {"id": "1", "content": "a", "status": "in_progress"},
                {"id": "2", "content": "b", "status": "completed"},
            ],
        ),
    )
    assert kinds(todos) == [EventKind.TASK_UPDATE, EventKind.TASK_COMPLETE]
    error = extract_opencode(
        "event",
        *event(
            "session.error",
            sessionID="s",
            error={"name": "APIError", "data": {"message": "rate limited"}},
        ),
    )
    assert error.events[0].summary == "APIError: rate limited"
    aborted = extract_opencode(
        "event", *event("session.error", sessionID="s", error={"name": "MessageAbortedError"})
    )
    assert aborted.events == []
    edited = extract_opencode("event", *event("file.edited", file="/repo/a.py"))
    assert edited.session_id is None and edited.events[0].refs == ("/repo/a.py",)
    branch = extract_opencode("event", *event("vcs.branch.updated", branch="main"))
    assert branch.events[0].summary == "branch main"
    summary = extract_opencode(
        "event",
        *event("message.updated", sessionID="s", info={"role": "assistant", "summary": True}),
    )
    assert kinds(summary) == [EventKind.COMPACTION_SUMMARY]
    idle = extract_opencode("event", *event("session.idle", sessionID="s"))
    assert idle.event_type == "session.idle" and idle.events == []
    streaming = extract_opencode(
        "event",
        *event("message.part.updated", sessionID="s", part={"type": "text", "text": "partial"}),
    )
    assert streaming.events == []


def test_bad_payloads_name_the_field() -> None:
    with pytest.raises(UnknownHook):
        extract_opencode("nope", {}, {})
    with pytest.raises(InvalidHookPayload, match="input.event"):
        extract_opencode("event", {"event": "x"}, {})
    with pytest.raises(InvalidHookPayload, match="input.event.type"):
        extract_opencode("event", {"event": {"properties": {}}}, {})
    with pytest.raises(InvalidHookPayload, match="input.tool"):
        extract_opencode("tool.execute.after", {"sessionID": "s"}, {})
    with pytest.raises(InvalidHookPayload, match="output.parts"):
        extract_opencode("chat.message", {"sessionID": "s"}, {"parts": {}})


def test_langchain_messages_use_the_same_rules() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    messages = [
        HumanMessage("Rule: always run ruff before committing."),
        AIMessage("", tool_calls=[{"id": "t1", "name": "bash", "args": {"command": "ruff check"}}]),
        ToolMessage("E501 line too long", tool_call_id="t1", status="error"),
        AIMessage("", tool_calls=[{"id": "t2", "name": "edit", "args": {"filePath": "src/a.py"}}]),
        ToolMessage("ok", tool_call_id="t2"),
    ]
    events = events_from_messages(messages, root_session_id="root", session_id="child")
    assert [e.kind for e in events] == [
        EventKind.PROMPT,
        EventKind.RULE,
        EventKind.ERROR,
        EventKind.FILE_EDIT,
    ]
    assert all(e.root_session_id == "root" and e.session_id == "child" for e in events)
