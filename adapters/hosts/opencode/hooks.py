"""OpenCode's hooks in, plait's intents out, and plait's answers written back into the hook output.

The only place that knows OpenCode's hook names and payload shapes (recorded from OpenCode
1.18; see ``docs/opencode-hooks.md``). A hook call is validated, its session found and its
payload read into intents once, when it comes (:func:`host_call`: a call plait cannot use is
refused before it is kept); the hooks graph takes those intents, and what the graph answers is
applied to OpenCode's ``output`` object (:func:`apply_output`). :data:`WIRE` is how the HTTP
service reads and answers OpenCode's calls; :class:`OpenCodeHooks` is the same round trip for
scripts that drive plait as OpenCode does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from plait.adapters.hosts.hook_client.host import HostWire
from plait.adapters.hosts.payload_fields import mapping, obj, optional_str, require_str
from plait.state.base.errors import InvalidHookPayload, UnknownHook
from plait.state.envelope import for_message, project_part, strip_envelopes
from plait.state.events import TEXT_MAX, as_text
from plait.state.hooks import HookOutput, ToolPolicy
from plait.state.intents import (
    AssistantText,
    BranchChanged,
    CommandRun,
    CompactionAfter,
    CompactionBefore,
    CompactionSummary,
    FileChanged,
    HostAdapter,
    HostCall,
    Intent,
    LifecyclePhase,
    ModelCall,
    Sessionless,
    SessionLifecycle,
    SessionTarget,
    Task,
    TasksChanged,
    ToolCall,
    ToolResult,
    UserTurn,
)

if TYPE_CHECKING:
    from plait.memory import Memory

HookName = Literal[
    "chat.message",
    "experimental.chat.messages.transform",
    "experimental.session.compacting",
    "event",
    "tool.execute.before",
    "tool.execute.after",
]
HOOK_NAMES: tuple[str, ...] = HookName.__args__  # type: ignore[attr-defined]
TRANSFORM = "experimental.chat.messages.transform"
COMPACTING = "experimental.session.compacting"
# Hooks whose calls record something: plait keeps them (spool) and says where (kept).
DURABLE_HOOKS = frozenset({"event", "chat.message", "tool.execute.after"})
POLICY_KEY = "plait"
IGNORED_ERRORS = frozenset({"MessageAbortedError"})
TODOS_MAX = 50
SHELL_TOOLS = frozenset({"bash", "shell"})
ENVELOPE_PART = "prt_plait_"
PATH_ARGS = ("filePath", "path", "file_path")
# Bus events that name no session: a file edit finds the session that named the file, a
# branch change goes to the project's active sessions (see plait.Memory's session routing).
SESSIONLESS: dict[str, Callable[[Mapping[str, Any]], Sessionless | None]] = {
    "file.edited": lambda props: (
        Sessionless(file=props["file"]) if isinstance(props.get("file"), str) else None
    ),
    "vcs.branch.updated": lambda props: Sessionless(project_wide=True),
}


# -- reading a payload --------------------------------------------------------------------------
def check_hook(name: str, input: Any, output: Any) -> None:
    """Reject an unknown hook name or arguments that are not objects."""
    if name not in HOOK_NAMES:
        raise UnknownHook(f"unknown hook {name!r}; plait handles {', '.join(HOOK_NAMES)}")
    mapping(input, "input")
    mapping(output, "output")


# -- which session ------------------------------------------------------------------------------
def target_of(
    name: str, input: Mapping[str, Any], output: Mapping[str, Any]
) -> SessionTarget | Sessionless | None:
    """The session a hook call is about (and its parent); None for a call that names none."""
    if name == TRANSFORM:
        return transform_target(output)
    if name == "event":
        return event_target(input)
    if name == "chat.message":
        message = obj(output.get("message"))
        session = input.get("sessionID") or message.get("sessionID")
        return SessionTarget(session_id=require_str(session, "input.sessionID"))
    session_id = require_str(input.get("sessionID"), "input.sessionID")
    return SessionTarget(session_id=session_id, files=tool_files(name, input, output))


def tool_files(name: str, input: Mapping[str, Any], output: Mapping[str, Any]) -> tuple[str, ...]:
    """The file a tool call names (its arguments are the output before, the input after)."""
    args = obj(output.get("args") if name == "tool.execute.before" else input.get("args"))
    path = next((args[key] for key in PATH_ARGS if isinstance(args.get(key), str)), "")
    return (path[:512],) if path else ()


def transform_target(output: Mapping[str, Any]) -> SessionTarget | None:
    """The session of the last message that names one."""
    messages = output.get("messages")
    if not isinstance(messages, list):
        raise InvalidHookPayload("must be a list", field="output.messages")
    for message in reversed(messages):
        info = message.get("info") if isinstance(message, Mapping) else None
        if isinstance(info, Mapping) and isinstance(info.get("sessionID"), str):
            return SessionTarget(session_id=info["sessionID"])
    return None


def event_target(input: Mapping[str, Any]) -> SessionTarget | Sessionless | None:
    """A bus event's session: its ``sessionID``, else the session or message it describes.

    ``file.edited`` and ``vcs.branch.updated`` name none: they are :class:`Sessionless`.
    """
    event = mapping(input.get("event"), "input.event")
    require_str(event.get("type"), "input.event.type")
    properties = mapping(event.get("properties") or {}, "input.event.properties")
    info, part = obj(properties.get("info")), obj(properties.get("part"))
    session = (
        optional_str(properties.get("sessionID"))
        or optional_str(info.get("sessionID"))
        or optional_str(part.get("sessionID"))
    )
    if str(event.get("type")).startswith("session."):
        session = session or optional_str(info.get("id"))
        parent = optional_str(info.get("parentID"))
        return SessionTarget(session_id=session, parent_id=parent) if session else None
    if session:
        return SessionTarget(session_id=session)
    sessionless = SESSIONLESS.get(str(event.get("type")))
    return sessionless(properties) if sessionless is not None else None


def host_call(name: str, input: Any, output: Any, call_id: str = "") -> HostCall:
    """A validated hook call, its payload read into intents, ready for the dispatch.

    It is read in full here, so a call plait cannot use is refused before it is kept; a call
    that records something (:data:`DURABLE_HOOKS`) carries its JSON form (``replay``).
    Raises :class:`UnknownHook` or :class:`InvalidHookPayload` (naming the field).
    """
    check_hook(name, input, output)
    durable = name in DURABLE_HOOKS
    target = target_of(name, input, output)
    return HostCall(
        host=OPENCODE,
        target=target,
        payload=tuple(intents_of(name, input, output)),
        reads_state=name != TRANSFORM,
        call_id=call_id,
        durable=durable,
        replay={"name": name, "input": input, "output": output} if durable else None,
    )


def rebuild_opencode(replay: Mapping[str, Any], call_id: str) -> HostCall:
    """A kept call built again from its JSON form (:attr:`HostCall.replay`)."""
    name = str(replay.get("name", ""))
    return host_call(name, replay.get("input"), replay.get("output"), call_id)


# -- what a hook says ---------------------------------------------------------------------------
def intents_of(name: str, input: Mapping[str, Any], output: Mapping[str, Any]) -> list[Intent]:
    """The intents of one hook call. Raises :class:`InvalidHookPayload` naming a bad field."""
    return HOOK_INTENTS[name](input, output)


def user_text(parts: Any) -> str:
    """The user's own text: text parts that are neither synthetic nor ignored.

    Only envelopes plait marked are taken out: whatever a person typed or attached, a mention
    of ``<session_memory`` included, is kept whole.
    """
    if not isinstance(parts, list):
        raise InvalidHookPayload("must be a list", field="output.parts")
    texts = [
        as_text(part.get("text", ""))
        for part in parts
        if isinstance(part, Mapping)
        and part.get("type") == "text"
        and not part.get("synthetic")
        and not part.get("ignored")
    ]
    return strip_envelopes(as_text("\n".join(texts))).strip()


def chat_message(input: Mapping[str, Any], output: Mapping[str, Any]) -> list[Intent]:
    """A user prompt."""
    return [UserTurn(text=user_text(output.get("parts", [])))]


def tool_before(input: Mapping[str, Any], output: Mapping[str, Any]) -> list[Intent]:
    """A tool call about to run: its name and arguments."""
    return [ToolCall(tool=as_text(input.get("tool", ""), 100), args=obj(output.get("args")))]


def tool_after(input: Mapping[str, Any], output: Mapping[str, Any]) -> list[Intent]:
    """A finished tool call."""
    tool = require_str(input.get("tool"), "input.tool").lower()
    metadata = obj(output.get("metadata"))
    exit_code = metadata.get("exit", metadata.get("exitCode"))
    exit_code = (
        exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None
    )
    if metadata.get("error") and tool not in SHELL_TOOLS:  # a shell's outcome is its exit code
        exit_code = exit_code or 1
    child = optional_str(metadata.get("sessionId")) or optional_str(metadata.get("sessionID"))
    return [
        ToolResult(
            tool=tool,
            args=obj(input.get("args")),
            output=as_text(output.get("output", ""), TEXT_MAX * 4),
            exit_code=exit_code,
            child_session=child or "",
        )
    ]


def bus_event(input: Mapping[str, Any], output: Mapping[str, Any]) -> list[Intent]:
    """A bus event: session lifecycle, messages, todos, files, errors, git, commands."""
    event = mapping(input.get("event"), "input.event")
    event_type = require_str(event.get("type"), "input.event.type")
    properties = mapping(event.get("properties") or {}, "input.event.properties")
    read = EVENT_INTENTS.get(event_type)
    return read(event_type, properties) if read is not None else []


LIFECYCLE_PHASES: dict[str, LifecyclePhase] = {
    "session.created": "created",
    "session.deleted": "deleted",
    "session.idle": "idle",
}


def lifecycle(kind: str, props: Mapping[str, Any]) -> list[Intent]:
    """``session.created/deleted/idle``."""
    title = as_text(obj(props.get("info")).get("title") or "", 200)
    return [SessionLifecycle(phase=LIFECYCLE_PHASES[kind], title=title)]


def session_updated(kind: str, props: Mapping[str, Any]) -> list[Intent]:
    """``session.updated``: a title, the times or the diff's counts changed, nothing plait reads.

    A subagent session's parent, which it names too, is the call's target (:func:`event_target`):
    such a call still runs, to link the two.
    """
    return []


def session_error(kind: str, props: Mapping[str, Any]) -> list[Intent]:
    """``session.error`` (an aborted message is the user's doing, not an error)."""
    error = obj(props.get("error"))
    name = str(error.get("name") or "UnknownError")
    if name in IGNORED_ERRORS:
        return []
    message = as_text(obj(error.get("data")).get("message") or name, 1000)
    return [SessionLifecycle(phase="error", error_name=name, error_message=message)]


def message_updated(kind: str, props: Mapping[str, Any]) -> list[Intent]:
    """An assistant message marked ``summary`` is a compaction summary."""
    info = obj(props.get("info"))
    if info.get("role") != "assistant" or not info.get("summary"):
        return []
    return [CompactionSummary()]


def part_updated(kind: str, props: Mapping[str, Any]) -> list[Intent]:
    """A finished assistant text part, or a tool call that failed."""
    part = obj(props.get("part"))
    if part.get("type") == "tool":
        return failed_tool(part)
    finished = obj(part.get("time")).get("end")
    if part.get("type") != "text" or not finished or part.get("synthetic"):
        return []
    text = strip_envelopes(as_text(part.get("text", ""))).strip()
    return [AssistantText(text=text)] if text else []


def failed_tool(part: Mapping[str, Any]) -> list[Intent]:
    """A tool part in state ``error`` (``tool.execute.after`` is not called for those)."""
    state = obj(part.get("state"))
    if state.get("status") != "error":
        return []
    tool = as_text(part.get("tool") or "tool", 100).lower()
    error = as_text(state.get("error") or "failed", TEXT_MAX)
    return [ToolResult(tool=tool, args=obj(state.get("input")), error=error)]


def todo_updated(kind: str, props: Mapping[str, Any]) -> list[Intent]:
    """The todo list, as it stands."""
    todos = props.get("todos")
    if not isinstance(todos, list):
        return []
    tasks = tuple(task_of(todo) for todo in todos[:TODOS_MAX] if isinstance(todo, Mapping))
    return [TasksChanged(tasks=tasks)]


def task_of(todo: Mapping[str, Any]) -> Task:
    """One todo."""
    todo_id = todo.get("id")
    return Task(
        content=as_text(todo.get("content"), 1000),
        status=as_text(todo.get("status") or "pending", 40),
        id=str(todo_id) if isinstance(todo_id, str | int) and todo_id else "",
    )


def file_edited(kind: str, props: Mapping[str, Any]) -> list[Intent]:
    """``file.edited``."""
    path = props.get("file")
    return [FileChanged(path=as_text(path, 512))] if isinstance(path, str) and path else []


def branch_updated(kind: str, props: Mapping[str, Any]) -> list[Intent]:
    """``vcs.branch.updated``."""
    branch = props.get("branch")
    return [BranchChanged(branch=branch)] if isinstance(branch, str) and branch else []


def command_executed(kind: str, props: Mapping[str, Any]) -> list[Intent]:
    """A slash command the user ran."""
    name = props.get("name")
    if not isinstance(name, str):
        return []
    return [CommandRun(name=name, arguments=as_text(props.get("arguments") or "", 1000))]


EVENT_INTENTS: dict[str, Callable[[str, Mapping[str, Any]], list[Intent]]] = {
    "session.created": lifecycle,
    "session.updated": session_updated,
    "session.deleted": lifecycle,
    "session.idle": lifecycle,
    "session.compacted": lambda kind, props: [CompactionAfter()],
    "session.error": session_error,
    "message.updated": message_updated,
    "message.part.updated": part_updated,
    "todo.updated": todo_updated,
    "file.edited": file_edited,
    "vcs.branch.updated": branch_updated,
    "command.executed": command_executed,
}

HOOK_INTENTS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], list[Intent]]] = {
    "chat.message": chat_message,
    TRANSFORM: lambda input, output: [ModelCall()],
    COMPACTING: lambda input, output: [CompactionBefore()],
    "event": bus_event,
    "tool.execute.before": tool_before,
    "tool.execute.after": tool_after,
}

OPENCODE = HostAdapter(name="opencode", rebuild=rebuild_opencode)


# -- writing the answer back --------------------------------------------------------------------
def apply_output(name: str, output: dict[str, Any], answer: HookOutput) -> dict[str, Any]:
    """Apply what plait answered to OpenCode's ``output`` object, in place, and return it."""
    inject, policy = answer.get("inject"), answer.get("policy")
    if name == TRANSFORM and inject:
        prepend_to_last_user_message(output, inject)
    elif name == COMPACTING and inject:
        context = output.setdefault("context", [])
        if isinstance(context, list):
            context.append(inject)
    elif name == "tool.execute.before":
        apply_policy(output, policy, inject)
    return output


def apply_policy(output: dict[str, Any], policy: ToolPolicy | None, recalled: str | None) -> None:
    """A tool call's policy and what memory says of the file it touches, for the plugin.

    OpenCode lets a hook add to what the model sees only through the tool's result, so both
    become a note the plugin appends to it (recall at the point of action); a deny still stops
    the call.
    """
    action = policy.action if policy is not None else "allow"
    message = policy.message if policy is not None else ""
    if recalled and action != "deny":
        message = f"{message}\n\n{recalled}" if message else recalled
        action = "nudge" if action == "allow" else action
    if action != "allow":
        output[POLICY_KEY] = ToolPolicy(action=action, message=message).model_dump()


def prepend_to_last_user_message(output: dict[str, Any], envelope: str) -> None:
    """Put the envelope first in the last user message, replacing any earlier one.

    What only repeats the message (its own text as ``<last_request>``) is left out of it.
    """
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
            fitted = for_message(envelope, user_text(parts))
            if fitted:
                parts.insert(0, envelope_part(info, fitted))
            return


def is_injected(part: Any) -> bool:
    """A part plait added: its synthetic envelope part (``prt_plait_…``)."""
    return isinstance(part, dict) and str(part.get("id", "")).startswith(ENVELOPE_PART)


def strip_injected(parts: list[Any]) -> None:
    """Remove what plait injected earlier (so an envelope never appears twice).

    Plait's own parts go, and envelopes plait marked inside other text parts; a person's text
    is never cut.
    """
    parts[:] = [part for part in parts if not is_injected(part)]
    for part in parts:
        if isinstance(part, dict) and part.get("type") == "text":
            text = str(part.get("text", ""))
            part["text"] = strip_envelopes(text)


def envelope_part(info: Mapping[str, Any], envelope: str) -> dict[str, Any]:
    """A synthetic OpenCode text part carrying the envelope."""
    message_id = str(info.get("id", ""))
    return {
        "id": f"{ENVELOPE_PART}{message_id}",
        "sessionID": str(info.get("sessionID", "")),
        "messageID": message_id,
        "type": "text",
        "text": envelope,
        "synthetic": True,
    }


def opencode_standby(name: str, body: Any, output: Mapping[str, Any]) -> bytes | None:
    """What of a transform's answer the plugin gives while no service runs: the envelope text.

    The plugin puts it first in the last user message itself, as an injected part
    (:mod:`plait.state.base.standby`); other hooks keep nothing.
    """
    inject = output.get("inject") if name == TRANSFORM else None
    return inject.encode() if isinstance(inject, str) and inject else None


def opencode_project_standby(name: str, body: Any, output: Mapping[str, Any]) -> bytes | None:
    """What of a transform's envelope a new session may be given while no service runs.

    The project's part (its rules and long-term memory, :func:`plait.state.envelope.project_part`),
    kept as the project's standby: OpenCode says nothing when a session starts that plait
    answers, so the first model call of any session is where the project's memory is seen.
    """
    inject = output.get("inject") if name == TRANSFORM else None
    part = project_part(inject) if isinstance(inject, str) else ""
    return part.encode() if part else None


# -- the wire: how the HTTP service reads and answers OpenCode's calls ---------------------------
def wire_call(name: str, payload: Any, call_id: str) -> HostCall:
    """A hook call as the plugin posts it: ``{"input": ..., "output": ...}``.

    A missing or malformed ``input`` or ``output`` is :class:`InvalidHookPayload` naming it.
    """
    fields = mapping(payload, "body")
    return host_call(name, fields.get("input"), fields.get("output"), call_id)


def wire_answer(name: str, payload: Any, answer: Mapping[str, Any]) -> dict[str, Any]:
    """The hook's ``output`` with plait's answer applied: what the plugin copies back."""
    return apply_output(name, payload["output"], cast(HookOutput, answer))


WIRE = HostWire(adapter=OPENCODE, call=wire_call, answer=wire_answer, keep_events=DURABLE_HOOKS)


@dataclass(frozen=True, slots=True)
class OpenCodeHooks:
    """OpenCode's hooks on a :class:`plait.Memory`, for scripts that drive plait as OpenCode does.

    Made on a memory that keeps calls (its intake), it declares OpenCode's calls rebuildable at
    once: calls a killed service left in the spool run now, with nobody sending a new one.
    """

    memory: Memory

    def __post_init__(self) -> None:
        self.memory.dispatch.serve(OPENCODE)

    async def hook(
        self, name: str, input: dict[str, Any], output: dict[str, Any]
    ) -> dict[str, Any]:
        """Run one hook and return the mutated ``output``.

        Raises :class:`UnknownHook` or :class:`InvalidHookPayload` (naming the field) for a
        call plait cannot use; any other failure leaves ``output`` as it was (fail open).
        """
        answer = await self.memory.dispatch.answer(host_call(name, input, output))
        return apply_output(name, output, answer.output)


__all__ = [
    "DURABLE_HOOKS",
    "opencode_project_standby",
    "opencode_standby",
    "HOOK_NAMES",
    "OPENCODE",
    "POLICY_KEY",
    "WIRE",
    "HookName",
    "OpenCodeHooks",
    "apply_output",
    "check_hook",
    "host_call",
    "intents_of",
    "prepend_to_last_user_message",
    "target_of",
]
