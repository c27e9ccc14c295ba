"""Session events for long-term memory tests: numbered, one minute apart from a start time."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from plait.adapters.hosts.langchain.messages import HOST, intents_from_messages
from plait.nodes.capture import capture
from plait.state.events import EventKind, SessionEvent
from plait.state.intents import SessionRef


def timed_event(
    index: int,
    kind: EventKind,
    summary: str,
    *,
    start: datetime,
    session: str = "ses_main",
    **fields: object,
) -> SessionEvent:
    """Event ``index`` of ``session``, ``index`` minutes after ``start``."""
    return SessionEvent(
        id=index,
        root_session_id=session,
        session_id=session,
        kind=kind,
        summary=summary,
        time=start + timedelta(minutes=index),
        **fields,
    )


__all__ = ["timed_event"]


def events_from_messages(
    messages: Sequence[Any], *, root_session_id: str, session_id: str
) -> list[SessionEvent]:
    """The events LangChain messages become (the capture rules over their intents)."""
    session = SessionRef(session_id=session_id, root_session_id=root_session_id)
    return capture(intents_from_messages(messages), session, host=HOST).events
