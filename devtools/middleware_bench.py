"""``plait bench middleware``: what ``SessionMemoryMiddleware`` adds to a LangChain agent's turn.

The agent's turns are timed by :func:`plait.adapters.hosts.langchain.bench.agent_turns`, without
plait and with plait's middleware over a real ``Memory`` (the caller's: on the embedded FalkorDB
server for the command).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plait.adapters.hosts.langchain.bench import agent_turns
from plait.devtools.bench import Timing, percentiles

if TYPE_CHECKING:
    from plait.memory import Memory


async def bench_middleware(memory: Memory, turns: int = 200) -> list[Timing]:
    """Agent turns without plait, with plait, and plait's share.

    The share is each turn with plait less the median turn without it.
    """
    without = await agent_turns(None, turns)
    with_plait = await agent_turns(memory, turns)
    baseline = percentiles("without plait", without).p50
    added = [sample - baseline for sample in with_plait]
    return [
        percentiles("agent turn, without plait", without),
        percentiles("agent turn, with SessionMemoryMiddleware", with_plait),
        percentiles("added by plait (with minus the median without)", added),
    ]


__all__ = ["bench_middleware"]
