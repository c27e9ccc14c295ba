"""Session events: the typed, size-capped records everything else is folded from."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from enum import IntEnum, StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

SUMMARY_MAX_CHARS = 200
BODY_MAX_BYTES = 4096
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


def clean_text(text: str) -> str:
    """Replace lone surrogates and NUL bytes that cannot be stored or encoded."""
    return text.encode("utf-8", errors="replace").decode("utf-8").replace("\x00", "")


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


ShortText = Annotated[str, StringConstraints(max_length=512)]


class SessionEvent(BaseModel):
    """One structured, typed, size-capped record of something that happened in a session."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: int = Field(default=0, description="Monotonic per root session; 0 until recorded.")
    root_session_id: str = Field(description="The root of the session's parentID chain.")
    session_id: str = Field(description="The session the event happened in (may be a child).")
    kind: EventKind
    summary: str = Field(description="One line, at most 200 characters.")
    body: str = Field(default="", description="Detail, at most 4096 bytes of UTF-8.")
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
    time: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @property
    def priority(self) -> Priority:
        """The snapshot tier, derived from the kind."""
        return PRIORITY_BY_KIND[self.kind]

    @field_validator("summary", mode="before")
    @classmethod
    def _cap_summary(cls, value: object) -> str:
        text = " ".join(clean_text(str(value)).split())
        return text if len(text) <= SUMMARY_MAX_CHARS else text[: SUMMARY_MAX_CHARS - 1] + "…"

    @field_validator("body", mode="before")
    @classmethod
    def _cap_body(cls, value: object) -> str:
        return truncate_utf8(clean_text(str(value)), BODY_MAX_BYTES)

    @field_validator("refs", "keywords", mode="before")
    @classmethod
    def _cap_list(cls, value: object) -> tuple[str, ...]:
        if value is None:
            values: Iterable[object] = ()
        elif isinstance(value, str) or not isinstance(value, Iterable):
            values = (value,)  # one ref, not its characters
        else:
            values = value
        items = [clean_text(str(v))[:512] for v in values]
        return tuple(dict.fromkeys(items))[:REFS_MAX]

    @field_validator("key", "source_hook", mode="before")
    @classmethod
    def _cap_key(cls, value: object) -> str:
        return clean_text(str(value))[:512]


__all__ = [
    "BODY_MAX_BYTES",
    "PRIORITY_BY_KIND",
    "SUMMARY_MAX_CHARS",
    "TEXT_MAX",
    "EventKind",
    "MemoryKind",
    "SCAN_MAX",
    "Priority",
    "SessionEvent",
    "Speaker",
    "as_text",
    "clean_text",
    "truncate_utf8",
]
