"""Host adapters: OpenCode's hook payloads in, plait's own types out, and mutations back.

Everything after :func:`parse_hook` is host-independent; a new host is a new pair of functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plait.errors import InvalidHookPayload, UnknownHook
from plait.nodes.envelope import strip_envelopes
from plait.nodes.extract_opencode import OpenCodeTurn, extract_opencode
from plait.state.events import EventKind, SessionEvent
from plait.state.hooks import HOOK_NAMES, ParsedHook, SessionRef, ToolPolicy

POLICY_KEY = "plait"


@dataclass(frozen=True, kw_only=True, slots=True)
class HookTarget:
    """Which session a hook call is about, and its parent when the host says so."""

    session_id: str
    parent_id: str | None = None


def check_hook(name: str, payload: Mapping[str, Any]) -> None:
    """Reject an unknown hook name or a payload whose ``input``/``output`` are not objects."""
    if name not in HOOK_NAMES:
        raise UnknownHook(f"unknown hook {name!r}; plait handles {', '.join(HOOK_NAMES)}")
    for part in ("input", "output"):
        if not isinstance(payload.get(part), Mapping):
            raise InvalidHookPayload("must be an object", field=part)


def read_hook(name: str, payload: Mapping[str, Any]) -> OpenCodeTurn:
    """What an OpenCode hook call says (read once: the session it names, then its events)."""
    return extract_opencode(name, dict(payload["input"]), dict(payload["output"]))


def parse_hook(name: str, payload: Mapping[str, Any], session: SessionRef) -> ParsedHook:
    """Turn an OpenCode hook payload into events for ``session``."""
    return parsed_for(read_hook(name, payload), session)


def parsed_for(turn: OpenCodeTurn, session: SessionRef) -> ParsedHook:
    """A read hook call's events, placed in ``session`` and its root."""
    events = [
        event.model_copy(
            update={
                "root_session_id": session.root_session_id,
                "session_id": event.session_id or session.session_id,
            }
        )
        for event in turn.events
    ]
    is_child = session.session_id != session.root_session_id
    if is_child:
        events = [as_subagent_work(event, session) for event in events]
        if turn.event_type == "session.idle":
            events.append(subagent_finished(session))
    return ParsedHook(events=events, host_event=turn.event_type or "", query=turn.query or "")


def as_subagent_work(event: SessionEvent, session: SessionRef) -> SessionEvent:
    """Re-read a child session's event as subagent work.

    In a child session, the prompt is the subagent's task and its answer a discovery; they
    must not pass for the root's own request or compaction summary.
    """
    if event.kind is EventKind.PROMPT:
        update = {"kind": EventKind.SUBAGENT_START, "summary": f"subagent: {event.summary}"}
        return event.model_copy(update={**update, "key": session.session_id, "body": ""})
    if event.kind is EventKind.MESSAGE:
        return event.model_copy(update={"kind": EventKind.DISCOVERY, "body": ""})
    return event


def subagent_finished(session: SessionRef) -> SessionEvent:
    """A child session went idle: its subagent is done."""
    return SessionEvent(
        root_session_id=session.root_session_id,
        session_id=session.session_id,
        kind=EventKind.SUBAGENT_FINISH,
        summary=f"subagent {session.session_id} finished",
        key=session.session_id,
        source_hook="event",
    )


def target_of(turn: OpenCodeTurn) -> HookTarget | None:
    """The session a hook call is about; None for host events that belong to no session."""
    if not turn.session_id:
        return None
    return HookTarget(session_id=turn.session_id, parent_id=turn.parent_id)


def apply_output(
    name: str, output: dict[str, Any], *, inject: str | None, policy: ToolPolicy | None
) -> dict[str, Any]:
    """Apply what the graph decided to OpenCode's ``output`` object, in place, and return it."""
    if name == "experimental.chat.messages.transform" and inject:
        prepend_to_last_user_message(output, inject)
    elif name == "experimental.session.compacting" and inject:
        context = output.setdefault("context", [])
        if isinstance(context, list):
            context.append(inject)
    elif name == "tool.execute.before" and policy is not None and policy.action != "allow":
        output[POLICY_KEY] = policy.model_dump()
    return output


def prepend_to_last_user_message(output: dict[str, Any], envelope: str) -> None:
    """Put the envelope first in the last user message, replacing any earlier one."""
    messages = output.get("messages")
    if not isinstance(messages, list):
        return
    for message in reversed(messages):
        info = message.get("info") if isinstance(message, dict) else None
        if isinstance(info, dict) and info.get("role") == "user":
            parts = message.setdefault("parts", [])
            if not isinstance(parts, list):
                return
            strip_injected(parts)
            parts.insert(0, envelope_part(info, envelope))
            return


def strip_injected(parts: list[Any]) -> None:
    """Remove envelopes already in a message's text parts (so it never appears twice)."""
    for index in range(len(parts) - 1, -1, -1):
        part = parts[index]
        if not (isinstance(part, dict) and part.get("type") == "text"):
            continue
        text = str(part.get("text", ""))
        if "<session_memory" not in text:
            continue
        remaining = strip_envelopes(text)
        if remaining.strip():
            part["text"] = remaining
        else:
            del parts[index]


def envelope_part(info: Mapping[str, Any], envelope: str) -> dict[str, Any]:
    """A synthetic OpenCode text part carrying the envelope."""
    message_id = str(info.get("id", ""))
    return {
        "id": f"prt_plait_{message_id}",
        "sessionID": str(info.get("sessionID", "")),
        "messageID": message_id,
        "type": "text",
        "text": envelope,
        "synthetic": True,
    }


__all__ = [
    "POLICY_KEY",
    "HookTarget",
    "ParsedHook",
    "apply_output",
    "check_hook",
    "parse_hook",
    "parsed_for",
    "read_hook",
    "target_of",
    "prepend_to_last_user_message",
]
