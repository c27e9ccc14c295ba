"""Observations through Memory: upserts and revisions, hygiene, summaries, seeding, sharing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from plait import Memory, UsageError
from plait.adapters.hosts.opencode.hooks import OpenCodeHooks
from plait.adapters.hosts.opencode.replay import SessionReplay
from plait.observation_tools import MemoryToolbox
from plait.state.observations import UnknownObservation

SECRET = "sk-proj-abcdefghijklmnopqrstuvwx0123456789"
Opener = Callable[..., Awaitable[Memory]]


@pytest.fixture
async def open_memory(
    tmp_path: Path, redis_url: str, group_prefix: str
) -> AsyncIterator[Callable[..., Awaitable[Memory]]]:
    opened: list[Memory] = []

    async def opener(project: Path | None = None, **settings: Any) -> Memory:
        directory = project or tmp_path / "project"
        directory.mkdir(exist_ok=True)
        memory = await Memory.open(
            directory,
            tmp_path / "data",
            start_background=False,
            redis={"url": redis_url},
            graphiti={"group_id_prefix": group_prefix},
            hooks={"timeout_ms": 20_000, "in_process_timeout_ms": 20_000},
            **settings,
        )
        opened.append(memory)
        return memory

    yield opener
    for memory in opened:
        await memory.aclose()


@pytest.fixture
async def memory(open_memory: Opener) -> Memory:
    return await open_memory()


@pytest.fixture
def tools(memory: Memory) -> MemoryToolbox:
    return MemoryToolbox(memory.observations, host="test")


async def save(tools: MemoryToolbox, session: str = "s1", **arguments: Any) -> dict[str, Any]:
    return await tools.call("memory_save", arguments, session)


async def test_a_topic_key_upserts_and_keeps_every_earlier_version(tools: MemoryToolbox) -> None:
    first = await save(
        tools, title="Auth model", content="What: JWT", type="architecture", topic_key="arch/auth"
    )
    second = await save(
        tools,
        title="Auth model",
        content="What: sessions in Redis",
        type="architecture",
        topic_key="arch/auth",
    )
    again = await save(
        tools,
        title="Auth model",
        content="What: sessions in Redis",
        type="architecture",
        topic_key="arch/auth",
    )
    assert second["id"] == first["id"] == again["id"]
    assert (second["action"], second["revision"]) == ("updated", 2)
    assert (again["action"], again["revision"]) == ("unchanged", 2)
    got = await tools.call("memory_get", {"id": first["id"]}, "s1")
    assert got["content"] == "What: sessions in Redis"
    assert [r["content"] for r in got["revisions"]] == ["What: JWT"]
    found = await tools.call("memory_search", {"query": "auth sessions"}, "s2")
    assert [r["id"] for r in found["results"]] == [first["id"]]


async def test_the_same_topic_in_another_scope_is_another_observation(
    tools: MemoryToolbox,
) -> None:
    project = await save(tools, title="Editor", content="What: vim", topic_key="pref/editor")
    personal = await save(
        tools, title="Editor", content="What: emacs", topic_key="pref/editor", scope="personal"
    )
    assert project["id"] != personal["id"] and personal["scope"] == "personal"


async def test_suggested_topic_keys_are_stable_and_name_the_holder(tools: MemoryToolbox) -> None:
    ask = {"title": "The Auth model of the API", "type": "architecture"}
    first = await tools.call("memory_suggest_topic_key", ask, "s1")
    assert first == {"topic_key": "architecture/auth-model-api", "id": None}
    saved = await save(tools, title="Auth", content="What: JWT", topic_key=first["topic_key"])
    second = await tools.call("memory_suggest_topic_key", ask, "s1")
    assert second == {"topic_key": first["topic_key"], "id": saved["id"]}


async def test_duplicates_are_not_saved_twice(tools: MemoryToolbox) -> None:
    text = "What: the test database is recreated for each test module\nWhy: isolation"
    first = await save(tools, title="Test database per module", content=text, type="pattern")
    exact = await save(
        tools, title="Per-module test database", content=text.upper(), type="pattern"
    )
    near = await save(
        tools,
        title="Test database per module",
        content=text + "\nWhy: isolation and speed",
        type="pattern",
    )
    assert exact == {**exact, "id": first["id"], "action": "duplicate"}
    assert near["id"] == first["id"] and near["action"] == "merged" and near["revision"] == 2
    assert (await tools.call("memory_stats", {}, "s1"))["observations"] == 1


async def test_a_contradicting_decision_supersedes_the_older_one(tools: MemoryToolbox) -> None:
    old = await save(
        tools,
        title="Use Redis for the cache",
        content="What: use Redis for the cache",
        type="decision",
    )
    new = await save(
        tools,
        title="Switch the cache to Memcached",
        content="What: actually, switch the cache to Memcached instead of Redis",
        type="decision",
    )
    unrelated = await save(
        tools, title="Use ruff for linting", content="What: use ruff", type="decision"
    )
    assert new["superseded"] == [old["id"]] and "superseded" not in unrelated
    current = await tools.call("memory_search", {"query": "cache"}, "s1")
    everything = await tools.call("memory_search", {"query": "cache", "all": True}, "s1")
    assert [r["id"] for r in current["results"]] == [new["id"]]
    assert {r["id"] for r in everything["results"]} == {old["id"], new["id"]}
    history = await tools.call("memory_get", {"id": old["id"]}, "s1")
    assert history["superseded_by"] == new["id"]


async def test_notes_that_name_other_things_both_stay(tools: MemoryToolbox) -> None:
    redis = await save(
        tools, title="Redis port", content="What: Redis runs on port 6379 in dev", type="config"
    )
    postgres = await save(
        tools,
        title="Postgres port",
        content="What: Postgres runs on port 5432 in dev",
        type="config",
    )
    assert "superseded" not in postgres and redis["id"] != postgres["id"]
    current = await tools.call("memory_search", {"query": "port in dev"}, "s1")
    assert {r["id"] for r in current["results"]} == {redis["id"], postgres["id"]}


async def test_only_the_latest_progress_note_stays_current(tools: MemoryToolbox) -> None:
    first = await save(tools, title="Progress", content="What: 2 of 5 endpoints", type="progress")
    second = await save(tools, title="Progress now", content="What: 4 of 5 done", type="progress")
    assert second["superseded"] == [first["id"]]
    listed = await tools.call("memory_context", {}, "s1")
    assert [entry["id"] for entry in listed["recent"]] == [second["id"]]


async def test_private_spans_and_secrets_never_reach_the_store_or_export(
    memory: Memory, tools: MemoryToolbox
) -> None:
    saved = await save(
        tools,
        title="Deploy key",
        content=f"What: deploy with <private>hunter2</private> and {SECRET}\nWhere: deploy.sh",
        type="config",
    )
    stored = await memory.observations.get(saved["id"])
    exported = "\n".join(await memory.observations.export_lines())
    # both were written, or the checks below would pass on nothing at all
    assert stored.content.startswith("What: deploy with") and saved["id"] in exported
    for text in (stored.content, exported):
        assert "hunter2" not in text and "abcdefghijklmnop" not in text
    assert stored.files == ("deploy.sh",)


async def test_bad_input_names_the_field_and_loses_nothing(tools: MemoryToolbox) -> None:
    kept = await save(tools, title="Keep me", content="What: kept")
    bad: list[tuple[str, dict[str, Any], str]] = [
        ("memory_save", {"content": "x"}, "title"),
        ("memory_save", {"title": "x" * 201, "content": "x"}, "title"),
        ("memory_save", {"title": "x", "content": "x", "type": "mood"}, "type"),
        ("memory_save", {"title": "x", "content": "x", "scope": "team"}, "scope"),
        ("memory_save", {"title": "x", "content": "x", "topic_key": "Auth Model?"}, "topic_key"),
        ("memory_save", {"title": "x", "content": "y" * 10_000_000}, "content"),
        ("memory_save", {"title": "x", "content": "x", "colour": "red"}, "colour"),
        ("memory_get", {"id": "o000000000000"}, "id"),
        ("memory_get", {"id": "../etc"}, "id"),
        ("memory_update", {"id": kept["id"]}, "memory_update"),
        ("memory_search", {"query": "x", "limit": 500}, "limit"),
        ("memory_nonsense", {}, "memory_nonsense"),
    ]
    for tool, arguments, field in bad:
        with pytest.raises(UsageError) as raised:
            await tools.call(tool, arguments, "s1")
        assert str(raised.value).startswith(field) or field in str(raised.value), raised.value
    with pytest.raises(UnknownObservation):
        await tools.call("memory_delete", {"id": "o000000000000"}, "s1")
    assert (await tools.call("memory_stats", {}, "s1"))["observations"] == 1
    assert (await tools.call("memory_get", {"id": kept["id"]}, "s1"))["title"] == "Keep me"


async def test_update_delete_and_timeline(tools: MemoryToolbox) -> None:
    ids = [
        (await save(tools, title=f"Note {n}", content=f"What: note number {n} about {n}"))["id"]
        for n in range(5)
    ]
    updated = await tools.call("memory_update", {"id": ids[2], "content": "What: rewritten"}, "s1")
    assert updated["revision"] == 2
    around = await tools.call("memory_timeline", {"id": ids[2], "limit": 4}, "s1")
    assert [e["id"] for e in around["before"]] == ids[:2]
    assert [e["id"] for e in around["after"]] == ids[3:5]
    deleted = await tools.call("memory_delete", {"id": ids[0]}, "s1")
    assert deleted["action"] == "deleted"
    with pytest.raises(UnknownObservation):
        await tools.call("memory_get", {"id": ids[0]}, "s1")


# -- session summaries ----------------------------------------------------------------------------
async def work_a_session(memory: Memory) -> SessionReplay:
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.start()
    await session.user("Add rate limiting to the export API")
    await session.user("Rule: never call the billing service from tests.")
    await session.tool("edit", {"filePath": "api/export.py"}, "ok")
    await session.user("TODO: write the upgrade notes")
    return session


async def test_idle_writes_the_session_summary_nobody_asked_for(memory: Memory) -> None:
    assert memory.background is not None
    session = await work_a_session(memory)
    await session.idle()
    assert await memory.background.summarize_pending() == 1
    (summary,) = [o for o in await memory.observations.listed() if o.type == "session_summary"]
    assert summary.title == "Session summary: Add rate limiting to the export API"
    assert "## Instructions\n- never call the billing service from tests" in summary.content
    assert "## Next Steps\n- write the upgrade notes" in summary.content
    assert "## Relevant Files\n- api/export.py" in summary.content
    assert summary.source.name == "auto" and summary.files == ("api/export.py",)
    await session.idle()  # nothing new since: no rewrite
    await memory.background.summarize_pending()
    assert (await memory.observations.get(summary.id)).revision == 1


async def test_compaction_asks_for_the_summary_before_it_happens(memory: Memory) -> None:
    assert memory.background is not None
    session = await work_a_session(memory)
    await memory.compaction_before(session.session_id)
    assert await memory.background.summarize_pending() == 1


async def test_the_agents_own_summary_replaces_the_automatic_one(
    memory: Memory, tools: MemoryToolbox
) -> None:
    assert memory.background is not None
    session = await work_a_session(memory)
    await session.idle()
    await memory.background.summarize_pending()
    written = "## Goal\n- Rate-limit exports\n\n## Accomplished\n- token bucket in api/export.py"
    answer = await tools.call("memory_session_summary", {"content": written}, session.session_id)
    assert (
        answer["action"] == "updated" and answer["title"] == "Session summary: Rate-limit exports"
    )
    await session.user("one more thing")
    await session.idle()
    await memory.background.summarize_pending()
    summary = await memory.observations.get(answer["id"])
    assert summary.content == written and summary.source.name == "agent:test"
    context = await tools.call("memory_context", {}, "later")
    assert context["sessions"][0]["accomplished"] == ["token bucket in api/export.py"]


async def test_old_session_summaries_are_condensed(open_memory: Opener) -> None:
    memory = await open_memory(observations={"summaries_kept": 2})
    tools = MemoryToolbox(memory.observations, host="test")
    for number in range(4):
        content = f"## Goal\n- goal {number}\n\n## Accomplished\n- shipped part {number}"
        await tools.call("memory_session_summary", {"content": content}, f"session-{number}")
    current = await memory.observations.listed(current=True)
    summaries = [o for o in current if o.type == "session_summary"]
    assert sorted(o.title for o in summaries) == [
        "Session summary: Goal 2",
        "Session summary: Goal 3",
    ]
    (condensed,) = [o for o in current if o.topic_key == "session/condensed-history"]
    assert "Goal 0 — shipped part 0" in condensed.content
    assert "Goal 1 — shipped part 1" in condensed.content


class FakeLLM:
    """graphiti-core's LLMClient interface, answering the summary fields."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def generate_response(self, messages: list[Any], **kwargs: Any) -> dict[str, Any]:
        self.prompts.append("\n".join(m.content for m in messages))
        return {"goal": ["Rate-limit the export API"], "next_steps": ["Write upgrade notes"]}


async def test_a_configured_llm_writes_the_summary_off_the_hot_path(memory: Memory) -> None:
    from plait.adapters.backends.summary_llm import LLMSummaryWriter

    assert memory.background is not None
    llm = FakeLLM()
    memory.observations.summary_writer = LLMSummaryWriter(llm)
    session = await work_a_session(memory)
    await session.idle()
    await memory.background.summarize_pending()
    (summary,) = [o for o in await memory.observations.listed() if o.type == "session_summary"]
    assert (
        summary.content
        == "## Goal\n- Rate-limit the export API\n\n## Next Steps\n- Write upgrade notes"
    )
    assert "api/export.py" in llm.prompts[0]  # the events went to the LLM, redacted


# -- seeding and sharing --------------------------------------------------------------------------
def write_project(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "README.md").write_text(
        "# Billing\n\n[![ci](badge.svg)](x)\n\nBilling turns usage into invoices for the shop.\n"
    )
    (path / "pyproject.toml").write_text(
        '[project]\nname = "billing"\nrequires-python = ">=3.12"\n'
        'dependencies = ["fastapi>=0.110", "sqlalchemy"]\n[tool.pytest.ini_options]\n'
    )
    (path / "Makefile").write_text(
        ".PHONY: test\ntest:\n\tuv run pytest -q\nlint:\n\truff check .\n"
    )
    (path / ".github" / "workflows").mkdir(parents=True)
    (path / ".github" / "workflows" / "ci.yml").write_text(
        "jobs:\n  test:\n    steps:\n      - run: uv sync\n      - run: |\n          make test\n"
    )
    (path / "compose.yaml").write_text("services:\n  db:\n    image: postgres:16\n")
    return path


async def test_a_first_session_is_seeded_from_the_project_files(
    open_memory: Opener, tmp_path: Path
) -> None:
    memory = await open_memory(write_project(tmp_path / "billing"))
    seeds = {o.topic_key: o for o in await memory.observations.listed()}
    assert set(seeds) == {
        "project/brief",
        "project/stack",
        "project/build-and-test",
        "project/services",
    }
    assert seeds["project/brief"].content.startswith("What: Billing turns usage into invoices")
    assert "fastapi" in seeds["project/stack"].content
    assert "make test (runs uv run pytest -q)" in seeds["project/build-and-test"].content
    assert "db (postgres:16)" in seeds["project/services"].content
    brief = await memory.observations.recall_hits(memory.group_id, "anything", 4)
    assert brief[0].text.startswith("Project brief: billing")
    await memory.observations.delete(seeds["project/brief"].id)
    await memory.aclose()
    again = await open_memory(tmp_path / "billing")
    assert len(await again.observations.listed()) == 3  # seeded once, a forgotten seed stays gone


async def test_export_is_stable_and_import_is_idempotent(
    open_memory: Opener, tmp_path: Path
) -> None:
    source = await open_memory(tmp_path / "source")
    tools = MemoryToolbox(source.observations, host="test")
    await save(tools, title="Use uv", content="What: uv for everything", type="decision")
    await save(tools, title="Dark mode", content="What: dark", type="preference", scope="personal")
    first = await source.observations.export_lines()
    assert first == await source.observations.export_lines()
    project_only = await source.observations.export_lines("project")
    assert len(first) == 2 and len(project_only) == 1
    assert all(json.loads(line)["scope"] == "project" for line in project_only)

    personal = next(line for line in first if json.loads(line)["scope"] == "personal")
    target = await open_memory(tmp_path / "target")  # same user: personal memory is there already
    broken = [project_only[0], "{not json", '{"id": "o1"}', "", personal]
    report = await target.observations.import_lines(broken)
    assert (report.added, report.unchanged, len(report.errors)) == (1, 1, 2)
    assert report.errors[0].startswith("line 2:") and report.errors[1].startswith("line 3:")
    again = await target.observations.import_lines(first)
    assert (again.added, again.updated, again.unchanged) == (0, 0, 2)
    assert await target.observations.export_lines() == first


async def test_import_refuses_impossible_revisions_and_a_dangling_successor(
    open_memory: Opener, tmp_path: Path
) -> None:
    source = await open_memory(tmp_path / "source")
    tools = MemoryToolbox(source.observations, host="test")
    await save(tools, title="Use uv", content="What: uv for everything", type="decision")
    line = json.loads((await source.observations.export_lines())[0])
    target = await open_memory(tmp_path / "target")
    lines = [
        json.dumps({**line, "revision": -5}),
        json.dumps({**line, "revision": 2**70}),
        json.dumps({**line, "superseded_by": "o0123456789ab"}),
    ]
    report = await target.observations.import_lines(lines)
    assert report.added == 0 and len(report.errors) == 3, report
    assert report.errors[0].startswith("line 1: revision")
    assert report.errors[1].startswith("line 2: revision")
    assert "superseded_by 'o0123456789ab'" in report.errors[2]
    assert await target.observations.listed() == [] or all(
        o.id != line["id"] for o in await target.observations.listed()
    )
    successor = {**line, "id": "o111122223333", "topic_key": "", "title": "Use pip"}
    chained = [json.dumps({**line, "superseded_by": successor["id"]}), json.dumps(successor)]
    assert (await target.observations.import_lines(chained)).errors == []


async def test_a_committed_memory_file_is_imported_when_it_changes(
    open_memory: Opener, tmp_path: Path
) -> None:
    teammate = await open_memory(tmp_path / "theirs")
    tools = MemoryToolbox(teammate.observations, host="test")
    saved = await save(tools, title="Money is Decimal", content="What: never float", type="pattern")
    lines = await teammate.observations.export_lines("project")
    clone = tmp_path / "clone"
    (clone / ".plait").mkdir(parents=True)
    (clone / ".plait" / "memory.jsonl").write_text("\n".join(lines) + "\n")
    mine = await open_memory(clone)
    assert (await mine.observations.get(saved["id"])).title == "Money is Decimal"
    await mine.observations.delete(saved["id"])
    assert await mine.observations.sync_shared_file() is None  # unchanged file: not read again
    (clone / ".plait" / "memory.jsonl").write_text("\n".join(lines) + "\n\n")
    report = await mine.observations.sync_shared_file()
    assert report is not None and report.skipped == 1  # forgotten here, so it stays forgotten


# -- the envelope -------------------------------------------------------------------------------
async def test_observations_reach_the_envelope_through_the_cached_recall(
    open_memory: Opener, tmp_path: Path
) -> None:
    memory = await open_memory(write_project(tmp_path / "shop"))
    assert memory.background is not None
    tools = MemoryToolbox(memory.observations, host="test")
    await save(
        tools,
        title="Invoices are numbered per tenant",
        content="What: invoice numbers restart at 1 for each tenant",
        type="decision",
    )
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.start()
    await memory.background.refresh(
        memory.group_id, session.session_id, "how are invoices numbered"
    )
    envelope = await session.user("How are invoices numbered?")
    assert "<persistent_memory" in envelope
    assert "Invoices are numbered per tenant" in envelope
    assert "Project brief: billing" in envelope
    assert "make test (runs uv run pytest -q)" in envelope  # the seeded commands, not their title
    assert len(envelope.encode()) <= memory.settings.envelope.budget_bytes


async def test_a_first_session_carries_the_brief_before_any_refresh(
    open_memory: Opener, tmp_path: Path
) -> None:
    """Opening primes the project's recall with what seeding found: the first model call of the
    first session carries the brief with no background refresh run (before, it had none)."""
    memory = await open_memory(write_project(tmp_path / "ledger"))
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.start()
    envelope = await session.user("We decided to keep invoices immutable.")
    assert "Project brief: billing" in envelope


async def test_the_background_writes_the_summary_by_itself(
    tmp_path: Path, redis_url: str, group_prefix: str
) -> None:
    project = tmp_path / "served"
    project.mkdir()
    async with Memory.open(
        project,
        tmp_path / "data",
        redis={"url": redis_url},
        graphiti={"group_id_prefix": group_prefix},
        hooks={"timeout_ms": 20_000, "in_process_timeout_ms": 20_000},
    ) as memory:  # start_background: this process runs the loops, as plait serve does
        session = await work_a_session(memory)
        await session.idle()
        for _ in range(400):
            listed = await memory.observations.listed()
            if any(o.type == "session_summary" for o in listed):
                break
            await asyncio.sleep(0.05)
        (summary,) = [o for o in listed if o.type == "session_summary"]
    assert summary.topic_key == f"session/{session.session_id.lower().replace('_', '-')}"
