"""A session's summary, folded from its event log without an LLM.

Engram's agents lose a session when they forget to call its summary tool; plait writes one on
idle and before compaction from what it captured: the Goal (the first request, and the latest),
the Instructions given (rules: preferences are each speaker's own, left out), Discoveries, what
was Accomplished (tasks done, decisions, errors fixed), the Next Steps (open tasks, errors still
open) and the Relevant Files (written and edited first). Pure: :mod:`plait.observations` reads
the log and stores the result.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from plait.nodes.statements import without_personal
from plait.state.events import EventKind, SessionEvent
from plait.state.snapshot import replaced_ids

SECTIONS = ("Goal", "Instructions", "Discoveries", "Accomplished", "Next Steps", "Relevant Files")
ITEMS_MAX = 8
FILES_MAX = 15
TITLE_GOAL_CHARS = 90
TITLE_PREFIX = "Session summary: "
# What makes a session worth a summary (reads and chatter alone do not).
MEANINGFUL = frozenset(
    {
        EventKind.PROMPT,
        EventKind.DECISION,
        EventKind.RULE,
        EventKind.PREFERENCE,
        EventKind.TASK_CREATE,
        EventKind.TASK_COMPLETE,
        EventKind.FILE_WRITE,
        EventKind.FILE_EDIT,
        EventKind.ERROR,
        EventKind.ERROR_RESOLVED,
        EventKind.COMPACTION_SUMMARY,
    }
)
OPEN_TASK_KINDS = frozenset({EventKind.TASK_CREATE, EventKind.TASK_UPDATE})
WRITTEN = frozenset({EventKind.FILE_WRITE, EventKind.FILE_EDIT})


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionSummaryDraft:
    """A summary ready to save: title, content in sections, files."""

    title: str
    content: str
    files: tuple[str, ...]


def is_worth_summarizing(events: Iterable[SessionEvent]) -> bool:
    """Whether anything beyond reads and chatter happened."""
    return any(event.kind in MEANINGFUL for event in events)


def last_unique(items: Iterable[str], limit: int = ITEMS_MAX) -> list[str]:
    """The last ``limit`` distinct non-empty items, in order of their last appearance."""
    seen: dict[str, None] = {}
    for item in items:
        text = " ".join(item.split())
        if text:
            seen.pop(text, None)
            seen[text] = None
    return list(seen)[-limit:]


def of_kinds(events: Sequence[SessionEvent], *kinds: EventKind) -> list[SessionEvent]:
    """The events of the given kinds, in order."""
    wanted = set(kinds)
    return [event for event in events if event.kind in wanted]


def goal(events: Sequence[SessionEvent]) -> list[str]:
    """The first request, and the latest one when it differs."""
    prompts = [e.summary for e in of_kinds(events, EventKind.PROMPT) if e.summary]
    if not prompts:
        fallback = of_kinds(events, EventKind.INTENT, EventKind.COMPACTION_SUMMARY)
        return [fallback[0].summary] if fallback else []
    if prompts[-1] == prompts[0]:
        return [prompts[0]]
    return [prompts[0], f"Latest request: {prompts[-1]}"]


def instructions(events: Sequence[SessionEvent]) -> list[str]:
    """Rules the session was given (preferences are left out: :func:`project_events`)."""
    return last_unique(e.summary for e in of_kinds(events, EventKind.RULE))


def project_events(events: Sequence[SessionEvent]) -> list[SessionEvent]:
    """What of a session the project's summary may say: preferences and their words left out.

    A summary is the project's, read by every member; a preference is its speaker's personal
    memory (:func:`plait.nodes.statements.without_personal`), the service owner's too; a
    prompt loses the words of every preference of the session (the drain's classifier finds
    some the rules do not). The drain's corrections (which held decision a later one replaced:
    bookkeeping, :mod:`plait.nodes.supersession`) are left out too.
    """
    said = [e.summary for e in events if e.kind is EventKind.PREFERENCE]
    kept = (
        without_personal(e, said)
        for e in events
        if e.kind is not EventKind.PREFERENCE and not replaced_ids(e)
    )
    return [event for event in kept if event is not None]


def discoveries(events: Sequence[SessionEvent]) -> list[str]:
    """What was found out (corpus bookkeeping left out)."""
    found = of_kinds(events, EventKind.DISCOVERY, EventKind.SUBAGENT_FINISH)
    return last_unique(e.summary for e in found if not e.summary.startswith("indexed "))


def accomplished(events: Sequence[SessionEvent]) -> list[str]:
    """Tasks completed, decisions made, errors fixed."""
    done = of_kinds(events, EventKind.TASK_COMPLETE, EventKind.DECISION, EventKind.ERROR_RESOLVED)
    return last_unique(e.summary for e in done)


def open_items(events: Sequence[SessionEvent], open_kinds: frozenset[EventKind]) -> list[str]:
    """Items opened by ``open_kinds`` and not closed later (same key), newest state kept."""
    closing = {
        EventKind.TASK_CREATE: EventKind.TASK_COMPLETE,
        EventKind.TASK_UPDATE: EventKind.TASK_COMPLETE,
        EventKind.ERROR: EventKind.ERROR_RESOLVED,
    }
    state: dict[str, str | None] = {}
    for event in events:
        key = event.key or event.summary
        if event.kind in open_kinds:
            state.pop(key, None)
            state[key] = event.summary
        elif any(closing.get(kind) is event.kind for kind in open_kinds):
            state[key] = None
    return last_unique(summary for summary in state.values() if summary)


def next_steps(events: Sequence[SessionEvent]) -> list[str]:
    """Open tasks, then errors still unresolved."""
    tasks = open_items(events, OPEN_TASK_KINDS)
    errors = [f"Unresolved: {e}" for e in open_items(events, frozenset({EventKind.ERROR}))]
    return (tasks + errors)[-ITEMS_MAX:]


def relevant_files(events: Sequence[SessionEvent]) -> list[str]:
    """Files written or edited (most recent first), then files read."""
    written = [ref for e in reversed(events) if e.kind in WRITTEN for ref in e.refs]
    read = [ref for e in reversed(events) if e.kind is EventKind.FILE_READ for ref in e.refs]
    return list(dict.fromkeys(written + read))[:FILES_MAX]


def render_sections(sections: dict[str, list[str]]) -> str:
    """``## Heading`` then ``- item`` lines, empty sections left out."""
    blocks = [
        "\n".join([f"## {name}", *(f"- {item}" for item in items)])
        for name, items in sections.items()
        if items
    ]
    return "\n\n".join(blocks)


# What people put around a request that says nothing of it: greetings, asking, thanks.
OPENING = re.compile(
    r"^(?:(?:hey|hi|hello|ok(?:ay)?|so|well|alright|right|now|yo|great|thanks)\b[\s,.!:-]*"
    r"|(?:please|pls|plz|kindly)\b[\s,]*"
    r"|(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?"
    r"|(?:i(?:'d|\s+would)\s+like\s+(?:you\s+)?to|i\s+(?:want|need)\s+(?:you\s+)?to"
    r"|we\s+(?:need|have)\s+to|let'?s|let\s+us|help\s+me(?:\s+to)?)\s+)",
    re.IGNORECASE,
)
CLOSING = re.compile(r"(?:[\s,]*\b(?:please|pls|thanks|thank\s+you|thx)\b)?[\s.!?:;,]*$", re.I)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def request_phrase(text: str) -> str:
    """A request as a title reads it: its first sentence, without the chatter around it.

    The greeting, the asking and the thanks go ("hey, can you fix the login test? thanks" →
    "Fix the login test"); the text itself when nothing is left.
    """
    for sentence in SENTENCE_END.split(text):
        phrase = sentence.strip()
        while (opening := OPENING.match(phrase)) and opening.end():
            phrase = phrase[opening.end() :]
        phrase = CLOSING.sub("", phrase).strip()
        if len(phrase.split()) > 1:
            return phrase[0].upper() + phrase[1:]
    return " ".join(text.split())


def summary_title(goal_lines: Sequence[str], session_id: str) -> str:
    """``Session summary: <the goal>`` (or the session id when there is no goal)."""
    text = request_phrase(goal_lines[0]) if goal_lines else f"session {session_id}"
    if len(text) > TITLE_GOAL_CHARS:
        text = text[: TITLE_GOAL_CHARS - 1] + "…"
    return TITLE_PREFIX + text


def summarize_events(events: Sequence[SessionEvent], session_id: str) -> SessionSummaryDraft:
    """The session's summary from its events, oldest first."""
    goal_lines = goal(events)
    files = relevant_files(events)
    sections = {
        "Goal": goal_lines,
        "Instructions": instructions(events),
        "Discoveries": discoveries(events),
        "Accomplished": accomplished(events),
        "Next Steps": next_steps(events),
        "Relevant Files": files,
    }
    return SessionSummaryDraft(
        title=summary_title(goal_lines, session_id),
        content=render_sections(sections),
        files=tuple(files),
    )


def event_lines(events: Sequence[SessionEvent], limit: int = 200) -> str:
    """The last events as ``kind: summary`` lines (what an LLM summarizer reads)."""
    return "\n".join(f"{e.kind.value}: {e.summary}" for e in events[-limit:] if e.summary)


__all__ = [
    "SECTIONS",
    "TITLE_PREFIX",
    "SessionSummaryDraft",
    "event_lines",
    "is_worth_summarizing",
    "project_events",
    "render_sections",
    "summarize_events",
    "summary_title",
]
