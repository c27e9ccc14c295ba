"""``SyncMemory``: a :class:`plait.Memory` for synchronous code, on an event loop of its own.

Every public coroutine of ``Memory`` has a synchronous twin here with the same signature, and
so has every coroutine of its observations (``handle.observations.save(...)``). A synchronous
handle never hands out a coroutine.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from plait.state.events import MemoryKind, SessionEvent
from plait.state.hooks import HookOutput, ToolPolicy
from plait.state.intents import HostAdapter, Intent, LifecyclePhase, ToolResult
from plait.state.ports import MemoryHit
from plait.state.snapshot import Snapshot

if TYPE_CHECKING:
    from plait.memory import Memory

CLOSE_TIMEOUT_S = 10.0


class SyncMemory:
    """A :class:`Memory` on its own event loop in a background thread, for synchronous code.

    ``close()`` (or leaving the ``with`` block) closes the memory, releases the embedded server
    and stops the thread. The memory itself is ``handle.memory``.
    """

    def __init__(self, memory: Memory, loop: asyncio.AbstractEventLoop, thread: Any) -> None:
        """Use :meth:`Memory.open_sync`."""
        self.memory = memory
        self._loop = loop
        self._thread = thread
        self.observations = SyncPart(self, memory.observations)

    @classmethod
    def start(cls, opening: Coroutine[Any, Any, Memory]) -> SyncMemory:
        """Start a loop thread and open the memory on it."""
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
        return self.memory.dispatch.run_sync(work, timeout)

    def close(self) -> None:
        """Close the memory and stop its thread (idempotent)."""
        if self._loop.is_closed():
            return
        try:
            closing = asyncio.run_coroutine_threadsafe(self.memory.aclose(), self._loop)
            closing.result(CLOSE_TIMEOUT_S)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    def __enter__(self) -> SyncMemory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        """The memory's other attributes (``settings``, ``degraded``, ...), as they are."""
        return getattr(self.memory, name)

    # -- the twins of Memory's coroutines, in its order ----------------------------------------
    def observe(
        self,
        session_id: str,
        intents: Sequence[Intent],
        *,
        parent_id: str | None = None,
        host: HostAdapter | None = None,
    ) -> HookOutput:
        """:meth:`Memory.observe`, synchronously."""
        kwargs: dict[str, Any] = {"host": host} if host is not None else {}
        return self.run(self.memory.observe(session_id, intents, parent_id=parent_id, **kwargs))

    def user_turn(self, session_id: str, text: str, *, parent_id: str | None = None) -> None:
        """:meth:`Memory.user_turn`, synchronously."""
        self.run(self.memory.user_turn(session_id, text, parent_id=parent_id))

    def model_call(
        self,
        session_id: str,
        *,
        query: str = "",
        observed: Sequence[Intent | SessionEvent] = (),
        host: HostAdapter | None = None,
    ) -> str:
        """:meth:`Memory.model_call`, synchronously."""
        kwargs: dict[str, Any] = {"host": host} if host is not None else {}
        work = self.memory.model_call(session_id, query=query, observed=observed, **kwargs)
        return self.run(work)

    def compaction_before(self, session_id: str) -> str:
        """:meth:`Memory.compaction_before`, synchronously."""
        return self.run(self.memory.compaction_before(session_id))

    def compaction_after(self, session_id: str, summary: str = "") -> None:
        """:meth:`Memory.compaction_after`, synchronously."""
        self.run(self.memory.compaction_after(session_id, summary))

    def tool_call(
        self, session_id: str, tool: str, args: dict[str, Any] | None = None
    ) -> ToolPolicy:
        """:meth:`Memory.tool_call`, synchronously."""
        return self.run(self.memory.tool_call(session_id, tool, args))

    def tool_result(self, session_id: str, result: ToolResult) -> None:
        """:meth:`Memory.tool_result`, synchronously."""
        self.run(self.memory.tool_result(session_id, result))

    def lifecycle(
        self,
        session_id: str,
        phase: LifecyclePhase,
        *,
        parent_id: str | None = None,
        title: str = "",
    ) -> None:
        """:meth:`Memory.lifecycle`, synchronously."""
        self.run(self.memory.lifecycle(session_id, phase, parent_id=parent_id, title=title))

    def search(self, query: str, limit: int | None = None) -> list[MemoryHit]:
        """:meth:`Memory.search`, synchronously."""
        return self.run(self.memory.search(query, limit))

    def recall(self, session_id: str, query: str) -> str | None:
        """:meth:`Memory.recall`, synchronously."""
        return self.run(self.memory.recall(session_id, query))

    def snapshot(self, session_id: str) -> Snapshot:
        """:meth:`Memory.snapshot`, synchronously."""
        return self.run(self.memory.snapshot(session_id))

    def envelope(self, session_id: str) -> str:
        """:meth:`Memory.envelope`, synchronously."""
        return self.run(self.memory.envelope(session_id))

    # -- deprecated names, kept for one release -------------------------------------------------
    def turn(self, session_id: str, events: Sequence[SessionEvent] = (), *, query: str = "") -> str:
        """Deprecated: :meth:`model_call` with ``observed=events``."""
        return self.run(self.memory.turn(session_id, events, query=query))

    def remember(self, session_id: str, text: str, kind: MemoryKind = "decision") -> SessionEvent:
        """Deprecated: ``handle.observations.save(...)``."""
        return self.run(self.memory.remember(session_id, text, kind))


class SyncPart:
    """A part of a :class:`Memory` (its observations), seen through a :class:`SyncMemory`.

    Its coroutine methods run on the memory's loop and return their results.
    """

    def __init__(self, handle: SyncMemory, part: Any) -> None:
        self._handle = handle
        self._part = part

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._part, name)
        if not inspect.iscoroutinefunction(value):
            return value
        handle = self._handle

        @functools.wraps(value)
        def run(*args: Any, **kwargs: Any) -> Any:
            return handle.run(value(*args, **kwargs))

        return run


__all__ = ["SyncMemory", "SyncPart"]
