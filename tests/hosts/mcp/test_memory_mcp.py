"""The memory tools as an agent drives them: ``plait mcp`` over stdio, and in process."""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from support.command_hooks import running
from support.local_web import free_port

from plait import Memory
from plait.adapters.hosts.http.service import read_service_file
from plait.adapters.hosts.mcp import build_server
from plait.adapters.hosts.mcp.memory_tools import MEMORY_TOOL_SPECS
from plait.observation_tools import TOOL_NAMES

# What the ten memory tools may cost a host on every model request (tools/list, compact JSON).
MEMORY_SCHEMA_BUDGET_BYTES = 2100


def listed_bytes(tool: Any) -> int:
    data = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return len(json.dumps(data, separators=(",", ":")).encode())


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    answer = json.loads(text)
    assert result.structured_content == answer  # JSON text and structured content agree
    return answer


async def refusal(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return result.content[0].text  # type: ignore[union-attr]


@pytest.fixture
async def memory(open_memory: Callable[..., Any]) -> AsyncIterator[Memory]:
    async with open_memory("tree") as opened:
        yield opened


@pytest.fixture(autouse=True)
def tree(tmp_path: Path) -> Path:
    path = tmp_path / "tree"
    path.mkdir()
    return path


async def test_memory_tools_are_listed_lean(memory: Memory, tmp_path: Path) -> None:
    server = build_server(memory, worktree=tmp_path / "tree", data_dir=tmp_path / "data")
    async with Client(server, mode="legacy") as client:
        listed = {t.name: t for t in (await client.list_tools()).tools if t.name in TOOL_NAMES}
    assert tuple(listed) == TOOL_NAMES
    for spec in MEMORY_TOOL_SPECS:
        assert listed[spec.name].input_schema == spec.input_schema()
        assert "session_id" not in listed[spec.name].input_schema["properties"]
    total = sum(listed_bytes(tool) for tool in listed.values())
    print(f"memory tools: {total} bytes of schema")
    assert total <= MEMORY_SCHEMA_BUDGET_BYTES


async def test_an_agent_drives_every_memory_tool_over_stdio(tmp_path: Path, redis_url: str) -> None:
    tree = tmp_path / "tree"
    (tree / "README.md").write_text("# Ledger\n\nLedger keeps double-entry accounts.\n")
    parameters = StdioServerParameters(
        command=str(Path(sys.executable).parent / "plait"),
        args=["mcp", "--project", str(tree), "--data-dir", str(tmp_path / "data")],
        env={
            "PLAIT_REDIS__URL": redis_url,
            "PLAIT_GRAPHITI__GROUP_ID_PREFIX": f"t{uuid.uuid4().hex[:10]}",
            "PLAIT_SESSION_ID": "agent-session-1",
            "PATH": os.environ["PATH"],
        },
        cwd=tree,
    )
    async with Client(parameters, mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert set(TOOL_NAMES) <= names
        assert not {"memory_remember", "memory_recall"} & names  # replaced

        context = await call(client, "memory_context")
        assert context["brief"].startswith("Project brief: Ledger")  # seeded on first open
        key = await call(
            client, "memory_suggest_topic_key", title="Ledger rounding", type="decision"
        )
        assert key == {"topic_key": "decision/ledger-rounding", "id": None}
        saved = await call(
            client,
            "memory_save",
            title="Round half to even",
            content="What: banker's rounding\nWhy: audit rules\nWhere: ledger/money.py",
            type="decision",
            topic_key=key["topic_key"],
        )
        found = await call(client, "memory_search", query="rounding")
        assert found["results"][0]["id"] == saved["id"] and not found["truncated"]
        revised = await call(
            client,
            "memory_save",
            title="Round half to even",
            content="What: banker's rounding, 4 decimals\nWhere: ledger/money.py",
            type="decision",
            topic_key=key["topic_key"],
        )
        assert (revised["id"], revised["revision"]) == (saved["id"], 2)
        updated = await call(client, "memory_update", id=saved["id"], title="Round half even")
        whole = await call(client, "memory_get", id=saved["id"])
        assert updated["revision"] == 3 == whole["revision"] and len(whole["revisions"]) == 2
        assert whole["files"] == ["ledger/money.py"]
        assert whole["source"] == {"kind": "tool", "name": "mcp", "session_id": "agent-session-1"}
        timeline = await call(client, "memory_timeline", id=saved["id"])
        assert timeline["anchor"]["id"] == saved["id"] and timeline["before"]
        summary = await call(
            client,
            "memory_session_summary",
            content="## Goal\n- Fix rounding\n\n## Next Steps\n- Backfill old entries",
        )
        assert summary["topic_key"] == "session/agent-session-1"
        stats = await call(client, "memory_stats")
        assert stats["by_type"]["session_summary"] == 1 and stats["revisions"] == 2
        deleted = await call(client, "memory_delete", id=saved["id"])
        assert deleted["action"] == "deleted"

        assert "id: no observation" in await refusal(client, "memory_get", id=saved["id"])
        assert "type:" in await refusal(client, "memory_save", title="t", content="c", type="x")
        assert "topic_key:" in await refusal(
            client, "memory_save", title="t", content="c", topic_key="no spaces please"
        )
        assert "content:" in await refusal(client, "memory_save", title="t", content="x" * 40_000)
        assert "title: missing" in await refusal(client, "memory_save", content="c")
        context = await call(client, "memory_context")
    assert context["sessions"][0]["next_steps"] == ["Backfill old entries"]


def test_the_catalog_lists_every_memory_tool_in_two_groups() -> None:
    from plait.adapters.hosts.mcp.memory_tools import MEMORY_TOOL_SPECS

    assert {spec.name for spec in MEMORY_TOOL_SPECS} == set(TOOL_NAMES)
    core = [s.name for s in MEMORY_TOOL_SPECS if s.group == "memory"]
    assert core == ["memory_save", "memory_search", "memory_get", "memory_context"]


async def test_session_forget_takes_captured_events_out_of_the_envelope(
    memory: Memory, tmp_path: Path
) -> None:
    await memory.user_turn("ses_m", "We decided to host the docs on the quoll server.")
    await memory.user_turn("ses_m", "We decided to build the docs with mkdocs.")
    server = build_server(memory, worktree=tmp_path / "tree", data_dir=tmp_path / "data")
    async with Client(server, mode="legacy") as client:
        looked = await client.call_tool("session_forget", {"match": "quoll", "dry_run": True})
        assert "quoll" in await memory.envelope("ses_m")
        done = await client.call_tool("session_forget", {"match": "quoll"})
        bad = await refusal(client, "session_forget", before="yesterday")
        none = await refusal(client, "session_forget")
    assert "would forget 2 event(s)" in looked.content[0].text  # type: ignore[union-attr]
    assert "forgot 2 event(s)" in done.content[0].text  # type: ignore[union-attr]
    assert "not an ISO 8601" in bad and "say what to forget" in none
    envelope = await memory.envelope("ses_m")
    assert "quoll" not in envelope and "mkdocs" in envelope


async def test_with_plait_url_the_memory_tools_run_on_that_service(
    tmp_path: Path, redis_url: str
) -> None:
    """A team member's ``plait mcp`` (``PLAIT_URL``, their token): the memory tools run on the
    shared service, so a save lands in the team's memory, not in one this machine opens (its
    Redis is unreachable here); only the memory tools are offered; a wrong token or a service
    that does not answer is a tool error that says so. Before, ``plait mcp`` opened the
    project's memory on the member's machine whatever ``PLAIT_URL`` said."""
    async with running(tmp_path, redis_url) as memory:
        project, data = tmp_path / "project", tmp_path / "data"
        live = read_service_file(data, project)
        assert live is not None
        token = (data / "token").read_text().strip()

        def member(url: str, token: str) -> StdioServerParameters:
            return StdioServerParameters(
                command=str(Path(sys.executable).parent / "plait"),
                args=["mcp", "--project", str(tmp_path / "tree")],
                env={
                    "PATH": os.environ["PATH"],
                    "PLAIT_DATA_DIR": str(tmp_path / "member-data"),
                    "PLAIT_REDIS__URL": "redis://127.0.0.1:1",  # nothing local to open
                    "PLAIT_URL": url,
                    "PLAIT_TOKEN": token,
                    "PLAIT_MCP__REMOTE": "always",  # the service is on this machine here
                },
                cwd=tmp_path / "tree",
            )

        async with Client(member(live.url, token), mode="legacy") as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            assert listed == set(TOOL_NAMES)
            saved = await call(
                client,
                "memory_save",
                title="Ledger rounding",
                content="We round ledger amounts half-even.",
                type="decision",
            )
            found = await call(client, "memory_search", query="ledger rounding")
            assert found["results"][0]["id"] == saved["id"]
            bad = await refusal(client, "memory_get", id="obs_nonexistent")
            assert "obs_nonexistent" in bad
        assert (await memory.observations.get(saved["id"])).title == "Ledger rounding"
        async with Client(member(live.url, "not-the-token"), mode="legacy") as client:
            assert "refused the token" in await refusal(client, "memory_search", query="ledger")
        dead = f"http://127.0.0.1:{free_port()}"
        async with Client(member(dead, token), mode="legacy") as client:
            assert "nothing was done" in await refusal(
                client, "memory_save", title="x", content="y"
            )


def test_plait_url_on_this_machine_keeps_the_tools_here_unless_asked() -> None:
    """``mcp.remote = auto``: a service on this machine shares its memory and the session tools
    need it here; one on another machine runs the memory tools."""
    from plait.adapters.hosts.mcp.stdio import remote_service

    assert not remote_service("auto", "http://127.0.0.1:4000, http://localhost:4001")
    assert remote_service("auto", "http://127.0.0.1:4000,https://plait.team.example:8443/p")
    assert remote_service("always", "http://127.0.0.1:4000")
    assert not remote_service("never", "https://plait.team.example")
    assert not remote_service("always", " ")
