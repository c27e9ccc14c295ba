"""``plait bench size``: what sessions cost the hot tier's Redis, and what a drain takes away.

A fresh data dir and its embedded server; ``sessions`` OpenCode sessions played through
:meth:`plait.Memory.hook` as the plugin sends them (``session.created``, then per turn a prompt,
the model call, a shell command and its output, a file edit, the assistant's answer; a decision
every third turn), one session after another. Redis's ``used_memory`` is read before, after the
sessions, and after the drain has emptied the queue (events into the recall index and the
knowledge graph, acked entries deleted). Keys are counted and sized (``MEMORY USAGE``) by what
they hold: event logs, checkpoints, the drain queue, other keys, and what no key holds. Nothing here
is a test: the figures go to ``docs/benchmarks.md``.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plait.adapters.hosts.opencode.hooks import OpenCodeHooks
from plait.adapters.hosts.opencode.replay import SessionReplay, new_id
from plait.memory import Memory

REST = "graphs, indices, the server's own"
KINDS = ("events", "checkpoints", "drain queue", "other keys", REST)


@dataclass(kw_only=True)
class SizeReport:
    """What the sessions cost."""

    sessions: int
    turns: int
    hooks: int = 0
    events: int = 0
    played_s: float = 0.0
    drained_s: float = 0.0
    before_bytes: int = 0
    after_bytes: int = 0
    drained_bytes: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)  # after the sessions, before the drain
    keys: dict[str, int] = field(default_factory=dict)
    drained_by_kind: dict[str, int] = field(default_factory=dict)


def kind_of(key: str) -> str:
    """What a key holds, by its name."""
    if ":cp" in key:
        return "checkpoints"
    if key.endswith(":events"):
        return "events"
    if key.endswith(":drain"):
        return "drain queue"
    return "other keys"


async def sized(client: Any) -> tuple[dict[str, int], dict[str, int]]:
    """Bytes and keys per kind (``MEMORY USAGE`` of every key), and what no key holds.

    A FalkorDB graph's key reports only its header to ``MEMORY USAGE`` (and ``GRAPH.MEMORY
    USAGE`` rounds to whole MB), so the graphs' matrices and indices are in the remainder of
    ``used_memory`` with the server's own allocations.
    """
    size: Counter[str] = Counter()
    count: Counter[str] = Counter()
    async for raw in client.scan_iter(count=1000):
        kind = kind_of(raw.decode() if isinstance(raw, bytes) else str(raw))
        size[kind] += int(await client.memory_usage(raw) or 0)
        count[kind] += 1
    size[REST] = await used_memory(client) - sum(size.values())
    return dict(size), dict(count)


async def used_memory(client: Any) -> int:
    """Redis's ``used_memory``."""
    return int((await client.info("memory"))["used_memory"])


@dataclass
class CountingHooks:
    """OpenCode's hooks, counting the calls."""

    hooks: OpenCodeHooks
    calls: int = 0

    async def hook(
        self, name: str, input: dict[str, Any], output: dict[str, Any]
    ) -> dict[str, Any]:
        """One hook call, counted."""
        self.calls += 1
        return await self.hooks.hook(name, input, output)


async def play(runner: CountingHooks, turns: int) -> None:
    """One session of ``turns`` turns (a decision every third)."""
    replay = SessionReplay(runner=runner, session_id=new_id("ses"))
    await replay.start()
    for turn in range(turns):
        module = f"src/module_{turn % 23}.py"
        said = f"We decided to keep {module} under 300 lines. " if turn % 3 == 0 else ""
        await replay.chat(f"Turn {turn}: {said}Refactor {module} and keep the tests green.")
        await replay.model_call()
        await replay.tool("bash", {"command": "pytest -q"}, f"{turn + 40} passed in 1.2s")
        await replay.tool("edit", {"filePath": module}, "edited")
        await replay.assistant(f"Refactored {module}; the tests pass.")
        replay.history = replay.history[-4:]


async def run_size_bench(sessions: int = 200, turns: int = 10) -> SizeReport:
    """Play the sessions, measure, drain, measure again."""
    report = SizeReport(sessions=sessions, turns=turns)
    with tempfile.TemporaryDirectory(prefix="plait-size-") as scratch:
        root = Path(scratch)
        (root / "project").mkdir()
        async with Memory.open(
            root / "project",
            root / "data",
            start_background=False,  # the drain runs once the sessions are played
            redis={"drain_quiet_seconds": 0},
            recall={"embedder": "none"},
        ) as memory:
            client = memory.backends.redis
            assert client is not None, "the bench needs the hot tier's Redis"
            report.before_bytes = await used_memory(client)
            runner = CountingHooks(OpenCodeHooks(memory))
            started = time.perf_counter()
            for _ in range(sessions):
                await play(runner, turns)
            report.hooks = runner.calls
            report.played_s = time.perf_counter() - started
            report.events = await memory.backends.store.queue_depth()
            report.after_bytes = await used_memory(client)
            report.by_kind, report.keys = await sized(client)
            started = time.perf_counter()
            assert memory.background is not None
            while await memory.backends.store.queue_depth():
                await memory.background.drain()
            report.drained_s = time.perf_counter() - started
            report.drained_bytes = await used_memory(client)
            report.drained_by_kind, _ = await sized(client)
    return report


def render_size(report: SizeReport) -> str:
    """The markdown of a run: totals and a table by kind."""
    per_session = (report.after_bytes - report.before_bytes) / report.sessions
    per_event = (report.after_bytes - report.before_bytes) / max(1, report.events)
    drained = (report.drained_bytes - report.before_bytes) / report.sessions
    rows = "\n".join(
        f"| {kind} | {report.keys.get(kind, 0):,} | {report.by_kind.get(kind, 0) / 1024:,.0f} | "
        f"{report.drained_by_kind.get(kind, 0) / 1024:,.0f} |"
        for kind in KINDS
    )
    return (
        f"{report.sessions} sessions × {report.turns} turns: {report.hooks:,} hooks played in "
        f"{report.played_s:.1f} s, {report.events:,} events queued. Redis `used_memory` "
        f"grew {(report.after_bytes - report.before_bytes) / 2**20:.1f} MiB: "
        f"**{per_session / 1024:.0f} KiB a session, {per_event:.0f} B an event** with the drain "
        f"queue full; after the drain ({report.drained_s:.1f} s) "
        f"{(report.drained_bytes - report.before_bytes) / 2**20:.1f} MiB, "
        f"**{drained / 1024:.0f} KiB a session** (the graph included).\n\n"
        "| keys of | count | KiB before the drain | KiB after |\n|---|---|---|---|\n" + rows
    )


__all__ = ["SizeReport", "render_size", "run_size_bench"]
