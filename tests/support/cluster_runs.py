"""A session's prompts through plait's intake on a local Redis Cluster, with a fault mid-run.

The cluster fault tests (a primary killed, slots moved) share this: a :class:`plait.Memory` on
the cluster's hot tier serving OpenCode's calls as ``plait serve`` does, and a run of prompts
that says how each call was acknowledged and what was stored, once nobody sends any more.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from plait import Memory
from plait.adapters.hosts.opencode.hooks import WIRE
from plait.adapters.hosts.opencode.hooks import host_call as opencode_call
from support.redis_cluster import LocalCluster

PAUSE_S = 0.05


@asynccontextmanager
async def memory_on(cluster: LocalCluster, tmp_path: Path, graph_url: str) -> AsyncIterator[Memory]:
    """A Memory whose hot tier is ``cluster`` (the graph on ``graph_url``), serving OpenCode."""
    project = tmp_path / "project"
    project.mkdir()
    async with Memory.open(
        project,
        tmp_path / "data",
        start_background=False,
        reconnect=True,
        redis={"url": cluster.url},
        falkordb={"url": graph_url},
        graphiti={"group_id_prefix": f"t{uuid.uuid4().hex[:10]}"},
    ) as memory:
        memory.dispatch.serve(WIRE.adapter)
        yield memory


async def prompt_run(
    memory: Memory, session: str, calls: int, *, fault_at: int, fault: Callable[[], object]
) -> tuple[list[str], list[int]]:
    """``calls`` prompts of ``session`` ``PAUSE_S`` apart, ``fault()`` just before prompt
    ``fault_at``: how each was acknowledged (``kept``) and the prompts stored, in their order,
    once the intake is idle with nobody sending more."""
    kept: list[str] = []
    for number in range(calls):
        if number == fault_at:
            fault()
        parts = [{"type": "text", "text": f"prompt {number}"}]
        call = opencode_call(
            "chat.message",
            {"sessionID": session},
            {"message": {}, "parts": parts},
            f"call-{number}",
        )
        kept.append((await memory.dispatch.answer(call)).kept)
        await asyncio.sleep(PAUSE_S)
    assert memory.dispatch.intake is not None
    await asyncio.wait_for(memory.dispatch.intake.idle(), 60)  # a hang guard only
    events = await memory.backends.store.read_events(session)
    return kept, [int(e.body.split()[-1]) for e in events if e.kind == "prompt"]
