"""Dispatch: how one host call reaches the hooks graph and comes back as one :class:`Answer`.

Every host (the HTTP service, MCP, LangChain, ``Memory``'s own intents) calls
:meth:`Dispatch.answer` with a :class:`~plait.state.intents.HostCall`. Whether the call
succeeded, was kept for later or failed open is decided here and only here (the intake for
calls a host can rebuild, the failure boundary for the rest); each host maps the
:class:`Answer` to its own wire.

It also routes a call to its sessions (the one it names, or, for a call naming none, the
session that last named its file), keeps one lock per root session, compiles the hooks graph
once per host and bridges synchronous callers onto the memory's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import Awaitable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from plait.adapters.backends.spool import FileSpool
from plait.graphs.hooks import HooksGraph, build_hooks_graph
from plait.intake import Answer, Intake
from plait.nodes.capture import relative_path
from plait.nodes.hooks import NATIVE
from plait.nodes.sessions import find_root, link_child
from plait.owners import SessionOwners
from plait.state.base.boundary import describe, fail_open
from plait.state.base.errors import BackendError, PlaitError, UsageError
from plait.state.base.redact import redacted_logger
from plait.state.context import PlaitContext
from plait.state.events import SessionEvent
from plait.state.groups import acting_member
from plait.state.hooks import HookOutput, HookState, SessionRef, hook_input
from plait.state.intents import HostAdapter, HostCall, Sessionless, SessionTarget
from plait.supervisor import Supervisor
from plait.wiring import import_graphiti

if TYPE_CHECKING:
    from plait.background import Background
    from plait.wiring import Backends

logger = redacted_logger("plait")
# The intake answers a call within this share of hooks.timeout_ms, so the answer reaches the
# plugin (whose budget is the same timeout) before it gives up on the call.
ANSWER_SHARE = 0.6
MAX_SESSION_LOCKS = 4096
MAX_CACHED_ROOTS = 4096
MAX_FILE_OWNERS = 4096
ACTIVE_SECONDS = 30 * 60
PROJECT_WIDE_SESSIONS_MAX = 8


class Dispatch:
    """The one way a host call runs (see the module)."""

    def __init__(
        self,
        *,
        backends: Backends,
        project_dir: Path,
        checkpointer: BaseCheckpointSaver,
        context: PlaitContext,
        background: Background | None = None,
    ) -> None:
        """Wire already-open parts together (:meth:`plait.Memory.open` does)."""
        self.backends = backends
        self.project_dir = project_dir
        self.checkpointer = checkpointer
        self.context = context
        self.background = background
        self.supervisor = Supervisor(backends, restart=False)
        self.intake: Intake | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._graphs: dict[tuple[str, bool], HooksGraph] = {}
        self._served: dict[str, HostAdapter] = {}
        self.graph: HooksGraph = self._graph_for(NATIVE, reads_state=True)
        self._locks: OrderedDict[str, asyncio.Lock] = OrderedDict()
        self._roots: dict[str, str] = {}
        self.owners = SessionOwners(backends.store)
        self._active: OrderedDict[str, float] = OrderedDict()
        self._file_owners: OrderedDict[str, str] = OrderedDict()
        self._failure: str | None = None
        self._failure_at = 0.0

    # -- the intake and the supervisor -----------------------------------------------------------
    def open_intake(self, spool: FileSpool) -> Intake:
        """Keep host calls that record in ``spool`` until they ran (see :mod:`plait.intake`).

        Calls a process that ended left in the project's spool are taken over now.
        """
        settings = self.backends.settings
        self.intake = Intake(
            spool=spool,
            dead=spool,
            supervisor=self.supervisor,
            run=self.run,
            deadline_s=settings.hooks.timeout_ms / 1000 * ANSWER_SHARE,
            spool_max_bytes=settings.service.spool_max_bytes,
            runs_at_once=settings.service.runs_at_once,
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

    def serve(self, host: HostAdapter) -> None:
        """Declare a host whose calls this process answers: what it left in the spool runs now."""
        self._served.setdefault(host.name, host)
        if self.intake is not None:
            self.intake.register(host)

    async def warm_up(self) -> None:
        """Do now what the first calls would otherwise pay for, while none waits.

        A service calls it once it listens: each served host's graphs are compiled (about
        50 ms each, which the first call of a host paid), then graphiti-core is imported in a
        thread (seconds of CPU, which the first new session's prefetch paid while its first
        calls competed with it for the interpreter).
        """
        for host in list(self._served.values()):
            for reads_state in (True, False):
                self._graph_for(host, reads_state=reads_state)
                await asyncio.sleep(0)  # a call that came meanwhile goes first
        if self.backends.falkordb_url is not None:
            await fail_open("importing graphiti-core", import_graphiti(), None)

    def reject(self, *, call_id: str, host: str, call: dict[str, Any], reason: str) -> str | None:
        """Dead-letter a call its host sent that plait cannot read; the id (None: no spool)."""
        if self.intake is None:
            return None
        return self.intake.reject(call_id=call_id, host=host, call=call, reason=reason)

    async def aclose(self) -> None:
        """Stop watching the hot tier and the lanes; calls still waiting stay in the spool."""
        await self.supervisor.aclose()
        if self.intake is not None:
            await self.intake.aclose()

    # -- how things stand --------------------------------------------------------------------------
    @property
    def degraded(self) -> list[str]:
        """Why plait runs degraded (empty when it does not): see :attr:`plait.Memory.degraded`."""
        backends = self.backends
        fell_back = backends.redis is None
        found = [*backends.degraded] if fell_back or not self.supervisor.up else []
        if not self.supervisor.up and self.supervisor.reason not in found:
            found.append(f"hot tier down: {self.supervisor.reason}")
        waiting = self.intake.stats().pending if self.intake is not None else 0
        if waiting:
            found.append(f"{waiting} call(s) wait in the spool for the hot tier")
        # a failure from before the hot tier came back is over: health says ok again
        failed = self._failure and self._failure_at > self.supervisor.recovered_at
        graph = self.background.knowledge_failure if self.background is not None else None
        if graph:
            found.append(f"knowledge graph unreachable: {graph}")
        return [*found, *([self._failure] if failed and self._failure else [])]

    def failed(self, failure: str | None) -> None:
        """Remember the last call that failed open (None: the last call went through)."""
        self._failure, self._failure_at = failure, time.monotonic()

    async def fail_open[T](
        self,
        what: str,
        work: Awaitable[T],
        default: T,
        failures: list[PlaitError] | None = None,
    ) -> T:
        """``work``'s result, or ``default`` with a warning and :attr:`degraded` saying why."""
        failures = [] if failures is None else failures
        result = await fail_open(what, work, default, on_failure=failures.append)
        self.failed(f"{what} failed: {describe(failures[0])}" if failures else None)
        return result

    # -- host calls -----------------------------------------------------------------------------
    async def answer(self, call: HostCall) -> Answer:
        """Run one host call and say what came of it: the output, and where the call is.

        A call whose host can rebuild it goes through the intake (:mod:`plait.intake`): one
        that records is in the spool before anything else, runs in its session's order, and
        is answered at the latest when ``hooks.timeout_ms`` passed. Other calls run at once,
        within that time. Any failure but a :class:`~plait.UsageError` is an :class:`Answer`
        with its ``reason`` (fail open): a broken memory layer never breaks the agent. A call
        with no intent in it (:attr:`~plait.state.intents.HostCall.says_nothing`) is answered
        at once: it has nothing to record.
        """
        if call.says_nothing:  # nothing to keep, run or answer: no spool line, no graph run
            return Answer(output=HookOutput(), kept="stored" if call.durable else "")
        if self.intake is not None and call.host.rebuild is not None:
            answer = await self.intake.submit(call)
            self._note(f"{call.host.name} call", answer)
            return answer
        failures: list[PlaitError] = []
        with self.hot_path():
            work = self._within_timeout(self._handle(call))
            output = await self.fail_open(f"{call.host.name} call", work, None, failures)
        if output is None:
            return Answer(output=HookOutput(), reason=describe(failures[0]))
        return Answer(output=output, kept="stored" if call.durable else "")

    async def run(self, call: HostCall) -> HookOutput:
        """Run one host call now, raising what fails (the intake's lanes run calls this way)."""
        with self.hot_path():
            return await self._handle(call)

    def _note(self, what: str, answer: Answer) -> None:
        """Remember (and log) a call that failed open, for :attr:`degraded`.

        A call that was kept (stored, or spooled to run later) did not fail.
        """
        failed = bool(answer.reason) and not answer.kept
        if failed:
            logger.warning("plait: %s failed open: %s", what, answer.reason)
        self.failed(f"{what} failed: {answer.reason}" if failed else None)

    async def _within_timeout[T](self, work: Awaitable[T]) -> T:
        """``work`` of a caller in this process, given at most ``hooks.in_process_timeout_ms``."""
        timeout_ms = self.backends.settings.hooks.in_process_timeout_ms
        try:
            return await asyncio.wait_for(work, timeout_ms / 1000)
        except TimeoutError:
            raise BackendError(
                f"it did not finish within {timeout_ms} ms (hooks.in_process_timeout_ms)"
            ) from None

    async def _handle(self, call: HostCall) -> HookOutput:
        answer = HookOutput()
        for session in await self._sessions_for(call.target):
            answer = await self._run(call, session)
        return answer

    async def _run(self, call: HostCall, session: SessionRef) -> HookOutput:
        await self.owners.admit(session.root_session_id)
        graph = self._graph_for(call.host, reads_state=call.reads_state)
        intents = call.payload if call.host.adapt is None else ()  # its host read them
        graph_input = hook_input(session, call.payload, call.host.name, call.call_id, intents)
        async with self._lock(session.root_session_id):
            if call.reads_state:
                result = await graph.ainvoke(
                    graph_input,
                    config=thread_config(session.root_session_id),
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

    async def record(self, session_id: str, events: Sequence[SessionEvent]) -> list[SessionEvent]:
        """Make events durable in the session's root log and the drain queue (no graph run).

        The next hook of the session folds them into the snapshot. Returns the stored events
        (with their ids); when the hot tier fails, nothing is claimed stored: the answer is an
        empty list, a warning says why, and so does :attr:`degraded`. Never raises a backend's
        error.
        """
        return await self.fail_open("recording events", self._record(session_id, events), [])

    async def _record(self, session_id: str, events: Sequence[SessionEvent]) -> list[SessionEvent]:
        store = self.backends.store
        root = await find_root(store, session_id)
        await self.owners.admit(root)
        here = {"root_session_id": root, "session_id": session_id, "member": acting_member()}
        prepared = [event.model_copy(update=here) for event in events]
        return await store.append_events(root, prepared, enqueue_group=self.context.group_id)

    async def root_of(self, session_id: str) -> str:
        """The root session of ``session_id`` (itself for a root), or itself when unknown."""
        store = self.backends.store
        return await fail_open(
            f"finding the root of {session_id!r}", find_root(store, session_id), session_id
        )

    async def event_count(self, root_session_id: str) -> int:
        """Events in the root session's log."""
        return await self.backends.store.event_count(root_session_id)

    async def state(self, session_id: str) -> HookState:
        """The hooks graph's current state for the session's root."""
        root = await find_root(self.backends.store, session_id)
        snapshot = await self.graph.aget_state(thread_config(root))
        return cast(HookState, snapshot.values)

    def hot_path(self) -> contextlib.AbstractContextManager[None]:
        """While a hook runs, background work in this process waits (see :class:`Background`)."""
        return self.background.hot_path() if self.background else contextlib.nullcontext()

    # -- which sessions a call is about ----------------------------------------------------------
    async def _sessions_for(self, target: SessionTarget | Sessionless | None) -> list[SessionRef]:
        """The sessions a host call goes to: the one it names, or those a sessionless one fits.

        A call naming no session goes to no session unless it says what it is about: a file
        goes to the session that last named that file, else to the only active session; project
        news goes to every active session (at most ``PROJECT_WIDE_SESSIONS_MAX``). Active means a
        hook of the session's root ran in this process in the last ``ACTIVE_SECONDS``; the call
        goes only to sessions of whoever made it (a team member's, or the service owner's).
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
            store = self.backends.store
            await link_child(store, target.session_id, target.parent_id)
            root = await find_root(store, target.session_id)
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
        """Roots with a hook in the last ``ACTIVE_SECONDS``, most recent first.

        Only the sessions of whoever makes the call (:meth:`SessionOwners.known_mine`).
        """
        since = time.monotonic() - ACTIVE_SECONDS
        active = reversed(self._active.items())
        return [r for r, seen in active if seen >= since and self.owners.known_mine(r)]

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
            await self.backends.store.forget_session(session.session_id)
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

    # -- synchronous callers ----------------------------------------------------------------------
    async def run_async[T](self, work: Coroutine[Any, Any, T]) -> T:
        """Await a coroutine of this memory from any event loop.

        On the memory's own loop it is simply awaited; a memory opened with
        :meth:`plait.Memory.open_sync` (its loop runs in a thread of its own) runs it there, so
        one handle serves ``invoke`` and ``ainvoke`` alike. A memory whose loop is not running
        and not this one (opened under an ``asyncio.run`` that has ended) is a
        :class:`~plait.UsageError` saying so.
        """
        loop, here = self.loop, current_loop()
        if loop is None or loop is here:
            return await work
        if loop.is_closed() or not loop.is_running():
            work.close()
            raise UsageError(
                "this Memory was opened on another event loop, which is not running any more: "
                "open it on this loop, or with Memory.open_sync(...) to use it from any"
            )
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, loop))

    def run_sync[T](self, work: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run a coroutine on the memory's event loop from synchronous code; its result.

        Raises :class:`~plait.UsageError` when that cannot be done: the loop is not
        running in another thread (open with :meth:`plait.Memory.open_sync` for synchronous
        callers), or the caller is on that loop itself (use the async API there).
        """
        loop = self.loop
        if loop is None or loop.is_closed() or not loop.is_running():
            work.close()
            raise UsageError(
                "this Memory's event loop is not running: open it with Memory.open_sync(...) "
                "to use it from synchronous code (agent.invoke, agent.stream)"
            )
        if current_loop() is loop:
            work.close()
            raise UsageError(
                "called synchronously from the Memory's own event loop: use the async API "
                "(agent.ainvoke, agent.astream) there"
            )
        return asyncio.run_coroutine_threadsafe(work, loop).result(timeout)


def thread_config(root_session_id: str) -> RunnableConfig:
    """The checkpoint thread of a root session."""
    return RunnableConfig(configurable={"thread_id": root_session_id})


def current_loop() -> asyncio.AbstractEventLoop | None:
    """The running event loop, or None outside one."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


__all__ = ["ANSWER_SHARE", "Answer", "Dispatch", "current_loop", "thread_config"]
