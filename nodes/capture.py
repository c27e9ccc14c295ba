"""Intents → session events, by rules (no LLM): what every host's calls become in plait's log.

Host-independent: a host adapter has already turned its payloads into plait's intents
(:mod:`plait.state.intents`). Tool transcripts and assistant chatter do not become events of
their own: a tool result becomes what it did (file read or edited, search, error, its fix), an
assistant text is kept only as the candidate text of the next compaction summary. In a child
session, the prompt is the subagent's task and its answer a discovery.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plait.nodes.rules import is_approval, promote, topic_key
from plait.redact import redact
from plait.state.events import TEXT_MAX, EventKind, SessionEvent, as_text
from plait.state.intents import (
    AssistantText,
    BranchChanged,
    CommandRun,
    CompactionSummary,
    FileChanged,
    Intent,
    Observed,
    SessionLifecycle,
    SessionRef,
    SubagentStarted,
    Task,
    TasksChanged,
    ToolResult,
    UserTurn,
)

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
TODO_TOOLS = frozenset({"todowrite", "todoread", "write_todos", "todo_write"})
FAILURE_LINE = re.compile(
    r"(?im)^.*\b(?:error|failed|failure|exception|traceback|fatal|panic)\b.*$"
)
GIT_STATE_CHANGE = re.compile(
    r"\bgit\s+(?:commit|checkout|switch|merge|rebase|push|pull|reset|branch|tag|stash)\b"
)
TODOS_MAX = 50
DONE_TODO = frozenset({"completed", "cancelled", "canceled", "done"})
QUERY_MAX_CHARS = 1000


@dataclass(frozen=True, kw_only=True, slots=True)
class Captured:
    """What one host call's intents amount to: events, the user's query, a lifecycle phase."""

    events: list[SessionEvent] = field(default_factory=list)
    query: str = ""
    lifecycle: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Source:
    """Where an event comes from: its session and the host call that reported it."""

    session_id: str
    host: str
    is_child: bool = False

    def event(self, kind: EventKind, summary: str, label: str, **extra: Any) -> SessionEvent:
        """A redacted event (the root session is set when it is placed, see :func:`capture`)."""
        body = extra.pop("body", "")
        return SessionEvent(
            root_session_id=self.session_id,
            session_id=self.session_id,
            kind=kind,
            summary=redact(as_text(summary, TEXT_MAX)),
            body=redact(as_text(body, TEXT_MAX)),
            source_hook=f"{self.host}.{label}",
            **extra,
        )


def capture(intents: Sequence[Intent], session: SessionRef, *, host: str = "plait") -> Captured:
    """The events of one host call, placed in ``session`` and its root."""
    is_child = session.session_id != session.root_session_id
    source = Source(session_id=session.session_id, host=host, is_child=is_child)
    events: list[SessionEvent] = []
    query, lifecycle = "", ""
    for intent in intents:
        rule = RULES.get(type(intent))
        if rule is not None:
            events.extend(rule(source, intent))
        if isinstance(intent, UserTurn):
            query = user_query(intent.text) or query
        if isinstance(intent, SessionLifecycle):
            lifecycle = intent.phase
    placed = place(without_errors_fixed_later(events), session, lifecycle)
    return Captured(events=placed, query=query, lifecycle=lifecycle)


# -- what the user and the model said ------------------------------------------------------------
def user_query(text: str) -> str:
    """The user's words as a recall query ("" for an approval or nothing)."""
    cleaned = redact(as_text(text)).strip()
    return "" if not cleaned or is_approval(cleaned) else cleaned[:QUERY_MAX_CHARS]


def user_turn(source: Source, intent: UserTurn) -> list[SessionEvent]:
    """A user prompt: the request, plus decisions, rules and tasks stated in it."""
    text = redact(as_text(intent.text)).strip()
    if not text or is_approval(text):
        return []
    events = [source.event(EventKind.PROMPT, text, "user_turn", body=text)]
    for promotion in promote(as_text(text, TEXT_MAX)):
        events.append(
            source.event(
                promotion.kind,
                promotion.text,
                "user_turn",
                key=promotion.key or topic_key(promotion.text),
                keywords=tuple(f"not:{term}" for term in promotion.negated),
            )
        )
    return events


def assistant_text(source: Source, intent: AssistantText) -> list[SessionEvent]:
    """A finished assistant text (chatter, P4): the candidate text of a compaction summary."""
    text = as_text(intent.text).strip()
    if not text:
        return []
    return [source.event(EventKind.MESSAGE, text, "assistant_text", body=text)]


def compaction_summary(source: Source, intent: CompactionSummary) -> list[SessionEvent]:
    """A summary the host wrote in place of the conversation."""
    text = as_text(intent.text).strip()
    first = next((line for line in text.splitlines() if line.strip()), "compaction summary")
    return [
        source.event(
            EventKind.COMPACTION_SUMMARY, first, "compaction_summary", body=text, key=intent.key
        )
    ]


# -- tool results ---------------------------------------------------------------------------------
def tool_result(source: Source, intent: ToolResult) -> list[SessionEvent]:
    """What a tool did: a file touched, a search, a command's error or its fix, a subagent."""
    tool = intent.tool.lower()
    args = intent.args
    text = as_text(intent.output, TEXT_MAX * 4)
    path = path_of(args)
    failed = bool(intent.error) or intent.exit_code not in (None, 0)
    if tool in SHELL_TOOLS:
        return command_result(source, intent, text)
    if failed:
        return [tool_error(source, tool, path, text or as_text(intent.error or "", TEXT_MAX))]
    if tool in FILE_TOOLS and path:
        kind = FILE_TOOLS[tool]
        verb = {EventKind.FILE_READ: "read", EventKind.FILE_WRITE: "wrote"}.get(kind, "edited")
        return [source.event(kind, f"{verb} {path}", "tool_result", refs=(path,), key=path)]
    if tool in SEARCH_TOOLS:
        pattern = as_text(args.get("pattern") or args.get("query") or path, 200)
        return [source.event(EventKind.FILE_SEARCH, f"{tool} {pattern}", "tool_result")]
    if tool == "task":
        return [subagent_result(source, intent, text)]
    return []


def path_of(args: Mapping[str, Any]) -> str:
    """The file a tool's arguments name ("" when none)."""
    return as_text(args.get("filePath") or args.get("path") or args.get("file_path") or "", 512)


def command_result(source: Source, intent: ToolResult, text: str) -> list[SessionEvent]:
    """A shell command; one reported as failed by its part gives the error alone."""
    command = as_text(intent.args.get("command", ""), 2000)
    if intent.error:
        error_text = as_text(intent.error, TEXT_MAX)
        return command_events(source, command, error_text, exit_code=1)[:1]
    return command_events(source, command, text, exit_code=intent.exit_code)


def subagent_result(source: Source, intent: ToolResult, text: str) -> SessionEvent:
    """The ``task`` tool returned: its subagent finished (keyed by the child session if named)."""
    args = intent.args
    description = as_text(args.get("description") or args.get("prompt") or "subagent task", 200)
    return source.event(
        EventKind.SUBAGENT_FINISH,
        description,
        "tool_result",
        body=text[:1000],
        key=intent.child_session,
    )


def subagent_started(source: Source, intent: SubagentStarted) -> list[SessionEvent]:
    """A subagent started: open until a result with its key finishes it."""
    description = as_text(intent.description or "subagent", 200)
    summary = f"subagent {description}"
    return [source.event(EventKind.SUBAGENT_START, summary, "subagent", key=intent.key)]


def tool_error(source: Source, tool: str, path: str, text: str) -> SessionEvent:
    """A failed tool call, keyed by its file: a later change of that file resolves it."""
    key = f"file:{path}" if path else f"tool:{tool}"
    line = first_failure(text) or first_line(text) or "failed"
    summary = f"{tool} {path}: {line}" if path else f"{tool}: {line}"
    refs = (path,) if path else ()
    return source.event(
        EventKind.ERROR, summary, "tool_result", key=key, refs=refs, body=text[-2000:]
    )


def first_line(text: str) -> str:
    """The first non-blank line of a text, cut to 180 characters."""
    return next((line.strip()[:180] for line in text.splitlines() if line.strip()), "")


def command_events(
    source: Source, command: str, text: str, *, exit_code: int | None
) -> list[SessionEvent]:
    """A shell command: an error keyed by the program, or the fix of that program's error."""
    program = program_of(command)
    key = f"cmd:{program}"
    failed = exit_code not in (None, 0) or (exit_code is None and bool(FAILURE_LINE.search(text)))
    events: list[SessionEvent] = []
    if failed:
        line = first_failure(text) or f"{command} exited {exit_code}"
        events.append(
            source.event(
                EventKind.ERROR, f"{program}: {line}", "tool_result", key=key, body=text[-2000:]
            )
        )
    else:
        events.append(
            source.event(EventKind.ERROR_RESOLVED, f"{program} succeeded", "tool_result", key=key)
        )
    if program == "git" and GIT_STATE_CHANGE.search(command):
        events.append(source.event(EventKind.GIT, command[:200], "tool_result"))
    if program == "export":
        events.extend(env_events(source, command))
    if program == "cd":
        events.append(source.event(EventKind.CWD_CHANGE, command[:200], "tool_result", key="cwd"))
    return events


def env_events(source: Source, command: str) -> list[SessionEvent]:
    """``export NAME=value``: one environment change per name (values are redacted)."""
    assignments = re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)=(\S*)", command)[:8]
    return [
        source.event(
            EventKind.ENV_CHANGE, f"export {name}={value}", "tool_result", key=f"env:{name}"
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


# -- the session and its workspace ----------------------------------------------------------------
def lifecycle(source: Source, intent: SessionLifecycle) -> list[SessionEvent]:
    """A child session's start is a subagent's; an error is an error; the rest only route."""
    if intent.phase == "created" and source.is_child:
        title = as_text(intent.title or "subagent", 200)
        summary = f"subagent {title}"
        return [source.event(EventKind.SUBAGENT_START, summary, "lifecycle", key=source.session_id)]
    if intent.phase != "error":
        return []
    name = as_text(intent.error_name or "UnknownError", 200)
    message = as_text(intent.error_message or name, 1000)
    summary = f"{name}: {message}"
    return [source.event(EventKind.ERROR, summary, "lifecycle", key=f"session:{name}")]


def tasks_changed(source: Source, intent: TasksChanged) -> list[SessionEvent]:
    """The task list: open items are tasks, completed or cancelled ones leave."""
    found = [task_event(source, task) for task in intent.tasks[:TODOS_MAX]]
    return [event for event in found if event is not None]


def task_event(source: Source, task: Task) -> SessionEvent | None:
    """One task: open (created or updated by its id), or one that leaves."""
    content = as_text(task.content, 1000).strip()
    if not content:
        return None
    key = f"todo:{task.id or topic_key(content)}"
    status = as_text(task.status or "pending", 40).lower()
    kind = EventKind.TASK_COMPLETE if status in DONE_TODO else EventKind.TASK_UPDATE
    return source.event(kind, f"{content} [{status}]", "tasks", key=key)


def file_changed(source: Source, intent: FileChanged) -> list[SessionEvent]:
    """A file changed outside any tool result."""
    path = as_text(intent.path, 512)
    if not path:
        return []
    return [source.event(EventKind.FILE_EDIT, f"edited {path}", "file", refs=(path,), key=path)]


def branch_changed(source: Source, intent: BranchChanged) -> list[SessionEvent]:
    """The branch changed."""
    branch = as_text(intent.branch, 200)
    if not branch:
        return []
    return [source.event(EventKind.GIT, f"branch {branch}", "branch", key="branch")]


def command_run(source: Source, intent: CommandRun) -> list[SessionEvent]:
    """A command the user ran in the host (a slash command): what they mean to do."""
    name = as_text(intent.name, 200)
    summary = f"/{name} {as_text(intent.arguments, 1000)}".strip()
    return [source.event(EventKind.INTENT, summary, "command")]


def observed(source: Source, intent: Observed) -> list[SessionEvent]:
    """Events the caller made itself."""
    return list(intent.events)


RULES: dict[type, Callable[[Source, Any], list[SessionEvent]]] = {
    UserTurn: user_turn,
    AssistantText: assistant_text,
    CompactionSummary: compaction_summary,
    ToolResult: tool_result,
    SubagentStarted: subagent_started,
    SessionLifecycle: lifecycle,
    TasksChanged: tasks_changed,
    FileChanged: file_changed,
    BranchChanged: branch_changed,
    CommandRun: command_run,
    Observed: observed,
}


# -- placing the events -------------------------------------------------------------------------
def without_errors_fixed_later(events: Sequence[SessionEvent]) -> list[SessionEvent]:
    """Drop an error whose fix (same key) comes later in the same call.

    The fix itself stays, so it still resolves an older error of that key; judged against a
    snapshot with no such error it is a duplicate and goes too.
    """
    fixed_after: set[str] = set()
    kept: list[SessionEvent] = []
    for event in reversed(events):
        if event.kind is EventKind.ERROR_RESOLVED:
            fixed_after.add(event.key)
        elif event.kind is EventKind.ERROR and event.key and event.key in fixed_after:
            continue
        kept.append(event)
    return kept[::-1]


def place(events: list[SessionEvent], session: SessionRef, phase: str) -> list[SessionEvent]:
    """Put events in the session's root; a child's are subagent work, its idle its finish."""
    placed = [
        event.model_copy(
            update={
                "root_session_id": session.root_session_id,
                "session_id": event.session_id or session.session_id,
            }
        )
        for event in events
    ]
    if session.session_id == session.root_session_id:
        return placed
    work = [as_subagent_work(event, session) for event in placed]
    if phase == "idle":
        work.append(subagent_finished(session))
    return work


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
        source_hook="plait.lifecycle",
    )


__all__ = [
    "Captured",
    "Source",
    "capture",
    "command_events",
    "first_failure",
    "program_of",
    "tool_result",
    "without_errors_fixed_later",
]
