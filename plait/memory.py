"""``plait.Memory``: the one facade every adapter (HTTP, MCP, LangChain, OpenCode) goes through."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine, Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from plait.adapters.backends.checkpoint import AsyncRedisSaver, plait_serializer
from plait.adapters.backends.memory_graph import InMemoryKnowledgeGraph
from plait.adapters.backends.spool import FileSpool
from plait.background import Background
from plait.graphs.hooks import HooksGraph, build_hooks_graph
from plait.intake import Answer, Intake
from plait.nodes.capture import relative_path
from plait.nodes.envelope import without_mentions
from plait.nodes.hooks import NATIVE, envelope_for, project_cache_key, session_cache_key
from plait.nodes.observations import observation_thread
from plait.nodes.sessions import find_root, link_child
from plait.observations import open_observations
from plait.state.base.boundary import describe, fail_open
from plait.state.base.errors import BackendError, BackendUnavailable, PlaitError, UsageError
from plait.state.base.redact import redacted_logger
from plait.state.base.settings import Settings
from plait.state.context import NoScheduler, PlaitContext
from plait.state.events import EventKind, MemoryKind, SessionEvent
from plait.state.groups import group_id_for
from plait.state.hooks import HookOutput, HookState, SessionRef, ToolPolicy, hook_input
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
    Sessionless,
    SessionLifecycle,
    SessionTarget,
    ToolCall,
    ToolResult,
    UserTurn,
)
from plait.state.ports import HotStore, KnowledgeGraph, MemoryHit
from plait.state.snapshot import Snapshot
from plait.supervisor import Supervisor
from plait.wiring import Backends, open_backends, open_recall

if TYPE_CHECKING:
    from plait.state.observations import Observation

logger = redacted_logger("plait")
# The intake answers a call within this share of hooks.timeout_ms, so the answer reaches the
# plugin (whose budget is the same timeout) before it gives up on the call.
ANSWER_SHARE = 0.6
SESSION_PAGE = 200  # sessions read at a time when a forget reaches every session's copies

MAX_SESSION_LOCKS = 4096
MAX_CACHED_ROOTS = 4096
MAX_FILE_OWNERS = 4096
ACTIVE_SECONDS = 30 * 60
PROJECT_WIDE_SESSIONS_MAX = 8
CHECKPOINTS_KEPT_PER_THREAD = 8
PROJECT_SESSION = "project"
RECALL_TIMEOUT_SECONDS = 30.0


def project_group_id(settings: Settings, project_dir: Path) -> str:
    """The knowledge-graph group of a project."""
    return group_id_for(settings.graphiti.group_id_prefix, project_dir)


def make_checkpointer(backends: Backends) -> BaseCheckpointSaver:
    """The Redis saver on the hot tier's server, or an in-memory one when degraded."""
    if backends.redis is None:
        return InMemorySaver(serde=plait_serializer())
    return AsyncRedisSaver(
        backends.redis,
        max_checkpoints_per_thread=CHECKPOINTS_KEPT_PER_THREAD,
        ttl_seconds=backends.settings.redis.session_ttl_seconds,
        serde=plait_serializer(),
    )


def knowledge_factory(backends: Backends) -> Callable[[], Awaitable[KnowledgeGraph]]:
    """Open Graphiti on the FalkorDB server lazily, in the background, never on a hook."""

    async def open_knowledge() -> KnowledgeGraph:
        if backends.falkordb_url is None:
            return InMemoryKnowledgeGraph()
        # graphiti-core takes seconds to import: in a thread, so hooks (and /v1/health) are
        # answered meanwhile
        await asyncio.to_thread(importlib.import_module, "plait.adapters.backends.graphiti")
        from plait.adapters.backends.graphiti import open_knowledge_graph

        return await open_knowledge_graph(
            backends.settings, backends.falkordb_url, spend_cache=backends.store
        )

    return open_knowledge


class Memory:
    """Session memory that survives compaction, and long-term recall, for one project."""

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
        self.checkpointer = checkpointer
        self._graphs: dict[tuple[str, bool], HooksGraph] = {}
        self.graph: HooksGraph = self._graph_for(NATIVE, reads_state=True)
        self.context = PlaitContext.over(
            backends.store,
            settings=backends.settings,
            group_id=group_id,
            scheduler=background or NoScheduler(),
            project_dir=project_dir,
        )
        self._locks: OrderedDict[str, asyncio.Lock] = OrderedDict()
        self._roots: dict[str, str] = {}
        self._active: OrderedDict[str, float] = OrderedDict()
        self._file_owners: OrderedDict[str, str] = OrderedDict()
        self.observations = open_observations(backends, group_id=group_id, project_dir=project_dir)
        self.observations.forget_copies = self._forget_copies
        if background is not None:
            background.observations = self.observations
            background.summarizer = self.observations.after_idle
        self.loop: asyncio.AbstractEventLoop | None = None
        self._failure: str | None = None
        self._failure_at = 0.0
        self.supervisor = Supervisor(backends, restart=False)
        self.intake: Intake | None = None

    # -- forgetting ------------------------------------------------------------------------------
    async def _forget_copies(
        self, observation: Observation, revisions: range, queued: bool
    ) -> None:
        """Remove the copies plait derived from these revisions of an observation.

        The queued ones (with ``queued``), the recall index's turns and the knowledge graph's
        episodes, then what serves them: the recall caches and staged envelopes of the
        project's sessions. Raises :class:`~plait.BackendUnavailable` when the knowledge graph
        does not answer (nothing is deleted then: try again).
        """
        root = observation_thread(observation.id)
        if queued:
            await self.store.withdraw(root)
        if self.background is not None:
            groups = [self.observations.group_of(observation.scope), self.observations.user_group]
            await self.background.forget_events(root, list(revisions), list(dict.fromkeys(groups)))
        roots = await self._session_roots()
        keys = [
            project_cache_key(self.group_id),
            *(session_cache_key(self.group_id, r) for r in roots),
        ]
        await self.store.drop_cache(keys)
        for root_session in roots:
            envelope, staged = await self.store.take_envelope(root_session)
            if envelope is None:
                continue
            cleaned = without_mentions(envelope, [observation.title])
            if cleaned != envelope or staged:
                await self.store.stage_envelope(root_session, cleaned)

    async def _session_roots(self) -> list[str]:
        """Every root session the project's event log lists."""
        roots: list[str] = []
        while True:
            page = await self.store.list_sessions(
                self.group_id, offset=len(roots), limit=SESSION_PAGE
            )
            roots += [seen.session_id for seen in page]
            if len(page) < SESSION_PAGE:
                return roots

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
        recall cache itself, and watches the hot tier (:meth:`supervise`); pass False when
        ``plait worker`` processes do it. With ``reconnect`` a ``redis.url`` that does not
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
        backends = await open_backends(settings, wait=reconnect)
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
        memory.open_intake(FileSpool.for_project(settings.resolved_data_dir(), directory))
        if start_background:
            background.start()
            background.schedule_refresh(group_id, PROJECT_SESSION, "")  # the project's newest
            memory.supervise()
        memory.loop = asyncio.get_running_loop()
        return memory

    def open_intake(self, spool: FileSpool) -> Intake:
        """Keep host calls that record in ``spool`` until they ran (see :mod:`plait.intake`).

        Calls a process that ended left in the project's spool are taken over now.
        """
        self.intake = Intake(
            spool=spool,
            dead=spool,
            supervisor=self.supervisor,
            run=self.run_call,
            deadline_s=self.settings.hooks.timeout_ms / 1000 * ANSWER_SHARE,
            spool_max_bytes=self.settings.service.spool_max_bytes,
        )
        self.intake.adopt()
        return self.intake

    def supervise(self) -> None:
        """Watch the hot tier from a loop of its own (:mod:`plait.supervisor`).

        It brings an embedded server back when it died, flushes the spool to disk and adopts
        spools left behind.
        """
        self.supervisor.restart = self.backends.server is not None
        if self.intake is not None:
            self.supervisor.ticks.append(self.intake.tick)
        if self.background is not None:
            self.supervisor.on_moved.append(self.background.forget_knowledge)
        self.supervisor.start()

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
        return SyncMemory.start(
            cls._open(project_dir, data_dir, settings, start_background, overrides)
        )

    def run_sync[T](self, work: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run a coroutine on this memory's event loop from synchronous code; its result.

        Raises :class:`~plait.UsageError` when that cannot be done: the loop is not
        running in another thread (open with :meth:`open_sync` for synchronous callers), or
        the caller is on that loop itself (use the async API there).
        """
        loop = self.loop
        if loop is None or loop.is_closed() or not loop.is_running():
            work.close()
            raise UsageError(
                "this Memory's event loop is not running: open it with Memory.open_sync(...) "
                "to use it from synchronous code (agent.invoke, agent.stream)"
            )
        if _current_loop() is loop:
            work.close()
            raise UsageError(
                "called synchronously from the Memory's own event loop: use the async API "
                "(agent.ainvoke, agent.astream) there"
            )
        return asyncio.run_coroutine_threadsafe(work, loop).result(timeout)

    async def aclose(self) -> None:
        """Stop background work, close connections, release the embedded server.

        The server is released even when stopping the background work failed. Calls still
        waiting in the spool stay there for the next process.
        """
        try:
            await self.supervisor.aclose()
            if self.intake is not None:
                await self.intake.aclose()
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
    def store(self) -> HotStore:
        """The hot store."""
        return self.backends.store

    @property
    def degraded(self) -> list[str]:
        """Why plait runs degraded (empty when it does not).

        What the backends said at opening (until the hot tier answers), the hot tier being down
        and calls waiting in the spool, and the last call that failed open, until a call goes
        through again.
        """
        fell_back = self.backends.redis is None
        found = [*self.backends.degraded] if fell_back or not self.supervisor.up else []
        if not self.supervisor.up and self.supervisor.reason not in found:
            found.append(f"hot tier down: {self.supervisor.reason}")
        waiting = self.intake.stats().pending if self.intake is not None else 0
        if waiting:
            found.append(f"{waiting} call(s) wait in the spool for the hot tier")
        # a failure from before the hot tier came back is over: health says ok again
        failed = self._failure and self._failure_at > self.supervisor.recovered_at
        return [*found, *([self._failure] if failed and self._failure else [])]

    def _failed(self, failure: str | None) -> None:
        """Remember the last call that failed open (None: the last call went through)."""
        self._failure, self._failure_at = failure, time.monotonic()

    async def _fail_open[T](
        self,
        what: str,
        work: Awaitable[T],
        default: T,
        failures: list[PlaitError] | None = None,
    ) -> T:
        """``work``'s result, or ``default`` with a warning and :attr:`degraded` saying why."""
        failures = [] if failures is None else failures
        result = await fail_open(what, work, default, on_failure=failures.append)
        self._failed(f"{what} failed: {describe(failures[0])}" if failures else None)
        return result

    # -- host calls -----------------------------------------------------------------------------
    async def handle(self, call: HostCall) -> HookOutput:
        """Run one host call through the hooks graph and return what it answers.

        Raises :class:`~plait.InvalidHookPayload` (naming the field) for a payload
        plait cannot use. Any other failure is logged and the answer is empty: a broken memory
        layer never breaks the agent (:func:`plait.state.base.boundary.fail_open`).
        """
        return (await self.accept(call)).output

    async def accept(self, call: HostCall) -> Answer:
        """:meth:`handle`, saying also where the call is: ``stored``, ``spooled`` or not kept.

        A call whose host can rebuild it goes through the intake (:mod:`plait.intake`): one
        that records is in the spool before anything else, runs in its session's order, and
        is answered at the latest when ``hooks.timeout_ms`` passed. Other calls run at once,
        within that time.
        """
        if self.intake is not None and call.host.rebuild is not None:
            answer = await self.intake.submit(call)
            self._note(f"{call.host.name} call", answer)
            return answer
        failures: list[PlaitError] = []
        with self._hot_path():
            work = self._within_timeout(self._handle(call))
            output = await self._fail_open(f"{call.host.name} call", work, None, failures)
        if output is None:
            return Answer(output=HookOutput(), reason=describe(failures[0]))
        return Answer(output=output, kept="stored" if call.durable else "")

    async def run_call(self, call: HostCall) -> HookOutput:
        """Run one host call now, raising what fails (the intake's lanes run calls this way)."""
        with self._hot_path():
            return await self._handle(call)

    def _note(self, what: str, answer: Answer) -> None:
        """Remember (and log) a call that failed open, for :attr:`degraded`.

        A call that was kept (stored, or spooled to run later) did not fail.
        """
        failed = bool(answer.reason) and not answer.kept
        if failed:
            logger.warning("plait: %s failed open: %s", what, answer.reason)
        self._failed(f"{what} failed: {answer.reason}" if failed else None)

    async def _within_timeout[T](self, work: Awaitable[T]) -> T:
        """``work``, given at most ``hooks.timeout_ms``."""
        timeout_ms = self.settings.hooks.timeout_ms
        try:
            return await asyncio.wait_for(work, timeout_ms / 1000)
        except TimeoutError:
            raise BackendError(
                f"it did not finish within {timeout_ms} ms (hooks.timeout_ms)"
            ) from None

    async def _handle(self, call: HostCall) -> HookOutput:
        answer = HookOutput()
        for session in await self._sessions_for(call.target):
            answer = await self._run(call, session)
        return answer

    async def _run(self, call: HostCall, session: SessionRef) -> HookOutput:
        graph = self._graph_for(call.host, reads_state=call.reads_state)
        graph_input = hook_input(session, call.payload, call.host.name, call.call_id)
        async with self._lock(session.root_session_id):
            if call.reads_state:
                result = await graph.ainvoke(
                    graph_input,
                    config=self._config(session.root_session_id),
                    context=self.context,
                    durability="exit",
                )
            else:
                result = await graph.ainvoke(graph_input, context=self.context)
        if result.get("lifecycle") == "deleted":
            await self._forget(session)
        return HookOutput(**cast(HookOutput, result))

    def _graph_for(self, host: HostAdapter, *, reads_state: bool) -> HooksGraph:
        """The hooks graph with ``host``'s adapter node, compiled once per host.

        Calls that read no graph state (a bare model call) skip the checkpoint round trips.
        """
        key = (host.name, reads_state)
        if key not in self._graphs:
            checkpointer = self.checkpointer if reads_state else None
            self._graphs[key] = build_hooks_graph(host).compile(checkpointer=checkpointer)
        return self._graphs[key]

    async def hook(
        self, name: str, input: dict[str, Any], output: dict[str, Any]
    ) -> dict[str, Any]:
        """Run one OpenCode hook and return the mutated ``output`` (OpenCode's payload shapes).

        A thin call into the OpenCode adapter, for scripts that drive plait as OpenCode does.
        Raises :class:`~plait.InvalidHookPayload` (naming the field) for a payload plait
        cannot use; any other failure leaves ``output`` as it was.
        """
        from plait.adapters.hosts.opencode.hooks import OpenCodeHooks

        return await OpenCodeHooks(self).hook(name, input, output)

    # -- which sessions a call is about ----------------------------------------------------------
    async def _sessions_for(self, target: SessionTarget | Sessionless | None) -> list[SessionRef]:
        """The sessions a host call goes to: the one it names, or those a sessionless one fits.

        A call naming no session goes to no session unless it says what it is about: a file
        goes to the session that last named that file, else to the only active session; project
        news goes to every active session (at most ``PROJECT_WIDE_SESSIONS_MAX``). Active means a
        hook of the session's root ran in this process in the last ``ACTIVE_SECONDS``.
        """
        if isinstance(target, SessionTarget):
            return [await self._session_for(target)]
        if not isinstance(target, Sessionless):
            return []
        if target.project_wide:
            roots = self._active_roots()[:PROJECT_WIDE_SESSIONS_MAX]
        else:
            roots = [root for root in [self._owner_of(target.file)] if root]
        return [SessionRef(session_id=root, root_session_id=root) for root in roots]

    async def _session_for(self, target: SessionTarget) -> SessionRef:
        root = self._roots.get(target.session_id)
        if root is None or target.parent_id:
            await link_child(self.store, target.session_id, target.parent_id)
            root = await find_root(self.store, target.session_id)
            self._roots[target.session_id] = root
            while len(self._roots) > MAX_CACHED_ROOTS:
                self._roots.pop(next(iter(self._roots)))
        self._seen(root, target.files)
        return SessionRef(session_id=target.session_id, root_session_id=root)

    def _seen(self, root: str, files: Sequence[str]) -> None:
        """Note that a root session is active, and the files its call named."""
        self._active.pop(root, None)
        self._active[root] = time.monotonic()
        while len(self._active) > MAX_CACHED_ROOTS:
            self._active.popitem(last=False)
        for path in files:
            key = self._file_key(path)
            self._file_owners.pop(key, None)
            self._file_owners[key] = root
        while len(self._file_owners) > MAX_FILE_OWNERS:
            self._file_owners.popitem(last=False)

    def _file_key(self, path: str) -> str:
        return relative_path(path, self.project_dir.as_posix())

    def _active_roots(self) -> list[str]:
        """Roots with a hook in the last ``ACTIVE_SECONDS``, most recent first."""
        since = time.monotonic() - ACTIVE_SECONDS
        return [root for root, seen in reversed(self._active.items()) if seen >= since]

    def _owner_of(self, path: str) -> str | None:
        """The session a sessionless file event belongs to, or None."""
        owner = self._file_owners.get(self._file_key(path)) if path else None
        active = self._active_roots()
        if owner is not None and owner in active:
            return owner
        return active[0] if len(active) == 1 else None

    async def _forget(self, session: SessionRef) -> None:
        """A session was deleted: a child's link goes, a root stops being active."""
        if session.session_id != session.root_session_id:
            await self.store.forget_session(session.session_id)
            return
        self._active.pop(session.root_session_id, None)
        for path in [p for p, root in self._file_owners.items() if root == session.root_session_id]:
            del self._file_owners[path]

    def _lock(self, root_session_id: str) -> asyncio.Lock:
        lock = self._locks.pop(root_session_id, None) or asyncio.Lock()
        self._locks[root_session_id] = lock
        while len(self._locks) > MAX_SESSION_LOCKS:
            oldest, candidate = next(iter(self._locks.items()))
            if candidate.locked():
                break
            del self._locks[oldest]
        return lock

    def _hot_path(self) -> contextlib.AbstractContextManager[None]:
        """While a hook runs, background work in this process waits (see :class:`Background`)."""
        return self.background.hot_path() if self.background else contextlib.nullcontext()

    @staticmethod
    def _config(root_session_id: str) -> RunnableConfig:
        return RunnableConfig(configurable={"thread_id": root_session_id})

    # -- plait's own intents, for Python callers -----------------------------------------------
    async def observe(
        self,
        session_id: str,
        intents: Sequence[Intent],
        *,
        parent_id: str | None = None,
        host: HostAdapter = NATIVE,
    ) -> HookOutput:
        """Record what happened in a session (any intents) and return plait's answer.

        ``host`` names who reports it (its events say so); its node must read intents.
        """
        target = SessionTarget(session_id=session_id, parent_id=parent_id)
        return await self.handle(HostCall(host=host, target=target, payload=list(intents)))

    async def user_turn(self, session_id: str, text: str, *, parent_id: str | None = None) -> None:
        """The user said ``text``; the envelope for the next model call is prepared."""
        await self.observe(session_id, [UserTurn(text=text)], parent_id=parent_id)

    async def model_call(
        self,
        session_id: str,
        *,
        query: str = "",
        observed: Sequence[Intent] = (),
        host: HostAdapter = NATIVE,
    ) -> str:
        """The envelope for the model call about to happen ("" when there is nothing to say).

        ``observed`` is what happened since the last call (recorded first); ``query`` is the
        user's current request, used to tell when long-term recall should be refreshed.
        """
        intents = [*observed, ModelCall(query=query)]
        return (await self.observe(session_id, intents, host=host)).get("inject") or ""

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

    async def record(self, session_id: str, events: Sequence[SessionEvent]) -> list[SessionEvent]:
        """Make events durable in the session's root log and the drain queue (no graph run).

        The next hook of the session folds them into the snapshot. Returns the stored events
        (with their ids); when the hot tier fails, nothing is claimed stored: the answer is an
        empty list, a warning says why, and so does :attr:`degraded`. Never raises a backend's
        error.
        """
        work = self._record(session_id, events)
        return await self._fail_open("recording events", work, [])

    async def _record(self, session_id: str, events: Sequence[SessionEvent]) -> list[SessionEvent]:
        root = await find_root(self.store, session_id)
        prepared = [
            event.model_copy(update={"root_session_id": root, "session_id": session_id})
            for event in events
        ]
        return await self.store.append_events(root, prepared, enqueue_group=self.group_id)

    async def remember(
        self,
        session_id: str,
        text: str,
        kind: MemoryKind = "decision",
        *,
        source: str = "plait.remember",
    ) -> SessionEvent:
        """Record a decision, preference or rule stated outright; it drains to long-term memory.

        Deprecated: save an observation instead (``memory.observations.save(...)``, the
        ``memory_save`` tool), which is searchable at once, keeps revisions and can be corrected
        or forgotten. Returns the stored event, or, when it could not be stored, the event
        unrecorded: its ``id`` is 0 and :attr:`degraded` says why. Never raises a backend's error.
        """
        event = SessionEvent(
            root_session_id=session_id,
            session_id=session_id,
            kind=EventKind(kind),
            summary=text,
            body=text,
            source_hook=source,
        )
        stored = await self.record(session_id, [event])
        return stored[0] if stored else event

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

        Deprecated for tools: ``memory.observations.search(...)`` (the ``memory_search`` tool)
        finds saved observations at once; :meth:`search` gives the knowledge graph's hits.
        For tools an agent calls on purpose, never for hooks: it waits on the knowledge graph (at
        most :data:`RECALL_TIMEOUT_SECONDS`). The result is rendered as in
        ``<persistent_memory>`` and also cached for the session's next envelope. Returns ``""``
        when nothing matched and None when this process has no long-term memory.
        """
        if self.background is None:
            return None
        root = await find_root(self.store, session_id)
        try:
            found = await asyncio.wait_for(
                self.background.refresh(self.group_id, root, query), RECALL_TIMEOUT_SECONDS
            )
        except TimeoutError:
            raise BackendUnavailable(
                f"long-term memory did not answer within {RECALL_TIMEOUT_SECONDS:.0f} s"
            ) from None
        return found.text if found is not None else ""

    async def turn(
        self, session_id: str, events: Sequence[SessionEvent] = (), *, query: str = ""
    ) -> str:
        """Record a turn's events and return the envelope for the next model call.

        ``query`` is the user's current request, used to tell when long-term recall should be
        refreshed. :meth:`model_call` does the same from intents.
        """
        return await self.model_call(
            session_id, query=query, observed=[Observed(events=tuple(events))]
        )

    async def state(self, session_id: str) -> HookState:
        """The hooks graph's current state for the session's root."""
        root = await find_root(self.store, session_id)
        snapshot = await self.graph.aget_state(self._config(root))
        return cast(HookState, snapshot.values)

    async def snapshot(self, session_id: str) -> Snapshot:
        """The session's snapshot as of its last hook."""
        return (await self.state(session_id)).get("snapshot") or Snapshot()

    async def envelope(self, session_id: str) -> str:
        """Compose the session's ``<session_memory>`` envelope now (no Graphiti call)."""
        return envelope_for(await self.state(session_id), self.settings)


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


def _current_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class SyncMemory:
    """A :class:`Memory` on its own event loop in a background thread, for synchronous code.

    Every method of the memory is reachable as ``handle.memory``; the common ones have
    synchronous twins here. ``close()`` (or leaving the ``with`` block) closes the memory,
    releases the embedded server and stops the thread.
    """

    def __init__(self, memory: Memory, loop: asyncio.AbstractEventLoop, thread: Any) -> None:
        """Use :meth:`Memory.open_sync`."""
        self.memory = memory
        self._loop = loop
        self._thread = thread

    @classmethod
    def start(cls, opening: Coroutine[Any, Any, Memory]) -> SyncMemory:
        """Start a loop thread and open the memory on it."""
        import threading

        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="plait-memory", daemon=True)
        thread.start()
        try:
            memory = asyncio.run_coroutine_threadsafe(opening, loop).result()
        except BaseException:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()
            raise
        return cls(memory, loop, thread)

    def run[T](self, work: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run one coroutine of the memory and return its result."""
        return self.memory.run_sync(work, timeout)

    def close(self) -> None:
        """Close the memory and stop its thread (idempotent)."""
        if self._loop.is_closed():
            return
        try:
            asyncio.run_coroutine_threadsafe(self.memory.aclose(), self._loop).result()
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    def __enter__(self) -> SyncMemory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        """The memory's own attributes (settings, store, group_id, degraded, ...)."""
        return getattr(self.memory, name)

    def turn(self, session_id: str, events: Sequence[SessionEvent] = (), *, query: str = "") -> str:
        """:meth:`Memory.turn`, synchronously."""
        return self.run(self.memory.turn(session_id, events, query=query))

    def user_turn(self, session_id: str, text: str) -> None:
        """:meth:`Memory.user_turn`, synchronously."""
        self.run(self.memory.user_turn(session_id, text))

    def remember(self, session_id: str, text: str, kind: MemoryKind = "decision") -> SessionEvent:
        """:meth:`Memory.remember`, synchronously."""
        return self.run(self.memory.remember(session_id, text, kind))

    def recall(self, session_id: str, query: str) -> str | None:
        """:meth:`Memory.recall`, synchronously."""
        return self.run(self.memory.recall(session_id, query))

    def envelope(self, session_id: str) -> str:
        """:meth:`Memory.envelope`, synchronously."""
        return self.run(self.memory.envelope(session_id))

    def snapshot(self, session_id: str) -> Snapshot:
        """:meth:`Memory.snapshot`, synchronously."""
        return self.run(self.memory.snapshot(session_id))


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
