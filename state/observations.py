"""Observations: explicit memory that agents and people save, correct, supersede and forget.

An observation is one typed record (a decision, a bug fixed, a pattern, a session's summary …)
with a title, content in the What / Why / Where / Learned shape, the files it is about and who
saved it. Saving again under the same ``topic_key`` (same project and scope) updates it and keeps
the earlier version as a revision; a newer observation that contradicts it supersedes it (kept as
history, out of search by default).

Project observations live in the project's group, personal ones in the user's group
(:mod:`plait.state.groups`). The hot tier keeps them (:class:`ObservationStore`: Redis, or its
in-memory twin); the drain carries them on to the knowledge graph.

Everything a caller hands in is checked here, and a bad value is a
:class:`~plait.UsageError` naming the field.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from plait.state.base.errors import UsageError
from plait.state.events import repaired
from plait.state.ports import MemoryHit

ObservationType = Literal[
    "decision",
    "architecture",
    "bugfix",
    "discovery",
    "pattern",
    "config",
    "preference",
    "learning",
    "session_summary",
    "progress",
]
Scope = Literal["project", "personal"]
SourceKind = Literal["session", "tool", "person", "seed", "import"]

OBSERVATION_TYPES: tuple[str, ...] = get_args(ObservationType)
SCOPES: tuple[str, ...] = get_args(Scope)
DEFAULT_TYPE: ObservationType = "learning"
TITLE_MAX_CHARS = 200
CONTENT_MAX_BYTES = 32_768
TOPIC_KEY_MAX_CHARS = 120
FILES_MAX = 32
FILE_MAX_CHARS = 512
ID_PATTERN = re.compile(r"^o[0-9a-f]{12}$")
TOPIC_KEY_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._/-]*$")
# Keys LangGraph's store writes (``lg:<namespace>/<key>``, percent-encoded) are plait's own.
STORE_TOPIC_PREFIX = "lg:"
SESSION_TOPIC_PREFIX = "session/"


class UnknownObservation(UsageError):
    """No observation has the id asked for; the message names it."""

    def __init__(self, observation_id: str) -> None:
        """Name the id that was not found."""
        super().__init__(f"id: no observation {observation_id!r}")
        self.observation_id = observation_id


def utc_now() -> datetime:
    """The current time, timezone-aware."""
    return datetime.now(UTC)


def new_observation_id() -> str:
    """A fresh id: ``o`` and 12 hex digits."""
    return "o" + uuid.uuid4().hex[:12]


class ObservationSource(BaseModel):
    """Who saved an observation: a session's agent, a tool, a person, seeding, an import."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    kind: SourceKind = "tool"
    name: str = Field(default="", max_length=200, description="Tool, person or file.")
    session_id: str = Field(default="", max_length=512)


REVISION_MAX = 2**31 - 1  # a revision counts updates: anything larger is not an export of plait's


class Revision(BaseModel):
    """An earlier version of an observation, kept when it was updated."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    revision: int = Field(ge=1, le=REVISION_MAX)
    title: str
    type: ObservationType
    content: str
    topic_key: str = ""
    files: tuple[str, ...] = ()
    source: ObservationSource = Field(default_factory=ObservationSource)
    updated_at: datetime


class Observation(BaseModel):
    """One observation as stored: its current version, its revisions, what superseded it.

    ``data`` is the structured value a LangGraph store put, kept exactly; ``content`` is its
    text. No group id is stored: the scope says which group it belongs to on this machine, so an
    exported observation imports into any clone of the project.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    scope: Scope = "project"
    type: ObservationType
    title: str
    content: str
    topic_key: str = ""
    files: tuple[str, ...] = ()
    source: ObservationSource = Field(default_factory=ObservationSource)
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)
    revision: int = Field(default=1, ge=1, le=REVISION_MAX)
    revisions: tuple[Revision, ...] = ()
    superseded_by: str = ""
    data: dict[str, Any] | None = None

    @property
    def is_current(self) -> bool:
        """Not superseded by a newer observation."""
        return not self.superseded_by

    def as_revision(self) -> Revision:
        """This version, as the revision an update keeps."""
        return Revision(**{name: getattr(self, name) for name in Revision.model_fields})


class ObservationDraft(BaseModel):
    """What a caller asks to save, checked (see :func:`check_draft`) but not yet stored."""

    model_config = ConfigDict(frozen=True)

    title: str
    content: str
    type: ObservationType = DEFAULT_TYPE
    scope: Scope = "project"
    topic_key: str = ""
    files: tuple[str, ...] = ()
    source: ObservationSource = Field(default_factory=ObservationSource)
    data: dict[str, Any] | None = None


# -- checking what callers hand in -----------------------------------------------------------------
def check_title(value: object, field: str = "title") -> str:
    """A one-line title of at most :data:`TITLE_MAX_CHARS` characters."""
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{field}: missing (give a short title)")
    title = " ".join(value.split())
    if len(title) > TITLE_MAX_CHARS:
        raise UsageError(
            f"{field}: {len(title)} characters, over the {TITLE_MAX_CHARS}-character limit"
        )
    return title


def check_content(value: object, field: str = "content") -> str:
    """Non-empty text within :data:`CONTENT_MAX_BYTES` of UTF-8 (checked before anything else)."""
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{field}: missing (What / Why / Where / Learned)")
    size = len(value.encode("utf-8", errors="replace"))
    if size > CONTENT_MAX_BYTES:
        raise UsageError(
            f"{field}: {size} bytes, over the {CONTENT_MAX_BYTES}-byte limit; "
            "save the gist and name the file it is in"
        )
    return value.replace("\x00", "").strip()


def check_type(value: object, field: str = "type") -> ObservationType:
    """One of :data:`OBSERVATION_TYPES` (``session-summary`` is read as ``session_summary``)."""
    text = str(value or "").strip().lower().replace("-", "_")
    if text not in OBSERVATION_TYPES:
        raise UsageError(f"{field}: {value!r} is not one of {', '.join(OBSERVATION_TYPES)}")
    return text  # type: ignore[return-value]


def check_scope(value: object, field: str = "scope") -> Scope:
    """``project`` or ``personal``."""
    text = str(value or "").strip().lower()
    if text not in SCOPES:
        raise UsageError(f"{field}: {value!r} is not one of {', '.join(SCOPES)}")
    return text  # type: ignore[return-value]


def check_topic_key(value: object, field: str = "topic_key") -> str:
    """A topic key: lower-case letters, digits, ``.``, ``_``, ``-`` and ``/``; "" for none."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UsageError(f"{field}: give text such as 'architecture/auth-model'")
    key = value.strip().lower()
    if not key:
        return ""
    if len(key) > TOPIC_KEY_MAX_CHARS:
        raise UsageError(f"{field}: over {TOPIC_KEY_MAX_CHARS} characters")
    if not TOPIC_KEY_PATTERN.fullmatch(key) or "//" in key or key.endswith("/"):
        raise UsageError(
            f"{field}: {value!r} may hold only a-z, 0-9, '.', '_', '-' and '/' "
            "(e.g. 'architecture/auth-model')"
        )
    return key


def check_files(value: object, field: str = "files") -> tuple[str, ...]:
    """Paths (a list, or one string); each at most 512 characters, at most 32 kept."""
    if value is None:
        return ()
    items: Iterable[object] = [value] if isinstance(value, str) else value  # type: ignore[assignment]
    if not isinstance(items, Iterable):
        raise UsageError(f"{field}: give a list of paths")
    files: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise UsageError(f"{field}: {item!r} is not a path")
        path = item.strip()
        if len(path) > FILE_MAX_CHARS:
            raise UsageError(f"{field}: a path is over {FILE_MAX_CHARS} characters")
        if path:
            files.append(path)
    return tuple(dict.fromkeys(files))[:FILES_MAX]


def check_id(value: object, field: str = "id") -> str:
    """An observation id as plait makes them (``o`` and 12 hex digits)."""
    text = str(value or "").strip()
    if not text:
        raise UsageError(f"{field}: missing (an observation id such as 'o1a2b3c4d5e6f')")
    if not ID_PATTERN.fullmatch(text):
        raise UsageError(f"{field}: {text!r} is not an observation id (like 'o1a2b3c4d5e6f')")
    return text


def check_draft(
    *,
    title: object,
    content: object,
    type: object = DEFAULT_TYPE,
    scope: object = "project",
    topic_key: object = None,
    files: object = None,
    source: ObservationSource | None = None,
    data: dict[str, Any] | None = None,
) -> ObservationDraft:
    """Check every field of a save (content size first) and build the draft."""
    checked_content = check_content(content)
    return ObservationDraft(
        title=check_title(title),
        content=checked_content,
        type=check_type(type or DEFAULT_TYPE),
        scope=check_scope(scope or "project"),
        topic_key=check_topic_key(topic_key),
        files=check_files(files),
        source=source or ObservationSource(),
        data=data,
    )


# -- the port -------------------------------------------------------------------------------------
@runtime_checkable
class ObservationStore(Protocol):
    """Where observations are kept, by group: Redis, or its in-memory twin.

    Writes are compare-and-set on the observation's revision, and a topic key belongs to one
    observation of a group, so two processes saving the same topic at once cannot both win.
    """

    async def put_observation(
        self,
        group_id: str,
        observation: Observation,
        *,
        expected_revision: int,
    ) -> int:
        """Store ``observation`` if the stored one is at ``expected_revision`` (0: none yet).

        Its topic key then points to it (a topic key it held before is released). Returns the
        group's new version, or 0, storing nothing, when the revision moved meanwhile or
        another observation of the group holds the topic key.
        """
        ...

    async def get_observation(self, group_id: str, observation_id: str) -> Observation | None:
        """The observation with this id in the group, or None."""
        ...

    async def observation_for_topic(self, group_id: str, topic_key: str) -> Observation | None:
        """The observation holding the topic key in the group, or None."""
        ...

    async def list_observations(self, group_id: str) -> list[Observation]:
        """Every observation of the group (superseded ones included), oldest first."""
        ...

    async def delete_observation(self, group_id: str, observation_id: str) -> int:
        """Forget an observation (its id is remembered as forgotten).

        Returns the group's new version, or 0 when there was no such observation.
        """
        ...

    async def is_forgotten(self, group_id: str, observation_id: str) -> bool:
        """Whether the id was forgotten in this group (an import does not bring it back)."""
        ...

    async def observations_version(self, group_id: str) -> int:
        """A number that changes with every write to the group (search indexes key on it)."""
        ...

    async def get_marker(self, group_id: str, name: str) -> str | None:
        """A small value kept for the group (seeded, the shared file's hash)."""
        ...

    async def set_marker(self, group_id: str, name: str, value: str) -> None:
        """Keep a small value for the group."""
        ...


@runtime_checkable
class ObservationRecall(Protocol):
    """Observations relevant to a query, as recall hits (what the cache refresh adds)."""

    async def recall_hits(self, group_id: str, query: str, limit: int) -> list[MemoryHit]:
        """The project brief and the best matches for ``query``, best first."""
        ...


class SummaryWriter(Protocol):
    """An LLM that writes a session's summary from its events (optional, off the hot path)."""

    async def write_summary(self, draft: str, events: str) -> dict[str, list[str]]:
        """The summary's sections by name (``Goal``, ``Next Steps`` …), each a list of items.

        ``draft`` is the summary written without an LLM; ``events`` one event a line.
        """
        ...


# -- JSONL, for export and import ---------------------------------------------------------------
def observation_line(observation: Observation) -> str:
    """One observation as a stable JSON line (sorted keys, no spaces, UTF-8 as is)."""
    data = observation.model_dump(mode="json", exclude_none=True)
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def parse_observation_line(text: str, number: int) -> Observation:
    """Read one exported line; a broken one is a :class:`UsageError` naming the line."""
    try:
        raw = repaired(json.loads(text))
    except json.JSONDecodeError as error:
        raise UsageError(f"line {number}: not JSON ({error.msg})") from None
    if not isinstance(raw, dict):
        raise UsageError(f"line {number}: not a JSON object")
    try:
        observation = Observation.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "line"
        raise UsageError(f"line {number}: {where}: {first.get('msg', 'invalid')}") from None
    where = f"line {number}: "
    check_id(observation.id, where + "id")
    check_title(observation.title, where + "title")
    check_content(observation.content, where + "content")
    if not observation.topic_key.startswith(STORE_TOPIC_PREFIX):
        check_topic_key(observation.topic_key, where + "topic_key")
    if observation.superseded_by:
        check_id(observation.superseded_by, where + "superseded_by")
    return observation


def export_order(observations: Sequence[Observation]) -> list[Observation]:
    """The export order: scope, creation time, id (stable whatever the store's order)."""
    return sorted(observations, key=lambda o: (o.scope, o.created_at, o.id))


__all__ = [
    "CONTENT_MAX_BYTES",
    "DEFAULT_TYPE",
    "OBSERVATION_TYPES",
    "SCOPES",
    "SESSION_TOPIC_PREFIX",
    "STORE_TOPIC_PREFIX",
    "TITLE_MAX_CHARS",
    "Observation",
    "ObservationDraft",
    "ObservationRecall",
    "ObservationSource",
    "ObservationStore",
    "ObservationType",
    "Revision",
    "Scope",
    "SourceKind",
    "SummaryWriter",
    "UnknownObservation",
    "check_content",
    "check_draft",
    "check_files",
    "check_id",
    "check_scope",
    "check_title",
    "check_topic_key",
    "check_type",
    "export_order",
    "new_observation_id",
    "observation_line",
    "parse_observation_line",
    "utc_now",
]
