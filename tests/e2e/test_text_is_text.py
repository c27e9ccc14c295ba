"""Text that is not Unicode, at every edge: MCP, LangChain, HTTP, the CLI and import files.

A lone UTF-16 surrogate (``\\ud800`` escaped in JSON, or what Python makes of an argument that is
not UTF-8) becomes U+FFFD where it enters plait: never a crash, never a silently dropped turn.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from support.plait_cli import PLAIT
from support.scripted_model import ScriptedChatModel
from support.service_client import app_client

from plait import Memory
from plait.adapters.hosts.http import create_app
from plait.langchain import SessionMemoryMiddleware

LONE = "\ud800"
TOKEN = "text-token"


async def test_langchain_turn_with_a_lone_surrogate_is_recorded(memory: Memory) -> None:
    model = ScriptedChatModel(responses=[AIMessage("Noted."), AIMessage("On it.")])
    agent = create_agent(
        model, tools=[], middleware=[SessionMemoryMiddleware(memory)], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "lone"}}
    said = f"We decided to use PostgreSQL {LONE} for storage."
    await agent.ainvoke({"messages": [HumanMessage(content=said)]}, config)
    await agent.ainvoke({"messages": [HumanMessage(content="Next step.")]}, config)
    envelope = await memory.envelope("lone")
    assert "PostgreSQL \ufffd for storage" in envelope, envelope


async def test_http_memory_save_with_a_lone_surrogate_and_bad_bytes(memory: Memory) -> None:
    body = (
        json.dumps(
            {"title": f"Queue {LONE} choice", "content": "What: Redis streams", "type": "decision"}
        ).encode()
        + b""
    )
    body = body.replace(b"choice", b"choice \xff\xfe")
    async with app_client(create_app(memory, token=TOKEN), TOKEN) as client:
        saved = await client.post(
            "/v1/memory/memory_save", content=body, headers={"content-type": "application/json"}
        )
        assert saved.status_code == 200, saved.text
        got = await client.post("/v1/memory/memory_get", json={"id": saved.json()["id"]})
    assert got.json()["title"] == "Queue \ufffd choice \ufffd\ufffd"


def mcp_calls(tmp_path: Path, redis_url: str, *requests: dict) -> dict[object, dict]:
    """Each request's answer from a real ``plait mcp``, asked one after the other."""
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
    env.update(PLAIT_DATA_DIR=str(tmp_path / "mcp-data"), PLAIT_REDIS__URL=redis_url)
    (tmp_path / "mcp-project").mkdir(exist_ok=True)
    process = subprocess.Popen(
        [PLAIT, "mcp", "--project", str(tmp_path / "mcp-project")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    answers: dict[object, dict] = {}
    try:
        for request in (
            hello,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            *requests,
        ):
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
            if "id" in request:
                answer = json.loads(process.stdout.readline())
                answers[answer.get("id")] = answer
    finally:
        process.stdin.close()
        process.wait(timeout=60)
    return answers


def test_mcp_memory_save_with_a_lone_surrogate_is_saved(tmp_path: Path, redis_url: str) -> None:
    title = f"Cache {LONE} policy"
    save = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "memory_save",
            "arguments": {"title": title, "content": "What: LRU", "type": "decision"},
        },
    }
    search = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "memory_search", "arguments": {"query": "cache policy"}},
    }
    answers = mcp_calls(tmp_path, redis_url, save, search)
    assert not answers[1]["result"].get("isError"), answers[1]
    found = answers[2]["result"]["content"][0]["text"]
    assert "Cache \ufffd policy" in json.loads(found)["results"][0]["title"]


def test_cli_query_that_is_not_utf8_and_an_import_file_with_a_lone_surrogate(
    tmp_path: Path, redis_url: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
    env.update(PLAIT_DATA_DIR=str(tmp_path / "cli-data"), PLAIT_REDIS__URL=redis_url)
    project = tmp_path / "cli-project"
    project.mkdir()
    recall = subprocess.run(
        [PLAIT.encode(), b"recall", b"caf\xe9 \xff choice", b"--project", str(project).encode()],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert recall.returncode == 0, recall.stderr.decode()[-800:]
    assert b"Traceback" not in recall.stderr
    line = {
        "id": "o0123456789ab",
        "scope": "project",
        "type": "decision",
        "title": f"Money {LONE} type",
        "content": "What: Decimal",
        "created_at": "2026-11-01T00:00:00Z",
        "updated_at": "2026-11-01T00:00:00Z",
    }
    file = tmp_path / "memory.jsonl"
    file.write_text(json.dumps(line) + "\n")
    imported = subprocess.run(
        [PLAIT, "memory", "import", str(file), "--project", str(project), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout)["added"] == 1
    shown = subprocess.run(
        [PLAIT, "memory", "show", "o0123456789ab", "--project", str(project), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert json.loads(shown.stdout)["title"] == "Money \ufffd type"
