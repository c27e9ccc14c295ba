"""Codex's hook payloads (as Codex 0.169.0 sends them) → plait's intents, and plait's answers."""

from __future__ import annotations

import asyncio
import json
import stat
import uuid
from pathlib import Path
from typing import Any

import pytest
from support.command_hooks import run_hook, running

from plait.adapters.hosts.codex.hooks import COMMAND_HOST, EVENTS, NAME
from plait.adapters.hosts.http.host_routes import COMMAND_HOSTS
from plait.forgetting import Selection, forget
from plait.state.base.errors import InvalidHookPayload, UnknownHook
from plait.state.intents import (
    AssistantText,
    CompactionAfter,
    ModelCall,
    SessionLifecycle,
    ToolResult,
    UserTurn,
)
from plait.state.observations import ObservationDraft

SESSION = f"codex-{uuid.uuid4()}"


def payload(event: str, **fields: Any) -> dict[str, Any]:
    """A payload with what Codex sends on every event."""
    common = {
        "session_id": SESSION,
        "turn_id": "01a21115-bee6-7df3-b97e-caf480368364",
        "transcript_path": "/home/u/.codex/sessions/2026/11/25/rollout.jsonl",
        "cwd": "/work/project",
        "model": "gpt-5",
        "permission_mode": "bypassPermissions",
    }
    return common | {"hook_event_name": event} | fields


def test_the_service_takes_codex_calls() -> None:
    assert COMMAND_HOSTS[NAME] is COMMAND_HOST


def test_a_prompt_is_recorded_and_asks_for_the_envelope() -> None:
    call = COMMAND_HOST.call(
        "UserPromptSubmit", payload("UserPromptSubmit", prompt="Use Postgres"), "c1"
    )
    assert call.durable and call.call_id == "c1" and call.target.session_id == SESSION
    assert call.payload == (UserTurn(text="Use Postgres"), ModelCall(query="Use Postgres"))
    assert call.replay == {"event": "UserPromptSubmit", "payload": call.replay["payload"]}


def test_a_shell_call_keeps_its_output_and_a_patch_names_its_files() -> None:
    shell = payload(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "pytest -q"},
        tool_response="3 passed\n",
        tool_use_id="call_1",
    )
    (result,) = COMMAND_HOST.call("PostToolUse", shell, "").payload
    assert isinstance(result, ToolResult) and (result.tool, result.output) == ("bash", "3 passed\n")
    patch = "*** Begin Patch\n*** Update File: src/ledger.py\n@@\n-a\n+b\n*** Add File: b.py\n+x\n"
    edit = payload("PreToolUse", tool_name="apply_patch", tool_input={"input": patch})
    call = COMMAND_HOST.call("PreToolUse", edit, "")
    assert call.target.files == ("src/ledger.py", "b.py") and not call.durable


def test_compaction_and_stops() -> None:
    start = COMMAND_HOST.call("SessionStart", payload("SessionStart", source="compact"), "")
    assert start.payload == (CompactionAfter(), ModelCall())
    stop = payload("Stop", stop_hook_active=False, last_assistant_message="Done.")
    assert COMMAND_HOST.call("Stop", stop, "").payload == (
        AssistantText(text="Done."),
        SessionLifecycle(phase="idle"),
    )
    sub = COMMAND_HOST.call("SubagentStop", payload("SubagentStop", agent_id="a1"), "")
    assert sub.target.parent_id == SESSION and sub.target.session_id.startswith(SESSION)


def test_bad_calls_are_refused_with_the_reason() -> None:
    with pytest.raises(UnknownHook, match="Codex"):
        COMMAND_HOST.call("Notification", payload("Notification"), "")
    with pytest.raises(InvalidHookPayload, match="session_id"):
        COMMAND_HOST.call("UserPromptSubmit", {"prompt": "hi"}, "")
    assert set(EVENTS) >= {"SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact"}


def test_answers_are_context_where_codex_reads_it() -> None:
    inject = {"inject": "<session_memory>x</session_memory>"}
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse"):
        answer = COMMAND_HOST.answer(event, {}, inject)
        assert answer == {
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": inject["inject"]}
        }
    assert COMMAND_HOST.answer("Stop", {}, inject) == {}
    assert COMMAND_HOST.answer("UserPromptSubmit", {}, {}) == {}


# -- through the client and the service -----------------------------------------------------
async def test_a_codex_patch_recalls_what_the_session_knows_of_its_file(
    tmp_path: Path, redis_url: str
) -> None:
    async with running(tmp_path, redis_url) as memory:
        project, data = tmp_path / "project", tmp_path / "data"
        said = "We decided that src/ledger.py keeps amounts in integer cents, never floats."
        prompt = payload("UserPromptSubmit", prompt=said)
        assert (await run_hook("codex", project, data, "UserPromptSubmit", prompt, True))[0] == 0
        kinds = [e.kind for e in await memory.backends.store.read_events(SESSION)]
        assert "prompt" in kinds

        def patch(path: str) -> dict[str, Any]:
            text = f"*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch\n"
            return payload("PreToolUse", tool_name="apply_patch", tool_input={"input": text})

        _, answer, _ = await run_hook("codex", project, data, "PreToolUse", patch("src/ledger.py"))
        context = answer["hookSpecificOutput"]["additionalContext"]
        assert context.startswith('<file_memory path="src/ledger.py">') and "cents" in context
        assert (await run_hook("codex", project, data, "PreToolUse", patch("src/other.py")))[
            1
        ] == {}


async def test_with_no_service_the_last_answers_stand_in_until_something_is_forgotten(
    tmp_path: Path, redis_url: str
) -> None:
    project, data = tmp_path / "project", tmp_path / "data"
    said = payload("UserPromptSubmit", prompt="We decided to keep the ledger in Postgres.")

    def start() -> dict[str, Any]:
        return payload("SessionStart") | {"session_id": f"codex-{uuid.uuid4()}"}

    async with running(tmp_path, redis_url, background=True) as memory:
        await run_hook("codex", project, data, "SessionStart", payload("SessionStart"))
        await run_hook("codex", project, data, "UserPromptSubmit", said, True)
        _, live, _ = await run_hook("codex", project, data, "UserPromptSubmit", said, True)
        assert "Postgres" in live["hookSpecificOutput"]["additionalContext"]
        draft = ObservationDraft(title="Ledger store", content="Postgres", type="decision")
        await memory.observations.save(draft)
        for _ in range(100):  # the project's long-term memory is refreshed in the background
            _, project_live, _ = await run_hook("codex", project, data, "SessionStart", start())
            # the drained decision may come first; the saved observation is what is awaited
            if "Ledger store" in str(project_live):
                break
            await asyncio.sleep(0.2)
        assert "Ledger store" in project_live["hookSpecificOutput"]["additionalContext"]
    # the service is gone (and the client starts none here): what it last said stands in
    _, standby, note = await run_hook("codex", project, data, "UserPromptSubmit", said, True)
    assert standby == live and "waits in" in note
    _, fresh, _ = await run_hook("codex", project, data, "SessionStart", start())
    assert fresh == project_live  # a new session: the project's memory
    answers = list((data / "answers").rglob("*.json"))
    assert answers and all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in answers)

    async with running(tmp_path, redis_url) as memory:
        assert (await forget(memory, Selection(match="Postgres"))).events
    _, after, _ = await run_hook("codex", project, data, "UserPromptSubmit", said, True)
    assert after == {}  # nothing that said it is served any more


async def test_a_revised_summary_keeps_the_standby_and_a_persons_edit_drops_it(
    tmp_path: Path, redis_url: str
) -> None:
    """A session summary revised after every idle turn is no forgetting: dropping the standby
    then left the next turn without a service (a kill, a crash) with no memory at all."""
    project, data = tmp_path / "project", tmp_path / "data"
    said = payload("UserPromptSubmit", prompt="We decided to keep the ledger in Postgres.")
    async with running(tmp_path, redis_url) as memory:
        await run_hook("codex", project, data, "UserPromptSubmit", said, True)
        _, live, _ = await run_hook("codex", project, data, "UserPromptSubmit", said, True)
        assert "Postgres" in json.dumps(live)
        saved = await memory.observations.session_summary(SESSION, "## Goal\n- the ledger")
        revised = await memory.observations.session_summary(SESSION, "## Goal\n- the ledger v2")
        assert revised.observation.revision == saved.observation.revision + 1
        assert list((data / "answers").rglob("*.json")), "a revision dropped the standby"
        await memory.observations.update(saved.observation.id, content="## Goal\n- edited")
        assert not list((data / "answers").rglob("*.json")), "an edit may quote what it fixed"


async def test_a_tools_file_memory_is_not_kept_to_stand_in_for_another_file(
    tmp_path: Path, redis_url: str
) -> None:
    project, data = tmp_path / "project", tmp_path / "data"
    said = "We decided that src/ledger.py keeps amounts in integer cents, never floats."
    text = "*** Begin Patch\n*** Update File: src/ledger.py\n@@\n-a\n+b\n*** End Patch\n"
    patch = payload("PreToolUse", tool_name="apply_patch", tool_input={"input": text})
    async with running(tmp_path, redis_url):
        prompt = payload("UserPromptSubmit", prompt=said)
        await run_hook("codex", project, data, "UserPromptSubmit", prompt, True)
        _, live, _ = await run_hook("codex", project, data, "PreToolUse", patch)
        assert "file_memory" in json.dumps(live)
    other = text.replace("src/ledger.py", "src/report.py")
    edit = payload("PreToolUse", tool_name="apply_patch", tool_input={"input": other})
    assert (await run_hook("codex", project, data, "PreToolUse", edit))[1] == {}
