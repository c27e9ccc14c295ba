"""plait's own intents: what a host says happened in a session, with no host's names or shapes.

A host adapter (``plait.adapters.hosts.*``) turns each of its calls into a list of intents; from
there on everything is host-independent: :mod:`plait.nodes.capture` turns intents into events,
the hooks graph records, folds and answers. The answer a call wants follows from its intents:
:class:`ModelCall` and :class:`CompactionBefore` want the envelope, :class:`ToolCall` a policy.
Intents live for one graph run (untracked channels); none reaches a checkpoint.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from plait.state.events import SessionEvent


class SessionRef(BaseModel):
    """A session and the root its events land in (what a host call is resolved to)."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    root_session_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionTarget:
    """Which session a host call is about, and its parent when the host says so.

    ``files`` are the files the call names (a file tool's path): a later host event about one
    of them that names no session is this session's.
    """

    session_id: str
    parent_id: str | None = None
    files: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Sessionless:
    """A host call that names no session; plait finds the sessions it belongs to.

    ``file``: the file it is about; it goes to the session that last named that file, else to
    the only active session, else nowhere. ``project_wide``: news for every active session of
    the project (a branch change), or none when none is active.
    """

    file: str = ""
    project_wide: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class UserTurn:
    """The user said something (their own words; anything plait injected already removed)."""

    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class AssistantText:
    """The model said something to the user (a finished text, not a tool call)."""

    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelCall:
    """The host is about to call the model and wants the envelope for it.

    ``query`` is the user's current request when the host knows it (to tell whether long-term
    recall should be refreshed); a bare model call takes the envelope already prepared.
    """

    query: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class CompactionBefore:
    """The host is about to summarize the conversation and wants the envelope for the summary."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CompactionAfter:
    """The host replaced the conversation with a summary."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CompactionSummary:
    """The text of a summary the host wrote (empty when it only says one was written)."""

    text: str = ""
    key: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCall:
    """The model asked for a tool call that has not run yet (the answer: allow, nudge, deny)."""

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolResult:
    """A tool call finished.

    ``tool`` is plait's name for it (``read``, ``write``, ``edit``, ``patch``, ``grep``,
    ``glob``, ``list``, ``bash``, ``task`` …; a host maps its own names). ``exit_code`` and
    ``error`` are what the host reported, None when it reported nothing. ``child_session`` names
    the session a ``task`` tool ran in.
    """

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    output: str = ""
    exit_code: int | None = None
    error: str | None = None
    child_session: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class SubagentStarted:
    """A subagent started (a ``task`` tool call), under a key its result will name."""

    key: str
    description: str = ""


LifecyclePhase = Literal["created", "updated", "deleted", "idle", "error"]


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionLifecycle:
    """The session started, changed, ended, went idle or failed."""

    phase: LifecyclePhase
    title: str = ""
    error_name: str = ""
    error_message: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Task:
    """One item of the session's task list."""

    content: str
    status: str = "pending"
    id: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class TasksChanged:
    """The session's task list, as it stands now."""

    tasks: tuple[Task, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class FileChanged:
    """A file of the project changed (seen by the host, not by a tool result)."""

    path: str


@dataclass(frozen=True, kw_only=True, slots=True)
class BranchChanged:
    """The version-control branch changed."""

    branch: str


@dataclass(frozen=True, kw_only=True, slots=True)
class CommandRun:
    """The user ran one of the host's own commands (a slash command)."""

    name: str
    arguments: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Observed:
    """Events a caller already made (:meth:`plait.Memory.turn`)."""

    events: tuple[SessionEvent, ...] = ()


Intent = (
    UserTurn
    | AssistantText
    | ModelCall
    | CompactionBefore
    | CompactionAfter
    | CompactionSummary
    | ToolCall
    | ToolResult
    | SubagentStarted
    | SessionLifecycle
    | TasksChanged
    | FileChanged
    | BranchChanged
    | CommandRun
    | Observed
)

# Tools whose calls carry the whole task list (OpenCode's, LangChain deepagents', Claude Code's).
TODO_TOOLS = frozenset({"todowrite", "todoread", "write_todos", "todo_write"})

# A host adapter's node: the first node of the hooks graph, payload in, intents out.
AdaptNode = Callable[..., Awaitable[dict[str, Any]]]


@dataclass(frozen=True, kw_only=True, slots=True)
class HostAdapter:
    """A host, as the hooks graph sees it: a name and, if need be, the node that reads its payloads.

    A host that reads its payload into intents when the call comes (every host of plait's own)
    sends them as the call's payload and names no ``adapt``: the graph's ``adapt_payload`` node
    then takes them as they are. A host that leaves its payload to the graph gives ``adapt``: a
    node that reads ``state["payload"]`` and returns ``{"intents": [...]}``. ``rebuild`` turns a
    call's
    :attr:`HostCall.replay` form and id back into the call (a host whose calls can wait in
    plait's spool has one). ``tool_context``: the host reads an answer to a finished tool call
    as context for the model (Claude Code's PostToolUse), so that answer says what memory gained.
    """

    name: str
    adapt: AdaptNode | None = None
    rebuild: Callable[[Mapping[str, Any], str], HostCall] | None = None
    # the host adds context to a tool's result: a tool step tells it what memory gained
    tool_context: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class HostCall:
    """One call of a host into plait.

    ``target`` is :class:`Sessionless` (or None) when the call names no session.
    ``reads_state`` is False for a call that only takes the envelope already prepared (no
    checkpoint is read or written). ``call_id`` is the host's id of this call: however often
    it is replayed, its events are recorded once. ``durable`` says the call records something
    its host must not lose (the host needs to hear whether it was kept); ``replay`` is the
    call as JSON, from which the host's adapter builds it again (:attr:`HostAdapter.rebuild`),
    so it can wait in plait's spool; None when it cannot. ``member`` is the team member whose
    token made the call (a service a team shares), None for the service's own user.
    """

    host: HostAdapter
    target: SessionTarget | Sessionless | None
    payload: Any
    reads_state: bool = True
    call_id: str = ""
    durable: bool = False
    replay: Mapping[str, Any] | None = None
    member: str | None = None

    @property
    def says_nothing(self) -> bool:
        """Whether running the call would change nothing: its host read no intent out of it.

        Such a call (most of OpenCode's bus events: a message's token counts, a part that is
        still streaming, a tool part still running) captures, records and answers nothing, so
        it needs no graph run; a call that names a parent session still runs, to link it.
        """
        if self.host.adapt is not None or self.payload:
            return False
        return not (isinstance(self.target, SessionTarget) and self.target.parent_id)


__all__ = [
    "AdaptNode",
    "AssistantText",
    "BranchChanged",
    "CommandRun",
    "CompactionAfter",
    "CompactionBefore",
    "CompactionSummary",
    "FileChanged",
    "HostAdapter",
    "HostCall",
    "Intent",
    "LifecyclePhase",
    "ModelCall",
    "Observed",
    "SessionLifecycle",
    "SessionRef",
    "SessionTarget",
    "Sessionless",
    "SubagentStarted",
    "Task",
    "TasksChanged",
    "ToolCall",
    "ToolResult",
    "UserTurn",
]
