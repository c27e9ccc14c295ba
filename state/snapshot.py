"""The session snapshot: bounded, priority-tiered, folded incrementally from events.

Every collection has a cap, so the snapshot's size (and the cost of folding one more event) does
not depend on how long the session is. ``fold_snapshot`` is the reducer of the hooks graph's
``snapshot`` channel: ``Annotated[Snapshot, fold_snapshot]``, where an update is a list of events
(folded in order, never re-reading history) or a ``Snapshot`` (which replaces).

What leaves: a completed task, a resolved error (``error_resolved`` of its key, or a later
successful change of the file it is keyed by), a decision superseded on the same key or reversed
("use Y instead of X" drops decisions naming X), the oldest item of a section over its cap.
``drop_duplicates`` / ``Snapshot.is_duplicate`` say which new events would change nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from plait.state.events import EventKind, SessionEvent, truncate_utf8

LAST_TEXT_MAX_BYTES = 600
COMPACTION_MAX_BYTES = 1200
FINGERPRINTS_MAX = 64
FILE_KINDS = frozenset({EventKind.FILE_READ, EventKind.FILE_WRITE, EventKind.FILE_EDIT})
# Kinds that hold no state of their own: a repeat is recognised by its fingerprint only.
STATELESS_KINDS = frozenset({EventKind.FILE_SEARCH, EventKind.TOOL_RESULT})

# section name -> cap on its items
CAPS: dict[str, int] = {
    "decisions": 10,
    "rules": 10,
    "tasks": 10,
    "errors": 6,
    "files": 10,
    "edits": 6,
    "subagents_open": 4,
    "subagents_done": 4,
    "discoveries": 6,
    "git": 4,
    "environment": 6,
}


class Item(BaseModel):
    """One remembered thing: its identity, its text, the event that last touched it."""

    model_config = ConfigDict(frozen=True)

    key: str
    text: str
    event_id: int = 0


class Snapshot(BaseModel):
    """What a session is doing, bounded. Sections hold items oldest first, newest last."""

    model_config = ConfigDict(extra="ignore")

    last_request: str = ""
    intent: str = ""
    last_assistant: str = ""
    compaction_summary: str = ""
    decisions: list[Item] = Field(default_factory=list)
    rules: list[Item] = Field(default_factory=list)
    tasks: list[Item] = Field(default_factory=list)
    errors: list[Item] = Field(default_factory=list)
    files: list[Item] = Field(default_factory=list)
    edits: list[Item] = Field(default_factory=list)
    subagents_open: list[Item] = Field(default_factory=list)
    subagents_done: list[Item] = Field(default_factory=list)
    discoveries: list[Item] = Field(default_factory=list)
    git: list[Item] = Field(default_factory=list)
    environment: list[Item] = Field(default_factory=list)
    fingerprints: list[str] = Field(
        default_factory=list, description="Recent stateless events, for dedup (bounded)."
    )
    events_folded: int = 0

    @model_validator(mode="after")
    def _bounded(self) -> Snapshot:
        """Trim every collection to its cap (a snapshot loaded from anywhere stays bounded)."""
        for name, cap in CAPS.items():
            items: list[Item] = getattr(self, name)
            del items[: max(0, len(items) - cap)]
        del self.fingerprints[: max(0, len(self.fingerprints) - FINGERPRINTS_MAX)]
        self.last_request = truncate_utf8(self.last_request, LAST_TEXT_MAX_BYTES)
        self.compaction_summary = truncate_utf8(self.compaction_summary, COMPACTION_MAX_BYTES)
        self.last_assistant = truncate_utf8(self.last_assistant, COMPACTION_MAX_BYTES)
        return self

    def is_empty(self) -> bool:
        """Nothing worth injecting."""
        return not (
            self.last_request
            or self.compaction_summary
            or any(getattr(self, name) for name in CAPS)
        )

    def is_duplicate(self, event: SessionEvent) -> bool:
        """Whether folding ``event`` would change nothing worth recording.

        A held item with the same text, a request equal to the last one, the fix of an error
        that is not open, the completion of a task that is not held, or a stateless event
        (search, tool result) seen among the recent fingerprints. For a batch, use
        :func:`drop_duplicates`, which judges each event after the ones before it.
        """
        check = DUPLICATE_CHECKS.get(event.kind)
        if check is not None:
            return check(self, event)
        section = SECTION_OF.get(event.kind)
        if section is None:
            return False
        items: list[Item] = getattr(self, section)
        key = item_key(event)
        if section == "files":
            return bool(items) and items[-1].key == key and items[-1].text == file_text(event)
        return any(item.key == key and item.text == event.summary for item in items)

    def holds(self, section: str, key: str) -> bool:
        """Whether ``section`` holds an item with ``key``."""
        return any(item.key == key for item in getattr(self, section))


def fingerprint(event: SessionEvent) -> str:
    """A short stable digest of what an event says (not when or where it was recorded)."""
    text = "\x1f".join((event.kind.value, event.key, event.summary, event.body))
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).hexdigest()


DUPLICATE_CHECKS: dict[EventKind, Callable[[Snapshot, SessionEvent], bool]] = {
    EventKind.PROMPT: lambda s, e: (
        truncate_utf8(e.body or e.summary, LAST_TEXT_MAX_BYTES) == s.last_request
    ),
    EventKind.INTENT: lambda s, e: e.summary == s.intent,
    EventKind.MESSAGE: lambda s, e: (
        truncate_utf8(e.body or e.summary, COMPACTION_MAX_BYTES) == s.last_assistant
    ),
    EventKind.ERROR_RESOLVED: lambda s, e: not s.holds("errors", item_key(e)),
    EventKind.TASK_COMPLETE: lambda s, e: completed_task(s, e) is None,
    EventKind.SUBAGENT_FINISH: lambda s, e: (
        not s.holds("subagents_open", item_key(e)) and s.holds("subagents_done", item_key(e))
    ),
    EventKind.FILE_SEARCH: lambda s, e: fingerprint(e) in s.fingerprints,
    EventKind.TOOL_RESULT: lambda s, e: fingerprint(e) in s.fingerprints,
}


SECTION_OF: dict[EventKind, str] = {
    EventKind.DECISION: "decisions",
    EventKind.RULE: "rules",
    EventKind.PREFERENCE: "rules",
    EventKind.TASK_CREATE: "tasks",
    EventKind.TASK_UPDATE: "tasks",
    EventKind.ERROR: "errors",
    EventKind.FILE_READ: "files",
    EventKind.FILE_WRITE: "files",
    EventKind.FILE_EDIT: "files",
    EventKind.DISCOVERY: "discoveries",
    EventKind.GIT: "git",
    EventKind.CWD_CHANGE: "environment",
    EventKind.ENV_CHANGE: "environment",
    EventKind.SUBAGENT_START: "subagents_open",
}


def item_key(event: SessionEvent) -> str:
    """The identity an event's item is kept under."""
    if event.key:
        return event.key
    if event.refs and event.kind in (
        EventKind.FILE_READ,
        EventKind.FILE_WRITE,
        EventKind.FILE_EDIT,
    ):
        return event.refs[0]
    return " ".join(event.summary.lower().split())[:120]


def file_text(event: SessionEvent) -> str:
    """How a file appears in files in play: its path and what was last done to it."""
    action = {EventKind.FILE_READ: "read", EventKind.FILE_WRITE: "written"}.get(
        event.kind, "edited"
    )
    return f"{item_key(event)} ({action})"


def upsert(items: list[Item], item: Item, cap: int) -> None:
    """Put ``item`` last (newest), replacing one with the same key; drop the oldest over cap."""
    items[:] = [existing for existing in items if existing.key != item.key]
    items.append(item)
    del items[: max(0, len(items) - cap)]


def remove(items: list[Item], key: str) -> Item | None:
    """Take the item with ``key`` out; return it."""
    for index, existing in enumerate(items):
        if existing.key == key:
            return items.pop(index)
    return None


def names_any(text: str, terms: Sequence[str]) -> bool:
    """Whether ``text`` names any of the terms as a whole word (case-insensitive)."""
    lowered = text.lower()
    return any(
        term and re.search(rf"(?<![\w.+-]){re.escape(term.lower())}(?![\w+-])", lowered)
        for term in terms
    )


def mentions(item: Item, terms: Sequence[str]) -> bool:
    """Whether an item's text names any of the terms."""
    return names_any(item.text, terms)


def without_sentences_naming(text: str, terms: Sequence[str]) -> str:
    """Drop the sentences (or ``;``-clauses) of a text that name a rejected choice."""
    clauses = re.split(r"(?<=[.;!?])\s+", text)
    return " ".join(c for c in clauses if not names_any(c, terms))


def apply_event(snapshot: Snapshot, event: SessionEvent) -> None:
    """Fold one event into a (mutable, already copied) snapshot."""
    handler = HANDLERS.get(event.kind)
    if handler is not None:
        handler(snapshot, event)
    if event.kind in STATELESS_KINDS:
        remember_fingerprint(snapshot, fingerprint(event))
    snapshot.events_folded += 1


def remember_fingerprint(snapshot: Snapshot, digest: str) -> None:
    """Keep ``digest`` among the newest fingerprints (bounded, newest last)."""
    if digest in snapshot.fingerprints:
        snapshot.fingerprints.remove(digest)
    snapshot.fingerprints.append(digest)
    del snapshot.fingerprints[: max(0, len(snapshot.fingerprints) - FINGERPRINTS_MAX)]


def _prompt(s: Snapshot, e: SessionEvent) -> None:
    s.last_request = truncate_utf8(e.body or e.summary, LAST_TEXT_MAX_BYTES)


def _intent(s: Snapshot, e: SessionEvent) -> None:
    s.intent = e.summary


def _message(s: Snapshot, e: SessionEvent) -> None:
    s.last_assistant = truncate_utf8(e.body or e.summary, COMPACTION_MAX_BYTES)


def _compaction(s: Snapshot, e: SessionEvent) -> None:
    s.compaction_summary = truncate_utf8(
        e.body or s.last_assistant or e.summary, COMPACTION_MAX_BYTES
    )


def _decision(s: Snapshot, e: SessionEvent) -> None:
    rejected = [k.removeprefix("not:") for k in e.keywords if k.startswith("not:")]
    if rejected:
        s.decisions[:] = [d for d in s.decisions if not mentions(d, rejected)]
        s.compaction_summary = without_sentences_naming(s.compaction_summary, rejected)
    _keep(s, "decisions", e)


def _keep(s: Snapshot, section: str, e: SessionEvent) -> None:
    upsert(getattr(s, section), Item(key=item_key(e), text=e.summary, event_id=e.id), CAPS[section])


def _task_done(s: Snapshot, e: SessionEvent) -> None:
    task = completed_task(s, e)
    if task is not None:
        remove(s.tasks, task.key)


# Words that say what kind of statement a task or its completion is, not what it is about.
TASK_MARKERS = frozenset(
    {"todo", "task", "next", "remember", "don", "t", "do", "not", "forget", "to", "done"}
    | {"finished", "finish", "completed", "complete", "closed", "is", "are", "s", "now", "all"}
    | {"the", "a", "an", "of", "for", "in", "on", "and", "we", "i", "ve", "have", "that", "this"}
)


def task_words(text: str) -> frozenset[str]:
    """What a task is about: its words without the markers ("TODO:", "is done", articles)."""
    return frozenset(re.findall(r"[a-z0-9]+", text.lower())) - TASK_MARKERS


def completed_task(s: Snapshot, e: SessionEvent) -> Item | None:
    """The open task a completion closes: the one with its key, else the best word match.

    A user's "the rate limiting is done" names no key; it closes the open task that shares
    the most words with it, if they share at least two (or all of the task's words), so a
    passing "the build is done" does not close "fix the build warnings".
    """
    key = item_key(e)
    exact = next((task for task in s.tasks if task.key == key), None)
    if exact is not None or not key.startswith("done:"):
        return exact
    said = task_words(e.summary)
    best, best_shared = None, 0
    for task in s.tasks:
        words = task_words(task.text)
        shared = len(words & said)
        if shared > best_shared and (shared >= 2 or shared == len(words)):
            best, best_shared = task, shared
    return best


def _error_resolved(s: Snapshot, e: SessionEvent) -> None:
    remove(s.errors, item_key(e))


def _file(s: Snapshot, e: SessionEvent) -> None:
    key = item_key(e)
    upsert(s.files, Item(key=key, text=file_text(e), event_id=e.id), CAPS["files"])
    if e.kind is not EventKind.FILE_READ:
        upsert(s.edits, Item(key=key, text=e.summary, event_id=e.id), CAPS["edits"])
        remove(s.errors, f"file:{key}")  # a later successful change of the file fixes it


def _subagent_done(s: Snapshot, e: SessionEvent) -> None:
    started = remove(s.subagents_open, item_key(e))
    text = f"{started.text} (done)" if started else e.summary
    upsert(
        s.subagents_done, Item(key=item_key(e), text=text, event_id=e.id), CAPS["subagents_done"]
    )


HANDLERS: dict[EventKind, Callable[[Snapshot, SessionEvent], None]] = {
    EventKind.PROMPT: _prompt,
    EventKind.INTENT: _intent,
    EventKind.MESSAGE: _message,
    EventKind.COMPACTION_SUMMARY: _compaction,
    EventKind.DECISION: _decision,
    EventKind.RULE: lambda s, e: _keep(s, "rules", e),
    EventKind.PREFERENCE: lambda s, e: _keep(s, "rules", e),
    EventKind.TASK_CREATE: lambda s, e: _keep(s, "tasks", e),
    EventKind.TASK_UPDATE: lambda s, e: _keep(s, "tasks", e),
    EventKind.TASK_COMPLETE: _task_done,
    EventKind.ERROR: lambda s, e: _keep(s, "errors", e),
    EventKind.ERROR_RESOLVED: _error_resolved,
    EventKind.FILE_READ: _file,
    EventKind.FILE_WRITE: _file,
    EventKind.FILE_EDIT: _file,
    EventKind.DISCOVERY: lambda s, e: _keep(s, "discoveries", e),
    EventKind.GIT: lambda s, e: _keep(s, "git", e),
    EventKind.CWD_CHANGE: lambda s, e: _keep(s, "environment", e),
    EventKind.ENV_CHANGE: lambda s, e: _keep(s, "environment", e),
    EventKind.SUBAGENT_START: lambda s, e: _keep(s, "subagents_open", e),
    EventKind.SUBAGENT_FINISH: _subagent_done,
}


def working_copy(snapshot: Snapshot) -> Snapshot:
    """A copy whose lists may be changed in place (items are frozen, so they are shared)."""
    lists = {name: list(getattr(snapshot, name)) for name in (*CAPS, "fingerprints")}
    return snapshot.model_copy(update=lists)


def fold_snapshot(
    current: Snapshot | None, update: Snapshot | Sequence[SessionEvent] | None
) -> Snapshot:
    """Reducer: a Snapshot replaces; a list of events folds in, in order. Pure."""
    if isinstance(update, Snapshot):
        return update
    base = current if isinstance(current, Snapshot) else Snapshot()
    if not update:
        return base
    folded = working_copy(base)
    for event in update:
        apply_event(folded, event)
    return folded


def drop_duplicates(
    snapshot: Snapshot | None, events: Iterable[SessionEvent]
) -> list[SessionEvent]:
    """The events of a batch that are not duplicates, judged one after another.

    Each event is judged against the snapshot as the batch's earlier events leave it, so a
    repeat inside the batch is dropped and the fix of an error raised earlier in the same batch
    is kept. Cost: one copy of the (bounded) snapshot plus the batch.
    """
    working = working_copy(snapshot or Snapshot())
    fresh: list[SessionEvent] = []
    for event in events:
        if not working.is_duplicate(event):
            fresh.append(event)
            apply_event(working, event)
    return fresh


__all__ = [
    "CAPS",
    "FINGERPRINTS_MAX",
    "SECTION_OF",
    "Item",
    "Snapshot",
    "drop_duplicates",
    "fingerprint",
    "fold_snapshot",
    "item_key",
]
