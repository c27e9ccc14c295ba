"""``plait bench cost``: LLM calls and tokens per 100 session events with an LLM configured.

The demo's 44-turn coding session (:mod:`plait.devtools.demo_session`) is played twice, as two
sessions of one project (the second finds the first's knowledge in the graph), through
:class:`plait.Memory` with ``llm.base_url`` and ``embedder.base_url`` pointing at a local
OpenAI-compatible server (:class:`~plait.devtools.llm_server.CountingLLMServer`) that answers
graphiti-core's prompts with the offline extractor and counts every call. Two ways of feeding
the graph are measured on the same events:

- **plait now**: the drain as it runs (background drains when the session asks for one, then a
  last one): lasting knowledge only, one episode per root session and drain batch;
- **one episode per event** (plait before #15): every event but assistant chatter and raw tool
  output written as its own episode, as the drain used to.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from plait.adapters.backends.graphiti import open_knowledge_graph
from plait.adapters.backends.graphiti.knowledge import GraphitiKnowledgeGraph
from plait.adapters.hosts.opencode.hooks import OpenCodeHooks
from plait.adapters.hosts.opencode.replay import SessionReplay
from plait.devtools.demo_session import play
from plait.devtools.llm_server import CountingLLMServer, Usage
from plait.memory import Memory
from plait.state.base.settings import Settings
from plait.state.events import EventKind, SessionEvent


@dataclass(frozen=True, kw_only=True, slots=True)
class CostRow:
    """What one way of feeding the graph cost for the session's events."""

    label: str
    events: int
    episodes: int
    usage: Usage

    def per_100(self, value: int) -> float:
        """``value`` per 100 session events."""
        return 100 * value / self.events if self.events else 0.0


def bench_settings(project: Path, data_dir: Path, base_url: str) -> Settings:
    """Plait configured for the counting server as an OpenAI-compatible provider."""
    endpoint = {"base_url": base_url, "api_key": "local"}
    return Settings.load(
        project,
        data_dir=data_dir,
        llm={**endpoint, "model": "bench-llm"},
        embedder={**endpoint, "model": "bench-embed"},
        recall={"embedder": "none"},
    )


async def ignore_compaction(number: int, context: list[str], after: str) -> None:
    """The cost bench does not look at envelopes."""


SESSIONS = 2


async def play_and_drain(settings: Settings, project: Path) -> tuple[list[SessionEvent], int]:
    """Play the sessions with background work running, draining after each; (events, written)."""
    events: list[SessionEvent] = []
    async with Memory.open(project, settings=settings) as memory:
        assert memory.background is not None
        for _ in range(SESSIONS):
            replay = SessionReplay(runner=OpenCodeHooks(memory))
            await play(replay, ignore_compaction)
            await memory.background.drain()
            events += await memory.backends.store.read_events(replay.session_id)
        return events, memory.background.written_total


# What the drain before #15 left out of the graph: the assistant's replies and raw tool output
CHATTER_KINDS = frozenset({EventKind.MESSAGE, EventKind.TOOL_RESULT})


async def one_episode_per_event(settings: Settings, events: list[SessionEvent]) -> int:
    """Write each non-chatter event as its own episode (the drain before #15); episodes."""
    knowledge = await open_knowledge_graph(settings, str(settings.falkordb.url))
    group = "plait-cost-before"
    written = 0
    try:
        for event in events:
            if event.kind not in CHATTER_KINDS:
                written += await knowledge.write_episodes(group, [event])
    finally:
        await knowledge.aclose()
    return written


async def measure_cost() -> list[CostRow]:
    """Both rows for the demo session, against one counting server."""
    server = CountingLLMServer().start()
    try:
        with tempfile.TemporaryDirectory(prefix="plait-cost-") as scratch:
            project, data = Path(scratch) / "invoices", Path(scratch) / "data"
            project.mkdir()
            settings = bench_settings(project, data, server.base_url)
            events, _ = await play_and_drain(settings, project)
            now = server.reset()
            episodes_now = await count_episodes(settings, project)
            async with Memory.open(project, settings=settings, start_background=False) as memory:
                url = memory.backends.falkordb_url
                before_settings = settings.model_copy(
                    update={"falkordb": settings.falkordb.model_copy(update={"url": url})}
                )
                episodes_before = await one_episode_per_event(before_settings, events)
            before = server.reset()
    finally:
        server.stop()
    return [
        CostRow(label="plait now", events=len(events), episodes=episodes_now, usage=now),
        CostRow(
            label="one episode per event (before)",
            events=len(events),
            episodes=episodes_before,
            usage=before,
        ),
    ]


async def count_episodes(settings: Settings, project: Path) -> int:
    """How many episodes the project's group holds."""
    async with Memory.open(project, settings=settings, start_background=False) as memory:
        assert memory.background is not None
        knowledge = await memory.background.knowledge()
        assert isinstance(knowledge, GraphitiKnowledgeGraph)
        return await knowledge.episode_count(memory.group_id)


def render_cost(rows: list[CostRow]) -> str:
    """The rows as a markdown table."""
    lines = [
        "| feeding the graph | session events | episodes | LLM calls | per 100 events "
        "| tokens | per 100 events | embedding calls |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        used = row.usage
        lines.append(
            f"| {row.label} | {row.events} | {row.episodes} | {used.calls} "
            f"| {row.per_100(used.calls):.1f} | {used.tokens:,} | {row.per_100(used.tokens):,.0f} "
            f"| {used.embedding_calls} |"
        )
    return "\n".join(lines) + "\n"


__all__ = ["CostRow", "measure_cost", "render_cost"]
