"""The hot tier, watched: failures noticed, probes with backoff, a dead embedded server revived.

One :class:`Supervisor` per :class:`plait.Memory`. Whatever fails on the hot tier tells it
(:meth:`Supervisor.failed`); from then on it is *down* until a probe (a PING, within
:data:`PROBE_TIMEOUT_S`) answers. Probes back off exponentially with jitter (redis-py's
``ExponentialWithJitterBackoff``, from :data:`BACKOFF_BASE_S` to :data:`BACKOFF_CAP_S`).
When the process runs background work (``plait serve``, ``Memory.open`` with
``start_background``) the supervisor also runs a loop of its own (:meth:`Supervisor.start`):
it probes every :data:`WATCH_INTERVAL_S` while up, so a server that died is noticed with no
hook in flight; it brings the embedded server back (on its old port when free; the lease this
process holds is kept, so the reaper does not stop the new server under it); it reads the
drain queue's depth and lag for ``/v1/health``; and it runs the ticks it is given (the spool's
flush to disk, the adoption of spools left by other processes).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from redis.backoff import ExponentialWithJitterBackoff

from plait.state.base.boundary import attempt, describe
from plait.state.base.errors import PlaitError
from plait.state.base.processes import pid_alive
from plait.state.base.redact import redacted_logger
from plait.wiring import Backends, repoint

logger = redacted_logger("plait")

PROBE_TIMEOUT_S = 1.0
WATCH_INTERVAL_S = 1.0
BACKOFF_BASE_S = 0.1
BACKOFF_CAP_S = 1.0  # a tier back is noticed within a probe and a second: envelopes resume

Tick = Callable[[], Awaitable[object]]


@dataclass(frozen=True, kw_only=True, slots=True)
class TierHealth:
    """What the supervisor knows of the hot tier (``/v1/health``, ``plait doctor``)."""

    up: bool
    reason: str
    down_since: datetime | None
    restarts: int
    queue_depth: int | None
    queue_lag_s: float | None


class Supervisor:
    """Watches the hot tier of one :class:`~plait.wiring.Backends` (see the module)."""

    def __init__(self, backends: Backends, *, restart: bool = True) -> None:
        """``restart``: bring the embedded server back when it died (when the loop runs)."""
        self.backends = backends
        self.restart = restart and backends.server is not None
        # Down from the start only when a redis.url is waited for; a store that fell back to
        # memory answers (what it lacks, memory.degraded says).
        self.up = not (backends.degraded and backends.redis is not None)
        self.reason = "" if self.up else "; ".join(backends.degraded)
        self.down_since: datetime | None = None if self.up else datetime.now(UTC)
        self.restarts = 0
        self.recovered_at = 0.0  # time.monotonic() when the hot tier last came back
        self.queue_depth: int | None = None
        self.queue_lag_s: float | None = None
        self.ticks: list[Tick] = []
        self.on_moved: list[Callable[[], Awaitable[object]]] = []
        self._backoff = ExponentialWithJitterBackoff(base=BACKOFF_BASE_S, cap=BACKOFF_CAP_S)
        self._answers = asyncio.Event()
        if self.up:
            self._answers.set()
        self._probing = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None

    # -- what callers tell it -------------------------------------------------------------------
    def failed(self, error: BaseException) -> None:
        """The hot tier failed a call: it is down until a probe answers."""
        reason = describe(error)
        if self.up:
            logger.warning("plait: the hot tier failed (%s); calls wait in the spool", reason)
            self.down_since = datetime.now(UTC)
        self.up, self.reason = False, reason
        self._answers.clear()

    def answered(self) -> None:
        """A call went through: the hot tier is up."""
        if not self.up and self.down_since is not None:
            down = (datetime.now(UTC) - self.down_since).total_seconds()
            logger.warning("plait: the hot tier answers again after %.1f s", down)
        if not self.up:
            self.recovered_at = time.monotonic()
        self.up, self.reason, self.down_since = True, "", None
        self._answers.set()

    # -- probing --------------------------------------------------------------------------------
    async def probe(self) -> bool:
        """PING the hot tier (after bringing a dead embedded server back); whether it answered."""
        async with self._probing:
            result = await self._ping()
            if isinstance(result, PlaitError) and await self._revive_server():
                result = await self._ping()
            if isinstance(result, PlaitError):
                self.failed(result)
                return False
            self.answered()
            return True

    async def _ping(self) -> PlaitError | None:
        """PING the hot tier within :data:`PROBE_TIMEOUT_S`: None, or the PlaitError it raised."""
        return await attempt(asyncio.wait_for(self.backends.store.ping(), PROBE_TIMEOUT_S))

    async def until_up(self) -> None:
        """Return once the hot tier answers; probes back off meanwhile (or the loop probes)."""
        failures = 0
        while not self.up:
            if self._task is not None:
                await self._answers.wait()
                return
            if await self.probe():
                return
            failures += 1
            await asyncio.sleep(self._backoff.compute(failures))

    async def _revive_server(self) -> bool:
        """Start the embedded server again if its process is gone; whether it was."""
        server = self.backends.server
        if not self.restart or server is None or server.info is None:
            return False
        if pid_alive(server.info.pid):
            return False  # alive but not answering (loading its data, say): not ours to end
        revived = await attempt(asyncio.to_thread(server.restart))
        if isinstance(revived, PlaitError):
            self.failed(revived)
            return False
        self.restarts += 1
        logger.warning(
            "plait: the embedded server had stopped; started again on port %d", revived.port
        )
        if revived.url != self.backends.redis_url:
            repoint(self.backends, revived.url)
            for moved in self.on_moved:
                await moved()
        return True

    # -- the loop -------------------------------------------------------------------------------
    def start(self) -> None:
        """Run the watch loop as a task of the running event loop."""
        if self._task is None:
            self._task = asyncio.create_task(self._watch(), name="plait-supervisor")

    async def aclose(self) -> None:
        """Stop the loop."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _watch(self) -> None:
        failures = 0
        while True:
            if await self.probe():
                failures = 0
                await self._read_queue()
                delay = WATCH_INTERVAL_S
            else:
                failures += 1
                delay = self._backoff.compute(failures)
            for tick in self.ticks:
                await attempt(tick())
            await asyncio.sleep(delay)

    async def _read_queue(self) -> None:
        store = self.backends.store
        depth = await attempt(store.queue_depth())
        oldest = await attempt(store.oldest_queued())
        self.queue_depth = None if isinstance(depth, PlaitError) else depth
        if isinstance(oldest, PlaitError) or oldest is None:
            self.queue_lag_s = None if isinstance(oldest, PlaitError) else 0.0
        else:
            self.queue_lag_s = max(0.0, time.time() - oldest.timestamp())

    def health(self) -> TierHealth:
        """What is known now (the queue as of the loop's last look)."""
        return TierHealth(
            up=self.up,
            reason=self.reason,
            down_since=self.down_since,
            restarts=self.restarts,
            queue_depth=self.queue_depth,
            queue_lag_s=self.queue_lag_s,
        )


__all__ = ["Supervisor", "TierHealth"]
