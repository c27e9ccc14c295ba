"""OpenCode payloads (shapes recorded from OpenCode 1.18) into plait events."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.events import events_from_messages
from support.opencode import extract_opencode

from plait.adapters.hosts.opencode.hooks import HOOK_NAMES, host_call
from plait.nodes.envelope import compose_envelope
from plait.nodes.tool_outcome import program_of
from plait.state.base.errors import InvalidHookPayload, UnknownHook
from plait.state.base.redact import REDACTED
from plait.state.events import LONG_BODY_MAX_BYTES, SUMMARY_MAX_CHARS, EventKind, SessionEvent
from plait.state.intents import Sessionless
from plait.state.snapshot import Snapshot, fold_snapshot


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


def test_chat_message_keeps_what_a_person_typed_and_drops_only_plaits_envelope() -> None:
    typed = '<session_memory version="1"><last_request>old</last_request></session_memory>\nRun.'
    [prompt] = extract_opencode("chat.message", *chat(typed)).events
    assert prompt.body == typed  # only plait's own (marked) envelopes are taken out
    snapshot = fold_snapshot(Snapshot(), [ev_prompt("an earlier request")])
    ours = compose_envelope(snapshot, budget_bytes=4000, snapshot_budget_bytes=2000)
    [prompt] = extract_opencode("chat.message", *chat(f"{ours}\nRun the tests.")).events
    assert prompt.summary == "Run the tests."


def ev_prompt(text: str) -> SessionEvent:
    return SessionEvent(root_session_id="s", session_id="s", kind=EventKind.PROMPT, summary=text)


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
    # every success also says it fixes the same call's earlier errors (a no-op without any)
    assert [k for k in kinds(turn) if tool == "bash" or k is not EventKind.ERROR_RESOLVED] == (
        expected
    )


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
    assert fix.key == "cmd:pytest" and failure.key.startswith("cmd:pytest|")
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
    assert host_call("event", *event("file.edited", file="/repo/a.py")).target == Sessionless(
        file="/repo/a.py"
    )
    moved = host_call("event", *event("vcs.branch.updated", branch="main"))
    assert moved.target == Sessionless(project_wide=True)
    assert host_call("event", *event("lsp.updated")).target is None
    branch = extract_opencode("event", *event("vcs.branch.updated", branch="main"))
    assert branch.events[0].summary == "branch main"
    summary = extract_opencode(
        "event",
        *event("message.updated", sessionID="s", info={"role": "assistant", "summary": True}),
    )
    assert kinds(summary) == [EventKind.COMPACTION_SUMMARY]
    idle = extract_opencode("event", *event("session.idle", sessionID="s"))
    assert idle.lifecycle == "idle" and idle.events == []
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
    events = events_from_messages(messages, root_session_id="root", session_id="root")
    assert [e.kind for e in events if e.kind is not EventKind.ERROR_RESOLVED] == [
        EventKind.PROMPT,
        EventKind.RULE,
        EventKind.ERROR,
        EventKind.FILE_EDIT,
    ]
    child = events_from_messages(messages, root_session_id="root", session_id="child")
    assert child[0].kind is EventKind.SUBAGENT_START  # a child session's prompt is its task
    assert all(e.root_session_id == "root" and e.session_id == "child" for e in child)


# -- robustness, redaction, more host events ---------------------------------------------------


def tool(name: str, args: dict, output: str = "", **metadata):
    return extract_opencode(
        "tool.execute.after",
        {"tool": name, "sessionID": "ses_1", "callID": "c", "args": args},
        {"title": name, "output": output, "metadata": metadata},
    )


def test_chat_message_ten_megabytes_give_capped_events() -> None:
    huge = "We decided to use Redis for the cache. " + "x" * (10 * 1024 * 1024)
    turn = extract_opencode("chat.message", *chat(huge))
    assert kinds(turn) == [EventKind.PROMPT, EventKind.DECISION]
    for event in turn.events:
        assert len(event.summary) <= SUMMARY_MAX_CHARS
        assert len(event.body.encode()) <= LONG_BODY_MAX_BYTES
    assert len(turn.query) <= 1000


def test_chat_message_invalid_text_survives() -> None:
    turn = extract_opencode("chat.message", *chat("fix \udcff this \x00 now"))
    [prompt] = turn.events
    prompt.model_dump_json()  # encodable
    assert "\x00" not in prompt.body and "fix" in prompt.summary
    bytes_turn = extract_opencode("chat.message", *chat(b"caf\xc3\xa9 \xff broken bytes"))
    assert bytes_turn.events[0].summary.startswith("café")


def test_chat_message_secrets_and_private_spans_are_redacted_at_construction() -> None:
    text = "Use key sk-proj-abcdefghijklmnopqrstuvwx123 <private>home address</private> please"
    turn = extract_opencode("chat.message", *chat(text))
    for event in turn.events:
        dumped = event.model_dump_json()
        assert "abcdefghijklmnop" not in dumped and "home address" not in dumped
    assert REDACTED in turn.events[0].summary
    assert "abcdefghijklmnop" not in turn.query


def test_chat_message_session_falls_back_to_the_message_and_is_validated() -> None:
    _, output = chat("Run it.")
    assert extract_opencode("chat.message", {}, output).session_id == "ses_1"
    with pytest.raises(InvalidHookPayload, match="input.sessionID") as raised:
        extract_opencode("chat.message", {"sessionID": 42}, {"parts": []})
    assert raised.value.field == "input.sessionID"
    with pytest.raises(InvalidHookPayload, match="input.sessionID"):
        extract_opencode("chat.message", {}, {"parts": []})


def test_chat_message_ignores_non_text_parts_and_garbage_parts() -> None:
    _, output = chat("Run the linter.")
    output["parts"] += [{"type": "file", "url": "file:///x"}, "junk", None, {"type": "text"}]
    [prompt] = extract_opencode("chat.message", {"sessionID": "s"}, output).events
    assert prompt.summary == "Run the linter."


def test_extract_rejects_non_objects_and_unknown_hooks_by_name() -> None:
    with pytest.raises(InvalidHookPayload, match="input") as raised:
        extract_opencode("chat.message", [], {})  # type: ignore[arg-type]
    assert raised.value.field == "input"
    with pytest.raises(InvalidHookPayload) as raised:
        extract_opencode("chat.message", {}, None)  # type: ignore[arg-type]
    assert raised.value.field == "output"
    with pytest.raises(UnknownHook, match="chat.messages"):
        extract_opencode("chat.messages", {}, {})


def test_unknown_bus_events_are_passed_through_without_events() -> None:
    turn = extract_opencode("event", *event("brand.new.thing", sessionID="s", x=1))
    assert (turn.session_id, turn.intents, turn.events) == ("s", [], [])
    with pytest.raises(InvalidHookPayload, match="input.event.properties"):
        extract_opencode("event", {"event": {"type": "session.idle", "properties": [1]}}, {})


def test_failed_file_tools_are_errors_keyed_by_the_file() -> None:
    [error] = tool("edit", {"filePath": "src/a.py"}, "oldString not found", error=True).events
    assert error.kind is EventKind.ERROR and error.key.startswith("file:src/a.py|edit|")
    assert "oldString not found" in error.summary


def test_a_tool_part_in_error_is_an_error() -> None:
    part = {
        "type": "tool",
        "tool": "edit",
        "sessionID": "s",
        "state": {"status": "error", "input": {"filePath": "b.py"}, "error": "File not found"},
    }
    turn = extract_opencode("event", *event("message.part.updated", sessionID="s", part=part))
    [error] = turn.events
    assert error.kind is EventKind.ERROR and error.key.startswith("file:b.py|edit|")
    bash = {**part, "tool": "bash", "state": {**part["state"], "input": {"command": "make"}}}
    [failed] = extract_opencode(
        "event", *event("message.part.updated", sessionID="s", part=bash)
    ).events
    assert failed.key.startswith("cmd:make|")
    running = {**part, "state": {"status": "running"}}
    assert (
        extract_opencode(
            "event", *event("message.part.updated", sessionID="s", part=running)
        ).events
        == []
    )


def test_finished_assistant_text_is_kept_streamed_text_is_not() -> None:
    done = {"type": "text", "text": "All green.", "time": {"start": 1, "end": 2}}
    [message] = extract_opencode(
        "event", *event("message.part.updated", sessionID="s", part=done)
    ).events
    assert message.kind is EventKind.MESSAGE and message.body == "All green."


def test_todos_are_keyed_by_id_and_bad_todos_are_skipped() -> None:
    todos = [
        {"id": "1", "content": "write tests", "status": "pending", "priority": "high"},
        {"id": "2", "content": "", "status": "pending"},
        "junk",
        {"content": "no id here", "status": "cancelled"},
    ] + [{"id": str(i), "content": f"t{i}", "status": "pending"} for i in range(100)]
    turn = extract_opencode("event", *event("todo.updated", sessionID="s", todos=todos))
    assert turn.events[0].key == "todo:1" and turn.events[0].summary == "write tests [pending]"
    assert turn.events[1].kind is EventKind.TASK_COMPLETE
    assert turn.events[1].key == "todo:no id here"
    assert len(turn.events) <= 50


def test_commands_slash_commands_cd_and_export() -> None:
    turn = extract_opencode(
        "event", *event("command.executed", sessionID="s", name="review", arguments="src/")
    )
    assert turn.events[0].kind is EventKind.INTENT and turn.events[0].summary == "/review src/"
    cd = tool("bash", {"command": "cd pkg"}, "", exit=0)
    assert EventKind.CWD_CHANGE in kinds(cd)
    export = tool("bash", {"command": "export API_KEY=abcd1234secret MODE=dev"}, "", exit=0)
    envs = [e for e in export.events if e.kind is EventKind.ENV_CHANGE]
    assert [e.key for e in envs] == ["env:API_KEY", "env:MODE"]
    assert "abcd1234secret" not in envs[0].summary


def test_a_command_without_exit_code_is_judged_by_its_output() -> None:
    failing = "make: *** [Makefile:3: all] Error 2"
    assert kinds(tool("bash", {"command": "make"}, failing)) == [EventKind.ERROR]
    assert kinds(tool("bash", {"command": "make"}, "built")) == []  # unknown: no verdict
    assert kinds(tool("bash", {"command": "make"}, "built", exit=0)) == [EventKind.ERROR_RESOLVED]


def test_subagent_task_result_is_keyed_by_its_child_session() -> None:
    [finished] = tool("task", {"description": "explore"}, "done", sessionId="ses_child").events
    assert finished.key == "ses_child"


def test_session_lifecycle_names_the_parent() -> None:
    updated = extract_opencode(
        "event", *event("session.updated", info={"id": "ses_c", "parentID": "ses_p"})
    )
    assert (updated.session_id, updated.parent_id, updated.events) == ("ses_c", "ses_p", [])
    root = extract_opencode("event", *event("session.created", info={"id": "ses_r"}))
    assert root.parent_id is None and root.events == []


def test_a_subagent_opened_by_its_session_is_closed_by_the_task_result() -> None:
    from plait.state.snapshot import Snapshot, fold_snapshot

    created = extract_opencode(
        "event",
        *event("session.created", sessionID="ses_c", info={"id": "ses_c", "parentID": "ses_p"}),
    )
    snapshot = fold_snapshot(Snapshot(), created.events)
    assert [s.key for s in snapshot.subagents_open] == ["ses_c"]
    result = tool("task", {"description": "explore"}, "found it", sessionId="ses_c")
    snapshot = fold_snapshot(snapshot, result.events)
    assert snapshot.subagents_open == [] and [s.key for s in snapshot.subagents_done] == ["ses_c"]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "sessionID",
                    "tool",
                    "args",
                    "output",
                    "metadata",
                    "parts",
                    "type",
                    "text",
                    "event",
                ]
                + ["properties", "info", "part", "todos", "messages", "message", "state", "error"]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(HOOK_NAMES), JSON, JSON)
def test_any_payload_parses_or_names_the_bad_field(hook: str, input, output) -> None:
    try:
        turn = extract_opencode(hook, input, output)
    except InvalidHookPayload as error:
        assert error.field and error.field.split(".")[0] in ("input", "output")
        return
    for parsed in turn.events:
        parsed.model_dump_json()


EVENT_TYPES = [
    "session.created",
    "session.updated",
    "session.error",
    "message.updated",
    "message.part.updated",
    "todo.updated",
    "file.edited",
    "vcs.branch.updated",
    "command.executed",
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(EVENT_TYPES), st.dictionaries(st.text(max_size=10), JSON, max_size=4), JSON)
def test_any_bus_event_properties_parse(kind: str, extra: dict, value) -> None:
    properties = {**extra, "sessionID": "s"}
    for key in ("info", "part", "todos", "error", "file", "branch", "name"):
        properties.setdefault(key, value)
    turn = extract_opencode("event", {"event": {"type": kind, "properties": properties}}, {})
    assert turn.session_id == "s"
    for parsed in turn.events:
        parsed.model_dump_json()


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["read", "edit", "write", "bash", "grep", "task", "x"]), JSON, JSON)
def test_any_tool_result_parses(name: str, args, metadata) -> None:
    turn = extract_opencode(
        "tool.execute.after",
        {"tool": name, "sessionID": "s", "args": args},
        {"output": metadata, "metadata": metadata},
    )
    assert turn.session_id == "s"
