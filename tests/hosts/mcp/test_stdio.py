"""``plait mcp`` on a stdin that is not a pipe: ``/dev/null`` or a file of requests."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from support.plait_cli import PLAIT

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def mcp(tmp_path: Path, stdin: object) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
    env["PLAIT_DATA_DIR"] = str(tmp_path / "data")
    return subprocess.run(
        [PLAIT, "mcp", "--project", str(tmp_path)],
        stdin=stdin,
        capture_output=True,
        env=env,
        timeout=60,
    )


def test_mcp_on_dev_null_ends_at_once_instead_of_hanging(tmp_path: Path) -> None:
    with open(os.devnull, "rb") as nothing:
        answer = mcp(tmp_path, nothing)
    assert answer.returncode == 0, answer.stderr.decode()[-500:]
    assert answer.stdout == b""


def test_mcp_answers_requests_read_from_a_file(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps(INITIALIZE) + "\n")
    with requests.open("rb") as file:
        answer = mcp(tmp_path, file)
    assert answer.returncode == 0, answer.stderr.decode()[-500:]
    reply = json.loads(answer.stdout.splitlines()[0])
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "plait"
