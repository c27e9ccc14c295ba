"""``kill -9`` of a ``plait worker`` mid-batch, then another worker: every event lands once.

Two real ``plait worker`` processes on the shared embedded FalkorDB server, with Graphiti and
the offline LLM. The first is frozen (SIGSTOP) until the graph holds some but not all events
(an episode per batch) and its consumer holds unacked entries, then killed with SIGKILL, so the kill always lands
mid-batch. A second worker under another consumer name, with ``redis.claim_idle_ms`` small,
takes over the dead worker's pending entries (XAUTOCLAIM) and drains the rest.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from plait.adapters.backends.redis_store import CONSUMER_GROUP, RedisHotStore
from plait.state.base.settings import Settings
from plait.state.events import EventKind, SessionEvent
from plait.state.ports import episode_uuid
from plait.wiring import project_group_id, project_prefix

EVENTS = 40
BATCH_SIZE = 5
DEADLINE_SECONDS = 60.0
EPISODES_QUERY = "MATCH (e:Episodic) RETURN e.uuid, e.plait_done, e.plait_events"


def decisions(root: str) -> list[SessionEvent]:
    return [
        SessionEvent(
            root_session_id=root,
            session_id=root,
            kind=EventKind.DECISION,
            summary=f"Use connection pool number {i} for the billing service",
            key=f"pool-{i}",
        )
        for i in range(EVENTS)
    ]


def episodes(client: redis.Redis, group_id: str) -> list[tuple[str, bool, list[str]]]:
    """(uuid, marked done, its events) of every Episodic node of the group's graph."""
    if not client.exists(group_id):
        return []
    _, rows, *_ = client.execute_command("GRAPH.RO_QUERY", group_id, EPISODES_QUERY)
    return [(text(uuid_), text(done) == "true", listed(events)) for uuid_, done, events in rows]


def listed(value: Any) -> list[str]:
    """A list property as the raw reply shows it (``[a, b]``), as its items."""
    inner = text(value or b"[]").strip("[]")
    return [item.strip() for item in inner.split(",") if item.strip()]


def written_events(client: redis.Redis, group_id: str) -> int:
    """Events in finished episodes."""
    return sum(len(events) for _, done, events in episodes(client, group_id) if done)


def text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def pending_ids(client: redis.Redis, stream: str, consumer: str) -> list[str]:
    """Entry ids delivered to ``consumer`` and not acked."""
    rows = client.xpending_range(stream, CONSUMER_GROUP, "-", "+", 10_000, consumername=consumer)
    return [row["message_id"].decode() for row in rows]


def our_entries(client: redis.Redis, stream: str, group_id: str) -> list[str]:
    """Ids of stream entries (pending or new) that belong to the group."""
    return [
        entry_id.decode()
        for entry_id, fields in client.xrange(stream)
        if fields.get(b"group", b"").decode() == group_id
    ]


@pytest.fixture
def worker_env(tmp_path: Path, redis_url: str) -> dict[str, str]:
    """The environment of a worker process: the shared server, the offline providers."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.upper().startswith("PLAIT_")
        and key not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
    }
    env.update(
        {
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "PLAIT_DATA_DIR": str(tmp_path / "data"),
            "PLAIT_REDIS__URL": redis_url,
            "PLAIT_REDIS__BATCH_SIZE": str(BATCH_SIZE),
            "PLAIT_GRAPHITI__GROUP_ID_PREFIX": f"kill{uuid.uuid4().hex[:8]}",
            "PLAIT_LLM__PROVIDER": "offline",
            "PLAIT_EMBEDDER__PROVIDER": "offline",
            "PLAIT_RECALL__EMBEDDER": "none",
        }
    )
    return env


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Worker processes started by the test; any still running at the end is killed."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def start_worker(
    project: Path, env: dict[str, str], name: str, log: Path, *args: str
) -> subprocess.Popen[bytes]:
    command = Path(sys.executable).parent / "plait"
    with log.open("wb") as output:
        return subprocess.Popen(
            [str(command), "worker", "--project", str(project), "--name", name, *args],
            env=env,
            cwd=project,
            stdout=output,
            stderr=subprocess.STDOUT,
        )


def freeze_mid_batch(
    process: subprocess.Popen[bytes],
    client: redis.Redis,
    group_id: str,
    consumer: str,
    log: Path,
    stream: str,
) -> tuple[int, list[str]]:
    """SIGSTOP the worker at a moment it holds unacked entries with the graph part-written.

    Returns (events written, the consumer's pending ids). The checks run while the process
    is frozen, so nothing moves under them; a moment that does not qualify is let go on.
    """
    deadline = time.monotonic() + DEADLINE_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"worker exited early ({process.returncode}):\n{log.read_text()}")
        if BATCH_SIZE <= written_events(client, group_id) < EVENTS:
            os.kill(process.pid, signal.SIGSTOP)
            time.sleep(0.05)  # let commands already sent reach the server
            written = written_events(client, group_id)
            pending = pending_ids(client, stream, consumer)
            if pending and BATCH_SIZE <= written < EVENTS:
                return written, pending
            os.kill(process.pid, signal.SIGCONT)
        time.sleep(0.01)
    pytest.fail(
        f"the worker was never caught mid-batch in {DEADLINE_SECONDS} s:\n{log.read_text()}"
    )


async def test_a_killed_worker_mid_batch_loses_and_duplicates_nothing(
    tmp_path: Path,
    redis_url: str,
    worker_env: dict[str, str],
    processes: list[subprocess.Popen[bytes]],
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    settings = Settings(graphiti={"group_id_prefix": worker_env["PLAIT_GRAPHITI__GROUP_ID_PREFIX"]})
    group_id = project_group_id(settings, project)
    STREAM, DLQ = f"{project_prefix(project)}drain", f"{project_prefix(project)}dlq"
    first, second = f"kill-a-{uuid.uuid4().hex[:8]}", f"kill-b-{uuid.uuid4().hex[:8]}"
    store = RedisHotStore.from_url(redis_url, prefix=project_prefix(project))
    client = redis.Redis.from_url(redis_url)
    try:
        root = f"ses_kill_{uuid.uuid4().hex[:8]}"
        events = await store.append_events(root, decisions(root))
        await store.enqueue(group_id, events)
        expected = {episode_uuid(group_id, event) for event in events}
        assert len(expected) == EVENTS

        first_log = tmp_path / "worker-a.log"
        killed = start_worker(project, worker_env, first, first_log)
        processes.append(killed)
        written, orphaned = freeze_mid_batch(killed, client, group_id, first, first_log, STREAM)
        # it answers no hook: below the priority of what does (plait serve, here this test)
        assert os.getpriority(os.PRIO_PROCESS, killed.pid) > os.getpriority(os.PRIO_PROCESS, 0)
        os.kill(killed.pid, signal.SIGKILL)
        assert killed.wait(timeout=10) == -signal.SIGKILL
        assert BATCH_SIZE <= written < EVENTS and orphaned
        assert pending_ids(client, STREAM, first) == orphaned  # the dead worker's batch, unacked

        second_log = tmp_path / "worker-b.log"
        takeover = start_worker(
            project,
            {**worker_env, "PLAIT_REDIS__CLAIM_IDLE_MS": "100"},
            second,
            second_log,
            "--once",
        )
        processes.append(takeover)
        assert takeover.wait(timeout=DEADLINE_SECONDS) == 0, second_log.read_text()

        stored = episodes(client, group_id)
        counts = Counter(event for _, _, events in stored for event in events)
        assert {u: c for u, c in counts.items() if c != 1} == {}  # no event twice
        assert set(counts) == expected  # every event, and nothing else
        assert len({uuid_ for uuid_, _, _ in stored}) == len(stored)  # no twin episode
        assert all(done for _, done, _ in stored)  # the episode cut off by the kill was finished
        assert pending_ids(client, STREAM, first) == []  # taken over by the other worker ...
        assert pending_ids(client, STREAM, second) == []  # ... which acked everything
        assert set(orphaned).isdisjoint(e.decode() for e, _ in client.xrange(STREAM))
        assert our_entries(client, STREAM, group_id) == []
        dead = [f for _, f in client.xrange(DLQ) if f.get(b"group", b"").decode() == group_id]
        assert dead == []
    finally:
        for consumer in (first, second):
            with contextlib.suppress(redis.ResponseError):
                client.xgroup_delconsumer(STREAM, CONSUMER_GROUP, consumer)
        if client.exists(group_id):
            client.execute_command("GRAPH.DELETE", group_id)
        client.close()
        await store.aclose()
