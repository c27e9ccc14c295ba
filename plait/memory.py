"""``plait.Memory``: the one facade every adapter (HTTP, MCP, LangChain, OpenCode) goes through."""

from __future__ import annotations

import asyncio
import functools
import warnings
from collections.abc import Awaitable, Callable, Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from langgraph.checkpoint.base import BaseCheckpointSaver

from plait.adapters.backends.spool import FileSpool
from plait.background import Background
from plait.dispatch import Dispatch
from plait.forgetting import session_roots
from plait.nodes.hooks import NATIVE, envelope_for, project_cache_key, session_cache_key
from plait.nodes.observations import observation_thread
from plait.nodes.refresh import cached_recall
from plait.nodes.sessions import find_root
from plait.observations import CopiesGo, open_observations
from plait.state.base.boundary import fail_open
from plait.state.base.errors import BackendUnavailable
from plait.state.base.settings import Settings
from plait.state.base.standby import drop_answers
from plait.state.context import NoScheduler, PlaitContext
from plait.state.envelope import without_mentions
from plait.state.events import EventKind, MemoryKind, SessionEvent
from plait.state.groups import project_key
from plait.state.hooks import HookOutput, ToolPolicy
from plait.state.intents import (
    CompactionAfter,
    CompactionBefore,
    CompactionSummary,
    HostAdapter,
    HostCall,
    Intent,
    LifecyclePhase,
    ModelCall,
    Observed,
    SessionLifecycle,
    SessionTarget,
    ToolCall,
    ToolResult,
    UserTurn,
)
from plait.state.ports import MemoryHit
from plait.state.snapshot import Snapshot
from plait.wiring import (
    Backends,
    knowledge_factory,
    make_checkpointer,
    open_backends,
    open_recall,
    project_group_id,
)

if TYPE_CHECKING:
    from plait.state.observations import Observation
    from plait.sync import SyncMemory

PROJECT_SESSION = "project"
RECALL_TIMEOUT_SECONDS = 30.0


class Memory:
    """Session memory that survives compaction, and long-term recall, for one project.

    Its methods are the whole public surface: open and close, the typed intents a host reports,
    search and recall, the envelope and snapshot; ``observations`` are what a person or an agent
    saved on purpose. How a host's call runs (intake, routing, locks) is :attr:`dispatch`
    (:mod:`plait.dispatch`); synchronous code uses :meth:`open_sync` (:mod:`plait.sync`).
    """

    def __init__(
        self,
        *,
        backends: Backends,
        project_dir: Path,
        group_id: str,
        checkpointer: BaseCheckpointSaver,
        background: Background | None = None,
    ) -> None:
        """Use :meth:`open` instead; this wires already-open parts together."""
        self.background = background
        self.backends = backends
        self.project_dir = project_dir
        self.group_id = group_id
        context = PlaitContext.over(
            backends.store,
            settings=backends.settings,
            group_id=group_id,
            scheduler=background or NoScheduler(),
            project_dir=project_dir,
        )
        self.dispatch = Dispatch(
            backends=backends,
            project_dir=project_dir,
            checkpointer=checkpointer,
            context=context,
            background=background,
        )
        self.observations = open_observations(backends, group_id=group_id, project_dir=project_dir)
        self.observations.forget_copies = self._forget_copies
        if background is not None:
            background.observations = self.observations
            background.summarizer = self.observations.after_idle

    # -- forgetting ------------------------------------------------------------------------------
    async def _forget_copies(
        self, observation: Observation, revisions: range, why: CopiesGo
    ) -> None:
        """Remove the copies plait derived from these revisions of an observation.

        The recall index's turns and the knowledge graph's episodes, then what serves them:
        the recall caches and staged envelopes of the project's sessions. A ``deleted``
        observation's queued revisions go too. When a person deleted or edited it, the
        project's standby answers go (they may quote it); an automatic revision's are replaced
        by the next answer (dropping them on every revised session summary left a dead
        service's hooks with no memory at all). Raises :class:`~plait.BackendUnavailable` when
        the knowledge graph does not answer (nothing is deleted then: try again).
        """
        store = self.backends.store
        root = observation_thread(observation.id)
        if why == "deleted":
            await store.withdraw(root)
        if self.background is not None:
            groups = [self.observations.group_of(observation.scope), self.observations.user_group]
            await self.background.forget_events(root, list(revisions), list(dict.fromkeys(groups)))
        roots = await session_roots(store, self.group_id)
        keys = [
            project_cache_key(self.group_id),
            *(session_cache_key(self.group_id, r) for r in roots),
        ]
        await store.drop_cache(keys)
        if why != "revised":
            drop_answers(str(self.settings.resolved_data_dir()), project_key(self.project_dir))
        for root_session in roots:
            envelope, staged = await store.take_envelope(root_session)
            if envelope is None:
                continue
            cleaned = without_mentions(envelope, [observation.title])
            if cleaned != envelope or staged:
                await store.stage_envelope(root_session, cleaned)

    # -- opening and closing --------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        project_dir: Path | str | None = None,
        data_dir: Path | str | None = None,
        *,
        settings: Settings | None = None,
        start_background: bool = True,
        reconnect: bool = False,
        **overrides: Any,
    ) -> _Opening:
        """Open memory for a project: ``async with Memory.open(...) as memory`` or ``await``.

        With ``start_background`` (the default) this process drains the queue and refreshes the
        recall cache itself, and watches the hot tier (:meth:`Dispatch.supervise`); pass False
        when ``plait worker`` processes do it. With ``reconnect`` a ``redis.url`` that does not
        answer is waited for (calls wait in the spool) instead of replaced by memory.
        """
        opening = cls._open(project_dir, data_dir, settings, start_background, overrides, reconnect)
        return _Opening(opening)

    @classmethod
    async def _open(
        cls,
        project_dir: Path | str | None,
        data_dir: Path | str | None,
        settings: Settings | None,
        start_background: bool,
        overrides: dict[str, Any],
        reconnect: bool = False,
    ) -> Self:
        directory = Path(project_dir or Path.cwd()).resolve()
        if data_dir is not None:
            overrides["data_dir"] = Path(data_dir)
        settings = settings or Settings.load(directory, **overrides)
        backends = await open_backends(settings, directory, wait=reconnect)
        group_id = project_group_id(settings, directory)
        checkpointer = make_checkpointer(backends)
        recall, embedder = open_recall(settings)
        background = Background(
            store=backends.store,
            settings=settings,
            group_id=group_id,
            knowledge_factory=knowledge_factory(backends),
            checkpointer=checkpointer,
            recall=recall,
            embedder=embedder,
        )
        memory = cls(
            backends=backends,
            project_dir=directory,
            group_id=group_id,
            checkpointer=checkpointer,
            background=background,
        )
        await fail_open("preparing observations", memory.observations.on_open(), None)
        await fail_open("priming the project's recall", prime_project_recall(memory), None)
        memory.dispatch.open_intake(FileSpool.for_project(settings.resolved_data_dir(), directory))
        if start_background:
            background.start()
            background.schedule_refresh(group_id, PROJECT_SESSION, "")  # the project's newest
            memory.dispatch.supervise()
        memory.dispatch.loop = asyncio.get_running_loop()
        return memory

    @classmethod
    def open_sync(
        cls,
        project_dir: Path | str | None = None,
        data_dir: Path | str | None = None,
        *,
        settings: Settings | None = None,
        start_background: bool = True,
        **overrides: Any,
    ) -> SyncMemory:
        """Open memory for synchronous code: ``with Memory.open_sync(...) as memory:``.

        The memory runs on an event loop of its own in a background thread; the handle's
        methods (and a ``SessionMemoryMiddleware`` under ``invoke``/``stream``) call into it.
        Close it with ``close()`` or the ``with`` block. Arguments as for :meth:`open`.
        """
        from plait.sync import SyncMemory

        return SyncMemory.start(
            cls._open(project_dir, data_dir, settings, start_background, overrides)
        )

    async def aclose(self) -> None:
        """Stop background work, close connections, release the embedded server.

        The server is released even when stopping the background work failed. Calls still
        waiting in the spool stay there for the next process.
        """
        try:
            await self.dispatch.aclose()
            if self.background is not None:
                await self.background.aclose()
        finally:
            await self.backends.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def settings(self) -> Settings:
        """The settings in force."""
        return self.backends.settings

    @property
    def degraded(self) -> list[str]:
        """Why plait runs degraded (empty when it does not).

        What the backends said at opening (until the hot tier answers), the hot tier being down
        and calls waiting in the spool, and the last call that failed open, until a call goes
        through again.
        """
        return self.dispatch.degraded

    # -- the intents a host reports --------------------------------------------------------------
    async def observe(
        self,
        session_id: str,
        intents: Sequence[Intent],
        *,
        parent_id: str | None = None,
        host: HostAdapter = NATIVE,
    ) -> HookOutput:
        """Record what happened in a session (any intents) and return plait's answer.

        ``host`` names who reports it (its events say so); its node must read intents. A
        payload plait cannot use raises :class:`~plait.InvalidHookPayload`; any other failure
        is logged and the answer is empty (:attr:`degraded` says why).
        """
        target = SessionTarget(session_id=session_id, parent_id=parent_id)
        call = HostCall(host=host, target=target, payload=list(intents))
        return (await self.dispatch.answer(call)).output

    async def user_turn(self, session_id: str, text: str, *, parent_id: str | None = None) -> None:
        """The user said ``text``; the envelope for the next model call is prepared."""
        await self.observe(session_id, [UserTurn(text=text)], parent_id=parent_id)

    async def model_call(
        self,
        session_id: str,
        *,
        query: str = "",
        observed: Sequence[Intent | SessionEvent] = (),
        host: HostAdapter = NATIVE,
    ) -> str:
        """The envelope for the model call about to happen ("" when there is nothing to say).

        ``observed`` is what happened since the last call, as intents or as events (recorded
        first); ``query`` is the user's current request, used to tell when long-term recall
        should be refreshed.
        """
        events = tuple(item for item in observed if isinstance(item, SessionEvent))
        intents = [item for item in observed if not isinstance(item, SessionEvent)]
        seen = [Observed(events=events)] if events else []
        answer = await self.observe(
            session_id, [*seen, *intents, ModelCall(query=query)], host=host
        )
        return answer.get("inject") or ""

    async def compaction_before(self, session_id: str) -> str:
        """The envelope to give the summarizer that is about to compact the session."""
        return (await self.observe(session_id, [CompactionBefore()])).get("inject") or ""

    async def compaction_after(self, session_id: str, summary: str = "") -> None:
        """The session was compacted (into ``summary`` when the host has it)."""
        summaries = [CompactionSummary(text=summary)] if summary else []
        await self.observe(session_id, [*summaries, CompactionAfter()])

    async def tool_call(
        self, session_id: str, tool: str, args: dict[str, Any] | None = None
    ) -> ToolPolicy:
        """Whether a tool call about to run goes ahead: allow, nudge, redirect or deny."""
        answer = await self.observe(session_id, [ToolCall(tool=tool, args=args or {})])
        return answer.get("policy") or ToolPolicy()

    async def tool_result(self, session_id: str, result: ToolResult) -> None:
        """A tool call finished: what it did becomes events (a file touched, an error, its fix)."""
        await self.observe(session_id, [result])

    async def lifecycle(
        self,
        session_id: str,
        phase: LifecyclePhase,
        *,
        parent_id: str | None = None,
        title: str = "",
    ) -> None:
        """The session was created, updated, deleted or went idle (idle drains)."""
        intent = SessionLifecycle(phase=phase, title=title)
        await self.observe(session_id, [intent], parent_id=parent_id)

    # -- long-term memory ------------------------------------------------------------------------
    async def search(self, query: str, limit: int | None = None) -> list[MemoryHit]:
        """Search long-term memory now (project and user groups), best first; nothing is cached.

        The recall index's turns (queued events included) with the knowledge graph's facts
        beside them (:func:`plait.nodes.memory_search.search_memory`): for tools and the
        command line, never for hooks. Raises :class:`BackendUnavailable` when this process has
        no long-term memory.
        """
        if self.background is None:
            raise BackendUnavailable("long-term memory is not available in this process")
        limit = limit or self.settings.graphiti.search_limit
        return await self.background.search(self.group_id, query, limit)

    async def recall(self, session_id: str, query: str) -> str | None:
        """Search long-term memory now (project and user groups) for ``query``.

        For tools an agent calls on purpose, never for hooks: it waits on the knowledge graph (at
        most :data:`RECALL_TIMEOUT_SECONDS`). The result is rendered as in
        ``<persistent_memory>`` and also cached for the session's next envelope. Returns ``""``
        when nothing matched and None when this process has no long-term memory.
        ``memory.observations.search(...)`` finds saved observations at once.
        """
        if self.background is None:
            return None
        root = await find_root(self.backends.store, session_id)
        try:
            found = await asyncio.wait_for(
                self.background.refresh(self.group_id, root, query), RECALL_TIMEOUT_SECONDS
            )
        except TimeoutError:
            raise BackendUnavailable(
                f"long-term memory did not answer within {RECALL_TIMEOUT_SECONDS:.0f} s"
            ) from None
        return found.text if found is not None else ""

    # -- what the model sees ---------------------------------------------------------------------
    async def snapshot(self, session_id: str) -> Snapshot:
        """The session's snapshot as of its last hook."""
        return (await self.dispatch.state(session_id)).get("snapshot") or Snapshot()

    async def envelope(self, session_id: str) -> str:
        """Compose the session's ``<session_memory>`` envelope now (no Graphiti call)."""
        return envelope_for(await self.dispatch.state(session_id), self.settings)

    # -- names that moved, kept for one release ---------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        """A name that moved off ``Memory``, with a :class:`DeprecationWarning` saying where."""
        moved = _MOVED.get(name)
        if moved is None or name.startswith("__"):
            raise AttributeError(f"'Memory' object has no attribute {name!r}")
        where, find = moved
        warnings.warn(f"Memory.{name} is deprecated: use {where}", DeprecationWarning, stacklevel=2)
        return find(self)


async def prime_project_recall(memory: Memory) -> None:
    """A project with no cached recall yet gets its brief cached as the project's recall.

    Every session without a recall of its own reads the project's, so the first model call of a
    project's first session carries what seeding found (the brief) before any background
    refresh has run (on a cold start its first search takes seconds). A cached recall already
    there is left as it is.
    """
    store, settings = memory.backends.store, memory.settings
    key = project_cache_key(memory.group_id)
    if await store.get_cache(key) is not None:
        return
    hits = await memory.observations.recall_hits(
        memory.group_id, "", settings.graphiti.search_limit
    )
    recall = cached_recall(hits, "", settings)
    if recall.text:
        await store.put_cache(key, recall.model_dump_json(), settings.redis.cache_ttl_seconds)


async def _turn(
    memory: Memory, session_id: str, events: Sequence[SessionEvent] = (), *, query: str = ""
) -> str:
    return await memory.model_call(session_id, query=query, observed=events)


async def _remember(
    memory: Memory,
    session_id: str,
    text: str,
    kind: MemoryKind = "decision",
    *,
    source: str = "plait.remember",
) -> SessionEvent:
    event = SessionEvent(
        root_session_id=session_id,
        session_id=session_id,
        kind=EventKind(kind),
        summary=text,
        body=text,
        source_hook=source,
    )
    stored = await memory.dispatch.record(session_id, [event])
    return stored[0] if stored else event


async def _hook(
    memory: Memory, name: str, input: dict[str, Any], output: dict[str, Any]
) -> dict[str, Any]:
    from plait.adapters.hosts.opencode.hooks import OpenCodeHooks

    return await OpenCodeHooks(memory).hook(name, input, output)


# name -> (where it is now, how to reach it from a memory)
_MOVED: dict[str, tuple[str, Callable[[Memory], Any]]] = {
    "handle": ("memory.dispatch.answer(call).output", lambda m: _output_of(m.dispatch)),
    "accept": ("memory.dispatch.answer(call)", lambda m: m.dispatch.answer),
    "run_call": ("memory.dispatch.run(call)", lambda m: m.dispatch.run),
    "open_intake": ("memory.dispatch.open_intake", lambda m: m.dispatch.open_intake),
    "supervise": ("memory.dispatch.supervise", lambda m: m.dispatch.supervise),
    "run_sync": ("memory.dispatch.run_sync", lambda m: m.dispatch.run_sync),
    "record": ("memory.dispatch.record", lambda m: m.dispatch.record),
    "state": ("memory.dispatch.state", lambda m: m.dispatch.state),
    "intake": ("memory.dispatch.intake", lambda m: m.dispatch.intake),
    "supervisor": ("memory.dispatch.supervisor", lambda m: m.dispatch.supervisor),
    "graph": ("memory.dispatch.graph", lambda m: m.dispatch.graph),
    "context": ("memory.dispatch.context", lambda m: m.dispatch.context),
    "checkpointer": ("memory.dispatch.checkpointer", lambda m: m.dispatch.checkpointer),
    "loop": ("memory.dispatch.loop", lambda m: m.dispatch.loop),
    "store": ("memory.backends.store", lambda m: m.backends.store),
    "turn": (
        "memory.model_call(session_id, query=..., observed=events)",
        lambda m: functools.partial(_turn, m),
    ),
    "remember": (
        "memory.observations.save(...) (the memory_save tool)",
        lambda m: functools.partial(_remember, m),
    ),
    "hook": (
        "plait.adapters.hosts.opencode.OpenCodeHooks(memory).hook",
        lambda m: functools.partial(_hook, m),
    ),
}


def _output_of(dispatch: Dispatch) -> Callable[[HostCall], Awaitable[HookOutput]]:
    async def handle(call: HostCall) -> HookOutput:
        return (await dispatch.answer(call)).output

    return handle


def remembered(kind: str, event: SessionEvent, why: Sequence[str] = ()) -> str:
    """A memory tool's answer to :meth:`Memory.remember` (``why``: :attr:`Memory.degraded`)."""
    if not event.id:
        reason = why[-1] if why else "memory is unavailable"
        return f"Not remembered ({kind}): {reason}"
    return f"Remembered ({kind}): {event.summary}"


def recalled(text: str | None) -> str:
    """A memory tool's answer to :meth:`Memory.recall`."""
    if text is None:
        return "Long-term memory is not available in this process."
    return text or "No memories found."


class _Opening(Awaitable[Memory]):
    """``Memory.open(...)``: await it, or use it as an async context manager."""

    def __init__(self, opening: Awaitable[Memory]) -> None:
        self._opening = opening
        self._memory: Memory | None = None

    def __await__(self) -> Generator[Any, None, Memory]:
        return self._opening.__await__()

    async def __aenter__(self) -> Memory:
        self._memory = await self._opening
        return self._memory

    async def __aexit__(self, *exc_info: object) -> None:
        if self._memory is not None:
            await self._memory.aclose()


__all__ = [
    "RECALL_TIMEOUT_SECONDS",
    "Memory",
    "MemoryKind",
    "SyncMemory",
    "recalled",
    "remembered",
]


def __getattr__(name: str) -> Any:
    """``plait.memory.SyncMemory`` lives in :mod:`plait.sync` (imported on first use)."""
    if name == "SyncMemory":
        from plait.sync import SyncMemory

        return SyncMemory
    raise AttributeError(f"module 'plait.memory' has no attribute {name!r}")
