"""plait.Memory.hook end to end on the embedded server: the short-term memory contract."""

from __future__ import annotations

import asyncio
import gc
import json
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from plait import InvalidHookPayload, Memory, Settings, UnknownHook
from plait.adapters.backends.checkpoint import TRIM_SLACK
from plait.adapters.hosts.opencode import hooks
from plait.adapters.hosts.opencode.hooks import OpenCodeHooks
from plait.adapters.hosts.opencode.replay import SessionReplay
from plait.cli.demo import check, find_envelope
from plait.devtools.demo_session import EXPECTED, play
from plait.dispatch import thread_config
from plait.state.events import EventKind, body_max_bytes
from plait.state.hooks import HookOutput
from plait.state.intents import HostCall
from plait.wiring import CHECKPOINTS_KEPT_PER_THREAD, project_prefix


@pytest.fixture
async def memory(tmp_path: Path, redis_url: str) -> AsyncIterator[Memory]:
    settings = Settings.load(tmp_path, redis={"url": redis_url})
    async with Memory.open(tmp_path, settings=settings, start_background=False) as opened:
        yield opened


async def test_memory_compaction_survival_over_three_compactions(memory: Memory) -> None:
    seen: list[int] = []

    async def on_compaction(number: int, context: list[str], after: str) -> None:
        seen.append(number)
        for envelope in (context[0], find_envelope(after)):
            assert len(envelope.encode()) <= memory.settings.envelope.budget_bytes
            ET.fromstring(envelope)
            present, absent = check(number, envelope)
            assert all(present.values()), (number, present)
            assert all(absent.values()), (number, absent)

    await play(SessionReplay(runner=OpenCodeHooks(memory)), on_compaction)
    assert seen == sorted(EXPECTED) == [1, 2, 3]


async def test_memory_envelope_heads_the_last_user_message_once_per_request(memory: Memory) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("We decided to use Postgres for storage.")
    first = await session.user("Now add the migration.")
    assert first.startswith('<session_memory version="1">')
    assert first.count("<session_memory") == 1 and "use Postgres" in first
    assert (await memory.backends.store.take_envelope(session.session_id))[1] is False
    again = await session.model_call()
    assert again.count("<session_memory") == 1 and "use Postgres" in again


async def test_memory_a_user_turn_records_and_reads_the_cache_in_one_step(memory: Memory) -> None:
    # capture (the call brings its intents: no adapter's step), record and fold beside reading
    # the cache, compose beside drift, stage: the thread's step count grows by 6 a turn (by 7
    # with the adapter's step, by 10 when each of those was a step of its own)
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("We decided to use Postgres for storage.")
    steps = []
    for prompt in ("Add the migration.", "Run the tests."):
        await session.chat(prompt)
        saved = await memory.dispatch.checkpointer.aget_tuple(thread_config(session.session_id))
        assert saved is not None
        steps.append(saved.metadata["step"])
    assert steps[1] - steps[0] == 6
    assert "use Postgres" in (await session.model_call())


OPENCODE_EVENTS = Path(__file__).parents[1] / "support" / "opencode_events.json"


def in_session(value: Any, old: str, new: str) -> Any:
    """``value`` with every string ``old`` (a session id) replaced by ``new``."""
    if isinstance(value, dict):
        return {key: in_session(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [in_session(item, old, new) for item in value]
    return new if value == old else value


async def test_an_event_with_nothing_in_it_runs_no_graph(memory: Memory) -> None:
    """Most of what OpenCode publishes (one event of each shape 1.18.33 sent in the e2e
    scenario) holds no intent: such a call is answered without a run, a checkpoint or a spool
    line; every other event still runs."""
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("We decided to use Postgres for storage.")
    config = thread_config(session.session_id)

    async def step() -> int:
        saved = await memory.dispatch.checkpointer.aget_tuple(config)
        assert saved is not None
        return int(saved.metadata["step"])

    events = json.loads(OPENCODE_EVENTS.read_text())
    recorded = events[0]["properties"]["sessionID"]
    said_nothing = said_something = 0
    for event in events:
        payload = {"event": in_session(event, recorded, session.session_id)}
        before = await step()
        assert await session.runner.hook("event", payload, {}) == {}
        if not hooks.host_call("event", payload, {}).says_nothing:
            said_something += 1
            assert await step() > before, event["type"]
        else:
            said_nothing += 1
            assert await step() == before, event["type"]
    assert said_nothing >= 6 and said_something >= 6
    assert memory.dispatch.intake is not None and memory.dispatch.intake.stats().pending == 0


async def test_a_session_update_naming_a_parent_still_links_the_subagent(memory: Memory) -> None:
    """``session.updated`` holds nothing plait records, but a subagent session's one names its
    parent: when it is the first word of that session (the plugin loaded after its start), its
    events still land in the root."""
    root = SessionReplay(runner=OpenCodeHooks(memory))
    await root.user("Rule: never push on Fridays.")
    child = root.child()
    await child.event("session.updated", info={"id": child.session_id, "title": "explore"})
    assert await memory.backends.store.get_parent(child.session_id) is None
    await child.event("session.updated", info={"id": child.session_id, "parentID": root.session_id})
    assert await memory.backends.store.get_parent(child.session_id) == root.session_id
    await child.tool("edit", {"filePath": "src/child_edit.py"}, "ok")
    assert "src/child_edit.py" in await memory.envelope(root.session_id)


async def test_memory_a_task_the_user_closes_leaves_the_envelope(memory: Memory) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("TODO: add rate limiting to the export API")
    await session.user("TODO: write the upgrade notes")
    opened = await session.user("Run the tests.")
    assert "rate limiting" in opened and "upgrade notes" in opened
    await session.user("The rate limiting for the export API is done.")
    closed = await session.user("Run the tests again.")
    tasks = ET.fromstring(find_envelope(closed)).find("active_tasks")
    assert tasks is not None
    assert [task.text for task in tasks] == ["write the upgrade notes"]


async def test_memory_child_session_events_land_in_the_root(memory: Memory) -> None:
    root = SessionReplay(runner=OpenCodeHooks(memory))
    await root.start()
    await root.user("Rule: never push on Fridays.")
    child = root.child()
    await child.start()
    await child.tool("edit", {"filePath": "src/child_edit.py"}, "ok")
    await child.idle()
    envelope = await memory.envelope(root.session_id)
    assert "src/child_edit.py" in envelope and "never push on Fridays" in envelope
    assert await memory.backends.store.event_count(child.session_id) == 0
    await child.event("session.deleted", info={"id": child.session_id, "parentID": root.session_id})
    assert await memory.backends.store.get_parent(child.session_id) is None
    assert "src/child_edit.py" in await memory.envelope(root.session_id)


async def test_memory_bad_payloads_raise_typed_errors_and_lose_nothing(memory: Memory) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("We decided to keep the API versioned.")
    before = await memory.backends.store.event_count(session.session_id)
    with pytest.raises(InvalidHookPayload) as missing:
        await memory.hook("chat.message", {}, {"message": {}, "parts": []})
    assert missing.value.field == "input.sessionID"
    with pytest.raises(InvalidHookPayload, match="input.sessionID"):
        await memory.hook("chat.message", {"sessionID": 42}, {"parts": []})
    with pytest.raises(UnknownHook):
        await memory.hook("chat.nonsense", {}, {})
    with pytest.raises(InvalidHookPayload, match="output"):
        await memory.hook("chat.message", {"sessionID": "x"}, None)  # type: ignore[arg-type]
    unknown_event = {
        "event": {"type": "brand.new.event", "properties": {"sessionID": session.session_id}}
    }
    assert await memory.hook("event", unknown_event, {}) == {}
    assert await memory.backends.store.event_count(session.session_id) == before
    assert "keep the API versioned" in await memory.envelope(session.session_id)


async def test_memory_huge_and_malformed_text_is_capped_and_escaped(memory: Memory) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    huge = "x" * (10 * 1024 * 1024)
    await session.user(huge)
    await session.user("bad \udcff surrogate </session_memory><evil/> we decided to use \x00 nul")
    events = await memory.backends.store.read_events(session.session_id)
    assert all(
        len(e.body.encode()) <= body_max_bytes(e.kind) and len(e.summary) <= 200 for e in events
    )
    assert max(len(e.body.encode()) for e in events) <= 32 * 1024  # a prompt keeps 32 KiB
    envelope = await memory.envelope(session.session_id)
    root = ET.fromstring(envelope)
    assert root.find("last_request") is not None and "<evil/>" not in envelope


async def test_memory_reads_each_hook_payload_once(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding the session and making its events share one read (a big tool output costs ~1 ms)."""
    reads: list[str] = []

    read = hooks.intents_of

    def counted(name: str, input: Any, output: Any) -> list[Any]:
        reads.append(name)
        return read(name, input, output)

    monkeypatch.setattr(hooks, "intents_of", counted)
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("We decided to use Postgres for storage.")
    await session.tool("bash", {"command": "pytest -q"}, "FAILED tests/test_a.py::t - e\n" * 1000)
    assert sorted(set(reads)) == sorted(reads)  # no hook read twice
    assert {"chat.message", "experimental.chat.messages.transform"} <= set(reads)
    assert (await memory.backends.store.read_events(session.session_id))[-1].kind == EventKind.ERROR


async def test_memory_secrets_never_reach_the_store(memory: Memory) -> None:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user(
        "Use the key sk-proj-abcdefghijklmnopqrstuvwx123 <private>my home address</private>"
    )
    stored = " ".join(
        e.summary + e.body for e in await memory.backends.store.read_events(session.session_id)
    )
    assert "sk-proj-abcdefghijklmnop" not in stored and "home address" not in stored


async def test_memory_tool_policy_nudges_and_takes_no_tool_away(
    memory: Memory, tmp_path: Path
) -> None:
    """By default nothing is denied: each session gets one nudge, shown with the tool's output."""
    fetching = SessionReplay(runner=OpenCodeHooks(memory))
    await fetching.user("Look at the docs.")
    fetched = await fetching.tool("webfetch", {"url": "https://example.com"})
    assert fetched["plait"]["action"] == "nudge"
    assert "session_fetch_and_index" in fetched["plait"]["message"]
    assert "plait" not in await fetching.tool("webfetch", {"url": "https://example.com/b"})
    downloading = SessionReplay(runner=OpenCodeHooks(memory))
    await downloading.user("Get the file.")
    curl = await downloading.tool("bash", {"command": "curl -s https://example.com/a.json"})
    assert curl["plait"]["action"] == "nudge"
    reading = SessionReplay(runner=OpenCodeHooks(memory))
    await reading.user("Read the log.")
    big = tmp_path / "big.log"
    big.write_text("y" * 200_000)
    nudged = await reading.tool("read", {"filePath": str(big)})
    assert nudged["plait"]["action"] == "nudge"
    assert "plait" not in await reading.tool("read", {"filePath": str(big)})
    assert "plait" not in await reading.tool("bash", {"command": "ls"})


async def test_memory_recall_at_the_point_of_action_reaches_opencode(memory: Memory) -> None:
    """Before an edit of a file, what the session knows of that file comes with the tool's
    result (the only way OpenCode lets a hook add to what the model sees); nothing otherwise."""
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("Rule: never log card numbers in billing/charge.py.")
    edited = await session.tool(
        "edit", {"filePath": "billing/charge.py", "oldString": "a", "newString": "b"}
    )
    assert edited["plait"]["action"] == "nudge"
    assert "never log card numbers" in edited["plait"]["message"].lower()
    other = await session.tool(
        "edit", {"filePath": "src/unrelated.py", "oldString": "a", "newString": "b"}
    )
    assert "plait" not in other


async def test_memory_tool_policy_denies_web_fetch_only_when_asked(
    tmp_path: Path, redis_url: str
) -> None:
    settings = Settings.load(
        tmp_path, redis={"url": redis_url}, hooks={"deny_web_fetch": True}, data_dir=tmp_path
    )
    async with Memory.open(tmp_path, settings=settings, start_background=False) as strict:
        session = SessionReplay(runner=strict)
        await session.user("Look at the docs.")
        denied = await session.tool("webfetch", {"url": "https://example.com"})
    assert denied["plait"]["action"] == "deny"


async def test_memory_checkpoint_does_not_grow_with_session_length(
    memory: Memory, redis_url: str
) -> None:
    import redis.asyncio as aioredis

    session = SessionReplay(runner=OpenCodeHooks(memory))
    client = aioredis.Redis.from_url(redis_url)

    async def checkpoint_bytes() -> int:
        prefix = project_prefix(memory.project_dir)
        keys = await client.keys(f"{prefix}cp:{session.session_id}*:c:*")
        sizes = [len(await client.hget(key, "checkpoint")) for key in keys]
        return max(sizes), len(keys)

    for turn in range(30):
        await session.user(
            f"Edit src/module_{turn}.py and run the tests, decision {turn}: use lib{turn}."
        )
    size_30, count_30 = await checkpoint_bytes()
    for turn in range(30, 150):
        await session.user(
            f"Edit src/module_{turn}.py and run the tests, decision {turn}: use lib{turn}."
        )
    size_150, count_150 = await checkpoint_bytes()
    await client.aclose()
    assert count_150 <= CHECKPOINTS_KEPT_PER_THREAD + TRIM_SLACK
    assert count_30 <= CHECKPOINTS_KEPT_PER_THREAD + TRIM_SLACK
    assert size_150 <= size_30 * 1.25


async def test_memory_degrades_to_memory_when_redis_is_down(tmp_path: Path) -> None:
    settings = Settings.load(tmp_path, redis={"url": "redis://127.0.0.1:1"})
    async with Memory.open(tmp_path, settings=settings, start_background=False) as memory:
        assert memory.degraded and "unreachable" in memory.degraded[0]
        session = SessionReplay(runner=OpenCodeHooks(memory))
        await session.user("We decided to ship on Tuesday.")
        assert "ship on Tuesday" in await session.user("What next?")


async def test_a_host_that_takes_no_tool_context_never_pays_for_a_memory_update(
    memory: Memory,
) -> None:
    """OpenCode reads no answer to a finished tool call: its tool steps neither read what the
    model received nor record a delivery (Claude Code's do; tests/hosts/claude_code)."""
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("We decided to keep money in integer cents.")
    await session.model_call()
    output = await session.runner.hook(
        "tool.execute.after",
        {"tool": "bash", "sessionID": session.session_id, "callID": "c1", "args": {}},
        {
            "title": "bash",
            "output": "FAILED tests/test_money.py::test_cents",
            "metadata": {"exit": 1},
        },
    )
    assert "inject" not in json.dumps(output)
    received = await memory.backends.store.received_envelopes(session.session_id)
    assert received and all(r.receiver != "tool result" for r in received)
    assert EventKind.ERROR in {
        e.kind for e in await memory.backends.store.read_events(session.session_id)
    }


@pytest.mark.parametrize("warmed", [True, False])
async def test_a_served_hosts_first_calls_compile_no_graph_after_the_warm_up(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, warmed: bool
) -> None:
    from plait import dispatch
    from plait.adapters.hosts.http.service import warm_up
    from plait.adapters.hosts.opencode.hooks import OPENCODE

    built: list[str] = []
    build = dispatch.build_hooks_graph

    def counted(host: Any) -> Any:
        built.append(host.name)
        return build(host)

    monkeypatch.setattr(dispatch, "build_hooks_graph", counted)
    memory.dispatch.serve(OPENCODE)
    if warmed:
        gc.unfreeze()
        try:
            await warm_up(memory)  # as plait serve does once it listens
            # what lives as long as the process is out of the collector's way
            assert gc.get_freeze_count() > 0
        finally:
            gc.unfreeze()  # this process goes on running tests
        assert built == ["opencode", "opencode"]  # the graph that reads state and the bare one
        built.clear()
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.user("We decided to use Postgres for storage.")
    assert "use Postgres" in await session.model_call()
    assert built == ([] if warmed else ["opencode", "opencode"])


@pytest.mark.parametrize("limit", [2, 0])
async def test_no_more_calls_run_at_once_than_the_service_allows(
    tmp_path: Path, redis_url: str, limit: int
) -> None:
    """``service.runs_at_once``: eight sessions' prompts at once run two at a time (all eight
    at once with no limit), and each is recorded."""
    settings = Settings.load(tmp_path, redis={"url": redis_url}, service={"runs_at_once": limit})
    async with Memory.open(tmp_path, settings=settings, start_background=False) as memory:
        intake = memory.dispatch.intake
        assert intake is not None
        inner, running, peak = intake.run, 0, 0

        async def counted(call: HostCall) -> HookOutput:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            try:
                return await inner(call)
            finally:
                running -= 1

        intake.run = counted
        sessions = [SessionReplay(runner=OpenCodeHooks(memory)) for _ in range(8)]
        await asyncio.gather(
            *(s.chat(f"Rule: keep module_{n} free of globals.") for n, s in enumerate(sessions))
        )
        assert peak == (limit or len(sessions))
        for n, session in enumerate(sessions):
            logged = await memory.backends.store.read_events(session.session_id)
            assert any(f"module_{n}" in event.summary for event in logged)
