"""``plait bench``: measured figures for ``docs/benchmarks.md``. Tests never time anything."""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from langchain_core.runnables import RunnableConfig

from plait.adapters.hosts.opencode.hooks import OpenCodeHooks
from plait.adapters.hosts.opencode.replay import SessionReplay, new_id
from plait.memory import Memory
from plait.state.events import EventKind, SessionEvent
from plait.state.snapshot import Snapshot, fold_snapshot

SEED_CHUNK = 2000
SEED_KINDS = (
    EventKind.FILE_EDIT,
    EventKind.FILE_READ,
    EventKind.DECISION,
    EventKind.TASK_CREATE,
    EventKind.ERROR,
    EventKind.PROMPT,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Timing:
    """Percentiles of one measured operation, in milliseconds."""

    name: str
    samples: int
    p50: float
    p95: float
    p99: float

    def row(self) -> str:
        """A markdown table row."""
        return (
            f"| {self.name} | {self.samples} | {self.p50:.2f} | {self.p95:.2f} | {self.p99:.2f} |"
        )


def percentiles(name: str, samples_ms: list[float]) -> Timing:
    """p50, p95 and p99 of the samples."""
    cuts = statistics.quantiles(samples_ms, n=100, method="inclusive")
    return Timing(name=name, samples=len(samples_ms), p50=cuts[49], p95=cuts[94], p99=cuts[98])


async def timed(operation: Callable[[], Awaitable[object]]) -> float:
    """Milliseconds one awaited call took."""
    started = time.perf_counter()
    await operation()
    return (time.perf_counter() - started) * 1000


def machine_description() -> str:
    """One line about the machine the figures come from."""
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


def seed_event(session_id: str, index: int) -> SessionEvent:
    """A varied prior event."""
    kind = SEED_KINDS[index % len(SEED_KINDS)]
    return SessionEvent(
        root_session_id=session_id,
        session_id=session_id,
        kind=kind,
        summary=f"{kind.value} number {index} in src/module_{index % 97}.py",
        refs=(f"src/module_{index % 97}.py",),
        key=f"{kind.value}:{index % 211}",
    )


async def seed_session(
    memory: Memory, session_id: str, count: int, *, enqueue_group: str | None = None
) -> None:
    """Give a session ``count`` prior events: in its log, and folded into its snapshot.

    With ``enqueue_group`` they are also queued to drain (and the session is listed).
    """
    snapshot = Snapshot()
    for start in range(0, count, SEED_CHUNK):
        chunk = [seed_event(session_id, i) for i in range(start, min(count, start + SEED_CHUNK))]
        stored = await memory.backends.store.append_events(
            session_id, chunk, enqueue_group=enqueue_group
        )
        snapshot = fold_snapshot(snapshot, stored)
    config = RunnableConfig(configurable={"thread_id": session_id})
    await memory.dispatch.graph.aupdate_state(
        config, {"snapshot": snapshot, "cursor": count, "turns": 1}, as_node="stage_envelope"
    )


async def bench_hotpath(
    memory: Memory, sizes: tuple[int, ...] = (1_000, 10_000, 100_000), rounds: int = 300
) -> list[Timing]:
    """``chat.message`` then ``messages.transform`` on sessions with ``sizes`` prior events."""
    timings: list[Timing] = []
    for size in sizes:
        replay = SessionReplay(runner=OpenCodeHooks(memory), session_id=new_id("ses"))
        await seed_session(memory, replay.session_id, size)
        chat: list[float] = []
        transform: list[float] = []
        for turn in range(rounds + 20):
            message = f"Turn {turn}: refactor src/module_{turn % 97}.py and keep the tests green."
            elapsed_chat = await timed(partial(replay.chat, message))
            elapsed_transform = await timed(replay.model_call)
            if turn >= 20:  # warm-up turns are not counted
                chat.append(elapsed_chat)
                transform.append(elapsed_transform)
            replay.history = replay.history[-4:]
        timings.append(percentiles(f"chat.message @ {size:,} events", chat))
        timings.append(percentiles(f"messages.transform @ {size:,} events", transform))
    return timings


def write_section(path: Path, title: str, body: str) -> None:
    """Replace (or add) one ``## title`` section of the benchmarks file."""
    header = (
        "# plait benchmarks\n\n"
        "Figures measured with `plait bench …` on the machine named in each section.\n"
    )
    text = path.read_text() if path.exists() else header
    marker = f"## {title}\n"
    section = f"{marker}\n{body.strip()}\n"
    if marker in text:
        start = text.index(marker)
        end = text.find("\n## ", start + len(marker))
        text = text[:start] + section + ("" if end == -1 else text[end:])
    else:
        text = text.rstrip() + "\n\n" + section
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def timing_table(timings: list[Timing]) -> str:
    """Markdown table of timings."""
    head = "| operation | samples | p50 ms | p95 ms | p99 ms |\n|---|---|---|---|---|"
    return "\n".join([head, *(t.row() for t in timings)])


def stamp() -> str:
    """When and where a figure was measured."""
    return f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine_description()}."


__all__ = [
    "Timing",
    "bench_hotpath",
    "machine_description",
    "percentiles",
    "seed_session",
    "stamp",
    "timing_table",
    "write_section",
]
