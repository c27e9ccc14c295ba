"""plait's MCP server through a real MCP client session, on a real Memory (embedded FalkorDB)."""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer
from support.local_web import serving

from plait import ConfigError, EventKind, Memory, SessionEvent, Settings
from plait.adapters.hosts.mcp import build_server, catalog
from plait.nodes.sessions import find_root
from plait.observation_tools import TOOL_NAMES

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
MEMORY_TOOLS = set(TOOL_NAMES)  # the memory tools' list is checked in test_memory_mcp
TOOLS = SESSION_TOOLS | MEMORY_TOOLS | {"session_forget"}  # session_forget: over a Memory
REPORT_TOOLS = {"session_stats", "session_doctor", "session_forget"}
MORE_TOOLS = {"session_execute_file", "session_batch_execute", "session_index"}
DEFAULT_TOOLS = TOOLS - REPORT_TOOLS - MORE_TOOLS


@pytest.fixture
async def memory(tmp_path: Path, redis_url: str) -> AsyncIterator[Memory]:
    settings = Settings.load(
        tmp_path,
        redis={"url": redis_url},
        data_dir=tmp_path / "data",
        mcp={"fetch_allow_hosts": ["127.0.0.1"]},  # the local web server below
    )
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
        "/to-metadata": ("redirect", "http://169.254.169.254/latest/meta-data/"),
        "/to-localhost": ("redirect", "http://localhost:9/admin"),
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
            if content_type == "redirect":
                self.send_response(302)
                self.send_header("location", body)
                self.end_headers()
                return
            self.send_response(200 if self.path in pages else 404)
            self.send_header("content-type", content_type)
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: Any) -> None:
            pass

    with serving(Handler) as port:
        yield f"http://127.0.0.1:{port}"


async def call(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    return text


async def events_of(memory: Memory, session: str) -> list[Any]:
    return await memory.backends.store.read_events(await find_root(memory.backends.store, session))


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
        assert [e.key.split("|")[0] for e in errors] == ["cmd:echo"]
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
        assert any(e.kind is EventKind.ERROR and e.key.startswith("cmd:echo|") for e in events)


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


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:{port}/page", "loopback"),
        ("http://2130706433:{port}/page", "loopback"),
        ("http://0.0.0.0:{port}/page", "0.0.0.0"),
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://[::ffff:10.0.0.1]/", "private"),
        ("http://user:hunter2secret@10.1.2.3/x", "private"),
        ("file:///etc/passwd", "only http and https"),
    ],
)
async def test_mcp_fetch_refuses_local_and_metadata_addresses(
    tmp_path: Path, worktree: Path, session: str, web: str, url: str, why: str
) -> None:
    recorder = ListRecorder()
    server = build_server(recorder, worktree=worktree, data_dir=tmp_path / "data")
    target = url.format(port=web.rpartition(":")[2])
    async with Client(server, mode="legacy") as client:
        refused = await client.call_tool("session_fetch_and_index", {"url": target})
        stats = await call(client, "session_stats", session_id=session)
    text = refused.content[0].text  # type: ignore[union-attr]
    assert refused.is_error and "refusing to fetch" in text and why in text, text
    assert "hunter2secret" not in text
    assert "0 sources" in stats and recorder.calls == []


async def test_mcp_fetch_checks_every_redirect(
    server: MCPServer[Any], session: str, web: str
) -> None:
    async with Client(server, mode="legacy") as client:
        for path, why in (("/to-metadata", "metadata"), ("/to-localhost", "loopback")):
            refused = await client.call_tool(
                "session_fetch_and_index", {"url": f"{web}{path}", "session_id": session}
            )
            text = refused.content[0].text  # type: ignore[union-attr]
            assert refused.is_error and why in text and "mcp.fetch_allow_hosts" in text, text


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


async def test_mcp_memory_save_is_searchable_at_once_and_drains_to_the_graph(
    server: MCPServer[Any], memory: Memory, session: str
) -> None:
    assert memory.background is not None
    decision = "Use Redis Streams with a consumer group for the drain queue"
    async with Client(server, mode="legacy") as client:
        saved = json.loads(
            await call(
                client,
                "memory_save",
                title=decision,
                content=f"What: {decision}\nWhy: at-least-once delivery",
                type="decision",
                session_id=session,
            )
        )
        found = json.loads(await call(client, "memory_search", query="drain queue redis"))
        nothing = json.loads(await call(client, "memory_search", query="zebra xylophone"))
        blank = await client.call_tool("memory_search", {"query": ""})
        wrong = await client.call_tool(
            "memory_save", {"title": "x", "content": "y", "type": "mood"}
        )
    assert [hit["id"] for hit in found["results"]] == [saved["id"]]
    assert nothing["results"] == []
    assert blank.is_error and "query" in blank.content[0].text  # type: ignore[union-attr]
    assert wrong.is_error and "type" in wrong.content[0].text  # type: ignore[union-attr]
    assert (await memory.background.drain()).written >= 1
    recalled = await memory.search("what does the drain queue use?")
    assert any("Redis Streams" in hit.text for hit in recalled)


async def test_mcp_recording_failure_fails_open(tmp_path: Path) -> None:
    class BrokenRecorder(ListRecorder):
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

    async def root_of(self, session_id: str) -> str:
        return session_id

    async def event_count(self, root_session_id: str) -> int | None:
        return None

    def kinds(self) -> list[EventKind]:
        return [event.kind for _, events in self.calls for event in events]


async def test_mcp_each_tool_records_its_events_through_the_recorder(
    worktree: Path, tmp_path: Path, session: str, web: str
) -> None:
    recorder = ListRecorder()
    settings = Settings.load(tmp_path, mcp={"fetch_allow_hosts": ["127.0.0.1"]})
    server = build_server(
        recorder, worktree=worktree, data_dir=tmp_path / "data", settings=settings
    )
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
        assert {tool.name for tool in listed.tools} == DEFAULT_TOOLS
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


async def test_mcp_catalog_lists_what_the_server_runs(server: MCPServer[Any]) -> None:
    """The fast tool list (catalog) is what the server lists, and every listed parameter is one
    the tool's function takes."""
    async with Client(server, mode="legacy") as client:
        listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    assert {spec.name for spec in catalog.TOOLS} == set(listed)
    for spec in catalog.TOOLS:
        assert listed[spec.name] == spec.input_schema()
        function = server._tool_manager.get_tool(spec.name).fn
        accepted = set(inspect.signature(function).parameters)
        assert set(spec.properties) <= accepted, spec.name


def test_mcp_tool_groups_switch_tools_off(tmp_path: Path) -> None:
    settings = Settings.load(tmp_path, mcp={"tools": ["memory"]})
    names = {spec.name for spec in catalog.enabled_tools(settings.mcp.tools)}
    assert names == {"memory_save", "memory_search", "memory_get", "memory_context"}
    curating = Settings.load(tmp_path, mcp={"tools": ["memory", "memory_curate"]})
    assert {spec.name for spec in catalog.enabled_tools(curating.mcp.tools)} == MEMORY_TOOLS
    with pytest.raises(ConfigError, match="mcp.tools"):
        Settings.load(tmp_path, mcp={"tools": ["nonsense"]})


def test_mcp_default_tool_schemas_fit_three_kilobytes() -> None:
    """What a host sends per request for plait's default tools, as OpenCode wraps it (measured
    e2e in test_opencode_e2e); the other groups are for people who want them."""
    from plait.devtools.startup import schema_bytes

    default = schema_bytes(catalog.DEFAULT_GROUPS)
    assert default <= 3072 and default < schema_bytes()  # the default leaves some groups off


async def test_mcp_every_output_is_searchable_and_never_by_its_command(
    server: MCPServer[Any], session: str
) -> None:
    async with Client(server, mode="legacy") as client:
        await call(client, "session_execute", command="echo quartzite-result", session_id=session)
        found = await call(client, "session_search", query="quartzite", session_id=session)
        assert "quartzite-result" in found and "1 result" in found
        await call(
            client, "session_execute", command="echo zebra; true # marmalade", session_id=session
        )
        by_command = await call(client, "session_search", query="marmalade", session_id=session)
        assert by_command.startswith("no results"), by_command


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def rpc(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
    process.stdin.flush()


@pytest.mark.parametrize("how", ["stdin closed", "SIGTERM"])
def test_mcp_client_going_away_stops_its_commands_and_the_server(
    tmp_path: Path, worktree: Path, redis_url: str, how: str
) -> None:
    """A command that ignores SIGTERM, and its background child, die with the server."""
    pids = tmp_path / "pids"
    command = (
        f"trap '' TERM; (trap '' TERM; sleep 300) & echo $! >> {pids}; echo $$ >> {pids}; sleep 300"
    )
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "plait"), "mcp", "--data-dir", str(tmp_path / "d")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=worktree,
        env={"PLAIT_REDIS__URL": redis_url, "PATH": os.environ["PATH"]},
    )
    started: list[int] = []
    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
        rpc(server, {"id": 1, "method": "initialize", "params": init})
        assert server.stdout is not None and json.loads(server.stdout.readline())["id"] == 1
        rpc(server, {"method": "notifications/initialized"})
        arguments = {"command": command, "timeout": 120}
        call = {"name": "session_execute", "arguments": arguments}
        rpc(server, {"id": 2, "method": "tools/call", "params": call})
        for _ in range(200):
            started = [int(line) for line in pids.read_text().split()] if pids.exists() else []
            if len(started) == 2:
                break
            time.sleep(0.05)
        assert len(started) == 2 and all(alive(pid) for pid in started)
        if how == "SIGTERM":
            server.send_signal(signal.SIGTERM)
        else:
            assert server.stdin is not None
            server.stdin.close()
        server.wait(timeout=60)
        assert not [pid for pid in started if alive(pid)]
    finally:
        for pid in [*started, server.pid]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_stop_groups_kills_a_group_that_ignores_sigterm() -> None:
    from plait.adapters.hosts.mcp.sandbox import stop_groups

    child = subprocess.Popen(
        ["bash", "-c", "trap '' TERM; sleep 300 & echo ready; wait"],
        start_new_session=True,
        stdout=subprocess.PIPE,
    )
    groups = {child.pid}
    try:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        stop_groups(groups, grace_seconds=0.2)
        assert child.wait(timeout=10) == -signal.SIGKILL and groups == set()
    finally:
        if child.poll() is None:
            child.kill()
