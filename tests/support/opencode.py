"""OpenCode hook calls read the way the hooks graph reads them, without a graph or a store."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plait.adapters.hosts.opencode.hooks import host_call
from plait.nodes.capture import capture
from plait.state.events import SessionEvent
from plait.state.intents import Intent, SessionRef, SessionTarget


@dataclass
class Turn:
    """One hook call: its session (and parent), its intents, and the events they become."""

    session_id: str | None
    parent_id: str | None = None
    intents: list[Intent] = field(default_factory=list)
    events: list[SessionEvent] = field(default_factory=list)
    query: str = ""
    lifecycle: str = ""


def extract_opencode(name: str, input: Any, output: Any) -> Turn:
    """Validate, read and capture one hook call.

    A child session's root is its parent; a call that names no session is captured for ``""``.
    """
    call = host_call(name, input, output)
    target = call.target if isinstance(call.target, SessionTarget) else None
    intents = list(call.payload)
    session = target.session_id if target else ""
    root = (target.parent_id if target else None) or session
    captured = capture(
        intents, SessionRef(session_id=session, root_session_id=root), host="opencode"
    )
    return Turn(
        session_id=target.session_id if target else None,
        parent_id=target.parent_id if target else None,
        intents=intents,
        events=captured.events,
        query=captured.query,
        lifecycle=captured.lifecycle,
    )


__all__ = ["Turn", "extract_opencode"]
