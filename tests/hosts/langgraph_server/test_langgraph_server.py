"""plait's graphs under a real ``langgraph dev`` (langgraph-cli[inmem]) on 127.0.0.1, over REST.

The server gives the runs no context: plait builds it from its settings (here only
``PLAIT_DATA_DIR``), so ``/schemas`` answers and ``runs/wait`` works for each graph.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.local_web import free_port

from plait.state.base.processes import pid_alive

ROOT = Path(__file__).resolve().parents[3]
LANGGRAPH = Path(sys.executable).parent / "langgraph"
GRAPHS = ("hooks", "compaction", "drain", "cache_refresh")

pytestmark = pytest.mark.slow


def call(url: str, body: Any = None, timeout: float = 120) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"content-type": "application/json"}
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, data=data, headers=headers), timeout=timeout
        ) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")
    except OSError:
        return 0, None


@pytest.fixture(scope="module", params=["embedded", "cluster"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path, str]]:
    """``langgraph dev`` serving plait's graphs: on plait's embedded server, or with the hot tier
    on a local Redis Cluster (3 primaries, 3 replicas) and the graph on a FalkorDB server."""
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli is not installed (uv sync installs it with the dev group)")
    project = tmp_path_factory.mktemp("langgraph-project")
    data_dir = tmp_path_factory.mktemp("langgraph-data")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
    env.update(
        PLAIT_DATA_DIR=str(data_dir),
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGSMITH_TRACING="false",
        XDG_CONFIG_HOME=str(project / "xdg"),
    )
    if request.param == "cluster":
        env.update(
            PLAIT_REDIS__URL=request.getfixturevalue("redis_cluster").url,
            PLAIT_FALKORDB__URL=request.getfixturevalue("redis_url"),
            PLAIT_GRAPHITI__GROUP_ID_PREFIX=f"lg{uuid.uuid4().hex[:10]}",
        )
    command = [str(LANGGRAPH), "dev", "--config", str(ROOT / "langgraph.json")]
    command += ["--host", "127.0.0.1", "--port", str(port), "--no-browser", "--no-reload"]
    log = (project / "server.log").open("w")
    process = subprocess.Popen(
        command, cwd=project, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while call(f"{url}/ok", timeout=2)[0] != 200:
            assert process.poll() is None, (project / "server.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "langgraph dev did not come up"
            time.sleep(0.5)
        yield url, data_dir, request.param
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()
    recorded = data_dir / "falkordb" / "server.json"
    if recorded.exists():  # the embedded server plait started must not outlive the server
        pid = json.loads(recorded.read_text())["pid"]
        deadline = time.monotonic() + 20
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not pid_alive(pid)


def assistant(url: str, graph: str) -> str:
    status, found = call(f"{url}/assistants/search", {"graph_id": graph})
    assert status == 200, found
    return str(found[0]["assistant_id"])


@pytest.mark.parametrize("graph", GRAPHS)
def test_langgraph_server_schemas_answer(server: tuple[str, Path, str], graph: str) -> None:
    url, _, _ = server
    status, schemas = call(f"{url}/assistants/{assistant(url, graph)}/schemas")
    assert status == 200, schemas
    assert set(schemas["context_schema"]["properties"]) == {"project_dir", "data_dir"}


def test_langgraph_server_runs_every_graph(server: tuple[str, Path, str]) -> None:
    url, data_dir, backend = server
    rule = [{"type": "user_turn", "text": "Rule: never commit to main."}]
    status, hooks = call(
        f"{url}/runs/wait",
        {
            "assistant_id": "hooks",
            "input": {"session": "s1", "payload": [*rule, {"type": "model_call"}]},
        },
    )
    assert status == 200 and "never commit to main" in (hooks.get("inject") or ""), hooks
    status, compaction = call(
        f"{url}/runs/wait",
        {
            "assistant_id": "compaction",
            "input": {"session": "s1", "payload": [{"type": "compaction_before"}]},
        },
    )
    assert status == 200 and "never commit to main" in (compaction.get("inject") or ""), compaction
    status, drained = call(f"{url}/runs/wait", {"assistant_id": "drain", "input": {}})
    assert status == 200 and drained.get("written", 0) >= 1, drained
    status, refreshed = call(
        f"{url}/runs/wait",
        {"assistant_id": "cache_refresh", "input": {"root_session_id": "s1", "query": "commit"}},
    )
    assert status == 200 and "commit" in refreshed["recall"]["text"], refreshed
    # plait's data, from the settings: its embedded server, or none beside the cluster
    assert (data_dir / "falkordb" / "server.json").exists() == (backend == "embedded")


def test_langgraph_server_bad_payload_is_a_clear_error(server: tuple[str, Path, str]) -> None:
    url, _, _ = server
    status, answer = call(
        f"{url}/runs/wait",
        {"assistant_id": "hooks", "input": {"session": "s2", "payload": [{"type": "nonsense"}]}},
    )
    assert "type must be one of" in json.dumps(answer), answer
