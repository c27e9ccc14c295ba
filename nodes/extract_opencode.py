"""OpenCode hook payloads → plait events, by rules (shapes in ``docs/opencode-hooks.md``).

Tool transcripts and assistant chatter do not become events of their own: a tool call becomes
what it did (file read or edited, search, error, its fix), an assistant text is kept only as the
candidate text of the next compaction summary.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plait.errors import InvalidHookPayload, UnknownHook
from plait.nodes.envelope import strip_envelopes
from plait.nodes.redact import redact
from plait.nodes.rules import is_approval, promote, topic_key
from plait.state.events import EventKind, SessionEvent

FILE_TOOLS = {
    "read": EventKind.FILE_READ,
    "view": EventKind.FILE_READ,
    "write": EventKind.FILE_WRITE,
    "edit": EventKind.FILE_EDIT,
    "multiedit": EventKind.FILE_EDIT,
    "patch": EventKind.FILE_EDIT,
}
SEARCH_TOOLS = frozenset({"grep", "glob", "list", "ls", "codesearch"})
SHELL_TOOLS = frozenset({"bash", "shell"})
FAILURE_LINE = re.compile(
    r"(?im)^.*\b(?:error|failed|failure|exception|traceback|fatal|panic)\b.*$"
)
SUCCESS_WORDS = re.compile(r"\b(?:\d+ passed|success|ok)\b", re.IGNORECASE)
GIT_STATE_CHANGE = re.compile(
    r"\bgit\s+(?:commit|checkout|switch|merge|rebase|push|pull|reset|branch|tag|stash)\b"
)
IGNORED_ERRORS = frozenset({"MessageAbortedError"})
TEXT_MAX = 4096
# How much of one host text is examined at all: a 10 MB message costs what 64 KB costs.
SCAN_MAX = 65_536
TODOS_MAX = 50
DONE_TODO = frozenset({"completed", "cancelled", "canceled", "done"})


@dataclass(frozen=True, kw_only=True, slots=True)
class OpenCodeTurn:
    """One OpenCode hook call in plait's terms."""

    session_id: str | None
    parent_id: str | None = None
    event_type: str | None = None
    query: str = ""
    events: list[SessionEvent] = field(default_factory=list)


def as_text(value: Any, limit: int = SCAN_MAX) -> str:
    """Host text as ``str``, at most ``limit`` characters; bytes are decoded leniently.

    A cut text loses its last, possibly partial word too, so half a secret at the cut can never
    slip past redaction.
    """
    if isinstance(value, bytes | bytearray):
        value = bytes(value[: limit * 4]).decode("utf-8", errors="replace")
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    if len(text) <= limit:
        return text
    head = text[:limit]
    words = head.rsplit(None, 1)
    return words[0] if len(words) == 2 else head


def require_str(value: Any, field_name: str) -> str:
    """A non-empty string, or :class:`InvalidHookPayload` naming the field."""
    if not isinstance(value, str) or not value.strip():
        kind = (
            "missing"
            if value is None
            else f"must be a non-empty string, not {type(value).__name__}"
        )
        raise InvalidHookPayload(kind, field=field_name)
    return value[:256]


def obj(value: Any) -> Mapping[str, Any]:
    """``value`` if it is an object, else an empty one (for optional parts of a payload)."""
    return value if isinstance(value, Mapping) else {}


def mapping(value: Any, field_name: str) -> Mapping[str, Any]:
    """An object, or :class:`InvalidHookPayload` naming the field."""
    if not isinstance(value, Mapping):
        raise InvalidHookPayload("must be an object", field=field_name)
    return value


def make_event(
    session_id: str, kind: EventKind, summary: str, hook: str, **extra: Any
) -> SessionEvent:
    """A redacted event (the root session is filled in when it is recorded)."""
    body = extra.pop("body", "")
    return SessionEvent(
        root_session_id=session_id,
        session_id=session_id,
        kind=kind,
        summary=redact(as_text(summary, TEXT_MAX)),
        body=redact(as_text(body, TEXT_MAX)),
        source_hook=hook,
        **extra,
    )


def extract_opencode(hook: str, input: dict[str, Any], output: dict[str, Any]) -> OpenCodeTurn:
    """Parse one hook call. Raises :class:`InvalidHookPayload` for a payload it cannot use."""
    handler = HANDLERS.get(hook) if isinstance(hook, str) else None
    if handler is None:
        raise UnknownHook(f"unknown hook {hook!r}; known: {', '.join(HANDLERS)}", field="hook")
    return handler(dict(mapping(input, "input")), dict(mapping(output, "output")))


# -- chat.message -------------------------------------------------------------------------------
def user_text(parts: Any) -> str:
    """The user's own text: text parts that are neither synthetic nor ignored, envelopes removed."""
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


def chat_message(input: dict[str, Any], output: dict[str, Any]) -> OpenCodeTurn:
    """A user prompt: the request, plus decisions, rules and tasks stated in it."""
    message = obj(output.get("message"))
    session = require_str(input.get("sessionID") or message.get("sessionID"), "input.sessionID")
    text = redact(user_text(output.get("parts", [])))
    if not text or is_approval(text):
        return OpenCodeTurn(session_id=session)
    hook = "chat.message"
    events = [make_event(session, EventKind.PROMPT, text, hook, body=text)]
    for promotion in promote(as_text(text, TEXT_MAX)):
        events.append(
            make_event(
                session,
                promotion.kind,
                promotion.text,
                hook,
                key=promotion.key or topic_key(promotion.text),
                keywords=tuple(f"not:{term}" for term in promotion.negated),
            )
        )
    return OpenCodeTurn(session_id=session, query=text[:1000], events=events)


# -- messages.transform, compacting, tool.execute.before -----------------------------------------
def messages_transform(input: dict[str, Any], output: dict[str, Any]) -> OpenCodeTurn:
    """No events; the session comes from the last message."""
    messages = output.get("messages")
    if not isinstance(messages, list):
        raise InvalidHookPayload("must be a list", field="output.messages")
    for message in reversed(messages):
        info = message.get("info") if isinstance(message, Mapping) else None
        if isinstance(info, Mapping) and isinstance(info.get("sessionID"), str):
            return OpenCodeTurn(session_id=info["sessionID"])
    return OpenCodeTurn(session_id=None)


def session_only(input: dict[str, Any], output: dict[str, Any]) -> OpenCodeTurn:
    """Hooks that only name their session."""
    return OpenCodeTurn(session_id=require_str(input.get("sessionID"), "input.sessionID"))


# -- tool.execute.after -------------------------------------------------------------------------
def tool_after(input: dict[str, Any], output: dict[str, Any]) -> OpenCodeTurn:
    """What a tool did: a file touched, a search, a command's error or its fix, a subagent."""
    session = require_str(input.get("sessionID"), "input.sessionID")
    tool = require_str(input.get("tool"), "input.tool").lower()
    args = obj(input.get("args"))
    text = as_text(output.get("output", ""), TEXT_MAX * 4)
    metadata = obj(output.get("metadata"))
    events = tool_events(session, tool, args, text, metadata)
    return OpenCodeTurn(session_id=session, events=events)


def tool_events(
    session: str, tool: str, args: Mapping[str, Any], text: str, metadata: Mapping[str, Any]
) -> list[SessionEvent]:
    """Events for one finished tool call."""
    hook = "tool.execute.after"
    path = as_text(args.get("filePath") or args.get("path") or args.get("file_path") or "", 512)
    if tool not in SHELL_TOOLS and tool_failed(metadata):
        return [tool_error(session, tool, path, text, hook)]
    if tool in FILE_TOOLS and path:
        verb = {EventKind.FILE_READ: "read", EventKind.FILE_WRITE: "wrote"}.get(
            FILE_TOOLS[tool], "edited"
        )
        return [
            make_event(session, FILE_TOOLS[tool], f"{verb} {path}", hook, refs=(path,), key=path)
        ]
    if tool in SEARCH_TOOLS:
        pattern = as_text(args.get("pattern") or args.get("query") or path, 200)
        return [make_event(session, EventKind.FILE_SEARCH, f"{tool} {pattern}", hook)]
    if tool in SHELL_TOOLS:
        return command_events(session, as_text(args.get("command", ""), 2000), text, metadata)
    if tool == "task":
        return [subagent_result(session, args, text, metadata)]
    return []


def subagent_result(
    session: str, args: Mapping[str, Any], text: str, metadata: Mapping[str, Any]
) -> SessionEvent:
    """The ``task`` tool returned: its subagent finished (keyed by the child session if named)."""
    description = as_text(args.get("description") or args.get("prompt") or "subagent task", 200)
    child = metadata.get("sessionId") or metadata.get("sessionID")
    key = child if isinstance(child, str) and child else ""
    hook = "tool.execute.after"
    return make_event(
        session, EventKind.SUBAGENT_FINISH, description, hook, body=text[:1000], key=key
    )


def tool_failed(metadata: Mapping[str, Any]) -> bool:
    """Whether a (non-shell) tool reports failure: an ``error`` or a non-zero exit."""
    exit_code = metadata.get("exit", metadata.get("exitCode"))
    return bool(metadata.get("error")) or exit_code not in (None, 0)


def tool_error(session: str, tool: str, path: str, text: str, hook: str) -> SessionEvent:
    """A failed tool call, keyed by its file: a later change of that file resolves it."""
    key = f"file:{path}" if path else f"tool:{tool}"
    line = first_failure(text) or first_line(text) or "failed"
    summary = f"{tool} {path}: {line}" if path else f"{tool}: {line}"
    refs = (path,) if path else ()
    return make_event(
        session, EventKind.ERROR, summary, hook, key=key, refs=refs, body=text[-2000:]
    )


def first_line(text: str) -> str:
    """The first non-blank line of a text, cut to 180 characters."""
    return next((line.strip()[:180] for line in text.splitlines() if line.strip()), "")


def command_events(
    session: str, command: str, text: str, metadata: Mapping[str, Any]
) -> list[SessionEvent]:
    """A shell command: an error keyed by the program, or the fix of that program's error."""
    hook = "tool.execute.after"
    program = program_of(command)
    key = f"cmd:{program}"
    exit_code = metadata.get("exit", metadata.get("exitCode"))
    failed = exit_code not in (None, 0) or (exit_code is None and bool(FAILURE_LINE.search(text)))
    events: list[SessionEvent] = []
    if failed:
        line = first_failure(text) or f"{command} exited {exit_code}"
        events.append(
            make_event(
                session, EventKind.ERROR, f"{program}: {line}", hook, key=key, body=text[-2000:]
            )
        )
    else:
        events.append(
            make_event(session, EventKind.ERROR_RESOLVED, f"{program} succeeded", hook, key=key)
        )
    if program == "git" and GIT_STATE_CHANGE.search(command):
        events.append(make_event(session, EventKind.GIT, command[:200], hook))
    if program == "export":
        events.extend(env_events(session, command))
    if program == "cd":
        events.append(make_event(session, EventKind.CWD_CHANGE, command[:200], hook, key="cwd"))
    return events


def env_events(session: str, command: str) -> list[SessionEvent]:
    """``export NAME=value``: one environment change per name (values are redacted)."""
    assignments = re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)=(\S*)", command)[:8]
    return [
        make_event(
            session,
            EventKind.ENV_CHANGE,
            f"export {name}={value}",
            "tool.execute.after",
            key=f"env:{name}",
        )
        for name, value in assignments
    ]


def program_of(command: str) -> str:
    """The program a command line runs (``uv run pytest -q`` → ``pytest``)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    words = [w for w in words if "=" not in w.split("/")[0]]
    while words and words[0] in ("uv", "run", "python", "python3", "-m", "npx", "poetry", "sudo"):
        words = words[1:]
    return words[0].rsplit("/", 1)[-1] if words else "shell"


def first_failure(text: str) -> str:
    """The first line that says what failed."""
    match = FAILURE_LINE.search(text)
    return match.group(0).strip()[:180] if match else ""


# -- event --------------------------------------------------------------------------------------
def bus_event(input: dict[str, Any], output: dict[str, Any]) -> OpenCodeTurn:
    """A bus event: session lifecycle, messages, todos, files, errors, git, commands."""
    event = mapping(input.get("event"), "input.event")
    event_type = require_str(event.get("type"), "input.event.type")
    properties = event.get("properties") or {}
    properties = mapping(properties, "input.event.properties")
    handler = EVENT_HANDLERS.get(event_type)
    session = properties.get("sessionID")
    session = session if isinstance(session, str) and session else None
    if handler is None:
        return OpenCodeTurn(session_id=session, event_type=event_type)
    return handler(event_type, session, properties)


def session_lifecycle(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """``session.created/updated/deleted``: the parent link; a child's start is an event."""
    info = obj(props.get("info"))
    session = session or (info.get("id") if isinstance(info.get("id"), str) else None)
    parent = info.get("parentID") if isinstance(info.get("parentID"), str) else None
    events = []
    if kind == "session.created" and parent and session:
        title = as_text(info.get("title") or "subagent", 200)
        events.append(
            make_event(session, EventKind.SUBAGENT_START, f"subagent {title}", kind, key=session)
        )
    return OpenCodeTurn(session_id=session, parent_id=parent, event_type=kind, events=events)


def plain(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """Events that matter only as signals (idle, compacted)."""
    return OpenCodeTurn(session_id=session, event_type=kind)


def session_error(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """``session.error``."""
    error = obj(props.get("error"))
    name = str(error.get("name") or "UnknownError")
    if name in IGNORED_ERRORS or session is None:
        return OpenCodeTurn(session_id=session, event_type=kind)
    data = obj(error.get("data"))
    message = as_text(data.get("message") or name, 1000)
    event = make_event(session, EventKind.ERROR, f"{name}: {message}", kind, key=f"session:{name}")
    return OpenCodeTurn(session_id=session, event_type=kind, events=[event])


def message_updated(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """An assistant message marked ``summary`` is a compaction summary."""
    info = obj(props.get("info"))
    session = session or (info.get("sessionID") if isinstance(info.get("sessionID"), str) else None)
    if session is None or info.get("role") != "assistant" or not info.get("summary"):
        return OpenCodeTurn(session_id=session, event_type=kind)
    event = make_event(session, EventKind.COMPACTION_SUMMARY, "compaction summary", kind)
    return OpenCodeTurn(session_id=session, event_type=kind, events=[event])


def part_updated(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """A finished assistant text part (chatter, P4), or a tool call that failed."""
    part = obj(props.get("part"))
    session = session or (part.get("sessionID") if isinstance(part.get("sessionID"), str) else None)
    if session is not None and part.get("type") == "tool":
        return OpenCodeTurn(session_id=session, event_type=kind, events=failed_tool(session, part))
    timing = obj(part.get("time"))
    if (
        session is None
        or part.get("type") != "text"
        or not timing.get("end")
        or part.get("synthetic")
    ):
        return OpenCodeTurn(session_id=session, event_type=kind)
    text = strip_envelopes(as_text(part.get("text", ""))).strip()
    if not text:
        return OpenCodeTurn(session_id=session, event_type=kind)
    event = make_event(session, EventKind.MESSAGE, text, kind, body=text)
    return OpenCodeTurn(session_id=session, event_type=kind, events=[event])


def failed_tool(session: str, part: Mapping[str, Any]) -> list[SessionEvent]:
    """A tool part in state ``error`` (``tool.execute.after`` is not called for those)."""
    state = obj(part.get("state"))
    if state.get("status") != "error":
        return []
    tool = as_text(part.get("tool") or "tool", 100).lower()
    args = obj(state.get("input"))
    path = as_text(args.get("filePath") or args.get("path") or args.get("file_path") or "", 512)
    text = as_text(state.get("error") or "failed", TEXT_MAX)
    if tool in SHELL_TOOLS:
        command = as_text(args.get("command", ""), 2000)
        return command_events(session, command, text, {"exit": 1})[:1]
    return [tool_error(session, tool, path, text, "message.part.updated")]


def todo_updated(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """The todo list: open items are tasks, completed or cancelled ones leave."""
    todos = props.get("todos")
    if session is None or not isinstance(todos, list):
        return OpenCodeTurn(session_id=session, event_type=kind)
    events = []
    events = [todo_event(session, todo) for todo in todos[:TODOS_MAX] if isinstance(todo, Mapping)]
    return OpenCodeTurn(session_id=session, event_type=kind, events=[e for e in events if e])


def todo_event(session: str, todo: Mapping[str, Any]) -> SessionEvent | None:
    """One todo: an open task (created or updated by its id), or a task that leaves."""
    content = as_text(todo.get("content"), 1000).strip()
    if not content:
        return None
    todo_id = todo.get("id")
    key = f"todo:{todo_id if isinstance(todo_id, str | int) and todo_id else topic_key(content)}"
    status = as_text(todo.get("status") or "pending", 40).lower()
    task_kind = EventKind.TASK_COMPLETE if status in DONE_TODO else EventKind.TASK_UPDATE
    return make_event(session, task_kind, f"{content} [{status}]", "todo.updated", key=key)


def file_edited(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """``file.edited`` (no session: it goes to the session of the latest hook)."""
    path = props.get("file")
    if not isinstance(path, str) or not path:
        return OpenCodeTurn(session_id=session, event_type=kind)
    event = make_event(
        session or "", EventKind.FILE_EDIT, f"edited {path}", kind, refs=(path,), key=path
    )
    return OpenCodeTurn(session_id=session, event_type=kind, events=[event])


def branch_updated(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """``vcs.branch.updated``."""
    branch = props.get("branch")
    if not isinstance(branch, str) or not branch:
        return OpenCodeTurn(session_id=session, event_type=kind)
    event = make_event(session or "", EventKind.GIT, f"branch {branch}", kind, key="branch")
    return OpenCodeTurn(session_id=session, event_type=kind, events=[event])


def command_executed(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """A slash command the user ran."""
    name = props.get("name")
    if session is None or not isinstance(name, str):
        return OpenCodeTurn(session_id=session, event_type=kind)
    arguments = as_text(props.get("arguments") or "", 1000)
    event = make_event(session, EventKind.INTENT, f"/{name} {arguments}".strip(), kind)
    return OpenCodeTurn(session_id=session, event_type=kind, events=[event])


EVENT_HANDLERS = {
    "session.created": session_lifecycle,
    "session.updated": session_lifecycle,
    "session.deleted": session_lifecycle,
    "session.idle": plain,
    "session.compacted": plain,
    "session.error": session_error,
    "message.updated": message_updated,
    "message.part.updated": part_updated,
    "todo.updated": todo_updated,
    "file.edited": file_edited,
    "vcs.branch.updated": branch_updated,
    "command.executed": command_executed,
}

HANDLERS = {
    "chat.message": chat_message,
    "experimental.chat.messages.transform": messages_transform,
    "experimental.session.compacting": session_only,
    "event": bus_event,
    "tool.execute.before": session_only,
    "tool.execute.after": tool_after,
}

__all__ = [
    "EVENT_HANDLERS",
    "HANDLERS",
    "OpenCodeTurn",
    "as_text",
    "command_events",
    "extract_opencode",
    "program_of",
    "tool_events",
]
