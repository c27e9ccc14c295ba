"""The graphs ``langgraph.json`` names: plait's four graphs, runnable under LangGraph Server.

A LangGraph Server run gives a graph its context as JSON (or none at all). plait's nodes need a
:class:`~plait.state.context.PlaitContext` (ports, settings, group), so the graphs here declare
:class:`ServerContext` instead: two optional strings, which is what ``/schemas`` shows, and
which LangGraph turns into the full context (``ServerContext(**given)`` builds a
``PlaitContext`` from plait's settings for that project and data dir). The servers behind it
(the embedded FalkorDB, or ``redis.url``) are opened once per process and event loop; the
knowledge graph is opened on first use, for the drain and cache-refresh graphs only.

Inputs, as JSON over the REST API (``POST /runs/wait``):
    hooks          ``{"session": "s1", "payload": [{"type": "user_turn", "text": "…"}]}``
    compaction     ``{"session": "s1", "payload": [{"type": "compaction_before"}]}``
    drain          ``{"consumer": "server"}``
    cache_refresh  ``{"root_session_id": "s1", "query": "…"}`` (``group_id``: the project's)
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from plait.adapters.hosts.langgraph_server.intents import intents_of, session_of
from plait.graphs.cache_refresh import build_cache_refresh_graph
from plait.graphs.compaction import build_compaction_graph
from plait.graphs.drain import build_drain_graph
from plait.graphs.hooks import build_hooks_graph
from plait.state.background import DrainState, RefreshState
from plait.state.base.settings import Settings
from plait.state.context import PlaitContext
from plait.state.events import SessionEvent
from plait.state.hooks import HookState
from plait.state.intents import HostAdapter
from plait.state.ports import GraphPicture, KnowledgeGraph, MemoryHit
from plait.wiring import (
    Backends,
    backends_at,
    knowledge_factory,
    process_server_url,
    project_group_id,
)

_BACKENDS: dict[tuple[int, str, str], Backends] = {}  # (event loop, url, group)
_KNOWLEDGE: dict[tuple[int, str, str], asyncio.Future[KnowledgeGraph]] = {}


@dataclass
class ServerContext:
    """What a LangGraph Server run may tell plait: the project and the data dir, both optional.

    Constructing it builds the run's :class:`PlaitContext` from plait's settings for that
    project (default: the server's working directory) and data dir (default: the settings').
    """

    project_dir: str = ""
    data_dir: str = ""

    def __new__(cls, project_dir: str = "", data_dir: str = "") -> Any:  # noqa: D102
        return server_context(project_dir, data_dir)


def _loop_id() -> int:
    try:
        return id(asyncio.get_running_loop())
    except RuntimeError:
        return 0


def server_backends(resolved: Resolved, key: tuple[int, str, str]) -> Backends:
    """The hot store for this event loop (redis clients belong to one loop), opened once."""
    found = _BACKENDS.get(key)
    if found is not None:
        return found
    backends = backends_at(resolved.settings, resolved.url, resolved.project)
    _BACKENDS[key] = backends
    return backends


class LazyKnowledge:
    """The knowledge graph, opened on first use and shared by the runs of one event loop."""

    def __init__(self, backends: Backends, key: tuple[int, str, str]) -> None:
        """Open it from ``backends`` when first needed."""
        self.backends = backends
        self.key = key

    async def _get(self) -> KnowledgeGraph:
        opening = _KNOWLEDGE.get(self.key)
        if opening is None:
            opening = asyncio.ensure_future(knowledge_factory(self.backends)())
            _KNOWLEDGE[self.key] = opening
        return await asyncio.shield(opening)

    async def write_episodes(self, group_id: str, events: list[SessionEvent]) -> int:
        """Write events as episodes."""
        return await (await self._get()).write_episodes(group_id, events)

    async def search(self, query: str, group_ids: list[str], limit: int) -> list[MemoryHit]:
        """Search the groups."""
        return await (await self._get()).search(query, group_ids, limit)

    async def forget_episodes(self, group_id: str, episode_uuids: list[str]) -> int:
        """Remove episodes."""
        return await (await self._get()).forget_episodes(group_id, episode_uuids)

    async def picture(self, group_id: str, limit: int) -> GraphPicture:
        """A bounded picture of the group's graph."""
        return await (await self._get()).picture(group_id, limit)

    async def aclose(self) -> None:
        """Nothing: it lives as long as the server process."""


@dataclass(frozen=True)
class Resolved:
    """Settings and group of one (project, data dir) pair, resolved once (it reads files)."""

    settings: Settings
    group_id: str
    url: str
    project: Path


_RESOLVED: dict[tuple[str, str], Resolved] = {}


def resolve(project_dir: str = "", data_dir: str = "") -> Resolved:
    """Settings, group and server URL for a project and data dir (cached; blocking I/O once).

    The server's defaults (its working directory, the settings' data dir) are resolved when
    this module is imported, so a run that names neither does no blocking I/O (``langgraph
    dev`` refuses blocking calls in runs unless started with ``--allow-blocking``).
    """
    found = _RESOLVED.get((project_dir, data_dir))
    if found is not None:
        return found
    project = Path(project_dir or Path.cwd()).resolve()
    overrides: dict[str, Any] = {"data_dir": Path(data_dir)} if data_dir else {}
    settings = Settings.load(project, **overrides)
    url = settings.redis.url or process_server_url(settings.resolved_data_dir())
    group_id = project_group_id(settings, project)
    found = Resolved(settings=settings, group_id=group_id, url=url, project=project)
    _RESOLVED[(project_dir, data_dir)] = found
    return found


def server_context(project_dir: str = "", data_dir: str = "") -> PlaitContext:
    """A run context from plait's settings for a project (default: the working directory)."""
    resolved = resolve(project_dir, data_dir)
    key = (_loop_id(), resolved.url, resolved.group_id)
    backends = server_backends(resolved, key)
    return PlaitContext.over(
        backends.store,
        settings=resolved.settings,
        group_id=resolved.group_id,
        knowledge=LazyKnowledge(backends, key),
    )


async def read_request(state: HookState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """The server's host node: the session and the JSON intents of a REST request."""
    return {"session": session_of(state.get("session")), "intents": intents_of(state["payload"])}


SERVER = HostAdapter(name="langgraph_server", adapt=read_request)


def for_server(builder: StateGraph[Any, Any, Any, Any]) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile a graph builder with the server's context schema."""
    builder.context_schema = ServerContext
    return builder.compile()


async def default_group(state: RefreshState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """A refresh names its group, or searches the context's project."""
    return {"group_id": state.get("group_id") or runtime.context.group_id}


async def default_consumer(state: DrainState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """A drain names its consumer, or drains as ``langgraph-server``."""
    return {"consumer": state.get("consumer") or "langgraph-server"}


def behind(
    first: Any, inner: StateGraph[Any, Any, Any, Any], schema: type, name: str
) -> StateGraph[Any, Any]:
    """``inner`` (compiled) as the one node after ``first``, under the server's context."""
    builder: StateGraph[Any, Any] = StateGraph(schema, context_schema=ServerContext)
    builder.add_node(first.__name__, first)
    builder.add_node(name, inner.compile())
    builder.add_edge(START, first.__name__)
    builder.add_edge(first.__name__, name)
    builder.add_edge(name, END)
    return builder


resolve()  # the defaults, now: no blocking I/O in a run that gives no context
hooks = for_server(build_hooks_graph(SERVER))
compaction = for_server(behind(read_request, build_compaction_graph(), HookState, "compaction"))
drain = for_server(behind(default_consumer, build_drain_graph(), DrainState, "drain"))
cache_refresh = for_server(
    behind(default_group, build_cache_refresh_graph(), RefreshState, "cache_refresh")
)

__all__ = ["SERVER", "ServerContext", "cache_refresh", "compaction", "drain", "hooks"]
