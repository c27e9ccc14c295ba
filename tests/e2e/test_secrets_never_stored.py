"""Secrets fed through every entry point are never stored, indexed, logged or sent.

Every secret of ``tests/data/secrets.jsonl``, and secrets of other real-world shapes generated
afresh for each run, go through OpenCode's hooks (``Memory.hook``), the ``Memory`` methods, the MCP
tools in process and through ``plait mcp`` (the command line), and the HTTP route; the drain then
writes everything to the knowledge graph. Then everything plait kept is read back: every key and
value in Redis, every node and edge of every FalkorDB graph, the corpus SQLite file (its bytes), the
data dir's files, and every log line (the MCP command's stderr too). No secret may be found.
Look-alikes (hashes, ids, paths) must come back unchanged (at most 2% may not).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import secrets
import shlex
import string
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import redis.asyncio as aioredis
from mcp import Client
from support.local_web import serving
from support.service_client import app_client

from plait import EventKind, Memory, SessionEvent
from plait.adapters.backends.corpus import SqliteCorpus
from plait.adapters.hosts.http import create_app
from plait.adapters.hosts.mcp import build_server
from plait.adapters.hosts.opencode.hooks import OpenCodeHooks
from plait.adapters.hosts.opencode.replay import SessionReplay
from plait.state.base.redact import redact
from plait.state.groups import user_group_id
from plait.state.intents import ToolResult, UserTurn
from plait.wiring import project_prefix

pytestmark = pytest.mark.slow

CORPUS = Path(__file__).parents[1] / "data" / "secrets.jsonl"
CASES = [json.loads(line) for line in CORPUS.read_text().splitlines()]
TOKEN = "test-token-for-the-http-route"
MAX_FALSE_POSITIVE_RATE = 0.02


@dataclass(frozen=True)
class Probe:
    """A text holding secrets, and the secrets it holds."""

    shape: str
    text: str
    secrets: tuple[str, ...]

    @property
    def first(self) -> str:
        """The first secret."""
        return self.secrets[0]

    @property
    def marked(self) -> str:
        """The secret as a short value can hold it: alone if it is recognisable alone, else with
        its label (the line it is on). A bare password in a path is a word like any other.
        """
        if redact(self.first) != self.first:
            return self.first
        line = next(line for line in self.text.splitlines() if self.first in line)
        return " ".join(line.split())

    @property
    def in_url(self) -> str:
        """The first secret as a URL's password (escaped, as a URL needs it)."""
        return quote(self.first, safe="")


def random_text(length: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    """A fresh random value (so the engine cannot have seen it)."""
    return "".join(secrets.choice(alphabet) for _ in range(length))


def generated_probes() -> list[Probe]:
    """Shapes measured in issue #13, with values drawn for this run."""
    password, aws = random_text(18), random_text(40, string.ascii_letters + string.digits + "/+")
    hex128, hex40 = secrets.token_hex(64), secrets.token_hex(20)
    account_key = base64.b64encode(secrets.token_bytes(64)).decode()
    jwt = ".".join(
        base64.urlsafe_b64encode(part).decode().rstrip("=")
        for part in (b'{"alg":"HS256","typ":"JWT"}', b'{"sub":"42","name":"x"}', os.urandom(32))
    )
    github, slack = (
        f"ghp_{random_text(36)}",
        f"xoxb-{random_text(12, string.digits)}-{random_text(24)}",
    )
    shapes = {
        "db_pass": (f"DB_PASS={password}\nDB_HOST=db.internal", password),
        "mysql_pwd": (f"export MYSQL_PWD='{password}x'", f"{password}x"),
        "secret_key_base": (f"SECRET_KEY_BASE={hex128}", hex128),
        "azure_account_key": (
            "DefaultEndpointsProtocol=https;AccountName=acme;"
            f"AccountKey={account_key};EndpointSuffix=core.windows.net",
            account_key,
        ),
        "curl_user": (f"curl -u deploy:{password}y https://api.acme.dev/v1", f"{password}y"),
        "bare_aws_secret": (f"the key is {aws} (rotate monthly)", aws),
        "private_key_id": (f'{{"type": "service_account", "private_key_id": "{hex40}"}}', hex40),
        "dsn": (f"DATABASE_URL=postgres://app:{password}z@db:5432/shop", f"{password}z"),
        "bearer_jwt": (f"Authorization: Bearer {jwt}", jwt),
        "github_token": (f"token {github} works", github),
        "slack_token": (f"SLACK={slack}", slack),
    }
    return [
        Probe(shape=f"generated:{shape}", text=text, secrets=(secret,))
        for shape, (text, secret) in shapes.items()
    ]


PROBES = [
    Probe(shape=case["shape"], text=case["text"], secrets=tuple(case["secrets"]))
    for case in CASES
    if case["kind"] == "secret"
] + generated_probes()
LOOKALIKES = [case for case in CASES if case["kind"] == "lookalike"]
SECRETS = {secret for probe in PROBES for secret in probe.secrets}


# -- entry points ---------------------------------------------------------------------------------
async def via_opencode_hooks(runner: Any, probe: Probe) -> None:
    """A whole OpenCode session's hooks, the probe in every place a host can put text."""
    session = SessionReplay(runner=runner)
    await session.start()
    await session.user(probe.text)
    await session.assistant(probe.text)
    await session.tool("bash", {"command": probe.text}, probe.text)
    path = f"src/{probe.marked}/settings.py"
    await session.tool("edit", {"filePath": path, "newString": probe.text}, "edited")
    await session.todos((probe.text, "in_progress"))
    await session.file_edited(path)
    await session.error(probe.text)
    await session.branch(f"feature/{probe.marked}")
    child = session.child()
    await child.start()
    await child.user(probe.text)
    await session.compact(probe.text)
    await session.idle()


async def via_http_route(http: httpx.AsyncClient, probe: Probe) -> None:
    """The plugin's path: a user message and a shell command, posted to the HTTP route."""
    session = SessionReplay(runner=HttpHooks(http))
    await session.user(probe.text)
    await session.tool("bash", {"command": probe.text}, probe.text)
    await session.error(probe.text)


def event_of(session: str, probe: Probe) -> SessionEvent:
    """A decision with the probe in every text field."""
    path = f"src/{probe.marked}/main.py"
    return SessionEvent(
        root_session_id=session,
        session_id=session,
        kind=EventKind.DECISION,
        summary=probe.text,
        body=probe.text,
        refs=(path, probe.marked),
        keywords=(probe.marked,),
        key=path,
        source_hook=probe.marked,
    )


async def via_memory_methods(memory: Memory, probe: Probe, number: int) -> None:
    """Every method of the Python API that takes text."""
    session = f"api-{number}"
    event = event_of(session, probe)
    path = event.key
    await memory.remember(session, probe.text)
    await memory.dispatch.record(session, [event])
    await memory.model_call(session, observed=[event], query=probe.text)
    await memory.user_turn(session, probe.text)
    await memory.model_call(session, query=probe.text)
    result = ToolResult(tool="bash", args={"command": probe.text}, output=probe.text, error=path)
    await memory.observe(session, [UserTurn(text=probe.text), result])
    await memory.tool_result(session, result)
    await memory.compaction_after(session, probe.text)
    await memory.lifecycle(session, "updated", title=probe.text)


async def via_mcp_tools(client: Client, probe: Probe, number: int, web: str) -> None:
    """Every MCP tool that takes text, the probe in arguments, sources, labels and URLs."""
    session = f"mcp-{number}"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_save", {"title": probe.text[:200], "content": probe.text, "type": "config"}),
        ("memory_session_summary", {"content": probe.text}),
        ("session_index", {"content": probe.text, "source": probe.marked, "label": probe.marked}),
        ("session_index", {"content": probe.text, "source": f"notes {probe.text[:300]}"}),
        ("session_execute", {"command": f"printf '%s\\n' {shlex.quote(probe.text)}"}),
        ("session_search", {"query": probe.text[:500]}),
        (
            "session_fetch_and_index",
            {"url": f"http://user:{probe.in_url}@{web}/page?token={probe.in_url}&n={number}"},
        ),
    ]
    for tool, arguments in calls:
        await client.call_tool(tool, {**arguments, "session_id": session})


def via_mcp_command(data_dir: Path, worktree: Path, redis_url: str, web: str) -> str:
    """``plait mcp`` over stdio: remember, execute and fetch every probe; its stderr."""
    environment = {
        "PATH": os.environ["PATH"],
        "PLAIT_REDIS__URL": redis_url,
        "PLAIT_MCP__FETCH_ALLOW_HOSTS": json.dumps(["127.0.0.1"]),
    }
    stderr = data_dir.parent / "plait-mcp.stderr"
    with stderr.open("wb") as errors:
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "plait"), "mcp", "--data-dir", str(data_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            cwd=worktree,
            env=environment,
        )
        try:
            talk_to(server, web)
        finally:
            if server.stdin is not None:
                server.stdin.close()
            server.wait(timeout=60)
    return stderr.read_text(errors="replace")


def talk_to(server: subprocess.Popen[bytes], web: str) -> None:
    """Initialize, then each call in turn, waiting for its answer."""
    assert server.stdin is not None and server.stdout is not None
    counter = iter(range(1, 1_000_000))

    def send(message: dict[str, Any], *, answered: bool = True) -> dict[str, Any]:
        assert server.stdin is not None and server.stdout is not None
        if answered:
            message = {"id": next(counter), **message}
        server.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        server.stdin.flush()
        return json.loads(server.stdout.readline()) if answered else {}

    client = {"name": "probe", "version": "1"}
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
    assert "result" in send({"method": "initialize", "params": init})
    send({"method": "notifications/initialized"}, answered=False)
    for number, probe in enumerate(PROBES):
        session = f"cli-{number}"
        url = f"http://deploy:{probe.in_url}@{web}/page?sig={probe.in_url}"
        for tool, arguments in (
            ("memory_save", {"title": f"probe {number}", "content": probe.text}),
            ("session_execute", {"command": f"echo {shlex.quote(probe.text)}; exit 3"}),
            ("session_fetch_and_index", {"url": url}),
        ):
            call = {"name": tool, "arguments": {**arguments, "session_id": session}}
            answer = send({"method": "tools/call", "params": call})
            assert "result" in answer, answer


class HttpHooks:
    """OpenCode's plugin, as far as plait sees it: hook calls posted to the HTTP route."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def hook(self, name: str, input: dict[str, Any], output: dict[str, Any]) -> Any:
        response = await self.client.post(
            f"/v1/hooks/{name}", json={"input": input, "output": output}
        )
        assert response.status_code == 200, response.text
        return response.json()


# -- what plait kept ------------------------------------------------------------------------------
def as_text(value: Any) -> str:
    """Any Redis reply as text (bytes decoded, containers flattened)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, list | tuple | set):
        return "\n".join(as_text(item) for item in value)
    if isinstance(value, dict):
        return "\n".join(f"{as_text(k)}\n{as_text(v)}" for k, v in value.items())
    return str(value)


async def redis_contents(client: aioredis.Redis) -> dict[str, str]:
    """Every key's name and value; every FalkorDB graph's nodes and edges."""
    kept: dict[str, str] = {}
    async for raw_key in client.scan_iter(count=1000):
        key = as_text(raw_key)
        kind = as_text(await client.type(raw_key))
        if kind == "graphdata":
            kept[f"graph {key}"] = await graph_contents(client, raw_key)
        else:
            kept[f"redis {kind} {key}"] = (
                key + "\n" + as_text(await value_of(client, raw_key, kind))
            )
    return kept


async def value_of(client: aioredis.Redis, key: bytes, kind: str) -> Any:
    """The value of one key, whatever its type."""
    if kind == "string":
        return await client.get(key)
    if kind == "list":
        return await client.lrange(key, 0, -1)
    if kind == "hash":
        return await client.hgetall(key)
    if kind == "set":
        return await client.smembers(key)
    if kind == "zset":
        return await client.zrange(key, 0, -1, withscores=True)
    if kind == "stream":
        return await client.xrange(key)
    return kind


async def graph_contents(client: aioredis.Redis, graph: bytes) -> str:
    """Every node's labels and properties and every edge's type and properties, as text."""
    parts = []
    for query in (
        "MATCH (n) RETURN labels(n), properties(n)",
        "MATCH ()-[r]->() RETURN type(r), properties(r)",
    ):
        parts.append(as_text(await client.execute_command("GRAPH.QUERY", graph, query)))
    return "\n".join(parts)


def file_contents(data_dir: Path) -> dict[str, str]:
    """The bytes of every file in the data dir but Redis's own (compressed) data files."""
    skipped = ("appendonlydir", "dump.rdb")
    return {
        f"file {path.relative_to(data_dir)}": path.read_bytes().decode("utf-8", errors="replace")
        for path in sorted(data_dir.rglob("*"))
        if path.is_file() and not any(part in skipped for part in path.parts)
    }


def findings(kept: dict[str, str]) -> list[tuple[str, str, str]]:
    """``(shape, secret, where)`` for every secret (or its URL-escaped form) found in what was
    kept."""
    return [
        (probe.shape, secret, where)
        for probe in PROBES
        for secret in {*probe.secrets, probe.in_url}
        for where, text in kept.items()
        if secret in text
    ]


def summary(found: list[tuple[str, str, str]]) -> str:
    """Where secrets were found (by kind of place) and which shapes, most first."""
    places = Counter(" ".join(where.split()[:3]).split(":")[0] for _, _, where in found)
    shapes = Counter(shape for shape, _, _ in found)
    return f"places: {places.most_common(20)}; shapes: {shapes.most_common(60)}"


# -- fixtures -------------------------------------------------------------------------------------
@pytest.fixture
def web() -> Iterator[str]:
    """A local web server whose every page is the probes' texts."""
    page = "\n\n".join(probe.text for probe in PROBES).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: Any) -> None:
            pass

    with serving(Handler) as port:
        yield f"127.0.0.1:{port}"


@pytest.fixture
async def memory(tmp_path: Path) -> AsyncIterator[Memory]:
    """plait on its own embedded server: everything in it comes from this test."""
    async with Memory.open(
        tmp_path / "project",
        tmp_path / "data",
        start_background=False,
        mcp={"fetch_allow_hosts": ["127.0.0.1"]},
    ) as opened:
        yield opened


async def test_no_secret_from_any_entry_point_is_stored_or_logged(
    memory: Memory, tmp_path: Path, web: str, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir, worktree = tmp_path / "data", tmp_path / "project"
    worktree.mkdir()
    assert memory.backends.redis is not None and memory.backends.redis_url is not None
    with caplog.at_level(logging.DEBUG):
        app = create_app(memory, token=TOKEN)
        server = build_server(memory, worktree=worktree, data_dir=data_dir)
        async with (
            app_client(app, TOKEN) as http,
            Client(server, mode="legacy") as client,
        ):
            for number, probe in enumerate(PROBES):
                await via_opencode_hooks(OpenCodeHooks(memory), probe)
                await via_http_route(http, probe)
                await via_memory_methods(memory, probe, number)
                await via_mcp_tools(client, probe, number, web)
        stderr = via_mcp_command(data_dir, worktree, memory.backends.redis_url, web)
    kept = await redis_contents(memory.backends.redis)
    logs = f"redis list {project_prefix(memory.project_dir)}s:"
    assert sum(where.startswith(logs) for where in kept) >= 4 * len(PROBES)
    kept |= file_contents(data_dir)
    assert "file corpus.sqlite3" in kept, sorted(kept)  # what session_index wrote is read back
    kept["logs"] = caplog.text
    kept["plait mcp stderr"] = stderr
    found = findings(kept)
    print(
        f"\nsecrets fed: {len(SECRETS)} ({len(PROBES)} probes) through OpenCode's hooks, the HTTP "
        f"route, the Memory methods, MCP in process and plait mcp; places read back: "
        f"{len(kept)}; secrets found: {len(found)}"
    )
    assert found == [], summary(found)


async def test_no_secret_reaches_the_knowledge_graph(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    """Every event field holds a probe; the drain writes them all to FalkorDB through Graphiti.

    (The other entry points make the same events: one path per probe keeps the drain short.)
    """
    assert memory.backends.redis is not None and memory.background is not None
    with caplog.at_level(logging.DEBUG):
        for number, probe in enumerate(PROBES):
            await memory.remember(f"graph-{number}", probe.text, "preference")
            await memory.dispatch.record(f"graph-{number}", [event_of(f"graph-{number}", probe)])
        while (await memory.background.drain()).batches:
            pass
    assert (
        await memory.backends.store.queue_depth() == 0
        and await memory.backends.store.list_dead() == []
    )
    kept = await redis_contents(memory.backends.redis)
    graphs = [where for where in kept if where.startswith("graph ")]
    users = user_group_id(
        memory.settings.graphiti.group_id_prefix, memory.settings.graphiti.resolved_user()
    )
    assert {f"graph {users}", f"graph {memory.group_id}"} <= set(graphs), graphs
    kept["logs"] = caplog.text
    found = findings(kept)
    print(f"\nsecrets written to the graph: {len(found)} of {len(SECRETS)}")
    assert found == [], summary(found)


async def test_lookalikes_are_kept_as_they_are(memory: Memory, tmp_path: Path) -> None:
    """Hashes, ids, paths and other random-looking harmless text: events and corpus keep them."""
    corpus = SqliteCorpus.in_data_dir(tmp_path / "data")
    changed = []
    try:
        for number, case in enumerate(LOOKALIKES):
            stored = await memory.remember(f"look-{number}", case["text"])
            await corpus.index(f"look-{number}", "lookalike", case["text"])
            chunk = await corpus.chunk(f"look-{number}", "lookalike", 0)
            words = case["text"].split()
            kept_event = stored.body.split() == words
            kept_corpus = chunk is not None and chunk.text.split() == words
            if not (kept_event and kept_corpus):
                changed.append(case["shape"])
    finally:
        corpus.close()
    print(f"\nlook-alikes changed: {len(changed)} of {len(LOOKALIKES)}: {changed}")
    assert len(changed) / len(LOOKALIKES) <= MAX_FALSE_POSITIVE_RATE, changed
