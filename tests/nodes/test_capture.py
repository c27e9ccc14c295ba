"""Capture: what user text, assistant text and tool results become, through ``capture``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plait.nodes.capture import capture, relative_path
from plait.nodes.hooks import model_query
from plait.nodes.rules import decision_key, rule_topic, topic_key
from plait.state.events import EventKind, SessionEvent
from plait.state.intents import (
    AssistantText,
    Intent,
    ModelCall,
    SessionRef,
    ToolResult,
    UserTurn,
)
from plait.state.snapshot import TRANSIENT, Snapshot, fold_snapshot

ROOT = SessionRef(session_id="ses_1", root_session_id="ses_1")
CHILD = SessionRef(session_id="ses_2", root_session_id="ses_1")


def events_of(*intents: Intent, session: SessionRef = ROOT, root: str = "") -> list[SessionEvent]:
    return capture(list(intents), session, root=root).events


def said(text: str) -> list[tuple[EventKind, str]]:
    return [
        (e.kind, e.summary)
        for e in events_of(UserTurn(text=text))
        if e.kind is not EventKind.PROMPT
    ]


@pytest.mark.parametrize(
    "text",
    [
        "yes, do it",
        "Yes please, go ahead!",
        "ok",
        "OK, thanks",
        "sounds good, thanks!",
        "lgtm, ship it",
    ]
    + ["please do that", "sure, continue", "👍 yes", "Perfect.", "thanks"],
)
def test_capture_approvals_and_chatter_are_no_request(text: str) -> None:
    captured = capture([UserTurn(text=text)], ROOT)
    assert captured.events == [] and captured.query == ""


@pytest.mark.parametrize(
    "text",
    ["yes, and also add a test for the empty case", "ok now refactor the parser", "do it in Rust"],
)
def test_capture_an_approval_with_a_new_ask_is_a_request(text: str) -> None:
    [prompt] = events_of(UserTurn(text=text))
    assert prompt.kind is EventKind.PROMPT and prompt.speaker == "user"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("We decided to use SQLite for the cache.", EventKind.DECISION),
        ("Let's go with FastAPI for the web layer.", EventKind.DECISION),
        ("Switch the queue to RabbitMQ.", EventKind.DECISION),
        ("Decision: ship on Fridays only", EventKind.DECISION),
        ("Never use tabs in Python files.", EventKind.RULE),
        ("Tests must not hit the network.", EventKind.RULE),
        ("From now on run ruff before committing.", EventKind.RULE),
        ("Rule: keep functions under 20 lines", EventKind.RULE),
        ("I prefer pytest fixtures over setUp.", EventKind.PREFERENCE),
        ("TODO: add a changelog entry", EventKind.TASK_CREATE),
        ("Fix the parser and remember to add a test.", EventKind.TASK_CREATE),
        ("Done: the changelog entry", EventKind.TASK_COMPLETE),
        ("We've finished the migration script.", EventKind.TASK_COMPLETE),
    ],
)
def test_capture_user_statements(text: str, kind: EventKind) -> None:
    assert [k for k, _ in said(text)] == [kind]


@pytest.mark.parametrize(
    "text",
    [
        "The function should return 3 when the list is empty.",
        "Fix the bug in this repo's parser.",
        "Run the whole suite.",
        "How do we deploy this?",
        "Should we use Redis for the cache?",
    ],
)
def test_capture_plain_requests_and_questions_are_only_the_request(text: str) -> None:
    assert said(text) == []
    assert capture([UserTurn(text=text)], ROOT).query == text


def test_capture_one_message_states_several_things_each_its_own_event() -> None:
    text = '"Rule: never call the network in tests. We\'ll use httpx. TODO: add retries."'
    events = events_of(UserTurn(text=text))
    assert [(e.kind, e.summary) for e in events] == [
        (EventKind.PROMPT, text.strip('"')),  # the wrapping quotes of `opencode run "…"` go
        (EventKind.RULE, "never call the network in tests"),
        (EventKind.DECISION, "We'll use httpx"),
        (EventKind.TASK_CREATE, "add retries"),
    ]
    assert {e.speaker for e in events} == {"user"}


def test_capture_decisions_are_keyed_by_their_subject_never_by_a_marker() -> None:
    [(_, first)] = said("Decision: use Redis for the cache.")
    keys = [e.key for e in events_of(UserTurn(text="Decision: use Redis for the cache."))]
    assert keys[1] == "topic:cache" and first == "use Redis for the cache"
    other = events_of(UserTurn(text="Decision: use argon2 for password hashing."))[1]
    assert other.key == "topic:password hashing"
    assert "topic:decision" not in (keys[1], other.key)


def test_capture_a_reversal_names_what_it_rejects_and_keeps_its_subject() -> None:
    text = "Actually, don't use SQLite for the export cache. Use Redis instead, we already run it."
    [decision] = [e for e in events_of(UserTurn(text=text)) if e.kind is EventKind.DECISION]
    assert decision.keywords == ("not:sqlite",)
    assert decision.summary == "Use Redis instead, we already run it (for the export cache)"
    assert decision.key == "topic:export cache"


def test_capture_assistant_text_yields_decisions_plans_findings_never_rules() -> None:
    reply = (
        "The root cause was a missing index on invoices.customer_id. I'll use a partial index. "
        "Next, I'll add a migration. Always pin your versions."
    )
    events = events_of(AssistantText(text=reply))
    assert events[0].kind is EventKind.MESSAGE
    assert [(e.kind, e.speaker) for e in events[1:]] == [
        (EventKind.DISCOVERY, "assistant"),
        (EventKind.DECISION, "assistant"),
        (EventKind.TASK_CREATE, "assistant"),
    ]


def test_capture_a_subagent_prompt_is_the_models_words_not_the_users() -> None:
    events = events_of(UserTurn(text="Rule: always use tabs. Use httpx."), session=CHILD)
    assert EventKind.RULE not in {e.kind for e in events}
    assert [e.speaker for e in events if e.kind is EventKind.DECISION] == ["assistant"]


def shell(command: str, output: str, exit_code: int | None) -> ToolResult:
    return ToolResult(tool="bash", args={"command": command}, output=output, exit_code=exit_code)


TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/repo/app/x.py", line 1, in <module>\n'
    "ModuleNotFoundError: No module named 'yaml'\n"
)


def test_capture_an_error_says_its_meaningful_line_keyed_by_command_and_signature() -> None:
    [error] = events_of(shell("python3 app/x.py", TRACEBACK, 1), root="/repo")
    assert error.kind is EventKind.ERROR
    assert error.summary == "python: ModuleNotFoundError: No module named 'yaml'"
    assert error.key.startswith("cmd:python app/x.py|modulenotfounderror")
    assert "/repo/" not in error.body and "app/x.py" in error.body


def test_capture_a_later_success_of_the_command_resolves_its_errors() -> None:
    failing = "FAILED tests/test_x.py::test_a - AssertionError\n1 failed"
    [error] = events_of(shell("pytest -q tests/test_x.py", failing, 1))
    [fix] = events_of(shell("uv run pytest", "3 passed", 0))
    snapshot = fold_snapshot(Snapshot(), [error])
    assert snapshot.errors and fold_snapshot(snapshot, [fix]).errors == []
    [other] = events_of(shell("npm run build", "ok", 0))
    assert fold_snapshot(snapshot, [other]).errors == snapshot.errors


def test_capture_inline_code_that_succeeds_is_said_as_code_not_as_its_digest() -> None:
    failing = "Traceback (most recent call last):\nValueError: bad config"
    code = 'python -c "import app; app.check_config()"'
    [error] = events_of(shell(code, failing, 1))
    [fix] = events_of(shell(code, "", 0))
    assert (
        fix.key == error.key
        or fold_snapshot(fold_snapshot(Snapshot(), [error]), [fix]).errors == []
    )
    assert "#" not in fix.summary and "app.check_config()" in fix.summary


def test_capture_an_unknown_outcome_neither_raises_nor_resolves() -> None:
    assert events_of(shell("./deploy.sh", "", None)) == []
    [failed] = events_of(shell("./deploy.sh", TRACEBACK, None))  # no status, text says failed
    assert failed.kind is EventKind.ERROR


def test_capture_a_one_off_failure_is_marked_to_age_fast() -> None:
    [typo] = events_of(shell("pyest -q", "bash: pyest: command not found", 127))
    assert TRANSIENT in typo.keywords


def test_capture_files_touched_are_relative_to_the_project_root() -> None:
    events = events_of(
        ToolResult(tool="edit", args={"filePath": "/repo/app/x.py"}, output="ok"),
        shell("cd app && sed -i s/a/b/ main.py", "", 0),
        ToolResult(tool="read", args={"filePath": "/elsewhere/y.py"}, output="..."),
        root="/repo",
    )
    files = [(e.kind, e.key) for e in events if e.refs]
    assert files == [
        (EventKind.FILE_EDIT, "app/x.py"),
        (EventKind.FILE_EDIT, "app/main.py"),
        (EventKind.FILE_READ, "/elsewhere/y.py"),
    ]


def test_capture_relative_path() -> None:
    assert relative_path("/repo/a/b.py", "/repo") == "a/b.py"
    assert relative_path("/repository/a.py", "/repo") == "/repository/a.py"
    assert relative_path("./a.py", "/repo") == "a.py"
    assert relative_path("/repo", "/repo") == "."
    assert relative_path("/x/a.py", "") == "/x/a.py"


def test_rules_keys() -> None:
    assert topic_key("Use  Redis, please!") == topic_key("use redis please")
    assert len(topic_key("word " * 500)) <= 120
    assert decision_key("", "use it for now") == "topic:use it for now"
    assert rule_topic("Always use tabs.") == rule_topic("Never use tabs.")


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_capture_never_fails_and_keeps_events_sized(text: str) -> None:
    events = events_of(UserTurn(text=text), AssistantText(text=text))
    for event in events:
        assert len(event.summary) <= 200 and len(event.key) <= 512
    # the loop above checks nothing if capture drops every turn: a worded reply is kept
    if any(character.isalnum() for character in text):
        assert EventKind.MESSAGE in {e.kind for e in events}, events


def test_a_model_calls_query_is_redacted_and_cut_like_a_request() -> None:
    query = model_query([UserTurn(text="x"), ModelCall(query="use password=hunter2secret " * 300)])
    assert "hunter2secret" not in query and 0 < len(query) <= 1000
    assert model_query([ModelCall()]) == ""
