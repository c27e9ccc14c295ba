"""The intake: how a host call that records something is kept, run in order, and answered.

A host call that records (``HostCall.durable``) and can wait (its host rebuilds it from
``HostCall.replay``) is first written to the spool (:class:`~plait.state.ports.CallSpool`, a
local file), then run by its session's *lane*: the calls of one session run one after another,
in the order they came, sessions side by side (at most ``service.runs_at_once`` runs at once in
a process, the rest waiting their turn in the order they came). The caller waits for its call at
most the hooks' deadline (``hooks.timeout_ms``) and hears where the call is:

* ``stored``: it ran; what it records is in the hot tier.
* ``spooled``: it is in the spool and runs later, in its session's order: the hot tier is
  down (the supervisor probes it with backoff and the lane resumes when it answers), or other
  calls wait ahead of it in its lane (it is answered at once then: a call that records changes
  no hook's answer), or it did not run before the deadline, or it failed and is tried again.
* not kept (``""``): the spool could not take it and it did not run in time; the host must keep
  it and send it again (with the same call id, which makes the replay harmless).

A call that cannot run (a payload plait cannot use, or one that fails :data:`RETRY_MAX` times
while the hot tier answers) is dead-lettered with the reason
(:class:`~plait.state.ports.DeadCalls`, ``plait dlq``) and the lane goes on: one bad call
never blocks the calls after it. A connection that drops (a flapping tier: the probe answers,
the call's own round trip did not) is no such reason: the call is tried again with backoff, up
to :data:`TRANSIENT_MAX` times, in its lane's order.

A call that records nothing (a model call's envelope, a tool policy) is not spooled: it takes
its place in its lane, and when it cannot start before the deadline (or the hot tier is down, or
more than :data:`LANE_BEHIND` calls wait in its lane) it fails open.

A spool left by a process that ended (killed mid-batch, say) is adopted when the intake opens
and, once :data:`ORPHAN_SETTLE_S` old, at the :data:`ADOPT_INTERVAL_S` ticks after: its calls run
again. Their events were recorded at most once, whatever ran before the kill: the call id guards
the append.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from plait.state.base.boundary import describe, translate
from plait.state.base.errors import BackendUnavailable, PlaitError, UsageError
from plait.state.base.redact import redact, redact_data, redacted_logger
from plait.state.groups import acting_as, acting_member
from plait.state.hooks import HookOutput
from plait.state.intents import HostAdapter, HostCall, SessionTarget
from plait.state.ports import CallSpool, DeadCalls, SpooledCall, SpoolStats
from plait.supervisor import Supervisor

logger = redacted_logger("plait")

Kept = Literal["stored", "spooled", ""]
Run = Callable[[HostCall], Awaitable[HookOutput]]
RETRY_MAX = 3
RETRY_PAUSE_S = 0.2
# A call whose round trip failed on a dropped connection while the tier answers probes: tried
# again with backoff (doubling from RETRY_PAUSE_S up to TRANSIENT_PAUSE_MAX_S), about two
# minutes in all, before it counts as a call that cannot run.
TRANSIENT_MAX = 30
TRANSIENT_PAUSE_MAX_S = 5.0
RUN_TIMEOUT_S = 30.0
ADOPT_INTERVAL_S = 10.0
# A spool another process left is taken only once it was last written this long ago: a replica
# that was restarted takes its own first, at its start, before any new call of its sessions
# (the plugin holds those for it up to PLAIT_HOLD_MS, 60 s; by then this process has taken them).
ORPHAN_SETTLE_S = 30.0
# How long a call of a host this process does not serve waits before it is dead-lettered.
PARK_MAX_S = 60.0
SYNC_INTERVAL_S = 1.0
CLOSE_WAIT_S = 5.0
# A call that records nothing fails open at once when more calls than this wait in its lane: it
# would not start before the deadline, and waiting only adds to the load. Fewer, it waits: its
# session's last calls are what its envelope should say (50 sessions back to back enveloped
# about a third more model calls at 8 than at 2; at 16 and with no limit, fewer again).
LANE_BEHIND = 8
# How many of the newest runs the lane timings are taken over (``/v1/health``)
TIMINGS_KEPT = 2000


@dataclass(frozen=True, kw_only=True, slots=True)
class LaneTimings:
    """Milliseconds the newest ``runs`` calls waited in their lane and ran (``/v1/health``)."""

    runs: int
    wait_p50: float
    wait_p99: float
    run_p50: float
    run_p99: float


@dataclass(frozen=True, kw_only=True, slots=True)
class Answer:
    """What happened to one host call: the answer, where the call is, and why it failed open."""

    output: HookOutput
    kept: Kept = ""
    reason: str = ""


@dataclass(eq=False)
class Work:
    """One call in its lane."""

    call: HostCall
    entry: SpooledCall | None
    future: asyncio.Future[HookOutput]
    attempts: int = 0
    transient: int = 0
    started: bool = False
    abandoned: bool = False
    queued_at: float = field(default_factory=time.perf_counter)

    def settle(self, result: HookOutput | BaseException) -> None:
        """Tell the waiting caller (once; a call tried again settles only the first time)."""
        if self.future.done():
            return
        if isinstance(result, BaseException):
            self.future.set_exception(result)
            self.future.exception()  # nobody may be waiting any more: not an unhandled error
        else:
            self.future.set_result(result)


def quantile_ms(ordered: Sequence[float], share: float) -> float:
    """The value (seconds) at ``share`` of sorted, non-empty values, in milliseconds."""
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000, 1)


def lane_of(call: HostCall) -> str:
    """The lane of a call: its session, or ``""`` for a call that names none."""
    return call.target.session_id if isinstance(call.target, SessionTarget) else ""


@dataclass
class Intake:
    """The durable front of :class:`plait.Memory` for host calls (see the module)."""

    spool: CallSpool
    dead: DeadCalls
    supervisor: Supervisor
    run: Run
    deadline_s: float
    hosts: dict[str, HostAdapter] = field(default_factory=dict)
    spool_max_bytes: int = 0
    runs_at_once: int = 0
    _lanes: dict[str, deque[Work]] = field(default_factory=dict)
    _slots: asyncio.Semaphore | None = field(default=None, init=False)  # see __post_init__
    _workers: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    _parked: list[tuple[SpooledCall, float]] = field(default_factory=list)
    _last_adopt: float = 0.0
    _last_sync: float = 0.0
    # the newest runs' (time waiting in the lane, time running), seconds: see lane_timings
    _timings: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=TIMINGS_KEPT))

    def __post_init__(self) -> None:
        # runs at once take turns step by step on one event loop: a hundred of them make each
        # take a hundred times as long, while a few finish in turn, each soon
        self._slots = asyncio.Semaphore(self.runs_at_once) if self.runs_at_once else None

    # -- hosts and what waits for them ----------------------------------------------------------
    def register(self, host: HostAdapter) -> None:
        """A host whose calls can wait in the spool; its parked calls take their lanes.

        A service registers the hosts it serves as it starts, so what a dead process left in
        the spool runs at once, not when the host's next call comes (outside an event loop
        they take their lanes at the next adoption).
        """
        if host.rebuild is None or self.hosts.get(host.name) is host:
            return
        self.hosts[host.name] = host
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._resume_parked()

    def _resume_parked(self) -> None:
        """Parked calls whose host is known now take their lanes.

        In a process that serves hosts, a call of a host it does not serve (a newer plugin's, a
        host not installed here) waits :data:`PARK_MAX_S`, then is dead-lettered with why, where
        a person sees it (``plait dlq calls list``), instead of waiting for ever.
        """
        parked, self._parked = self._parked, []
        now = time.monotonic()
        for entry, since in parked:
            if entry.host in self.hosts or not self.hosts or now - since < PARK_MAX_S:
                self._resume(entry, since)
                continue
            served = ", ".join(sorted(self.hosts))
            self._bury(
                entry.call_id,
                entry.host,
                entry.call,
                f"no host {entry.host!r} is served here ({served})",
                member=entry.member,
            )
            self._done(entry)

    def adopt(self, settled_s: float = 0.0) -> int:
        """Take over spools left by processes that ended; their calls join their lanes.

        ``settled_s``: only spools left that long ago (see :data:`ORPHAN_SETTLE_S`).
        """
        self._last_adopt = time.monotonic()
        self.dead.expire_dead_calls()
        self._resume_parked()
        adopted = self.spool.adopt(settled_s)
        for entry in adopted:
            self._resume(entry)
        if adopted:
            logger.warning("plait: %d call(s) left in a spool will run now", len(adopted))
        return len(adopted)

    def _resume(self, entry: SpooledCall, parked_since: float | None = None) -> None:
        host = self.hosts.get(entry.host)
        if host is None or host.rebuild is None:
            since = time.monotonic() if parked_since is None else parked_since
            self._parked.append((entry, since))
            return
        try:
            call = replace(host.rebuild(entry.call, entry.call_id), member=entry.member)
        except UsageError as error:
            self._bury(entry.call_id, entry.host, entry.call, describe(error), member=entry.member)
            self._done(entry)
            return
        future: asyncio.Future[HookOutput] = asyncio.get_running_loop().create_future()
        self._push(Work(call=call, entry=entry, future=future))

    # -- one call -------------------------------------------------------------------------------
    async def submit(self, call: HostCall) -> Answer:
        """Keep (when it records), queue and wait for one call, at most the deadline."""
        self.register(call.host)
        if call.member is None and (member := acting_member()) is not None:
            call = replace(call, member=member)  # it runs later, maybe in another task
        entry, why = self._keep(call) if self._spoolable(call) else (None, "")
        if call.durable and entry is None and not self.supervisor.up:
            return Answer(output=HookOutput(), reason=why or self._down_reason())
        if not call.durable and not self.supervisor.up:
            return Answer(output=HookOutput(), reason=self._down_reason())
        if not call.durable and len(self._lanes.get(lane_of(call), ())) > LANE_BEHIND:
            return Answer(output=HookOutput(), reason=self._behind())
        loop = asyncio.get_running_loop()
        work = Work(call=call, entry=entry, future=loop.create_future())
        self._push(work)
        if entry is not None and not self.supervisor.up:
            return Answer(output=HookOutput(), kept="spooled", reason=self._down_reason())
        if entry is not None and len(self._lanes.get(lane_of(call), ())) > 1:
            # calls wait ahead of it: it is kept, and what it records changes no answer
            return Answer(output=HookOutput(), kept="spooled", reason=self._queued())
        return await self._wait(work, why)

    def _spoolable(self, call: HostCall) -> bool:
        return call.durable and call.replay is not None and call.host.rebuild is not None

    def _keep(self, call: HostCall) -> tuple[SpooledCall | None, str]:
        """The call in the spool, or None and why not (then it is not yet durable)."""
        if self.spool_max_bytes and self.spool.stats().bytes >= self.spool_max_bytes:
            return (
                None,
                f"the spool is full ({self.spool_max_bytes} bytes, service.spool_max_bytes)",
            )
        try:
            # what touches the disk holds no secret and no <private> span: the call runs as it
            # came, and its events are redacted the same way when it runs again from here
            entry = self.spool.append(
                call_id=call.call_id,
                lane=lane_of(call),
                host=call.host.name,
                call=redact_data(dict(call.replay or {})),
                member=call.member,
            )
        except OSError as error:
            logger.warning("plait: the spool cannot take a call: %s", describe(error))
            return None, f"the spool cannot take it: {describe(error)}"
        return entry, ""

    async def _wait(self, work: Work, why: str) -> Answer:
        try:
            output = await asyncio.wait_for(asyncio.shield(work.future), self.deadline_s)
        except TimeoutError:
            if work.entry is not None:
                return Answer(output=HookOutput(), kept="spooled", reason=self._late())
            work.abandoned = True
            return Answer(output=HookOutput(), reason=why or self._late())
        except UsageError:
            raise
        except PlaitError as error:
            kept: Kept = "spooled" if work.entry is not None else ""
            return Answer(output=HookOutput(), kept=kept, reason=describe(error))
        return Answer(output=output, kept="stored" if work.call.durable else "")

    def _late(self) -> str:
        return f"it did not run within {self.deadline_s * 1000:.0f} ms (hooks.timeout_ms)"

    def _queued(self) -> str:
        return "it runs after the calls ahead of it in its session's lane"

    def _behind(self) -> str:
        return f"its session's lane is behind (more than {LANE_BEHIND} calls wait)"

    def _down_reason(self) -> str:
        return f"the hot tier is down: {self.supervisor.reason or 'not answering'}"

    # -- lanes ----------------------------------------------------------------------------------
    def _push(self, work: Work) -> None:
        lane = lane_of(work.call)
        self._lanes.setdefault(lane, deque()).append(work)
        if lane not in self._workers:
            self._workers[lane] = asyncio.create_task(self._work_lane(lane), name="plait-lane")

    async def _work_lane(self, lane: str) -> None:
        queue = self._lanes[lane]
        try:
            while queue:
                work = queue[0]
                async with self._slots or contextlib.nullcontext():
                    if work.abandoned and not work.started:  # its caller stopped waiting
                        queue.popleft()
                        continue
                    work.started = True
                    began = time.perf_counter()
                    done = await self._run_once(work)
                self._timings.append((began - work.queued_at, time.perf_counter() - began))
                if done:
                    queue.popleft()
        finally:
            self._lanes.pop(lane, None)
            self._workers.pop(lane, None)

    async def _run_once(self, work: Work) -> bool:
        """Run one call; True when the lane is done with it, False to try it again."""
        try:
            with acting_as(work.call.member):
                output = await asyncio.wait_for(self.run(work.call), RUN_TIMEOUT_S)
        except UsageError as error:
            self._give_up(work, error)
            return True
        except Exception as error:  # the run's failure, in plait's tree (translate)
            return await self._failed(work, translate(error))
        if work.entry is not None:
            self._done(work.entry)
        self.supervisor.answered()
        work.settle(output)
        return True

    async def _failed(self, work: Work, error: PlaitError) -> bool:
        work.settle(error)
        if work.entry is None:
            return True  # nothing kept: the caller fails open (or keeps the call, if durable)
        if not await self.supervisor.probe():
            await self.supervisor.until_up()  # down: this call and its lane wait, in order
            return False
        if isinstance(error, BackendUnavailable) and work.transient < TRANSIENT_MAX:
            work.transient += 1  # the tier flaps: not the call's fault, so it is not buried
            pause = min(TRANSIENT_PAUSE_MAX_S, RETRY_PAUSE_S * 2**work.transient)
            await asyncio.sleep(pause)
            return False
        work.attempts += 1
        if work.attempts >= RETRY_MAX:
            self._give_up(work, error)
            return True
        await asyncio.sleep(RETRY_PAUSE_S * work.attempts)
        return False

    def _give_up(self, work: Work, error: PlaitError) -> None:
        """Dead-letter a call that cannot run (a spooled one) and tell its caller why."""
        reason = describe(error)
        if work.entry is not None:
            call = work.call
            self._bury(call.call_id, call.host.name, work.entry.call, reason, member=call.member)
            self._done(work.entry)
        work.settle(error)

    def _done(self, entry: SpooledCall) -> None:
        """Mark a spooled call done; a disk that cannot take the mark (full) ends no lane.

        The call ran (or was dead-lettered); left unmarked it runs again after a restart, and
        its call id makes that harmless.
        """
        try:
            self.spool.done(entry.seq)
        except OSError as error:
            logger.warning("plait: the spool cannot mark a call done: %s", describe(error))

    def _bury(
        self,
        call_id: str,
        host: str,
        call: dict[str, Any],
        reason: str,
        why: str = "cannot run",
        *,
        member: str | None,
    ) -> str:
        logger.warning("plait: a %s call %s and is dead-lettered: %s", host, why, reason)
        return self.dead.dead_letter_call(
            call_id=call_id,
            host=host,
            call=redact_data(call),
            reason=redact(reason),
            member=member,
        ).dead_id

    def reject(self, *, call_id: str, host: str, call: dict[str, Any], reason: str) -> str:
        """Dead-letter a call its host sent that cannot even be read; the dead letter's id."""
        return self._bury(call_id, host, call, reason, why="is not usable", member=acting_member())

    # -- upkeep ---------------------------------------------------------------------------------
    async def tick(self) -> None:
        """The supervisor's tick: flush the spool to disk, now and then adopt left spools."""
        now = time.monotonic()
        if now - self._last_sync >= SYNC_INTERVAL_S:
            self._last_sync = now
            await asyncio.to_thread(self.spool.sync)
        if now - self._last_adopt >= ADOPT_INTERVAL_S:
            self.adopt(ORPHAN_SETTLE_S)

    def stats(self) -> SpoolStats:
        """What waits in the spool."""
        return self.spool.stats()

    @property
    def lanes(self) -> int:
        """Lanes with calls waiting or running."""
        return len(self._lanes)

    def lane_timings(self) -> LaneTimings | None:
        """How long the newest runs (at most :data:`TIMINGS_KEPT`) waited and ran; None: none yet.

        Wall time: under load a run takes longer than its own work, because every await in it
        waits for the event loop and the cores (docs/benchmarks.md, "Load over replicas").
        """
        if not self._timings:
            return None
        waits, runs = (sorted(column) for column in zip(*self._timings, strict=True))
        return LaneTimings(
            runs=len(runs),
            wait_p50=quantile_ms(waits, 0.5),
            wait_p99=quantile_ms(waits, 0.99),
            run_p50=quantile_ms(runs, 0.5),
            run_p99=quantile_ms(runs, 0.99),
        )

    def dead_count(self) -> int:
        """Dead calls kept."""
        return len(self.dead.list_dead_calls(limit=100_000))

    async def idle(self) -> None:
        """Wait until every lane is empty (tests, a clean shutdown)."""
        while self._workers:
            await asyncio.gather(*self._workers.values(), return_exceptions=True)

    async def aclose(self) -> None:
        """Stop the lanes; what they did not run stays in the spool for the next process.

        While the hot tier answers, the lanes get :data:`CLOSE_WAIT_S` to finish first.
        """
        if self.supervisor.up:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.idle(), CLOSE_WAIT_S)
        for task in list(self._workers.values()):
            task.cancel()
        for task in list(self._workers.values()):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.spool.close()


__all__ = ["Answer", "Intake", "Kept", "LaneTimings", "lane_of", "quantile_ms"]
