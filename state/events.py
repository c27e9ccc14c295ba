"""Session events: the typed, size-capped records everything else is folded from."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from enum import IntEnum, StrEnum
from functools import partial
from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
)

from plait.state.base.redact import REDACTED, redact

SUMMARY_MAX_CHARS = 200
BODY_MAX_BYTES = 4096
# What a turn said, kept whole for the recall index up to this: a prompt, a reply, a finding, a
# decision. Raw tool output (never indexed, the bulk of a log) keeps BODY_MAX_BYTES.
LONG_BODY_MAX_BYTES = 32 * 1024
REFS_MAX = 32
KEYWORDS_MAX = 16


class EventKind(StrEnum):
    """The closed set of things that can happen in a session."""

    PROMPT = "prompt"
    INTENT = "intent"
    DECISION = "decision"
    PREFERENCE = "preference"
    RULE = "rule"
    TASK_CREATE = "task_create"
    TASK_UPDATE = "task_update"
    TASK_COMPLETE = "task_complete"
    FILE_READ = "file_read"
    FILE_WRITE = "file_write"
    FILE_EDIT = "file_edit"
    FILE_SEARCH = "file_search"
    CWD_CHANGE = "cwd_change"
    ENV_CHANGE = "env_change"
    ERROR = "error"
    ERROR_RESOLVED = "error_resolved"
    GIT = "git"
    SUBAGENT_START = "subagent_start"
    SUBAGENT_FINISH = "subagent_finish"
    TOOL_RESULT = "tool_result"
    COMPACTION_SUMMARY = "compaction_summary"
    DISCOVERY = "discovery"
    MESSAGE = "message"


# Raw tool output: the bulk of a session's log, never searched whole.
SHORT_BODY_KINDS = frozenset({EventKind.TOOL_RESULT})


# The kinds an agent may ask to remember in so many words (the remember/recall tools).
MemoryKind = Literal["decision", "preference", "rule"]
# Who stated a decision, rule, task or finding: the person, or the model.
Speaker = Literal["user", "assistant"]


class Priority(IntEnum):
    """Tiers of the snapshot: P0 is kept longest, P4 dropped first."""

    P0 = 0
    P1 = 1
    P2 = 2
    P3 = 3
    P4 = 4


PRIORITY_BY_KIND: dict[EventKind, Priority] = {
    EventKind.DECISION: Priority.P0,
    EventKind.RULE: Priority.P0,
    EventKind.PREFERENCE: Priority.P0,
    EventKind.PROMPT: Priority.P0,
    EventKind.TASK_CREATE: Priority.P1,
    EventKind.TASK_UPDATE: Priority.P1,
    EventKind.TASK_COMPLETE: Priority.P1,
    EventKind.ERROR: Priority.P1,
    EventKind.ERROR_RESOLVED: Priority.P1,
    EventKind.INTENT: Priority.P1,
    EventKind.COMPACTION_SUMMARY: Priority.P1,
    EventKind.FILE_WRITE: Priority.P2,
    EventKind.FILE_EDIT: Priority.P2,
    EventKind.SUBAGENT_START: Priority.P2,
    EventKind.SUBAGENT_FINISH: Priority.P3,
    EventKind.FILE_READ: Priority.P3,
    EventKind.FILE_SEARCH: Priority.P3,
    EventKind.CWD_CHANGE: Priority.P3,
    EventKind.ENV_CHANGE: Priority.P3,
    EventKind.GIT: Priority.P3,
    EventKind.DISCOVERY: Priority.P3,
    EventKind.TOOL_RESULT: Priority.P4,
    EventKind.MESSAGE: Priority.P4,
}


def truncate_utf8(text: str, max_bytes: int) -> str:
    """Cut ``text`` to at most ``max_bytes`` of UTF-8 without splitting a character."""
    encoded = text.encode("utf-8", errors="replace")
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode("utf-8", errors="ignore")


LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` that can be stored and encoded: lone surrogates are U+FFFD, NUL bytes dropped.

    A Python ``str`` joins a valid surrogate pair into one character, so a surrogate left in one
    is lone (an escaped surrogate in JSON, an argument that was not UTF-8).
    """
    return LONE_SURROGATE.sub("\ufffd", text).replace("\x00", "")


def repaired(value: Any) -> Any:
    """``value`` (JSON-like) with every lone surrogate in its strings, keys too, made U+FFFD."""
    if isinstance(value, str):
        return LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list | tuple):
        return [repaired(item) for item in value]
    if isinstance(value, Mapping):
        return {repaired(key): repaired(item) for key, item in value.items()}
    return value


# How much of one host text is examined at all: a 10 MB message costs what 64 KB costs.
SCAN_MAX = 65_536
# How much of a text an event keeps before its own caps apply.
TEXT_MAX = 4096


def as_text(value: object, limit: int = SCAN_MAX) -> str:
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


SHORT_MAX_CHARS = 512
ShortText = Annotated[str, StringConstraints(max_length=SHORT_MAX_CHARS)]


class SessionEvent(BaseModel):
    """One structured, typed, size-capped record of something that happened in a session.

    It cannot hold a secret: every text field (summary, body, refs, keywords, key, source hook)
    has its ``<private>`` spans stripped and its secrets redacted when the event is built, read
    back from storage or copied with new text (:func:`private_text`). The session ids are kept
    as given: they must stay joinable.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: int = Field(default=0, description="Monotonic per root session; 0 until recorded.")
    root_session_id: str = Field(description="The root of the session's parentID chain.")
    session_id: str = Field(description="The session the event happened in (may be a child).")
    kind: EventKind
    summary: str = Field(description="One line, at most 200 characters.")
    body: str = Field(
        default="",
        description=(
            "Detail: at most 4096 bytes of UTF-8 for assistant text and tool output, "
            "32 KiB for the rest (what the recall index searches whole)."
        ),
    )
    refs: tuple[ShortText, ...] = Field(default=(), description="Files and symbols involved.")
    keywords: tuple[ShortText, ...] = Field(default=(), description="Search keywords.")
    key: str = Field(
        default="",
        description="Identity for supersede and dedup: a task id, a file path, an error signature.",
    )
    source_hook: str = Field(default="", description="The host hook that produced the event.")
    speaker: Speaker | None = Field(
        default=None,
        description=(
            "Who stated it, for statements read from text: the model's rank below the user's. "
            "None for what a tool or the host reported (and for events stored before the field)."
        ),
    )
    member: str | None = Field(
        default=None,
        description="The team member whose token recorded it, on a service a team shares (their "
        "preferences go to their own personal group); None: the service's own user.",
    )
    time: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @property
    def priority(self) -> Priority:
        """The snapshot tier, derived from the kind."""
        return PRIORITY_BY_KIND[self.kind]

    @field_validator("summary", mode="before")
    @classmethod
    def _cap_summary(cls, value: object) -> str:
        return private_text(value, cap_summary, SUMMARY_MAX_CHARS, collapse=True)

    @field_validator("body", mode="before")
    @classmethod
    def _cap_body(cls, value: object, info: ValidationInfo) -> str:
        keeps = body_max_bytes(info.data.get("kind"))
        return private_text(value, partial(cap_body, limit=keeps), keeps)

    @field_validator("refs", "keywords", mode="before")
    @classmethod
    def _cap_list(cls, value: object) -> tuple[str, ...]:
        if value is None:
            values: Iterable[object] = ()
        elif isinstance(value, str) or not isinstance(value, Iterable):
            values = (value,)  # one ref, not its characters
        else:
            values = value
        items = [private_text(v, cap_short, SHORT_MAX_CHARS) for v in values]
        return tuple(dict.fromkeys(items))[:REFS_MAX]

    @field_validator("key", "source_hook", mode="before")
    @classmethod
    def _cap_key(cls, value: object) -> str:
        return private_text(value, cap_short, SHORT_MAX_CHARS)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update`` applied; changed text fields are redacted like new ones."""
        if update and not TEXT_FIELDS.isdisjoint(update):
            return type(self).model_validate({**dict(self), **update})
        return super().model_copy(update=update, deep=deep)


# -- the text of an event: redacted, then capped -------------------------------------------------
# The text fields an event redacts (ids stay as they are: they must stay joinable).
TEXT_FIELDS = frozenset({"summary", "body", "refs", "keywords", "key", "source_hook"})
# Redacting sees a little more than a field keeps, so a secret at the cut is found whole.
PRECUT_FACTOR = 4
_MAX_CAP_ROUNDS = 4


def cap_summary(text: str) -> str:
    """One line of at most :data:`SUMMARY_MAX_CHARS` characters, ``…`` where it was cut."""
    if len(text) <= SUMMARY_MAX_CHARS:
        return text
    return _before_marker(text, SUMMARY_MAX_CHARS - 1) + "…"


def body_max_bytes(kind: object) -> int:
    """How much body an event of ``kind`` keeps: tool output less."""
    return BODY_MAX_BYTES if kind in SHORT_BODY_KINDS else LONG_BODY_MAX_BYTES


def cap_body(text: str, limit: int = BODY_MAX_BYTES) -> str:
    """At most ``limit`` bytes of UTF-8."""
    cut = truncate_utf8(text, limit)
    return cut if cut == text else _before_marker(text, len(cut))


def cap_short(text: str) -> str:
    """A ref, keyword or key: at most :data:`SHORT_MAX_CHARS` characters."""
    return text if len(text) <= SHORT_MAX_CHARS else _before_marker(text, SHORT_MAX_CHARS)


def _before_marker(text: str, end: int) -> str:
    """``text[:end]``, moved back to before a redaction marker the cut would split."""
    start = text.rfind("[", max(0, end - len(REDACTED)), end)
    if start >= 0 and text.startswith(REDACTED, start) and start + len(REDACTED) > end:
        end = start
    return text[:end]


def private_text(
    value: object, cap: Callable[[str], str], keeps: int, *, collapse: bool = False
) -> str:
    """An event's text: cleaned, private spans and secrets redacted, then capped by ``cap``.

    Redaction sees ``PRECUT_FACTOR`` times what the field ``keeps`` (a 10 MB text costs what
    a few KB cost; the cut drops its last, partial word). Idempotent, so a stored event reads
    back unchanged: what the cap cut is redacted again until nothing changes. ``collapse``
    folds whitespace runs into single spaces (a summary).
    """
    text = value if isinstance(value, str) else str(value)
    known = (keeps, collapse, text)
    if known in _known_clean:
        return text
    result = _private(text, cap, keeps, collapse)
    if result == text and len(text) <= KNOWN_CLEAN_MAX_CHARS:
        if len(_known_clean) >= KNOWN_CLEAN_MAX:
            _known_clean.clear()
        _known_clean.add(known)
    return result


# Short texts that came out of :func:`private_text` as they went in (never one that held a
# secret), per field: the same refs, keys, hook names and summaries come back on every read of
# an event, and redacting each again would cost more than the rest of reading it.
KNOWN_CLEAN_MAX = 8192
KNOWN_CLEAN_MAX_CHARS = SHORT_MAX_CHARS
_known_clean: set[tuple[int, bool, str]] = set()


def _private(text: str, cap: Callable[[str], str], keeps: int, collapse: bool) -> str:
    text = clean_text(as_text(text, keeps * PRECUT_FACTOR))
    for _ in range(_MAX_CAP_ROUNDS):
        cleaned = _folded(redact(_folded(text, collapse)), collapse)
        capped = cap(cleaned)
        if capped == cleaned:
            return capped
        text = capped
    return capped


def _folded(text: str, collapse: bool) -> str:
    return " ".join(text.split()) if collapse else text


FORGOTTEN = "(forgotten)"


def forgotten(event: SessionEvent) -> SessionEvent:
    """The event with its text gone: what a session log keeps of a forgotten event."""
    return event.model_copy(
        update={
            "kind": EventKind.MESSAGE,
            "summary": FORGOTTEN,
            "body": "",
            "refs": (),
            "keywords": (),
            "key": "",
        }
    )


def is_forgotten(event: SessionEvent) -> bool:
    """Whether ``event`` is what a session log keeps of a forgotten event (:func:`forgotten`)."""
    return event.summary == FORGOTTEN and not event.body


__all__ = [
    "FORGOTTEN",
    "forgotten",
    "is_forgotten",
    "BODY_MAX_BYTES",
    "LONG_BODY_MAX_BYTES",
    "body_max_bytes",
    "PRIORITY_BY_KIND",
    "SUMMARY_MAX_CHARS",
    "TEXT_MAX",
    "EventKind",
    "MemoryKind",
    "SCAN_MAX",
    "TEXT_FIELDS",
    "Priority",
    "SessionEvent",
    "Speaker",
    "as_text",
    "clean_text",
    "repaired",
    "private_text",
    "truncate_utf8",
]
