"""State of the hooks graph (thread = root session) and the small values it passes around."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from langgraph.channels.untracked_value import UntrackedValue
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from plait.state.events import SessionEvent
from plait.state.intents import Intent, SessionRef
from plait.state.snapshot import Snapshot, fold_snapshot


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
    """What one host call puts into the graph.

    What the host sent, its intents, this call's events and what the call hands back are
    untracked channels: they live for one run and never reach a checkpoint, so a 10 MB message
    costs the checkpoint nothing and nothing of one call leaks into the next. ``call_id`` is
    the host's id of the call ("" for none): its events are recorded once, however often the
    call is replayed.
    """

    session: SessionRef
    host: Annotated[str, UntrackedValue(str)]
    payload: Annotated[Any, UntrackedValue(object)]
    intents: Annotated[list[Intent], UntrackedValue(list)]
    events: Annotated[list[SessionEvent], UntrackedValue(list)]
    inject: Annotated[str | None, UntrackedValue(str)]
    policy: Annotated[ToolPolicy | None, UntrackedValue(ToolPolicy)]
    folded: Annotated[int, UntrackedValue(int)]
    call_id: Annotated[str, UntrackedValue(str)]


class HookOutput(TypedDict, total=False):
    """What the caller reads back: text to inject and a tool decision."""

    inject: str | None
    policy: ToolPolicy | None
    lifecycle: str


class HookState(HookInput, total=False):
    """The hooks graph's state. Bounded: the event log lives in the hot store, not here.

    ``folded`` counts the events this call folded into the snapshot; ``staged`` is a digest of
    the envelope last staged, so a call whose events change nothing in it stages nothing.
    """

    lifecycle: str
    query: str
    snapshot: Annotated[Snapshot, fold_snapshot]
    cursor: int
    recall: CachedRecall | None
    drift: bool
    envelope: str | None
    staged: str
    turns: int
    nudged: bool


def hook_input(
    session: SessionRef,
    payload: Any,
    host: str = "plait",
    call_id: str = "",
    intents: Sequence[Intent] = (),
) -> HookInput:
    """The input of one host call: the session it is about, the host, what it sent, its id.

    ``intents``: what the host read out of its payload already (then the graph skips its
    adapter's step).
    """
    return HookInput(
        session=session,
        host=host,
        payload=payload,
        intents=list(intents),
        events=[],
        inject=None,
        policy=None,
        folded=0,
        call_id=call_id,
    )


__all__ = [
    "CachedRecall",
    "HookInput",
    "HookOutput",
    "HookState",
    "SessionRef",
    "ToolPolicy",
    "hook_input",
]
