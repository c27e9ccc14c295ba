"""The spool in process memory: the reference implementation of the spool's ports.

Nothing survives the process, so it is no fallback for :class:`FileSpool`; it is what the
contract suite holds the file spool to, and a test double.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from plait.state.ports import DEAD_CALL_DAYS, CallBody, DeadCall, SpooledCall, SpoolStats


@dataclass
class InMemorySpool:
    """:class:`~plait.state.ports.CallSpool` and :class:`~plait.state.ports.DeadCalls` in dicts.

    ``orphans`` stand for spools of processes that ended: :meth:`adopt` takes them over.
    """

    orphans: list[SpooledCall] = field(default_factory=list)
    _pending: OrderedDict[int, SpooledCall] = field(default_factory=OrderedDict)
    _dead: OrderedDict[str, DeadCall] = field(default_factory=OrderedDict)
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _dead_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def append(
        self, *, call_id: str, lane: str, host: str, call: CallBody, member: str | None = None
    ) -> SpooledCall:
        """Keep one call."""
        entry = SpooledCall(
            seq=next(self._seq),
            call_id=call_id,
            lane=lane,
            host=host,
            call=call,
            accepted_at=datetime.now(UTC),
            member=member,
        )
        self._pending[entry.seq] = entry
        return entry

    def done(self, seq: int) -> None:
        """Forget a call that ran."""
        self._pending.pop(seq, None)

    def pending(self) -> list[SpooledCall]:
        """The calls not done yet, oldest first."""
        return list(self._pending.values())

    def adopt(self, settled_s: float = 0.0) -> list[SpooledCall]:
        """Take over the orphans (the twin's were all left long ago)."""
        orphans, self.orphans = self.orphans, []
        return [
            self.append(call_id=c.call_id, lane=c.lane, host=c.host, call=c.call, member=c.member)
            for c in orphans
        ]

    def stats(self) -> SpoolStats:
        """Pending calls and the oldest's time (no bytes: nothing is on disk)."""
        oldest = next(iter(self._pending.values()), None)
        return SpoolStats(pending=len(self._pending), oldest=oldest.accepted_at if oldest else None)

    def sync(self) -> None:
        """Nothing to flush."""

    def close(self) -> None:
        """Nothing to release."""

    def dead_letter_call(
        self, *, call_id: str, host: str, call: CallBody, reason: str, member: str | None = None
    ) -> DeadCall:
        """Keep a call that cannot run."""
        dead = DeadCall.now(
            dead_id=f"call-{next(self._dead_ids)}",
            call_id=call_id,
            host=host,
            call=call,
            reason=reason,
            member=member,
        )
        self._dead[dead.dead_id] = dead
        return dead

    def list_dead_calls(self, limit: int = 100) -> list[DeadCall]:
        """Dead calls, oldest first."""
        return list(self._dead.values())[:limit]

    def replay_dead_calls(self, dead_ids: Sequence[str] | None = None) -> int:
        """Dead calls become orphans again (adopted on the next look)."""
        taken = self._take(dead_ids)
        self.orphans += [
            SpooledCall(
                seq=0,
                call_id=d.call_id,
                lane="",
                host=d.host,
                call=d.call,
                accepted_at=datetime.now(UTC),
                member=d.member,
            )
            for d in taken
        ]
        return len(taken)

    def drop_dead_calls(self, dead_ids: Sequence[str] | None = None) -> int:
        """Delete dead calls."""
        return len(self._take(dead_ids))

    def expire_dead_calls(self) -> int:
        """Delete the dead calls older than ``DEAD_CALL_DAYS``."""
        oldest = datetime.now(UTC) - timedelta(days=DEAD_CALL_DAYS)
        return len(self._take([i for i, dead in self._dead.items() if dead.dead_at < oldest]))

    def _take(self, dead_ids: Sequence[str] | None) -> list[DeadCall]:
        wanted = list(self._dead) if dead_ids is None else [i for i in dead_ids if i in self._dead]
        return [self._dead.pop(dead_id) for dead_id in wanted]


__all__ = ["InMemorySpool"]
