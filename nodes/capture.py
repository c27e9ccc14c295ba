"""Intents → session events, by rules (no LLM): what every host's calls become in plait's log.

Host-independent: a host adapter has already turned its payloads into plait's intents
(:mod:`plait.state.intents`). What people and models say is read statement by statement
(:mod:`plait.nodes.statements`): a user message is the request (unless it is only an approval
or chatter) plus one event per decision, rule, preference, task or completion it states; an
assistant text is the candidate text of the next compaction summary plus its decisions, plans,
completions and findings, with ``speaker="assistant"`` so they rank below the user's and never
become rules. A tool result becomes what it did (:mod:`plait.nodes.tool_outcome`): the files it
touched, a search, an error keyed by command and error signature, or the fix of that command's
errors; an outcome nobody can judge (``unknown``) records neither. In a child session, the prompt
is the subagent's task (written by the model, so its statements are the model's) and its answer
a discovery. Paths under the project root are kept relative to it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plait.nodes.rules import decision_key, done_key, rule_topic, task_key, topic_key
from plait.nodes.statements import Statement, StatementKind, promoted, statements, unwrap_quotes
from plait.nodes.tool_outcome import (
    SHELL_TOOLS,
    FileTouch,
    ToolOutcome,
    error_signature,
    tool_outcome,
    touched_files,
)
from plait.state.base.redact import redact
from plait.state.events import (
    TEXT_MAX,
    EventKind,
    SessionEvent,
    Speaker,
    as_text,
    body_max_bytes,
)
from plait.state.intents import (
    TODO_TOOLS,
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
from plait.state.snapshot import TRANSIENT

SEARCH_TOOLS = frozenset({"grep", "glob", "list", "ls", "codesearch"})
GIT_STATE_CHANGE = re.compile(
    r"\bgit\s+(?:commit|checkout|switch|merge|rebase|push|pull|reset|branch|tag|stash)\b"
)
CHANGE_DIRECTORY = re.compile(r"^\s*cd\s+(?P<dir>[^\s;&|]+)")
EXPORT = re.compile(r"(?:^|[;&|]\s*)export\s+(?P<rest>[^;&|]+)")
TODOS_MAX = 50
STATEMENT_EVENTS_MAX = 32
DONE_TODO = frozenset({"completed", "cancelled", "canceled", "done"})
QUERY_MAX_CHARS = 1000
ERROR_BODY_CHARS = 2000
SAID_COMMAND_MAX = 80  # how much of a command a summary says
FILE_VERBS = {"read": "read", "write": "wrote", "edit": "edited", "delete": "deleted"}
FILE_KINDS = {
    "read": EventKind.FILE_READ,
    "write": EventKind.FILE_WRITE,
    "edit": EventKind.FILE_EDIT,
    "delete": EventKind.FILE_EDIT,
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Captured:
    """What one host call's intents amount to: events, the user's query, a lifecycle phase."""

    events: list[SessionEvent] = field(default_factory=list)
    query: str = ""
    lifecycle: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Source:
    """Where an event comes from: its session, the host call that reported it, the project root.

    ``root`` is the project directory (as a POSIX path, "" when unknown): paths under it are
    recorded relative to it.
    """

    session_id: str
    host: str
    is_child: bool = False
    root: str = ""

    def event(self, kind: EventKind, summary: str, label: str, **extra: Any) -> SessionEvent:
        """A redacted event (the root session is set when it is placed, see :func:`capture`)."""
        body = extra.pop("body", "")
        return SessionEvent(
            root_session_id=self.session_id,
            session_id=self.session_id,
            kind=kind,
            summary=redact(as_text(summary, TEXT_MAX)),
            body=redact(as_text(body, body_max_bytes(kind))),
            source_hook=f"{self.host}.{label}",
            key=redact(as_text(extra.pop("key", ""), 512)),
            **extra,
        )

    def path(self, path: str) -> str:
        """A path relative to the project root when it lies under it."""
        return relative_path(path, self.root)

    def text(self, text: str) -> str:
        """A text with the project root's prefix taken off the paths in it."""
        prefix = self.root.rstrip("/") + "/"
        return text.replace(prefix, "") if self.root and prefix != "/" else text


def relative_path(path: str, root: str) -> str:
    """``path`` relative to ``root`` when it lies under it, else as it was (``./`` removed)."""
    cleaned = path.strip()
    if not root or not cleaned.startswith("/"):
        return cleaned.removeprefix("./") or cleaned
    prefix = root.rstrip("/") + "/"
    if cleaned.rstrip("/") == root.rstrip("/"):
        return "."
    return cleaned[len(prefix) :] if cleaned.startswith(prefix) and prefix != "/" else cleaned


def capture(
    intents: Sequence[Intent], session: SessionRef, *, host: str = "plait", root: str = ""
) -> Captured:
    """The events of one host call, placed in ``session`` and its root.

    Args:
        intents: What the host said happened.
        session: The session (and its root) the call is about.
        host: Who reported it (the events' ``source_hook`` says so).
        root: The project directory; paths under it are recorded relative to it.
    """
    is_child = session.session_id != session.root_session_id
    source = Source(session_id=session.session_id, host=host, is_child=is_child, root=root)
    events: list[SessionEvent] = []
    query, lifecycle = "", ""
    for intent in intents:
        rule = RULES.get(type(intent))
        found = rule(source, intent) if rule is not None else []
        events.extend(found)
        if isinstance(intent, UserTurn):
            query = request_of(found) or query
        if isinstance(intent, SessionLifecycle):
            lifecycle = intent.phase
    placed = place(without_errors_fixed_later(events), session, lifecycle)
    return Captured(events=placed, query=query, lifecycle=lifecycle)


# -- what the user and the model said ------------------------------------------------------------
def request_of(events: Sequence[SessionEvent]) -> str:
    """The user's request among a turn's events, as a recall query ("" for none)."""
    prompt = next((e for e in events if e.kind is EventKind.PROMPT), None)
    return (prompt.body or prompt.summary)[:QUERY_MAX_CHARS] if prompt else ""


def only_chatter(found: Sequence[Statement]) -> bool:
    """An approval, thanks or greeting and nothing else ("yes, do it", "ok", "thanks")."""
    return bool(found) and all(s.kind is StatementKind.CHATTER for s in found)


def user_turn(source: Source, intent: UserTurn) -> list[SessionEvent]:
    """A user prompt: the request, plus each decision, rule, task… it states, one event each.

    A message that is only an approval or chatter is no request: it records nothing and the
    last request stays. In a child session the prompt was written by the model.
    """
    text = redact(as_text(intent.text)).strip()
    speaker: Speaker = "assistant" if source.is_child else "user"
    found = statements(text, speaker)
    if not text or only_chatter(found):
        return []
    request = unwrap_quotes(text)
    prompt = source.event(EventKind.PROMPT, request, "user_turn", body=request, speaker=speaker)
    return [prompt, *statement_events(source, found, "user_turn")]


# The label of a finished reply's events (``<host>.assistant_text``), which the drain reads again
ASSISTANT_TEXT = "assistant_text"


def assistant_text(source: Source, intent: AssistantText) -> list[SessionEvent]:
    """A finished assistant text: a compaction summary's candidate, and what it decides or finds.

    In a child session the whole text becomes a discovery, so its findings are not repeated.
    """
    text = as_text(intent.text).strip()
    if not text:
        return []
    message = source.event(EventKind.MESSAGE, text, ASSISTANT_TEXT, body=text)
    found = statements(redact(text), "assistant")
    if source.is_child:
        found = [s for s in found if s.kind is not StatementKind.FINDING]
    return [message, *statement_events(source, found, ASSISTANT_TEXT)]


def statement_events(source: Source, found: Sequence[Statement], label: str) -> list[SessionEvent]:
    """One event per promoted statement (at most ``STATEMENT_EVENTS_MAX`` a message)."""
    return [
        statement_event(source, statement, label)
        for statement in promoted(list(found))[:STATEMENT_EVENTS_MAX]
    ]


def statement_event(source: Source, statement: Statement, label: str) -> SessionEvent:
    """A statement as an event: its kind, its words, the key its kind is kept under."""
    kind = statement.event_kind or EventKind.DISCOVERY
    return source.event(
        kind,
        statement_summary(statement),
        label,
        key=statement_key(kind, statement),
        keywords=tuple(f"not:{term}" for term in statement.negated),
        speaker=statement.speaker,
    )


def statement_summary(statement: Statement) -> str:
    """A statement's words; a reversal whose words lost what it is about gets its subject back.

    "Don't use SQLite for the export cache. Use Redis instead." is one decision, "Use Redis
    instead (for the export cache)": the rejected choice is left out, so it is not repeated.
    """
    text = statement.text
    lowered = text.lower()
    merged = statement.negated and not any(term in lowered for term in statement.negated)
    if merged and statement.subject and statement.subject not in lowered:
        return f"{text} (for the {statement.subject})"
    return text


def statement_key(kind: EventKind, statement: Statement) -> str:
    """The identity a statement is folded under (see :mod:`plait.nodes.rules`)."""
    if kind is EventKind.DECISION:
        return decision_key(statement.subject, statement.text)
    if kind in (EventKind.RULE, EventKind.PREFERENCE):
        return rule_topic(statement.text)
    if kind is EventKind.TASK_CREATE:
        return task_key(statement.text)
    if kind is EventKind.TASK_COMPLETE:
        return done_key(statement.text)
    return topic_key(statement.text)


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
    """What a tool did: files touched, a search, its error or the fix of earlier ones, a subagent.

    An outcome that is neither a success nor a failure (no verdict, no evidence) resolves
    nothing.
    """
    tool = intent.tool.lower()
    if tool in TODO_TOOLS:
        return []
    outcome = tool_outcome(
        tool, args=intent.args, output=intent.output, exit_code=intent.exit_code, error=intent.error
    )
    if outcome.status == "failed":
        return [tool_error(source, tool, intent, outcome)]
    if tool == "task":
        return [subagent_result(source, intent, as_text(intent.output, TEXT_MAX))]
    events = fixes(source, tool, intent.args, outcome)
    directory = working_directory(tool, intent.args)
    touched = touched_files(tool, intent.args)
    events.extend(file_event(source, touch, directory) for touch in touched)
    if tool in SEARCH_TOOLS:
        events.append(search_event(source, tool, intent.args))
    if tool in SHELL_TOOLS:
        events.extend(shell_effects(source, command_of(intent.args)))
    return events


def command_of(args: Mapping[str, Any]) -> str:
    """A shell tool's command line."""
    return as_text(args.get("command") or args.get("cmd") or "", 2000)


def path_of(args: Mapping[str, Any]) -> str:
    """The file a tool's arguments name ("" when none)."""
    keys = ("filePath", "file_path", "path", "file")
    value = next((args[k] for k in keys if isinstance(args.get(k), str)), "")
    return as_text(value, 512).strip()


def tool_error(source: Source, tool: str, intent: ToolResult, outcome: ToolOutcome) -> SessionEvent:
    """A failed tool call: its meaningful line, keyed by what failed and how.

    A shell command's error is ``cmd:<command>|<error signature>``; a file tool's is
    ``file:<path>|<tool>|<error signature>``; other tools' ``tool:<tool>|<signature>``.
    """
    line = redact(source.text(outcome.summary)) or "failed"
    signature = error_signature(line)
    path = source.path(path_of(intent.args)) if tool not in SHELL_TOOLS else ""
    if tool in SHELL_TOOLS:
        program = outcome.program or tool
        summary = line if line.lower().startswith(program.lower()) else f"{program}: {line}"
        key = f"cmd:{outcome.command_key}|{signature}"
    elif path:
        summary, key = f"{tool} {path}: {line}", f"file:{path}|{tool}|{signature}"
    else:
        summary, key = f"{tool}: {line}", f"tool:{tool}|{signature}"
    output = source.text(as_text(intent.error or "", TEXT_MAX) + "\n" + intent.output[-8000:])
    return source.event(
        EventKind.ERROR,
        summary,
        "tool_result",
        key=key,
        refs=(path,) if path else (),
        keywords=(TRANSIENT,) if outcome.transient else (),
        body=output.strip()[-ERROR_BODY_CHARS:],
    )


def fixes(
    source: Source, tool: str, args: Mapping[str, Any], outcome: ToolOutcome
) -> list[SessionEvent]:
    """A success resolves the errors of the same command or file tool; unknown resolves none."""
    if outcome.status != "ok":
        return []
    if tool in SHELL_TOOLS:
        key, said = f"cmd:{outcome.command_key}", said_command(outcome.command_key, args)
    elif path := source.path(path_of(args)):
        key, said = f"file:{path}|{tool}", f"{tool} {path}"
    else:
        return []  # another tool's errors age out
    return [source.event(EventKind.ERROR_RESOLVED, f"{said} succeeded", "tool_result", key=key)]


def said_command(command_key: str, args: Mapping[str, Any]) -> str:
    """A command as a person reads it.

    Its key, unless that is inline code's digest (``python -c#fc3f949b``): then the command
    itself, its first line cut short.
    """
    if "#" not in command_key:
        return command_key
    first = command_of(args).strip().splitlines()[:1]
    text = " ".join(first[0].split()) if first else command_key.split("#")[0]
    return text if len(text) <= SAID_COMMAND_MAX else text[: SAID_COMMAND_MAX - 1] + "…"


def working_directory(tool: str, args: Mapping[str, Any]) -> str:
    """The directory a shell command changes into first (``cd app && …``), else ""."""
    match = CHANGE_DIRECTORY.match(command_of(args)) if tool in SHELL_TOOLS else None
    return match.group("dir") if match else ""


def file_event(source: Source, touch: FileTouch, directory: str = "") -> SessionEvent:
    """A file a tool read, wrote, edited or deleted (a deletion is a change of the file).

    A relative path of a command that changed directory first is read from that directory.
    """
    joined = posixpath.join(directory, touch.path) if directory else touch.path
    # Redacted before normpath folds "//": a URL in a path would no longer look like one.
    path = source.path(posixpath.normpath(redact(joined)))
    summary = f"{FILE_VERBS[touch.action]} {path}"
    return source.event(FILE_KINDS[touch.action], summary, "tool_result", refs=(path,), key=path)


def search_event(source: Source, tool: str, args: Mapping[str, Any]) -> SessionEvent:
    """A search: what was looked for."""
    pattern = as_text(args.get("pattern") or args.get("query") or path_of(args), 200)
    return source.event(EventKind.FILE_SEARCH, f"{tool} {pattern}", "tool_result")


def shell_effects(source: Source, command: str) -> list[SessionEvent]:
    """What a command that ran changed about the workspace: git state, directory, environment."""
    events: list[SessionEvent] = []
    if GIT_STATE_CHANGE.search(command):
        events.append(source.event(EventKind.GIT, command[:200], "tool_result"))
    if match := CHANGE_DIRECTORY.match(command):
        summary = f"cd {source.path(match.group('dir'))}"
        events.append(source.event(EventKind.CWD_CHANGE, summary, "tool_result", key="cwd"))
    if match := EXPORT.search(command):
        events.extend(env_events(source, match.group("rest")))
    return events


def env_events(source: Source, assignments: str) -> list[SessionEvent]:
    """``export NAME=value``: one environment change per name (values are redacted)."""
    found = re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)=(\S*)", assignments)[:8]
    return [
        source.event(
            EventKind.ENV_CHANGE, f"export {name}={value}", "tool_result", key=f"env:{name}"
        )
        for name, value in found
    ]


def command_events(
    source: Source, command: str, text: str, *, exit_code: int | None
) -> list[SessionEvent]:
    """A shell command that ran (outside a host's tool call): its error, or its fixes."""
    result = ToolResult(tool="bash", args={"command": command}, output=text, exit_code=exit_code)
    return tool_result(source, result)


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


# -- the session and its workspace ----------------------------------------------------------------
def lifecycle(source: Source, intent: SessionLifecycle) -> list[SessionEvent]:
    """A child session's start is a subagent's; an error is an error; the rest only route.

    A session error (the provider's, the host's) is kept as a one-off: nothing the agent runs
    will resolve it, so it ages out fast.
    """
    if intent.phase == "created" and source.is_child:
        title = as_text(intent.title or "subagent", 200)
        summary = f"subagent {title}"
        return [source.event(EventKind.SUBAGENT_START, summary, "lifecycle", key=source.session_id)]
    if intent.phase != "error":
        return []
    name = as_text(intent.error_name or "UnknownError", 200)
    message = as_text(intent.error_message or name, 1000)
    summary = f"{name}: {message}"
    return [
        source.event(
            EventKind.ERROR, summary, "lifecycle", key=f"session:{name}", keywords=(TRANSIENT,)
        )
    ]


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
    path = source.path(as_text(intent.path, 512))
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
def fixed_by(error: SessionEvent, fix_keys: set[str]) -> bool:
    """Whether one of the fixes' keys resolves the error (its key, or a prefix of it)."""
    return any(error.key == key or error.key.startswith(key + "|") for key in fix_keys)


def without_errors_fixed_later(events: Sequence[SessionEvent]) -> list[SessionEvent]:
    """Drop an error whose fix (same command or file) comes later in the same call.

    The fix itself stays, so it still resolves an older error of that key; judged against a
    snapshot with no such error it is a duplicate and goes too.
    """
    fixed_after: set[str] = set()
    kept: list[SessionEvent] = []
    for event in reversed(events):
        if event.kind is EventKind.ERROR_RESOLVED and event.key:
            fixed_after.add(event.key)
        elif event.kind is EventKind.ERROR and event.key and fixed_by(event, fixed_after):
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
    "TODO_TOOLS",
    "Captured",
    "Source",
    "capture",
    "command_events",
    "relative_path",
    "tool_result",
    "without_errors_fixed_later",
]
