"""Realistic sessions through ``Memory.hook`` in OpenCode's payload shapes (and LangChain's).

Each test reads the envelope the model would get before each model call: what was said
statement by statement, reversals, the model's own decisions, errors and their fixes, several
model calls in one turn, paths relative to the project, the user's words never cut, events that
name no session, and hostile input.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from plait import Memory, Settings
from plait.adapters.hosts.langchain.middleware import SessionRecorder
from plait.adapters.hosts.opencode.hooks import OpenCodeHooks
from plait.adapters.hosts.opencode.replay import SessionReplay
from plait.cli.demo import find_envelope
from plait.state.events import EventKind, body_max_bytes
from plait.state.snapshot import TRANSIENT_ERROR_AGE_EVENTS

TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "{root}/scripts/load.py", line 3, in <module>\n'
    "    import yaml\n"
    "ModuleNotFoundError: No module named 'yaml'\n"
)


@pytest.fixture
async def memory(tmp_path: Path, redis_url: str) -> AsyncIterator[Memory]:
    settings = Settings.load(tmp_path, redis={"url": redis_url})
    async with Memory.open(tmp_path, settings=settings, start_background=False) as opened:
        yield opened


def sections(sent: str) -> dict[str, list[str]]:
    """The envelope at the head of a message, as section → item texts ({} when none)."""
    envelope = find_envelope(sent)
    if not envelope:
        return {}
    root = ET.fromstring(envelope)
    found: dict[str, list[str]] = {}
    for section in root:
        items = [child.text or "" for child in section] or [section.text or ""]
        found[section.tag] = [" ".join(item.split()) for item in items]
    return found


def said(sent: str, section: str) -> str:
    """One section's items as one lower-cased text."""
    return " | ".join(sections(sent).get(section, [])).lower()


async def test_e2e_a_quoted_prompt_states_several_things_each_remembered(memory: Memory) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    prompt = '"Rule: never call the network in tests. We\'ll use httpx. TODO: add retries."'
    first = await session.user(prompt)
    assert prompt in first  # the user's message itself is unchanged
    assert "never call the network in tests" in said(first, "project_rules")
    assert "we'll use httpx" in said(first, "key_decisions")
    assert "add retries" in said(first, "active_tasks")
    assert "last_request" not in sections(first)  # it would only repeat the message
    later = await session.user("Now write the client.")
    assert said(later, "project_rules") and said(later, "key_decisions")


async def test_e2e_chatter_is_never_a_request(memory: Memory) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("Fix the login redirect bug in auth/views.py.")
    sent = await session.user("yes, do it")
    assert sections(sent)["last_request"] == ["Fix the login redirect bug in auth/views.py."]
    assert "yes, do it" not in find_envelope(sent)
    snapshot = await memory.snapshot(session.session_id)
    assert not snapshot.decisions and not snapshot.tasks


async def test_e2e_a_reversal_worded_differently_removes_the_original(memory: Memory) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("Rate limiting: we'll use a token bucket with a burst of 20.")
    await session.user("Decision: use Postgres for the main database.")
    sent = await session.user(
        "Actually, let's not use a token bucket after all: use a sliding window log"
    )
    await session.user("Go on with the limiter.")
    sent = await session.model_call()
    decisions = said(sent, "key_decisions")
    assert "sliding window log" in decisions and "postgres" in decisions
    assert "burst of 20" not in decisions


async def test_e2e_two_decisions_on_one_subject_without_evidence_both_stay(
    memory: Memory,
) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("We'll use Redis for the cache.")
    await session.user("Cache entries: ten minute expiry, use Redis keyspace events.")
    sent = await session.user("Continue.")
    assert len(sections(sent)["key_decisions"]) == 2


async def test_e2e_the_models_decisions_rank_below_the_users_and_are_never_rules(
    memory: Memory,
) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("Decision: store sessions in Redis.")
    await session.assistant(
        "The root cause was a stale cookie. I'll use orjson for serialization. "
        "Always pin your dependencies. Next, I'll add a regression test."
    )
    sent = await session.user("OK, keep going with the tests.")
    decisions = sections(sent)["key_decisions"]
    assert decisions[0].lower().startswith("store sessions in redis")
    assert any("orjson" in d for d in decisions[1:])
    assert "pin your dependencies" not in find_envelope(sent).lower()
    assert "regression test" in said(sent, "active_tasks")
    assert "stale cookie" in said(sent, "session_snapshot")
    events = await memory.backends.store.read_events(session.session_id)
    model = [e for e in events if e.speaker == "assistant"]
    assert model and {e.kind for e in model} <= {
        EventKind.DECISION,
        EventKind.TASK_CREATE,
        EventKind.DISCOVERY,
    }


async def test_e2e_every_model_call_of_a_turn_sees_what_happened_since(
    memory: Memory, tmp_path: Path
) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    root = str(memory.project_dir)
    first = await session.user("Load the fixtures with scripts/load.py and fix what breaks.")
    assert "unresolved_errors" not in sections(first)
    await session.tool("read", {"filePath": f"{root}/scripts/load.py"}, "import yaml")
    await session.tool(
        "bash",
        {"command": "python3 scripts/load.py"},
        TRACEBACK.format(root=root),
        metadata={"exit": 1},
    )
    second = await session.model_call()
    errors = sections(second)["unresolved_errors"]
    assert errors == ["python: ModuleNotFoundError: No module named 'yaml'"]
    assert sections(second)["files_in_play"] == ["scripts/load.py (read)"]  # relative to root
    await session.tool("edit", {"filePath": f"{root}/pyproject.toml"}, "Edit applied.")
    await session.tool(
        "bash", {"command": "python3 scripts/load.py"}, "loaded 12 rows", metadata={"exit": 0}
    )
    third = await session.model_call()
    assert "unresolved_errors" not in sections(third)
    assert sections(third)["files_in_play"] == ["pyproject.toml (edited)", "scripts/load.py (read)"]
    assert root not in find_envelope(third)


async def test_e2e_a_bare_model_call_with_nothing_new_reads_what_is_staged(memory: Memory) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("Decision: use argon2 for password hashing.")
    first = await session.user("Hash the passwords.")
    staged_before = await memory.backends.store.take_envelope(session.session_id)
    await session.tool("bash", {"command": "ls"}, "")  # no verdict, no change
    again = await session.model_call()
    assert find_envelope(again) == find_envelope(first)
    assert staged_before[1] is False  # nothing was re-staged for a call that changed nothing


async def test_e2e_a_failing_shell_tool_in_langchain_is_an_error(memory: Memory) -> None:
    recorder = SessionRecorder(memory)
    call = {"id": "c1", "name": "execute", "args": {"command": "python scripts/load.py"}}
    messages = [
        HumanMessage("Load the fixtures.", id="h1"),
        AIMessage("", tool_calls=[call], id="a1"),
        ToolMessage(TRACEBACK.format(root="/srv"), tool_call_id="c1", status="success", id="t1"),
    ]
    envelope = await recorder.turn("lc-thread", messages)
    assert "ModuleNotFoundError: No module named 'yaml'" in envelope
    fixed = [
        *messages,
        AIMessage("", tool_calls=[{**call, "id": "c2"}], id="a2"),
        ToolMessage("loaded 12 rows\nDone in 0.2s", tool_call_id="c2", status="success", id="t2"),
    ]
    assert "ModuleNotFoundError" not in await recorder.turn("lc-thread", fixed)


async def test_e2e_a_prompt_that_mentions_the_tag_reaches_the_model_whole(memory: Memory) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("Decision: parse with the stdlib html.parser.")
    prompt = (
        'Please fix the regex that parses <session_memory version="1"> blocks: it stops at '
        "the first </session_memory> and drops the rest of the message."
    )
    sent = await session.user(prompt)
    assert sent.endswith(prompt)
    readme = "# plait\n\n" + "The <session_memory> envelope is injected. " * 100
    attached = await session.user(f"Summarize this README:\n{readme}")
    assert attached.endswith(readme) and len(readme) > 4000
    events = await memory.backends.store.read_events(session.session_id)
    prompts = [e.body for e in events if e.kind is EventKind.PROMPT]
    assert prompts[-2] == prompt
    assert sent.count("<!--plait:") == attached.count("<!--plait:") == 1


async def test_e2e_sessionless_events_go_to_the_right_session_or_none(memory: Memory) -> None:
    first, second = (
        SessionReplay(runner=OpenCodeHooks(memory)),
        SessionReplay(runner=OpenCodeHooks(memory)),
    )
    await first.user("Work on the parser.")
    await second.user("Work on the docs.")
    await second.tool("edit", {"filePath": "docs/guide.md"}, "Edit applied.")
    await first.tool("edit", {"filePath": "src/parser.py"}, "Edit applied.")
    await second.file_edited("docs/guide.md")
    await first.file_edited("src/unknown_owner.py")  # two sessions active: nobody's
    await first.branch("feature/parser")
    first_files = [f.key for f in (await memory.snapshot(first.session_id)).files]
    second_files = [f.key for f in (await memory.snapshot(second.session_id)).files]
    assert first_files == ["src/parser.py"] and second_files == ["docs/guide.md"]
    for session in (first, second):
        git = (await memory.snapshot(session.session_id)).git
        assert [g.text for g in git] == ["branch feature/parser"]


async def test_e2e_a_lone_session_gets_its_sessionless_file_edits(memory: Memory) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("Tidy the config.")
    await session.file_edited(str(memory.project_dir / "config/settings.toml"))
    files = (await memory.snapshot(session.session_id)).files
    assert [f.key for f in files] == ["config/settings.toml"]


async def test_e2e_a_one_off_error_ages_out(memory: Memory) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("Run the tests.")
    await session.tool(
        "bash", {"command": "pyest -q"}, "bash: pyest: command not found", metadata={"exit": 127}
    )
    assert "pyest" in said(await session.model_call(), "unresolved_errors")
    for index in range(TRANSIENT_ERROR_AGE_EVENTS):
        await session.tool("read", {"filePath": f"src/m{index}.py"}, "x")
    assert "unresolved_errors" not in sections(await session.model_call())


async def test_e2e_hostile_input_is_bounded_and_never_raises(memory: Memory) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("Rule: keep it small. " * 5000)  # thousands of statements
    await session.user("!?.;:" * 200_000)
    await session.user("x" * (5 * 1024 * 1024))
    await session.assistant("Decision: " + "use X. " * 20_000)
    binary = bytes(range(256)).decode("latin-1") * 2000
    await session.tool("bash", {"command": "cat blob.bin"}, binary, metadata={"exit": 1})
    sent = await session.user("Where are we?")
    envelope = find_envelope(sent)
    assert len(envelope.encode()) <= memory.settings.envelope.budget_bytes
    ET.fromstring(envelope)
    events = await memory.backends.store.read_events(session.session_id, limit=10_000)
    assert len(events) < 200
    assert all(
        len(e.summary) <= 200 and len(e.body.encode()) <= body_max_bytes(e.kind) for e in events
    )
