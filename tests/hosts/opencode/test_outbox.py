"""The service's side of the plugin's outbox: what OpenCode left is sent the plugin's way."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from plait.adapters.hosts.opencode.outbox import send_left_outbox


def left(path: Path, calls: list[dict[str, Any]], age_s: float = 10) -> None:
    """An outbox holding ``calls``, last written ``age_s`` ago."""
    path.write_text("".join(json.dumps(call) + "\n" for call in calls))
    then = time.time() - age_s
    os.utime(path, (then, then))


def statuses(answers: dict[str, int]) -> tuple[list[str], Any]:
    """A run that answers each call id with its status, and the ids it was given, in order."""
    seen: list[str] = []

    async def run(call: Any) -> int:
        seen.append(call["call_id"])
        return answers[call["call_id"]]

    return seen, run


async def test_calls_run_in_order_until_one_is_not_kept(tmp_path: Path) -> None:
    outbox = tmp_path / "key.jsonl"
    left(outbox, [{"name": "event", "call_id": c} for c in "abcd"])
    seen, run = statuses({"a": 200, "b": 422, "c": 503, "d": 200})
    assert await send_left_outbox(outbox, run) == 2  # done: stored, and refused for good
    assert seen == ["a", "b", "c", "d"]
    sending = outbox.with_name("key.jsonl.sending")
    assert [json.loads(line)["call_id"] for line in sending.read_text().splitlines()] == ["c", "d"]
    assert not outbox.exists() and not outbox.with_name("key.jsonl.lock").exists()


async def test_a_busy_outbox_or_one_another_holds_is_left_alone(tmp_path: Path) -> None:
    outbox = tmp_path / "key.jsonl"
    seen, run = statuses({"a": 200})
    left(outbox, [{"name": "event", "call_id": "a"}], age_s=0)  # a plugin writes to it now
    assert await send_left_outbox(outbox, run) == 0
    left(outbox, [{"name": "event", "call_id": "a"}])
    lock = outbox.with_name("key.jsonl.lock")
    lock.write_text("a plugin")  # a plugin sends it
    assert await send_left_outbox(outbox, run) == 0
    lock.unlink()
    left(outbox, [{"name": "event", "call_id": "a", "to": "http://127.0.0.1:1"}])
    assert await send_left_outbox(outbox, run) == 0  # kept for a replica: its plugin sends it
    assert seen == [] and outbox.with_name("key.jsonl.sending").exists()
