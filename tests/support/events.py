"""Session events for long-term memory tests: numbered, one minute apart from a start time."""

from __future__ import annotations

from datetime import datetime, timedelta

from plait.state.events import EventKind, SessionEvent


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
