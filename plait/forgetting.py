"""Forgetting captured events: one session, everything before a date, or what mentions a text.

``plait forget`` (and the ``session_forget`` MCP tool) select events in the project's session
logs (:class:`Selection`) and remove every copy plait made of them, in an order that a failure
can be retried from: their entries still waiting in the drain queue, their turns in the recall
index and episodes in the knowledge graph (a graph that does not answer stops the forget here,
with nothing in the logs touched: run it again), then the events themselves (blanked in place:
:func:`plait.state.events.forgotten`), the session's snapshot (folded again from what remains),
the record of envelopes its model calls received, its staged envelope (composed again), the
recall caches and the project's standby answers (:mod:`plait.state.base.standby`). A new
session's first envelope and ``plait recall`` no longer carry them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from plait.dispatch import thread_config
from plait.nodes.hooks import envelope_for, project_cache_key, session_cache_key
from plait.state.base.errors import BackendUnavailable, UsageError
from plait.state.base.standby import drop_answers
from plait.state.events import SessionEvent, is_forgotten
from plait.state.groups import project_key
from plait.state.snapshot import fold_snapshot

if TYPE_CHECKING:
    from plait.memory import Memory
    from plait.state.ports import EventLog

SESSION_PAGE = 200  # sessions read at a time when a forget reaches every session


class UnknownSession(UsageError):
    """``--session`` names a session the project has no events of."""


@dataclass(frozen=True, kw_only=True)
class Selection:
    """Which captured events go: of one session, older than a time, mentioning a text, by id.

    Every criterion given must hold; ``ids`` (a session's event ids) needs ``session``.
    """

    session: str | None = None
    before: datetime | None = None
    match: str | None = None
    ids: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        if self.session is None and self.before is None and not self.match:
            raise UsageError("say what to forget: a session, a date (before) or a text (match)")
        if self.ids and self.session is None:
            raise UsageError("event ids are a session's: name the session too")

    def picks(self, event: SessionEvent, root: str) -> bool:
        """Whether ``event`` (of the root session ``root``) is selected."""
        if is_forgotten(event):
            return False
        if self.session is not None and self.session not in (root, event.session_id):
            return False
        if self.before is not None and not event.time < self.before:
            return False
        if self.ids and event.id not in self.ids:
            return False
        if self.match:
            text = " ".join([event.summary, event.body, *event.refs, *event.keywords])
            return self.match.casefold() in text.casefold()
        return True


@dataclass
class Forgotten:
    """What a forget selected (by root session) and, once done, the copies it removed."""

    events: dict[str, list[SessionEvent]] = field(default_factory=dict)
    derived: int = 0

    @property
    def count(self) -> int:
        """Events selected."""
        return sum(len(found) for found in self.events.values())


async def session_roots(store: EventLog, group_id: str) -> list[str]:
    """Every root session the project's event log lists."""
    roots: list[str] = []
    while True:
        page = await store.list_sessions(group_id, offset=len(roots), limit=SESSION_PAGE)
        roots += [seen.session_id for seen in page]
        if len(page) < SESSION_PAGE:
            return roots


async def select(memory: Memory, selection: Selection) -> Forgotten:
    """The events ``selection`` picks, by root session (nothing is changed).

    Raises :class:`UnknownSession` for a session the project has no events of.
    """
    store = memory.backends.store
    if selection.session is not None:
        root = await memory.dispatch.root_of(selection.session)
        if not await store.event_count(root):
            raise UnknownSession(f"no session {selection.session!r} in this project")
        roots = [root]
    else:
        roots = await session_roots(store, memory.group_id)
    found = Forgotten()
    for root in roots:
        picked = [e for e in await store.read_events(root) if selection.picks(e, root)]
        if picked:
            found.events[root] = picked
    return found


async def forget(memory: Memory, selection: Selection) -> Forgotten:
    """Select and remove the events and every copy of them (see the module)."""
    found = await select(memory, selection)
    store = memory.backends.store
    groups = list(dict.fromkeys([memory.group_id, memory.observations.user_group]))
    for root, events in found.events.items():
        ids = [event.id for event in events]
        await store.withdraw(root, ids)
        if memory.background is not None:
            found.derived += await memory.background.forget_events(root, ids, groups)
        await store.forget_events(root, ids)
        await refold(memory, root)
    if found.events:
        keys = [session_cache_key(memory.group_id, root) for root in found.events]
        await store.drop_cache([project_cache_key(memory.group_id), *keys])
        drop_answers(str(memory.settings.resolved_data_dir()), project_key(memory.project_dir))
    return found


async def refold(memory: Memory, root: str) -> None:
    """Fold the session's snapshot again from what its log keeps, and compose its envelope.

    The record of what its model calls received goes (it held what was forgotten).
    """
    store = memory.backends.store
    remaining = [e for e in await store.read_events(root) if not is_forgotten(e)]
    graph = memory.dispatch.graph
    await graph.aupdate_state(thread_config(root), {"snapshot": fold_snapshot(None, remaining)})
    await store.forget_received(root)
    state = await memory.dispatch.state(root)  # the envelope kept for the next call, anew
    await store.stage_envelope(root, envelope_for(state, memory.settings))


async def correct(
    memory: Memory, root: str, event_id: int, text: str, *, source: str = "edit"
) -> SessionEvent:
    """Put right what a captured event says; the corrected event as stored.

    The old event goes with every copy of it (:func:`forget`); the corrected one is recorded
    in the session in its place, as the user's word (same kind, key and files; ``source`` names
    where it was corrected), and the session's snapshot and envelope are made again, so the
    next model call carries the correction. Raises :class:`UsageError` for an empty text or an
    event the session does not have, :class:`BackendUnavailable` when it cannot be stored.
    """
    text = text.strip()
    if not text:
        raise UsageError("text: a correction needs some text")
    selection = Selection(session=root, ids=frozenset({event_id}))
    found = [e for events in (await select(memory, selection)).events.values() for e in events]
    if not found:
        raise UsageError(f"session {root!r} has no event #{event_id}")
    old = found[0]
    await forget(memory, selection)
    corrected = SessionEvent(
        root_session_id=root,
        session_id=old.session_id,
        kind=old.kind,
        summary=text,
        body=text,
        refs=old.refs,
        key=old.key,
        source_hook=f"{source}.correct",
        speaker="user",
    )
    stored = await memory.dispatch.record(root, [corrected])
    if not stored:
        raise BackendUnavailable("the hot tier did not take the corrected event")
    await refold(memory, root)
    return stored[0]


def describe(found: Forgotten) -> Sequence[str]:
    """One line an event: its session, id, kind and summary."""
    return [
        f"{root} #{event.id} {event.kind.value}: {event.summary}"
        for root, events in found.events.items()
        for event in events
    ]


__all__ = [
    "Forgotten",
    "Selection",
    "UnknownSession",
    "correct",
    "describe",
    "forget",
    "select",
]
