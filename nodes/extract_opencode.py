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

from plait.nodes.envelope import strip_envelopes
from plait.nodes.redact import redact
from plait.nodes.rules import is_approval, promote, topic_key
from plait.state.events import EventKind, SessionEvent

from plait.errors import InvalidHookPayload

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


@dataclass(frozen=True, kw_only=True, slots=True)
class OpenCodeTurn:
    """One OpenCode hook call in plait's terms."""

    session_id: str | None
    parent_id: str | None = None
    event_type: str | None = None
    query: str = ""
    events: list[SessionEvent] = field(default_factory=list)


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
        summary=redact(summary[:TEXT_MAX]),
        body=redact(str(body)[:TEXT_MAX]),
        source_hook=hook,
        **extra,
    )


def extract_opencode(hook: str, input: dict[str, Any], output: dict[str, Any]) -> OpenCodeTurn:
    """Parse one hook call. Raises :class:`InvalidHookPayload` for a payload it cannot use."""
    handler = HANDLERS.get(hook)
    if handler is None:
        from plait.errors import UnknownHook

        raise UnknownHook(f"unknown hook {hook!r}")
    return handler(input, output)


# -- chat.message -------------------------------------------------------------------------------
def user_text(parts: Any) -> str:
    """The user's own text: text parts that are neither synthetic nor ignored, envelopes removed."""
    if not isinstance(parts, list):
        raise InvalidHookPayload("must be a list", field="output.parts")
    texts = [
        str(part.get("text", ""))
        for part in parts
        if isinstance(part, Mapping)
        and part.get("type") == "text"
        and not part.get("synthetic")
        and not part.get("ignored")
    ]
    return strip_envelopes("\n".join(texts)).strip()


def chat_message(input: dict[str, Any], output: dict[str, Any]) -> OpenCodeTurn:
    """A user prompt: the request, plus decisions, rules and tasks stated in it."""
    message = output.get("message") if isinstance(output.get("message"), Mapping) else {}
    session = require_str(input.get("sessionID") or message.get("sessionID"), "input.sessionID")
    text = redact(user_text(output.get("parts", [])))
    if not text or is_approval(text):
        return OpenCodeTurn(session_id=session)
    hook = "chat.message"
    events = [make_event(session, EventKind.PROMPT, text, hook, body=text)]
    for promotion in promote(text):
        events.append(
            make_event(
                session,
                promotion.kind,
                promotion.text,
                hook,
                key=topic_key(promotion.text),
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
    args = input.get("args") if isinstance(input.get("args"), Mapping) else {}
    text = str(output.get("output", ""))[: TEXT_MAX * 4]
    metadata = output.get("metadata") if isinstance(output.get("metadata"), Mapping) else {}
    events = tool_events(session, tool, args, text, metadata)
    return OpenCodeTurn(session_id=session, events=events)


def tool_events(
    session: str, tool: str, args: Mapping[str, Any], text: str, metadata: Mapping[str, Any]
) -> list[SessionEvent]:
    """Events for one finished tool call."""
    hook = "tool.execute.after"
    path = str(args.get("filePath") or args.get("path") or args.get("file_path") or "")
    if tool in FILE_TOOLS and path:
        verb = {EventKind.FILE_READ: "read", EventKind.FILE_WRITE: "wrote"}.get(
            FILE_TOOLS[tool], "edited"
        )
        return [
            make_event(session, FILE_TOOLS[tool], f"{verb} {path}", hook, refs=(path,), key=path)
        ]
    if tool in SEARCH_TOOLS:
        pattern = str(args.get("pattern") or args.get("query") or args.get("path") or "")
        return [make_event(session, EventKind.FILE_SEARCH, f"{tool} {pattern}", hook)]
    if tool in SHELL_TOOLS:
        return command_events(session, str(args.get("command", "")), text, metadata)
    if tool == "task":
        description = str(args.get("description") or args.get("prompt") or "subagent task")
        return [make_event(session, EventKind.SUBAGENT_FINISH, description, hook, body=text[:1000])]
    return []


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
    if program == "cd":
        events.append(make_event(session, EventKind.CWD_CHANGE, command[:200], hook, key="cwd"))
    return events


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
    info = props.get("info") if isinstance(props.get("info"), Mapping) else {}
    session = session or (info.get("id") if isinstance(info.get("id"), str) else None)
    parent = info.get("parentID") if isinstance(info.get("parentID"), str) else None
    events = []
    if kind == "session.created" and parent and session:
        title = str(info.get("title") or "subagent")
        events.append(
            make_event(session, EventKind.SUBAGENT_START, f"subagent {title}", kind, key=session)
        )
    return OpenCodeTurn(session_id=session, parent_id=parent, event_type=kind, events=events)


def plain(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """Events that matter only as signals (idle, compacted)."""
    return OpenCodeTurn(session_id=session, event_type=kind)


def session_error(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """``session.error``."""
    error = props.get("error") if isinstance(props.get("error"), Mapping) else {}
    name = str(error.get("name") or "UnknownError")
    if name in IGNORED_ERRORS or session is None:
        return OpenCodeTurn(session_id=session, event_type=kind)
    data = error.get("data") if isinstance(error.get("data"), Mapping) else {}
    message = str(data.get("message") or name)
    event = make_event(session, EventKind.ERROR, f"{name}: {message}", kind, key=f"session:{name}")
    return OpenCodeTurn(session_id=session, event_type=kind, events=[event])


def message_updated(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """An assistant message marked ``summary`` is a compaction summary."""
    info = props.get("info") if isinstance(props.get("info"), Mapping) else {}
    session = session or (info.get("sessionID") if isinstance(info.get("sessionID"), str) else None)
    if session is None or info.get("role") != "assistant" or not info.get("summary"):
        return OpenCodeTurn(session_id=session, event_type=kind)
    event = make_event(session, EventKind.COMPACTION_SUMMARY, "compaction summary", kind)
    return OpenCodeTurn(session_id=session, event_type=kind, events=[event])


def part_updated(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """A finished assistant text part: kept as the latest assistant text (chatter, P4)."""
    part = props.get("part") if isinstance(props.get("part"), Mapping) else {}
    session = session or (part.get("sessionID") if isinstance(part.get("sessionID"), str) else None)
    timing = part.get("time") if isinstance(part.get("time"), Mapping) else {}
    if (
        session is None
        or part.get("type") != "text"
        or not timing.get("end")
        or part.get("synthetic")
    ):
        return OpenCodeTurn(session_id=session, event_type=kind)
    text = strip_envelopes(str(part.get("text", ""))).strip()
    if not text:
        return OpenCodeTurn(session_id=session, event_type=kind)
    event = make_event(session, EventKind.MESSAGE, text, kind, body=text)
    return OpenCodeTurn(session_id=session, event_type=kind, events=[event])


def todo_updated(kind: str, session: str | None, props: Mapping[str, Any]) -> OpenCodeTurn:
    """The todo list: open items are tasks, completed or cancelled ones leave."""
    todos = props.get("todos")
    if session is None or not isinstance(todos, list):
        return OpenCodeTurn(session_id=session, event_type=kind)
    events = []
    for todo in todos[:50]:
        if not isinstance(todo, Mapping) or not todo.get("content"):
            continue
        key = f"todo:{todo.get('id') or topic_key(str(todo['content']))}"
        status = str(todo.get("status", "pending"))
        task_kind = (
            EventKind.TASK_COMPLETE
            if status in ("completed", "cancelled")
            else EventKind.TASK_UPDATE
        )
        summary = f"{todo['content']} [{status}]"
        events.append(make_event(session, task_kind, summary, kind, key=key))
    return OpenCodeTurn(session_id=session, event_type=kind, events=events)


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
    arguments = str(props.get("arguments") or "")
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

__all__ = ["OpenCodeTurn", "extract_opencode", "program_of"]
