"""``plait bench middleware``: what ``SessionMemoryMiddleware`` adds to a LangChain agent's turn.

The agent's turns are timed by :func:`plait.adapters.hosts.langchain.bench.agent_turns`, without
plait and with plait's middleware over a real ``Memory`` (the caller's: on the embedded FalkorDB
server for the command), and with ``remote``, over ``plait.connect`` to a real ``plait serve``
of its own (another process, its own embedded server), as a team member's agent reaches a
shared service.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from plait.adapters.hosts.http.client import ServiceClient
from plait.adapters.hosts.langchain.bench import agent_turns
from plait.devtools.bench import Timing, percentiles
from plait.devtools.load import LoadOptions, serve_process, service_url, stop

if TYPE_CHECKING:
    from plait.memory import Memory


async def bench_middleware(
    memory: Memory, turns: int = 200, *, remote: bool = False
) -> list[Timing]:
    """Agent turns without plait, with plait, and plait's share (and over a service: ``remote``).

    The share is each turn with plait less the median turn without it.
    """
    without = await agent_turns(None, turns)
    with_plait = await agent_turns(memory, turns)
    baseline = percentiles("without plait", without).p50
    rows = [
        percentiles("agent turn, without plait", without),
        percentiles("agent turn, with SessionMemoryMiddleware", with_plait),
        percentiles(
            "added by plait (with minus the median without)", [t - baseline for t in with_plait]
        ),
    ]
    if remote:
        over_http = await remote_turns(turns)
        rows += [
            percentiles("agent turn, with SessionMemoryMiddleware(plait.connect(...))", over_http),
            percentiles(
                "added by plait over HTTP (with minus the median without)",
                [t - baseline for t in over_http],
            ),
        ]
    return rows


async def remote_turns(turns: int) -> list[float]:
    """Agent turns whose session memory is a ``plait serve`` of their own, over loopback HTTP."""
    with tempfile.TemporaryDirectory(prefix="plait-bench-") as scratch:
        project, data = Path(scratch) / "project", Path(scratch) / "data"
        project.mkdir()
        data.mkdir()
        service = serve_process(LoadOptions(), project, data, os.environ.copy())
        try:
            url = service_url(data, project)
            client = ServiceClient(url, (data / "token").read_text().strip())
            try:
                return await agent_turns(client, turns)
            finally:
                await client.aclose()
        finally:
            stop(service)


__all__ = ["bench_middleware", "remote_turns"]
