"""State of the hooks graph (thread = root session) and the small values it passes around."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from langgraph.channels.untracked_value import UntrackedValue
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from plait.state.events import SessionEvent
from plait.state.snapshot import Snapshot, fold_snapshot

HookName = Literal[
    "chat.message",
    "experimental.chat.messages.transform",
    "experimental.session.compacting",
    "event",
    "tool.execute.before",
    "tool.execute.after",
]
HOOK_NAMES: tuple[str, ...] = HookName.__args__  # type: ignore[attr-defined]


class SessionRef(BaseModel):
    """A session and the root its events land in."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    root_session_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ParsedHook:
    """One host hook call in plait's terms: its events, the host's event name, the user's query."""

    events: list[SessionEvent] = field(default_factory=list)
    host_event: str = ""
    query: str = ""


class ToolPolicy(BaseModel):
    """What ``tool.execute.before`` decided for one tool call."""

    model_config = ConfigDict(frozen=True)

    action: Literal["allow", "nudge", "redirect", "deny"] = "allow"
    message: str = ""


class CachedRecall(BaseModel):
    """A long-term memory search result cached for injection as ``<persistent_memory>``."""

    query: str = ""
    text: str = ""
    node_refs: list[str] = Field(default_factory=list)
    refreshed_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class HookInput(TypedDict):
    """What one hook call puts into the graph.

    The host payload, this call's events and what the call hands back are untracked channels:
    they live for one run and never reach a checkpoint, so a 10 MB message costs the checkpoint
    nothing and nothing of one call leaks into the next.
    """

    hook: str
    session: SessionRef
    payload: Annotated[dict[str, Any], UntrackedValue(dict)]
    parsed: Annotated[ParsedHook | None, UntrackedValue(ParsedHook)]
    events: Annotated[list[SessionEvent], UntrackedValue(list)]
    inject: Annotated[str | None, UntrackedValue(str)]
    policy: Annotated[ToolPolicy | None, UntrackedValue(ToolPolicy)]


class HookOutput(TypedDict, total=False):
    """What the caller reads back: text to inject and a tool decision."""

    inject: str | None
    policy: ToolPolicy | None
    host_event: str


class HookState(HookInput, total=False):
    """The hooks graph's state. Bounded: the event log lives in the hot store, not here."""

    host_event: str
    query: str
    snapshot: Annotated[Snapshot, fold_snapshot]
    cursor: int
    recall: CachedRecall | None
    drift: bool
    envelope: str | None
    turns: int
    nudged: bool


def hook_input(
    hook: str, session: SessionRef, payload: dict[str, Any], parsed: ParsedHook | None = None
) -> HookInput:
    """The input of one hook call; ``parsed`` when the caller has already read the payload."""
    return HookInput(
        hook=hook,
        session=session,
        payload=payload,
        parsed=parsed,
        events=[],
        inject=None,
        policy=None,
    )


__all__ = [
    "HOOK_NAMES",
    "CachedRecall",
    "HookInput",
    "HookName",
    "HookOutput",
    "HookState",
    "ParsedHook",
    "SessionRef",
    "ToolPolicy",
    "hook_input",
]
