"""plait's MCP server through a real MCP client session, on a real Memory (embedded FalkorDB)."""

from __future__ import annotations

import json
import os
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from plait import EventKind, Memory, SessionEvent, Settings
from plait.adapters.hosts.mcp import build_server
from plait.nodes.sessions import find_root

SESSION_TOOLS = {
    "session_execute",
    "session_execute_file",
    "session_batch_execute",
    "session_index",
    "session_search",
    "session_fetch_and_index",
    "session_stats",
    "session_doctor",
}
MEMORY_TOOLS = {"memory_remember", "memory_recall"}
TOOLS = SESSION_TOOLS | MEMORY_TOOLS


@pytest.fixture
async def memory(tmp_path: Path, redis_url: str) -> AsyncIterator[Memory]:
    settings = Settings.load(tmp_path, redis={"url": redis_url}, data_dir=tmp_path / "data")
    async with Memory.open(tmp_path, settings=settings, start_background=False) as opened:
        yield opened


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    path = tmp_path / "tree"
    path.mkdir()
    (path / "notes.md").write_text("# Setup\n\nInstall python and run the tests.\n")
    (tmp_path / "outside.txt").write_text("secret outside the tree")
    return path


@pytest.fixture
def server(memory: Memory, worktree: Path, tmp_path: Path) -> MCPServer[Any]:
    """The server under test; each test connects a client in its own task (anyio scopes)."""
    return build_server(memory, worktree=worktree, data_dir=tmp_path / "data")


@pytest.fixture
def session() -> str:
    return f"mcp-test-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def web() -> Iterator[str]:
    """A local HTTP server (127.0.0.1) with an HTML page and a JSON document."""
    pages = {
        "/page": (
            "text/html",
            "<html><body><h1>Release notes</h1><p>Frobnicator fixed.</p>"
            "<script>ignored()</script></body></html>",
        ),
        "/data": ("application/json", json.dumps({"project": "plait", "tags": ["memory"]})),
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            content_type, body = pages.get(self.path, ("text/plain", "missing"))
            self.send_response(200 if self.path in pages else 404)
            self.send_header("content-type", content_type)
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def call(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    return text


async def events_of(memory: Memory, session: str) -> list[Any]:
    return await memory.store.read_events(await find_root(memory.store, session))


async def test_mcp_server_lists_the_session_tools(server: MCPServer[Any]) -> None:
    async with Client(server, mode="legacy") as client:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        execute = next(tool for tool in listed.tools if tool.name == "session_execute")
        assert set(execute.input_schema["required"]) == {"command"}


async def test_mcp_execute_reports_exit_and_records_error_events(
    server: MCPServer[Any], memory: Memory, session: str
) -> None:
    async with Client(server, mode="legacy") as client:
        answer = await call(
            client, "session_execute", command="echo out; echo err >&2; false", session_id=session
        )
        assert "[exit 1]" in answer and "out" in answer and "err" in answer
        await call(client, "session_execute", command="true", session_id=session)
        events = await events_of(memory, session)
        errors = [e for e in events if e.kind is EventKind.ERROR]
        assert [e.key for e in errors] == ["cmd:echo"]
        assert any(e.kind is EventKind.TOOL_RESULT and "echo out" in e.summary for e in events)
        assert any(e.kind is EventKind.ERROR_RESOLVED and e.key == "cmd:true" for e in events)


async def test_mcp_large_output_goes_to_the_corpus_with_a_reference(
    server: MCPServer[Any], memory: Memory, session: str
) -> None:
    async with Client(server, mode="legacy") as client:
        answer = await call(
            client,
            "session_execute",
            command="for i in $(seq 1 3000); do echo line-$i; done",
            session_id=session,
        )
        assert len(answer.encode()) <= 8192
        assert "corpus:exec:" in answer and "session_search" in answer
        assert "line-1\n" in answer and "line-3000" in answer and "line-1500\n" not in answer
        found = await call(client, "session_search", query="line-1500", session_id=session)
        assert "line-1500" in found and "corpus:exec:" in found
        reference = answer.split("indexed as ")[1].split(" — ")[0]
        first = await call(client, "session_search", query=reference, session_id=session)
        assert first.startswith("1 result(s)") and "line-1\n" in first
        stats = await call(client, "session_stats", session_id=session)
        assert "exec:for i in" in stats and "events in the session log:" in stats


async def test_mcp_timeout_kills_and_keeps_partial_output(
    server: MCPServer[Any], memory: Memory, session: str
) -> None:
    async with Client(server, mode="legacy") as client:
        answer = await call(
            client,
            "session_execute",
            command="echo started; sleep 30; echo never",
            timeout=0.5,
            session_id=session,
        )
        assert "killed at its timeout" in answer
        output = answer.split("]\n", 1)[1]
        assert "started" in output and "never" not in output
        events = await events_of(memory, session)
        assert any(e.kind is EventKind.ERROR and e.key == "cmd:echo" for e in events)


async def test_mcp_paths_outside_the_worktree_are_refused(
    server: MCPServer[Any], worktree: Path
) -> None:
    async with Client(server, mode="legacy") as client:
        (worktree / "escape").symlink_to(worktree.parent / "outside.txt")
        for tool, arguments in [
            ("session_execute_file", {"path": "../outside.txt"}),
            ("session_execute_file", {"path": "escape"}),
            ("session_index", {"path": "/etc/hostname"}),
            ("session_index", {"path": "escape"}),
        ]:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, (tool, arguments)
            assert "outside the worktree" in result.content[0].text  # type: ignore[union-attr]


async def test_mcp_execute_file_and_index_path_record_file_reads(
    server: MCPServer[Any], memory: Memory, session: str
) -> None:
    async with Client(server, mode="legacy") as client:
        answer = await call(
            client, "session_execute_file", path="notes.md", command="wc -l", session_id=session
        )
        assert "[exit 0]" in answer and "3" in answer
        indexed = await call(client, "session_index", path="notes.md", session_id=session)
        assert "corpus:notes.md#0" in indexed
        found = await call(client, "session_search", query="pyhton", session_id=session)
        assert "corpus:notes.md#0" in found and "python" in found
        events = await events_of(memory, session)
        assert any(e.kind is EventKind.FILE_READ and e.refs == ("notes.md",) for e in events)
        assert any(e.kind is EventKind.DISCOVERY and "notes.md" in e.summary for e in events)


async def test_mcp_index_search_stemming_typos_and_replace(
    server: MCPServer[Any], session: str
) -> None:
    async with Client(server, mode="legacy") as client:
        await call(
            client,
            "session_index",
            content="We run the python suite nightly.",
            source="ci",
            session_id=session,
        )
        assert "corpus:ci#0" in await call(
            client, "session_search", query="running", session_id=session
        )
        assert "corpus:ci#0" in await call(
            client, "session_search", query="pyhton", session_id=session
        )
        replaced = await call(
            client, "session_index", content="Only cats here.", source="ci", session_id=session
        )
        assert "replaced 1" in replaced
        assert "no results" in await call(
            client, "session_search", query="python", session_id=session
        )
        other = f"{session}-other"
        assert "no results" in await call(client, "session_search", query="cats", session_id=other)


async def test_mcp_batch_runs_commands_and_searches_in_order(
    server: MCPServer[Any], session: str
) -> None:
    async with Client(server, mode="legacy") as client:
        answer = await call(
            client,
            "session_batch_execute",
            session_id=session,
            steps=[
                {"command": "echo zebra-stripes > found.txt && cat found.txt"},
                {"search": "zebra"},
                {"command": "exit 2"},
            ],
        )
        first, second, third = (answer.index(f"## step {n}") for n in (1, 2, 3))
        assert first < second < third
        assert "zebra-stripes" in answer[first:second]
        assert "[exit 2]" in answer[third:]
        bad = await client.call_tool(
            "session_batch_execute", {"steps": [{"command": "a", "search": "b"}]}
        )
        assert bad.is_error


async def test_mcp_fetch_and_index_converts_html_and_json(
    server: MCPServer[Any], memory: Memory, session: str, web: str
) -> None:
    async with Client(server, mode="legacy") as client:
        page = await call(client, "session_fetch_and_index", url=f"{web}/page", session_id=session)
        assert "# Release notes" in page and "ignored()" not in page
        data = await call(client, "session_fetch_and_index", url=f"{web}/data", session_id=session)
        assert '"project": "plait"' in data and '\n  "tags"' in data
        found = await call(client, "session_search", query="frobnicator", session_id=session)
        assert f"corpus:{web}/page#0" in found
        missing = await client.call_tool("session_fetch_and_index", {"url": f"{web}/nothing"})
        assert missing.is_error
        events = await events_of(memory, session)
        assert sum(e.kind is EventKind.DISCOVERY for e in events) == 2


async def test_mcp_doctor_reports_components(server: MCPServer[Any]) -> None:
    async with Client(server, mode="legacy") as client:
        report = await call(client, "session_doctor")
        assert "hot tier: ok" in report and "corpus: ok" in report


async def test_mcp_session_from_environment(
    server: MCPServer[Any], memory: Memory, monkeypatch: pytest.MonkeyPatch, session: str
) -> None:
    async with Client(server, mode="legacy") as client:
        monkeypatch.setenv("PLAIT_SESSION_ID", session)
        await call(client, "session_execute", command="echo from-env")
        events = await events_of(memory, session)
        assert any("echo from-env" in e.summary for e in events)


async def test_mcp_background_child_does_not_hold_the_answer(server: MCPServer[Any]) -> None:
    async with Client(server, mode="legacy") as client:
        answer = await call(
            client, "session_execute", command="(sleep 30 &); echo done", timeout=20
        )
        assert "[exit 0]" in answer and "done" in answer and "killed" not in answer


async def test_mcp_every_answer_fits_the_budget(server: MCPServer[Any], session: str) -> None:
    big = "\n\n".join(f"## Section {n}\n\n" + "needle haystack " * 120 for n in range(30))
    async with Client(server, mode="legacy") as client:
        await call(client, "session_index", content=big, source="big", session_id=session)
        answers = [
            await call(client, "session_search", query="needle", limit=20, session_id=session),
            await call(
                client,
                "session_batch_execute",
                session_id=session,
                steps=[{"command": "seq 1 20000"}, {"search": "needle"}, {"command": "seq 5 9000"}],
            ),
            await call(
                client, "session_execute_file", path="notes.md", command="yes | head -c 50000"
            ),
        ]
    for answer in answers:
        assert len(answer.encode()) <= 8192
    assert answers[0].count("corpus:big#") == 20


async def test_mcp_memory_tools_remember_then_recall_in_another_session(
    server: MCPServer[Any], memory: Memory, session: str
) -> None:
    assert memory.background is not None
    decision = "Use Redis Streams with a consumer group for the drain queue"
    async with Client(server, mode="legacy") as client:
        saved = await call(
            client, "memory_remember", text=decision, kind="decision", session_id=session
        )
        assert saved == f"Remembered (decision): {decision}"
        # recallable at once: nothing has drained yet, the search reads the queue too
        assert await memory.store.queue_depth() >= 1
        found = await call(
            client, "memory_recall", query="what does the drain queue use?", session_id="later"
        )
        nothing = await call(client, "memory_recall", query="zebra xylophone", session_id="later")
        blank = await client.call_tool("memory_recall", {"query": ""})
        wrong = await client.call_tool("memory_remember", {"text": "x", "kind": "mood"})
    assert decision in found and len(found.encode()) <= 8192
    assert [e.source_hook for e in await events_of(memory, session)] == ["mcp.remember"]
    assert nothing == "No memories found."
    assert blank.is_error and wrong.is_error  # bad input: a clear error, nothing stored


async def test_mcp_recording_failure_fails_open(tmp_path: Path) -> None:
    class BrokenRecorder:
        async def record(self, session_id: str, events: Any) -> list[Any]:
            raise ConnectionError("hot tier down")

    server = build_server(BrokenRecorder(), worktree=tmp_path, data_dir=tmp_path / "data")
    async with Client(server, mode="legacy") as client:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == SESSION_TOOLS  # no long-term memory here
        answer = await call(client, "session_execute", command="echo still-works")
        stats = await call(client, "session_stats")
    assert "still-works" in answer
    assert "events recorded by this server: 0" in stats


class ListRecorder:
    """plait's recorder protocol, collecting what the tools record."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[SessionEvent]]] = []

    async def record(self, session_id: str, events: list[SessionEvent]) -> list[SessionEvent]:
        self.calls.append((session_id, list(events)))
        return events

    def kinds(self) -> list[EventKind]:
        return [event.kind for _, events in self.calls for event in events]


async def test_mcp_each_tool_records_its_events_through_the_recorder(
    worktree: Path, tmp_path: Path, session: str, web: str
) -> None:
    recorder = ListRecorder()
    server = build_server(recorder, worktree=worktree, data_dir=tmp_path / "data")
    async with Client(server) as client:  # the default (auto) mode, not only the legacy handshake
        await call(client, "session_execute", command="exit 3", session_id=session)
        assert recorder.kinds()[-1] is EventKind.TOOL_RESULT
        assert EventKind.ERROR in recorder.kinds()
        recorder.calls.clear()
        await call(client, "session_execute_file", path="notes.md", session_id=session)
        assert recorder.kinds()[0] is EventKind.FILE_READ
        recorder.calls.clear()
        await call(client, "session_index", content="alpha", source="s", session_id=session)
        await call(client, "session_fetch_and_index", url=f"{web}/data", session_id=session)
        assert recorder.kinds() == [EventKind.DISCOVERY, EventKind.DISCOVERY]
        recorder.calls.clear()
        await call(client, "session_search", query="alpha", session_id=session)
        assert recorder.kinds() == [EventKind.TOOL_RESULT]
    assert {session_id for session_id, _ in recorder.calls} == {session}


async def test_mcp_plait_mcp_serves_the_tools_over_stdio(
    tmp_path: Path, worktree: Path, redis_url: str, session: str
) -> None:
    data_dir = tmp_path / "stdio-data"
    command = Path(sys.executable).parent / "plait"
    parameters = StdioServerParameters(
        command=str(command),
        args=["mcp", "--project", str(worktree), "--data-dir", str(data_dir)],
        env={"PLAIT_REDIS__URL": redis_url, "PATH": os.environ["PATH"]},
        cwd=worktree,
    )
    async with Client(parameters, mode="legacy") as client:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        answer = await call(
            client, "session_execute", command="echo over-stdio; pwd", session_id=session
        )
        big = await call(client, "session_execute", command="seq 1 5000", session_id=session)
    assert "over-stdio" in answer and str(worktree.resolve()) in answer
    assert len(big.encode()) <= 8192 and "corpus:exec:seq 1 5000#0" in big
    assert (data_dir / "corpus.sqlite3").exists()
    settings = Settings.load(worktree, redis={"url": redis_url}, data_dir=data_dir)
    async with Memory.open(worktree, settings=settings, start_background=False) as memory:
        events = await events_of(memory, session)
    assert any("echo over-stdio" in event.summary for event in events)
