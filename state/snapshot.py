"""The session snapshot: bounded, priority-tiered, folded incrementally from events.

Every collection has a cap, so the snapshot's size (and the cost of folding one more event) does
not depend on how long the session is. ``fold_snapshot`` is the reducer of the hooks graph's
``snapshot`` channel: ``Annotated[Snapshot, fold_snapshot]``, where an update is a list of events
(folded in order, never re-reading history) or a ``Snapshot`` (which replaces).

What leaves:

- a decision superseded on evidence (:func:`plait.state.supersede.supersedes`): the new one
  rejects its choice ("use Y instead of X", or an ``not:X`` keyword), or carries a reversal
  cue on the same subject without keeping its choice. Decisions are kept by their words, so
  two decisions on one subject both stay unless one supersedes the other; a reversal also
  takes the sentences naming the rejected choice out of the compaction summary;
- a completed task; a rule or preference restated on the same words (``always``/``never``
  flipped);
- a resolved error: ``error_resolved`` with the command's key resolves every error of that
  command (``cmd:pytest`` resolves ``cmd:pytest|<signature>``), a later successful change of a
  file resolves the file's errors;
- an error not seen again ages out: after ``ERROR_AGE_EVENTS`` folded events, a one-off
  (an event with the ``transient`` keyword: an unknown command, a typo, a network blip)
  after ``TRANSIENT_ERROR_AGE_EVENTS``; the model's plans after ``PLAN_AGE_EVENTS``; seen
  again, an error starts over;
- the oldest item of a section over its cap, the model's (``speaker="assistant"``) first: the
  user's decisions, tasks and rules outrank the model's.

``drop_duplicates`` / ``Snapshot.is_duplicate`` say which new events would change nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from functools import partial

from pydantic import BaseModel, ConfigDict, Field, model_validator

from plait.state.events import EventKind, SessionEvent, Speaker, truncate_utf8
from plait.state.supersede import supersedes, words

LAST_TEXT_MAX_BYTES = 600
COMPACTION_MAX_BYTES = 1200
FINGERPRINTS_MAX = 64
FILE_KINDS = frozenset({EventKind.FILE_READ, EventKind.FILE_WRITE, EventKind.FILE_EDIT})
# Kinds that hold no state of their own: a repeat is recognised by its fingerprint only.
STATELESS_KINDS = frozenset({EventKind.FILE_SEARCH, EventKind.TOOL_RESULT})
# How long (in folded events) an error nobody sees again stays, a one-off error, a model's plan.
ERROR_AGE_EVENTS = 150
TRANSIENT_ERROR_AGE_EVENTS = 20
PLAN_AGE_EVENTS = 200
TRANSIENT = "transient"
READ_SUFFIX = " (read)"

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
    """One remembered thing: its identity, its text, the event that last touched it.

    ``speaker`` says who stated it (the model's items rank below the user's); ``expires`` is
    the count of folded events at which it ages out (0: it does not age).
    """

    model_config = ConfigDict(frozen=True)

    key: str
    text: str
    event_id: int = 0
    speaker: Speaker | None = None
    expires: int = 0

    @property
    def by_assistant(self) -> bool:
        """Whether the model stated it (it goes first when its section is full)."""
        return self.speaker == "assistant"


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
            trim(getattr(self, name), cap)
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
        return any(
            item.key == key and item.text == event.summary and outranks(item, event)
            for item in items
        )

    def holds(self, section: str, key: str) -> bool:
        """Whether ``section`` holds an item with ``key``."""
        return any(item.key == key for item in getattr(self, section))

    def resolves_any(self, key: str) -> bool:
        """Whether an ``error_resolved`` with ``key`` would resolve a held error."""
        return any(resolves(key, item.key) for item in self.errors)


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
    EventKind.ERROR_RESOLVED: lambda s, e: not s.resolves_any(item_key(e)),
    EventKind.ERROR: lambda s, e: False,  # seen again, an error starts its age over
    EventKind.DECISION: lambda s, e: any(
        same_words(d.text, e.summary) and outranks(d, e) for d in s.decisions
    ),
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
    """How a file appears in files in play: its path and what was done to it."""
    action = {EventKind.FILE_READ: "read", EventKind.FILE_WRITE: "written"}.get(
        event.kind, "edited"
    )
    if event.kind is EventKind.FILE_EDIT and event.summary.startswith("deleted "):
        action = "deleted"
    return f"{item_key(event)} ({action})"


def outranks(item: Item, event: SessionEvent) -> bool:
    """Whether a held item stands at least as high as the event's (the user's beat the model's)."""
    return not item.by_assistant or event.speaker == "assistant"


def above(item: Item, event: SessionEvent) -> bool:
    """Whether a held item stands higher than the event's (the user's, the event the model's)."""
    return not item.by_assistant and event.speaker == "assistant"


def same_words(first: str, second: str) -> bool:
    """Whether two texts say the same words (case, punctuation and markup aside)."""
    return words(first) == words(second)


def resolves(key: str, error_key: str) -> bool:
    """Whether a fix keyed ``key`` resolves the error keyed ``error_key`` (itself, or a prefix)."""
    return bool(key) and (error_key == key or error_key.startswith(key + "|"))


def trim(items: list[Item], cap: int) -> None:
    """Drop items over ``cap``: the model's oldest first, then the oldest."""
    while len(items) > cap:
        index = next((i for i, item in enumerate(items) if item.by_assistant), 0)
        del items[index]


def upsert(items: list[Item], item: Item, cap: int) -> None:
    """Put ``item`` last (newest), replacing one with the same key; trim to the cap."""
    items[:] = [existing for existing in items if existing.key != item.key]
    items.append(item)
    trim(items, cap)


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
    expire(snapshot)


def expire(snapshot: Snapshot) -> None:
    """Take out the errors and plans whose age ran out."""
    for name in AGING_SECTIONS:
        items: list[Item] = getattr(snapshot, name)
        if any(0 < item.expires <= snapshot.events_folded for item in items):
            items[:] = [i for i in items if not 0 < i.expires <= snapshot.events_folded]


def expiry(s: Snapshot, e: SessionEvent) -> int:
    """When an event's item ages out (0: never): errors, one-off errors, the model's plans."""
    if e.kind is EventKind.ERROR:
        one_off = TRANSIENT in e.keywords
        return s.events_folded + (TRANSIENT_ERROR_AGE_EVENTS if one_off else ERROR_AGE_EVENTS)
    if e.speaker == "assistant" and e.kind is EventKind.TASK_CREATE:
        return s.events_folded + PLAN_AGE_EVENTS
    return 0


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


def rejected_terms(e: SessionEvent) -> tuple[str, ...]:
    """The choices a decision event turns away from (its ``not:`` keywords)."""
    return tuple(k.removeprefix("not:") for k in e.keywords if k.startswith("not:"))


# The keyword of the drain's correction (:mod:`plait.nodes.supersession`): the event id of a
# held decision a later one replaces, found off the hot path
REPLACES = "replaces:"


def replaced_ids(e: SessionEvent) -> frozenset[int]:
    """The held decisions' event ids a correction names (none for any other event)."""
    named = (k.removeprefix(REPLACES) for k in e.keywords if k.startswith(REPLACES))
    return frozenset(int(n) for n in named if n.isdigit())


def _decision(s: Snapshot, e: SessionEvent) -> None:
    replaced = replaced_ids(e)
    if replaced:  # a correction: the decisions it names go, its own is held already
        s.decisions[:] = [d for d in s.decisions if d.event_id not in replaced]
        return
    if any(same_words(d.text, e.summary) and above(d, e) for d in s.decisions):
        return  # the model restating the user's decision changes nothing
    rejected = rejected_terms(e)
    s.decisions[:] = [
        d
        for d in s.decisions
        if not same_words(d.text, e.summary)
        and not supersedes(d.text, e.summary, rejected, cue=above(d, e))
    ]
    if rejected:
        s.compaction_summary = without_sentences_naming(s.compaction_summary, rejected)
    s.decisions.append(item_of(s, e))
    trim(s.decisions, CAPS["decisions"])


def item_of(s: Snapshot, e: SessionEvent, text: str | None = None) -> Item:
    """The item an event leaves in its section."""
    return Item(
        key=item_key(e),
        text=e.summary if text is None else text,
        event_id=e.id,
        speaker=e.speaker,
        expires=expiry(s, e),
    )


def _keep_in(section: str, s: Snapshot, e: SessionEvent) -> None:
    upsert(getattr(s, section), item_of(s, e), CAPS[section])


def _task(s: Snapshot, e: SessionEvent) -> None:
    """An open task; the newer of two saying the same task under other keys replaces it.

    A prompt's TODO, then the same item on the host's todo list, is one task.
    """
    same = same_task(s, e)
    if same is not None:
        remove(s.tasks, same.key)
    _keep_in("tasks", s, e)


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


TODO_STATUS = re.compile(r"\s*\[[a-z_ -]+\]\s*$")


def task_words(text: str) -> frozenset[str]:
    """What a task is about: its words without markers ("TODO:", "done", articles, [status])."""
    return frozenset(re.findall(r"[a-z0-9]+", TODO_STATUS.sub("", text).lower())) - TASK_MARKERS


def same_task(s: Snapshot, e: SessionEvent) -> Item | None:
    """The open task, under another key, whose words are the event's own."""
    key, said = item_key(e), task_words(e.summary)
    return next(
        (task for task in s.tasks if task.key != key and said and task_words(task.text) == said),
        None,
    )


def completed_task(s: Snapshot, e: SessionEvent) -> Item | None:
    """The open task a completion closes: the one with its key, else the best word match.

    A user's "the rate limiting is done" names no key; it closes the open task that shares
    the most words with it, if they share at least two (or all of the task's words), so a
    passing "the build is done" does not close "fix the build warnings".
    """
    key = item_key(e)
    exact = next((task for task in s.tasks if task.key == key), None)
    if exact is not None or not key.startswith("done:"):
        return exact or same_task(s, e)
    said = task_words(e.summary)
    best, best_shared = None, 0
    for task in s.tasks:
        words = task_words(task.text)
        shared = len(words & said)
        if shared > best_shared and (shared >= 2 or shared == len(words)):
            best, best_shared = task, shared
    return best


def _error_resolved(s: Snapshot, e: SessionEvent) -> None:
    resolve(s, item_key(e))


def resolve(s: Snapshot, key: str) -> None:
    """Take out every error the fix keyed ``key`` resolves."""
    s.errors[:] = [error for error in s.errors if not resolves(key, error.key)]


def is_read_only(item: Item) -> bool:
    """Whether a file in play was only read (an edited file read again stays edited)."""
    return item.text.endswith(READ_SUFFIX)


def _file(s: Snapshot, e: SessionEvent) -> None:
    key = item_key(e)
    held = next((item for item in s.files if item.key == key), None)
    keeps_change = e.kind is EventKind.FILE_READ and held is not None and not is_read_only(held)
    text = held.text if keeps_change and held is not None else file_text(e)
    upsert(s.files, Item(key=key, text=text, event_id=e.id), CAPS["files"])
    if e.kind is not EventKind.FILE_READ:
        upsert(s.edits, Item(key=key, text=e.summary, event_id=e.id), CAPS["edits"])
        resolve(s, f"file:{key}")  # a later successful change of the file fixes it


def _subagent_done(s: Snapshot, e: SessionEvent) -> None:
    started = remove(s.subagents_open, item_key(e))
    text = f"{started.text} (done)" if started else e.summary
    upsert(
        s.subagents_done, Item(key=item_key(e), text=text, event_id=e.id), CAPS["subagents_done"]
    )


AGING_SECTIONS = ("errors", "tasks")

# The kinds an event of which is simply kept in a section (newest first, capped).
KEPT_IN = {
    EventKind.RULE: "rules",
    EventKind.PREFERENCE: "rules",
    EventKind.ERROR: "errors",
    EventKind.DISCOVERY: "discoveries",
    EventKind.GIT: "git",
    EventKind.CWD_CHANGE: "environment",
    EventKind.ENV_CHANGE: "environment",
    EventKind.SUBAGENT_START: "subagents_open",
}
HANDLERS: dict[EventKind, Callable[[Snapshot, SessionEvent], None]] = {
    EventKind.PROMPT: _prompt,
    EventKind.INTENT: _intent,
    EventKind.MESSAGE: _message,
    EventKind.COMPACTION_SUMMARY: _compaction,
    EventKind.DECISION: _decision,
    EventKind.TASK_CREATE: _task,
    EventKind.TASK_UPDATE: _task,
    EventKind.TASK_COMPLETE: _task_done,
    EventKind.ERROR_RESOLVED: _error_resolved,
    EventKind.FILE_READ: _file,
    EventKind.FILE_WRITE: _file,
    EventKind.FILE_EDIT: _file,
    EventKind.SUBAGENT_FINISH: _subagent_done,
}
HANDLERS.update({kind: partial(_keep_in, section) for kind, section in KEPT_IN.items()})


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
    "ERROR_AGE_EVENTS",
    "PLAN_AGE_EVENTS",
    "TRANSIENT",
    "TRANSIENT_ERROR_AGE_EVENTS",
    "FINGERPRINTS_MAX",
    "SECTION_OF",
    "Item",
    "Snapshot",
    "drop_duplicates",
    "fingerprint",
    "fold_snapshot",
    "is_read_only",
    "item_key",
]
